import Foundation
import GatewayProtocol
@testable import ReferenceNode

/// Shared helpers for the reference client tests.
enum TestSupport {
    /// A fresh, empty directory under the temporary directory.
    static func temporaryDirectory() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("reference-node-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A configuration that never touches the network.
    static func configuration(_ mutants: Set<Mutant> = [], clock: any ClientClock = ManualClientClock(),
                              signatureVersion: DeviceAuthPayload.Version = .v3) -> ReferenceConfiguration {
        ReferenceConfiguration(gatewayURL: "ws://127.0.0.1:1", stateDirectory: temporaryDirectory(), clock: clock,
                               mutants: mutants, signatureVersion: signatureVersion)
    }

    /// The identity of docs/protocol.md §3.12 (seed 00 01 ... 1f).
    static func vectorIdentity() throws -> DeviceIdentity {
        try DeviceIdentity(seed: Data((0..<32).map { UInt8($0) }))
    }

    /// A connect rejection with `details.code`.
    static func rejection(_ detailCode: String, code: String = "INVALID_REQUEST", details: [String: JSONValue] = [:],
                          retryAfterMs: Int? = nil) -> ConnectionEnd {
        var object = details
        object["code"] = .string(detailCode)
        return .rejected(ErrorShape(code: code, message: detailCode.lowercased(), details: .object(object), retryAfterMs: retryAfterMs))
    }

    /// Pairing required for `requestId`.
    static func pairingRequired(_ requestId: String) -> ConnectionEnd {
        rejection("PAIRING_REQUIRED", code: "NOT_PAIRED", details: ["requestId": .string(requestId), "reason": "not-paired"])
    }

    static let noCredentials = AttemptContext(authSource: .none, hadStoredToken: false, usedDeviceTokenRetry: false)
}
