import Conformance
import Foundation
import GatewayProtocol
import MockGateway

let hs003 = Scenario(
    "HS-003", .must,
    title: "device.publicKey is the raw key in unpadded base64url; device.id is its SHA-256 in lowercase hex",
    requirement: "device.publicKey is the unpadded base64url encoding of the raw 32-byte Ed25519 public key, and device.id is the lowercase hex SHA-256 of those 32 bytes.",
    source: "docs/protocol.md §3.8",
    discussion: "Waits for the client's first connect request and checks its device block: publicKey must be 43 base64url characters (no padding, no '+' or '/') decoding to 32 bytes, and device.id must be the 64-character lowercase hex SHA-256 of those bytes. A real Gateway answers a mismatch with DEVICE_AUTH_DEVICE_ID_MISMATCH.",
    tags: ["handshake", "identity"],
    profiles: .all,
    // Judges the handshake itself: it runs even when the client never gets a session.
    options: Scenario.Options(needsSession: false)
) { run in
    let request = try await run.waitForEvent(.request(.connect).named("the client's first connect request")).request
    guard let device = request.params?["device"], let id = device["id"]?.stringValue,
          let publicKey = device["publicKey"]?.stringValue else {
        try run.fail("connect carries no device identity", expected: "params.device with string id and publicKey",
                     actual: request.params?["device"]?.jsonString ?? "no device block")
    }
    let base64URLAlphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    try run.expect(publicKey.count == 43 && publicKey.allSatisfy(base64URLAlphabet.contains),
                   "device.publicKey is not unpadded base64url of 32 bytes",
                   expected: "43 characters from A-Z a-z 0-9 - _ (no padding)", actual: publicKey)
    guard let rawKey = Base64URL.decode(publicKey), rawKey.count == 32 else {
        try run.fail("device.publicKey does not decode to a 32-byte key", expected: "32 bytes", actual: publicKey)
    }
    let hexDigits = Set("0123456789abcdef")
    try run.expect(id.count == 64 && id.allSatisfy(hexDigits.contains), "device.id is not 64 lowercase hex characters",
                   expected: "64 characters from 0-9 a-f", actual: id)
    try run.expectEqual(id, SHA256Digest.hex(rawKey), "device.id is the lowercase hex SHA-256 of the raw public key")
}
