import Foundation
import GatewayProtocol

/// A push the Gateway handed to its push transport: a relay send request (signed with the
/// Gateway's device identity, as upstream signs it) or a direct APNs send.
public struct PushDelivery: Sendable, Hashable {
    /// The node the push is for.
    public var nodeId: String
    /// `relay` or `direct`.
    public var transport: String
    /// `alert` (push.test) or `background` (a silent wake).
    public var pushType: String
    /// The request body as sent: `{relayHandle, pushType, priority, payload}` for a relay,
    /// `{token, topic, pushType, priority, payload}` for a direct send.
    public var bodyJSON: String
    /// The `x-openclaw-gateway-device-id` header (relay only).
    public var gatewayDeviceId: String?
    /// The `x-openclaw-gateway-signed-at-ms` header (relay only).
    public var signedAtMs: Int64?
    /// The `x-openclaw-gateway-signature` header (relay only).
    public var signature: String?
    /// The `authorization: Bearer` grant (relay only).
    public var sendGrant: String?
    /// Whether the fake relay accepted the request (its signature verified with the Gateway's
    /// public key); a direct send is accepted unless a fault refused it
    /// (`Gateway.refuseNextPush(status:reason:)`).
    public var accepted: Bool
    /// The status the transport answered: 200 when accepted.
    public var status: Int = 200
    /// Why the transport refused the send (`nil` when it was accepted).
    public var reason: String?

    /// The request body as a JSON value (`nil` only if `bodyJSON` were not JSON, which the
    /// Gateway never writes).
    public var body: JSONValue? { try? JSONValue(parsing: bodyJSON) }

    /// The APNs payload the push carries (`aps` and upstream's `openclaw` metadata).
    public var payload: JSONValue? { body?["payload"] }

    /// The APNs priority: 10 for an alert, 5 for a background push.
    public var priority: Int? { body?["priority"]?.int64Value.map { Int($0) } }
}

/// The push transports of the fake Gateway: a relay that checks what upstream's hosted relay
/// checks (the grant, the Gateway's signature) and an APNs stand-in, both recording every send.
///
/// Upstream (read for facts, not copied), `src/infra/push-apns.relay.ts@0da55d90`: a relay send is
/// `POST <relay>/v1/push/send` with `authorization: Bearer <sendGrant>`, the headers
/// `x-openclaw-gateway-device-id`, `x-openclaw-gateway-signature` and
/// `x-openclaw-gateway-signed-at-ms`, and the body `{relayHandle, pushType, priority, payload}`;
/// the signature is the Gateway identity's Ed25519 signature of
/// `openclaw-relay-send-v1\n<gatewayDeviceId>\n<signedAtMs>\n<body>`. The relay answers
/// `{ok, status, apnsId?, reason?, environment?, tokenSuffix?}`.
enum PushRelay {
    /// The signed text of a relay send.
    static func signaturePayload(gatewayDeviceId: String, signedAtMs: Int64, bodyJSON: String) -> String {
        ["openclaw-relay-send-v1", gatewayDeviceId, String(signedAtMs), bodyJSON].joined(separator: "\n")
    }

    /// The APNs payload of `push.test`: an alert with upstream's `openclaw` metadata
    /// `{kind:"push.test", nodeId, ts}` (`src/infra/push-apns-payloads.ts@09a333a9`,
    /// `createApnsAlertPayload`).
    static func alertPayload(title: String, body: String, nodeId: String, nowMs: Int64) -> JSONValue {
        [
            "aps": ["alert": ["title": .string(title), "body": .string(body)], "sound": "default"],
            "openclaw": ["kind": .string(PushPayloadKind.pushTest.rawValue), "nodeId": .string(nodeId), "ts": .int(nowMs)],
        ]
    }

    /// The reason a silent wake names when the caller gives none: upstream's default
    /// (`wakeReason ?? "node.invoke"`, `src/infra/push-apns-payloads.ts@09a333a9`).
    static let defaultWakeReason = GatewayMethod.nodeInvoke.rawValue

    /// The APNs payload of a silent wake: `{aps:{"content-available":1}, openclaw:{kind:"node.wake",
    /// nodeId, ts, reason}}`, no alert, sound or badge (`createApnsBackgroundPayload`,
    /// `src/infra/push-apns-payloads.ts@09a333a9`). It is sent with push type `background` and
    /// priority 5 (`sendApnsBackgroundWake`, `src/infra/push-apns.ts@21f1a13f`).
    static func backgroundPayload(nodeId: String, reason: String, nowMs: Int64) -> JSONValue {
        [
            "aps": ["content-available": 1],
            "openclaw": ["kind": .string(PushPayloadKind.nodeWake.rawValue), "nodeId": .string(nodeId), "ts": .int(nowMs), "reason": .string(reason)],
        ]
    }

    /// Whether a push answer means the stored registration is dead (upstream
    /// `shouldClearStoredApnsRegistration`, `src/infra/push-apns.ts`): only a direct
    /// registration, answered 410 or 400 `BadDeviceToken`. A relay registration is kept.
    static func isStaleRegistration(registration: JSONValue, delivery: PushDelivery) -> Bool {
        guard (registration["transport"]?.stringValue ?? "direct") == "direct", !delivery.accepted else { return false }
        let reason = delivery.reason?.trimmingCharacters(in: .whitespaces)
        return delivery.status == 410 || (delivery.status == 400 && reason == "BadDeviceToken")
    }

    /// The `push.test` result (`packages/gateway-protocol/src/schema/push.ts@483cbf5b`,
    /// `PushTestResultSchema`): `{ok, status, apnsId?, reason?, tokenSuffix, topic, environment,
    /// transport}`.
    static func testResult(delivery: PushDelivery, registration: JSONValue, environment: String, apnsId: String) -> JSONValue {
        let token = registration["token"]?.stringValue ?? ""
        let suffix = registration["tokenDebugSuffix"]?.stringValue ?? String(token.suffix(8))
        var result: [String: JSONValue] = [
            "ok": .bool(delivery.accepted), "status": .int(Int64(delivery.status)),
            "tokenSuffix": .string(suffix), "topic": .string(registration["topic"]?.stringValue ?? "ai.openclaw.ios"),
            "environment": .string(environment), "transport": .string(delivery.transport),
        ]
        if delivery.accepted {
            result["apnsId"] = .string(apnsId)
        } else {
            result["reason"] = .string(delivery.reason ?? "InvalidGatewaySignature")
        }
        return .object(result)
    }
}
