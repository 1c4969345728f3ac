import Foundation
import GatewayProtocol
@testable import MockGateway
import Testing

@Suite("Setup codes (docs/protocol.md §5.13)")
struct BootstrapSetupCodeTests {
    @Test func aSetupCodeRoundTripsThroughItsCodeAndLinkForms() throws {
        let code = SetupCode(url: "ws://192.168.1.10:18789", urls: ["ws://gw.local:18789"], bootstrapToken: "q3v-token_1",
                             expiresAtMs: 1_767_226_200_000, tlsFingerprint: String(repeating: "ab", count: 32),
                             extra: ["future": 1])
        #expect(!code.encoded.contains("="))
        #expect(!code.encoded.contains("+"))
        #expect(!code.encoded.contains("/"))
        #expect(try SetupCode(decoding: code.encoded) == code)
        #expect(code.link == "oc-pair://" + code.encoded)
        #expect(try SetupCode(decoding: "  " + code.link + "\n") == code)
    }

    /// setup-code.test.ts (id 70377785808): a code at or past `expiresAtMs` is refused; older
    /// codes without it are accepted.
    @Test func anExpiredCodeIsRefusedWhenTheTimeIsKnown() throws {
        let code = SetupCode(url: "wss://gw.example", bootstrapToken: "tok", expiresAtMs: 10_000)
        #expect(try SetupCode(decoding: code.encoded, nowMs: 9_999).expiresAtMs == 10_000)
        #expect(throws: SetupCodeError(description: "setup code expired at 10000")) { _ = try SetupCode(decoding: code.encoded, nowMs: 10_000) }
        let old = SetupCode(url: "wss://gw.example", bootstrapToken: "tok")
        #expect(try SetupCode(decoding: old.encoded, nowMs: 10_000).expiresAtMs == nil)
        #expect(try JSONValue(parsing: Base64URL.decode(code.encoded) ?? Data())
            == ["url": "wss://gw.example", "bootstrapToken": "tok", "expiresAtMs": 10_000])
    }

    /// setup-code.test.ts (id 70377785808): decoding canonicalises the fingerprint to 64
    /// lower-case hexadecimal digits and refuses one that is not a SHA-256 fingerprint.
    @Test func decodingCanonicalisesTheTLSFingerprint() throws {
        let hex = String(repeating: "ab", count: 32)
        let colons = (0..<32).map { _ in "AB" }.joined(separator: ":")
        for spelling in ["SHA256:" + colons, "sha-256 " + hex.uppercased(), colons, hex] {
            let code = SetupCode(url: "wss://gateway.example:8443/openclaw-gw", bootstrapToken: "Bootstrap-AbC123",
                                 expiresAtMs: 20_000, tlsFingerprint: spelling)
            #expect(try SetupCode(decoding: code.encoded, nowMs: 10_000).tlsFingerprint == hex, "\(spelling)")
        }
        let invalid = SetupCode(url: "wss://gateway.example", bootstrapToken: "bootstrap-123", tlsFingerprint: "sha256:abc123")
        #expect(throws: SetupCodeError(description: "setup code tlsFingerprint is not a SHA-256 fingerprint (64 hexadecimal digits)")) {
            _ = try SetupCode(decoding: invalid.encoded)
        }
    }

    @Test func theCodeIsBase64URLOfTheJSONObject() throws {
        let code = SetupCode(url: "wss://gw.example", bootstrapToken: "tok")
        let bytes = try #require(Base64URL.decode(code.encoded))
        #expect(try JSONValue(parsing: bytes) == ["url": "wss://gw.example", "bootstrapToken": "tok"])
    }

    @Test func paddedOrStandardBase64IsTolerated() throws {
        let json = #"{"bootstrapToken":"t?>","url":"ws://h"}"#
        let standard = Data(json.utf8).base64EncodedString()
        #expect(try SetupCode(decoding: standard).bootstrapToken == "t?>")
    }

    @Test func malformedCodesAreRefusedWithAReason() {
        let cases: [(String, String)] = [
            ("!!!", "setup code is not base64url"),
            (Base64URL.encode(Array("[1,2]".utf8)), "setup code does not hold a JSON object"),
            (Base64URL.encode(Array(#"{"bootstrapToken":"t"}"#.utf8)), "setup code has no url"),
            (Base64URL.encode(Array(#"{"url":"ws://h"}"#.utf8)), "setup code has no bootstrapToken"),
            (Base64URL.encode(Array(#"{"url":"ws://h","bootstrapToken":"t","urls":"x"}"#.utf8)), "setup code urls is not a list of strings"),
            (Base64URL.encode(Array(#"{"url":"ws://h","bootstrapToken":"t","expiresAtMs":"soon"}"#.utf8)), "setup code expiresAtMs is not an integer"),
            (Base64URL.encode(Array(#"{"url":"ws://h","bootstrapToken":"t","tlsFingerprint":1}"#.utf8)), "setup code tlsFingerprint is not a string"),
        ]
        for (text, reason) in cases {
            #expect(throws: SetupCodeError(description: reason)) { _ = try SetupCode(decoding: text) }
        }
    }

    @Test func anIssuedTokenFitsInASetupCode() throws {
        var store = BootstrapTokenStore(random: SeededRandom(seed: 3))
        let issued = store.issue(nowMs: PairingFixtures.t0)
        let decoded = try SetupCode(decoding: SetupCode(url: "ws://127.0.0.1:18789", bootstrapToken: issued.token).link)
        #expect((try? store.verify(decoded.bootstrapToken, deviceId: "d", publicKey: "k", role: "node", scopes: [],
                                   nowMs: PairingFixtures.t0).get()) != nil)
    }
}
