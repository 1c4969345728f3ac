import Foundation
import Testing

@testable import GatewayProtocol

@Suite("Frames")
struct FrameTests {
    static let samples: [Frame] = [
        .request(RequestFrame(id: "5B0E9C1A-7D55-4B7B-9A43-2D1F2C3B4A10", method: "node.event", params: ["event": "node.presence.alive", "payloadJSON": "{\"trigger\":\"connect\"}"])),
        .request(RequestFrame(id: "r1", method: "connect", params: nil, traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")),
        .response(.success(id: "r1", payload: ["ok": true, "event": "node.presence.alive", "handled": true, "reason": "persisted"])),
        .response(ResponseFrame(id: "r2", ok: true)),
        .response(.failure(id: "r3", error: ErrorShape(code: "UNAVAILABLE", message: "gateway starting; retry shortly", details: ["reason": "startup-sidecars"], retryable: true, retryAfterMs: 500))),
        .event(EventFrame(event: "tick", payload: ["ts": 1_767_225_600_000], seq: 42)),
        .event(EventFrame(event: "presence", payload: ["presence": []], seq: 0, stateVersion: StateVersion(presence: 3, health: 1))),
        .event(EventFrame(event: "connect.challenge", payload: ["nonce": "n", "ts": 1])),
        .cancel(CancelFrame(id: "r9")),
    ]

    @Test(arguments: samples)
    func everyFrameSurvivesEncodeThenDecode(_ frame: Frame) throws {
        #expect(try Frame(decoding: frame.encoded()) == frame)
    }

    @Test func unknownMembersAreIgnored() throws {
        let text = #"{"type":"event","event":"tick","payload":{"ts":5},"seq":1,"future":{"x":[1,2]},"flag":true}"#
        #expect(try Frame(decoding: Data(text.utf8)) == .event(EventFrame(event: "tick", payload: ["ts": 5], seq: 1)))
        let request = #"{"type":"req","id":"a","method":"m","extra":1}"#
        #expect(try Frame(decoding: Data(request.utf8)) == .request(RequestFrame(id: "a", method: "m")))
        let cancel = #"{"type":"cancel","id":"a","reason":"user"}"#
        #expect(try Frame(decoding: Data(cancel.utf8)) == .cancel(CancelFrame(id: "a")))
    }

    @Test func millisecondsAndSeqStayIntegersOnTheWire() throws {
        let frame = Frame.event(EventFrame(event: "tick", payload: ["ts": 1_767_225_600_000], seq: 7))
        let text = String(decoding: frame.encoded(), as: UTF8.self)
        #expect(text == #"{"event":"tick","payload":{"ts":1767225600000},"seq":7,"type":"event"}"#)
        let response = Frame.response(.failure(id: "x", error: ErrorShape(code: "INVALID_REQUEST", message: "m", retryAfterMs: 250)))
        #expect(String(decoding: response.encoded(), as: UTF8.self).contains(#""retryAfterMs":250"#))
    }

    @Test func integralDoubleSeqIsAccepted() throws {
        let frame = try Frame(decoding: Data(#"{"type":"event","event":"tick","seq":3.0}"#.utf8))
        #expect(frame == .event(EventFrame(event: "tick", seq: 3)))
    }

    @Test(arguments: [
        "", "not json", "[]", "42", "null", #"{"id":"a","method":"connect"}"#, #"{"type":"req","method":"connect"}"#,
        #"{"type":"req","id":"","method":"connect"}"#, #"{"type":"req","id":1,"method":"connect"}"#,
        #"{"type":"req","id":"a"}"#, #"{"type":"res","id":"a"}"#, #"{"type":"res","id":"a","ok":"yes"}"#,
        #"{"type":"res","id":"a","ok":false,"error":{"code":"X"}}"#, #"{"type":"event"}"#,
        #"{"type":"event","event":"tick","seq":-1}"#, #"{"type":"event","event":"tick","seq":1.5}"#,
        #"{"type":"cancel"}"#, #"{"type":"hello"}"#, #"{"type":7}"#, "{\"type\":\"req\",\"id\":\"a\",\"method\":\"m\"",
    ])
    func malformedFramesThrowFrameDecodingError(_ text: String) {
        #expect(throws: FrameDecodingError.self) { try Frame(decoding: Data(text.utf8)) }
    }

    @Test func invalidUTF8ThrowsFrameDecodingError() {
        #expect(throws: FrameDecodingError.self) { try Frame(decoding: Data([0x7B, 0xFF, 0xFE, 0x7D])) }
    }

    @Test func errorShapeExposesItsDetailCode() {
        let shape = ErrorShape(code: "NOT_PAIRED", message: "pairing required: device is not approved yet", details: ["code": "PAIRING_REQUIRED"])
        #expect(shape.detailCode == "PAIRING_REQUIRED")
        #expect(ErrorShape(code: "X", message: "y").detailCode == nil)
    }
}

@Suite("Catalogue constants")
struct CatalogueTests {
    @Test func topLevelCodesHaveTheirWireValues() {
        #expect(ErrorCode.allKnown.map(\.rawValue) == [
            "NOT_LINKED", "NOT_PAIRED", "AGENT_TIMEOUT", "AGENT_RESULT_NOT_FOUND", "INVALID_REQUEST", "FORBIDDEN",
            "APPROVAL_NOT_FOUND", "UNAVAILABLE",
        ])
    }

    @Test func connectDetailCodesAreCompleteAndDistinct() {
        #expect(ConnectErrorDetailCode.allKnown.count == 36)
        #expect(Set(ConnectErrorDetailCode.allKnown).count == 36)
        #expect(ConnectErrorDetailCode.deviceAuthNonceMismatch.rawValue == "DEVICE_AUTH_NONCE_MISMATCH")
        #expect(ConnectErrorDetailCode.authenticatedProfileUnavailable.rawValue == "AUTHENTICATED_PROFILE_UNAVAILABLE")
    }

    @Test func authReasonsMapToDetailCodes() {
        #expect(AuthFailureReason.detailCode(for: nil) == .authRequired)
        #expect(AuthFailureReason.tokenMissing.detailCode == .authTokenMissing)
        #expect(AuthFailureReason.tokenMismatch.detailCode == .authTokenMismatch)
        #expect(AuthFailureReason.tokenMissingConfig.detailCode == .authTokenNotConfigured)
        #expect(AuthFailureReason.passwordMissing.detailCode == .authPasswordMissing)
        #expect(AuthFailureReason.passwordMismatch.detailCode == .authPasswordMismatch)
        #expect(AuthFailureReason.passwordMissingConfig.detailCode == .authPasswordNotConfigured)
        #expect(AuthFailureReason.bootstrapTokenInvalid.detailCode == .authBootstrapTokenInvalid)
        #expect(AuthFailureReason.rateLimited.detailCode == .authRateLimited)
        #expect(AuthFailureReason.deviceTokenMismatch.detailCode == .authDeviceTokenMismatch)
        #expect(AuthFailureReason.scopeMismatch.detailCode == .authScopeMismatch)
        #expect(AuthFailureReason.tailscaleWhoisFailed.detailCode == .authTailscaleWhoisFailed)
        #expect(AuthFailureReason(rawValue: "something_else").detailCode == .authUnauthorized)
    }

    @Test func stringConstantsEncodeAsBareStrings() throws {
        #expect(try JSONValue(encoding: RecommendedNextStep.retryWithDeviceToken) == "retry_with_device_token")
        #expect(try JSONValue.string("openclaw-ios").decode(as: ClientID.self) == .iOS)
        #expect(try JSONValue.string("moltbot-ios").decode(as: ClientID.self).rawValue == "moltbot-ios")
        #expect(GatewayMethod.nodePendingDrain.rawValue == "node.pending.drain")
        #expect(GatewayEventName.devicePairResolved.rawValue == "device.pair.resolved")
        #expect(GatewayEventName.voicewakeChanged.rawValue == "voicewake.changed")
    }

    @Test func closeReasonsAreCutToAtMost120BytesOnCharacterBoundaries() {
        #expect(CloseReason.truncate("protocol mismatch") == "protocol mismatch")
        let ascii = String(repeating: "a", count: 200)
        #expect(CloseReason.truncate(ascii).utf8.count == 120)
        let accented = String(repeating: "é", count: 100)  // 2 bytes each
        #expect(CloseReason.truncate(accented) == String(repeating: "é", count: 60))
        let emoji = "a" + String(repeating: "🙂", count: 40)  // 1 + 4 bytes each
        let cut = CloseReason.truncate(emoji)
        #expect(cut.utf8.count == 117)
        #expect(cut == "a" + String(repeating: "🙂", count: 29))
        #expect(CloseReason.truncate(String(repeating: "x", count: 120)).utf8.count == 120)
    }
}
