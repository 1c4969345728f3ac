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
    /// public key); a direct send is always accepted.
    public var accepted: Bool
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

    /// The APNs payload of `push.test`: an alert.
    static func alertPayload(title: String, body: String) -> JSONValue {
        ["aps": ["alert": ["title": .string(title), "body": .string(body)], "sound": "default"]]
    }

    /// The `push.test` result (`packages/gateway-protocol/src/schema/push.ts@483cbf5b`,
    /// `PushTestResultSchema`): `{ok, status, apnsId?, reason?, tokenSuffix, topic, environment,
    /// transport}`.
    static func testResult(delivery: PushDelivery, registration: JSONValue, environment: String, apnsId: String) -> JSONValue {
        let token = registration["token"]?.stringValue ?? ""
        let suffix = registration["tokenDebugSuffix"]?.stringValue ?? String(token.suffix(8))
        var result: [String: JSONValue] = [
            "ok": .bool(delivery.accepted), "status": .int(delivery.accepted ? 200 : 403),
            "tokenSuffix": .string(suffix), "topic": .string(registration["topic"]?.stringValue ?? "ai.openclaw.ios"),
            "environment": .string(environment), "transport": .string(delivery.transport),
        ]
        if delivery.accepted { result["apnsId"] = .string(apnsId) } else { result["reason"] = "InvalidGatewaySignature" }
        return .object(result)
    }
}
