import Foundation
import GatewayProtocol

/// One line of `harness serve` output describing something that happened: a name (the `"event"`
/// member in JSON) and its fields, in a fixed order for the text form.
public struct ConsoleEventLine: Sendable, Hashable {
    /// One named value.
    public struct Field: Sendable, Hashable {
        /// The member name.
        public var key: String
        /// The value.
        public var value: JSONValue

        /// Creates a field.
        public init(_ key: String, _ value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The event name (`pairing.requested`, `invoke.result`, ...).
    public var name: String
    /// The fields, in display order. Absent optional values are left out.
    public var fields: [Field]

    /// Creates a line.
    public init(_ name: String, _ fields: [Field]) {
        self.name = name
        self.fields = fields
    }

    /// The value of the field `key`, if present.
    public subscript(key: String) -> JSONValue? { fields.first { $0.key == key }?.value }

    /// `{"event": name, …fields}`.
    public var json: JSONValue {
        var object: [String: JSONValue] = [:]
        for field in fields { object[field.key] = field.value }
        object["event"] = .string(name)
        return .object(object)
    }

    /// `name key=value …`; strings with spaces are quoted, other values are JSON.
    public var text: String {
        ([name] + fields.map { field in
            let value: String
            switch field.value {
            case .string(let text): value = ConsoleText.quoteIfNeeded(text)
            case .illFormedString(let text): value = ConsoleText.quoteIfNeeded(text.wellFormed)
            default: value = field.value.jsonString
            }
            return "\(field.key)=\(value)"
        }).joined(separator: " ")
    }

    /// The line as written.
    public func rendered(_ format: ConsoleOutputFormat) -> String {
        format == .json ? json.jsonString : text
    }

    /// The first line of `harness serve`: `listening ws://HOST:PORT`, or in JSON
    /// `{"event":"listening","url":…,"host":…,"port":…,"profile":…}`.
    public static func listening(url: String, host: String, port: Int, profile: String) -> ConsoleEventLine {
        ConsoleEventLine("listening", [.init("url", .string(url)), .init("host", .string(host)),
                                       .init("port", .int(Int64(port))), .init("profile", .string(profile))])
    }

    /// The longest frame a verbose line shows whole; a larger one is shown as
    /// `{"summary":{"bytes":N,"head":…}}`.
    public static let maximumVerboseFrameBytes = 64 * 1024

    /// The line for a gateway event, or `nil` when it is not printed: frame-level events
    /// (`frame.in`, `frame.out`, `request.handled`) appear only when `verbose` is set. Secrets
    /// in verbose frames are redacted (by key) when `redactSecrets` is set; frames larger than
    /// ``maximumVerboseFrameBytes`` are summarised.
    public static func describing(_ event: GatewayEvent, verbose: Bool = false, redactSecrets: Bool = true) -> ConsoleEventLine? {
        func s(_ key: String, _ value: String) -> Field { Field(key, .string(value)) }
        func b(_ key: String, _ value: Bool) -> Field { Field(key, .bool(value)) }
        func i(_ key: String, _ value: Int) -> Field { Field(key, .int(Int64(value))) }
        func list(_ key: String, _ values: [String]) -> Field { Field(key, .consoleList(values)) }
        func optional(_ key: String, _ value: String?) -> [Field] { value.map { [s(key, $0)] } ?? [] }
        func frameJSON(_ frame: Frame) -> JSONValue {
            let value = frame.json
            if value.approximateByteCount > maximumVerboseFrameBytes {
                let text = value.jsonString
                let head = String(text.utf8.prefix(256)) ?? String(text.prefix(64))
                return ["summary": ["bytes": .int(Int64(text.utf8.count)), "head": .string(redactSecrets ? Transcript.redactText(head) : head)]]
            }
            return redactSecrets ? Transcript.redact(value) : value
        }

        switch event {
        case .connectionOpened(let connectionId, let remoteAddress, _):
            return ConsoleEventLine("connection.opened", [s("connectionId", connectionId), s("remoteAddress", remoteAddress)])
        case .connectionClosed(let connectionId, let code, let reason):
            return ConsoleEventLine("connection.closed", [s("connectionId", connectionId), i("code", code), s("reason", reason)])
        case .frameIn(let connectionId, let frame, let binary):
            guard verbose else { return nil }
            return ConsoleEventLine("frame.in", [s("connectionId", connectionId), b("binary", binary),
                                                 Field("frame", frame.map(frameJSON) ?? .null)])
        case .frameOut(let connectionId, let frame):
            guard verbose else { return nil }
            return ConsoleEventLine("frame.out", [s("connectionId", connectionId), Field("frame", frameJSON(frame))])
        case .handshakeRejected(let connectionId, let error, let closeCode):
            return ConsoleEventLine("handshake.rejected", [s("connectionId", connectionId), s("code", error.code),
                                                           s("message", error.message)]
                + optional("detailCode", error.details?["code"]?.stringValue) + [i("closeCode", closeCode)])
        case .sessionOpened(let session):
            return ConsoleEventLine("session.opened", [s("connectionId", session.connectionId), s("role", session.role.rawValue),
                                                       list("scopes", session.scopes)]
                + optional("deviceId", session.deviceId)
                + [s("clientId", session.clientId), s("clientMode", session.clientMode), i("protocol", session.protocolVersion),
                   s("authMethod", session.authMethod)]
                + optional("signatureVersion", session.signatureVersion))
        case .pairingRequested(let info):
            return ConsoleEventLine("pairing.requested", [s("requestId", info.requestId), s("deviceId", info.deviceId),
                                                          s("role", info.role.rawValue), list("roles", info.roles.map(\.rawValue)),
                                                          list("scopes", info.scopes)])
        case .pairingRefreshed(let info):
            return ConsoleEventLine("pairing.refreshed", [s("requestId", info.requestId), s("deviceId", info.deviceId),
                                                          s("role", info.role.rawValue), list("scopes", info.scopes)])
        case .pairingSuperseded(let oldRequestIds, let newRequestId, let deviceId):
            return ConsoleEventLine("pairing.superseded", [list("oldRequestIds", oldRequestIds), s("requestId", newRequestId),
                                                           s("deviceId", deviceId)])
        case .pairingResolved(let requestId, let deviceId, let decision):
            return ConsoleEventLine("pairing.resolved", [s("requestId", requestId), s("deviceId", deviceId),
                                                         s("decision", decision.rawValue)])
        case .pairingExpired(let requestId, let deviceId):
            return ConsoleEventLine("pairing.expired", [s("requestId", requestId), s("deviceId", deviceId)])
        case .nodeConnected(let nodeId, let connectionId):
            return ConsoleEventLine("node.connected", [s("nodeId", nodeId), s("connectionId", connectionId)])
        case .nodeDisconnected(let nodeId, let connectionId):
            return ConsoleEventLine("node.disconnected", [s("nodeId", nodeId), s("connectionId", connectionId)])
        case .invokeSent(let id, let nodeId, let command, let connectionId):
            return ConsoleEventLine("invoke.sent", [s("id", id), s("nodeId", nodeId), s("command", command),
                                                    s("connectionId", connectionId)])
        case .invokeResult(let id, let nodeId, let ok, let matched, let connectionId):
            return ConsoleEventLine("invoke.result", [s("id", id), s("nodeId", nodeId), b("ok", ok), b("matched", matched),
                                                      s("connectionId", connectionId)])
        case .nodeEvent(let nodeId, let name, let payloadJSON, let connectionId):
            return ConsoleEventLine("node.event", [s("nodeId", nodeId), s("name", name)] + optional("payloadJSON", payloadJSON)
                + [s("connectionId", connectionId)])
        case .presenceHandled(let nodeId, let trigger, let handled, let reason):
            return ConsoleEventLine("presence.alive", [s("nodeId", nodeId)] + optional("trigger", trigger)
                + [b("handled", handled), s("reason", reason.rawValue)])
        case .pushRegistered(let nodeId, let transport, let accepted, let gatewayDeviceId):
            return ConsoleEventLine("push.registered", [s("nodeId", nodeId), s("transport", transport.rawValue), b("accepted", accepted)]
                + optional("gatewayDeviceId", gatewayDeviceId))
        case .pushSent(let nodeId, let transport, let pushType, let accepted):
            return ConsoleEventLine("push.sent", [s("nodeId", nodeId), s("transport", transport.rawValue), s("pushType", pushType),
                                                  b("accepted", accepted)])
        case .pendingActionQueued(let nodeId, let actionId, let command):
            return ConsoleEventLine("pending.queued", [s("nodeId", nodeId), s("actionId", actionId), s("command", command)])
        case .requestHandled(let connectionId, let method, let ok, let errorCode):
            guard verbose else { return nil }
            return ConsoleEventLine("request.handled", [s("connectionId", connectionId), s("method", method), b("ok", ok)]
                + optional("errorCode", errorCode))
        case .deviceToken(let deviceId, let role, let action):
            return ConsoleEventLine("device.token", [s("deviceId", deviceId), s("role", role.rawValue), s("action", action.rawValue)])
        case .faultInjected(let description):
            return ConsoleEventLine("fault.injected", [s("description", description)])
        case .stateSaveFailed(let message):
            return ConsoleEventLine("state.saveFailed", [s("message", message)])
        case .shutdown:
            return ConsoleEventLine("gateway.shutdown", [])
        case .restarted:
            return ConsoleEventLine("gateway.restarted", [])
        case .operatorRecord(let record):
            return describing(record)
        case .chatMessageStored(let message):
            return ConsoleEventLine("chat.stored", [s("sessionKey", message.sessionKey), s("role", message.role.rawValue),
                                                    s("messageId", message.id), Field("seq", .int(Int64(message.seq)))])
        case .canvasRequest(let info):
            var fields = [s("path", info.path), Field("status", .int(Int64(info.status)))]
            if let by = info.authorizedBy { fields.append(s("authorizedBy", by)) }
            if let nodeId = info.nodeId { fields.append(s("nodeId", nodeId)) }
            return ConsoleEventLine("canvas.request", fields)
        case .watchRequest(let method, let path):
            // One per poll: frame-level detail, shown with --verbose only.
            guard verbose else { return nil }
            return ConsoleEventLine("watch.request", [s("method", method), s("path", path)])
        case .watchAnswered(let info):
            // One per poll: frame-level detail, shown with --verbose only.
            guard verbose else { return nil }
            var fields = [s("method", info.method), s("path", info.path), Field("status", .int(Int64(info.status)))]
            if let credential = info.credential { fields.append(s("credential", credential)) }
            if let reason = info.reason { fields.append(s("reason", reason)) }
            if let event = info.event { fields.append(s("event", event)) }
            return ConsoleEventLine("watch.answer", fields)
        case .methodUnserved(let method, let connectionId):
            return ConsoleEventLine("method.unserved", [s("method", method), s("connectionId", connectionId)])
        }
    }

    /// `approval.requested`, `approval.resolved`, `approval.resolveAttempt` and the `question.*`
    /// counterparts.
    static func describing(_ record: OperatorRecordEvent) -> ConsoleEventLine {
        var fields = [Field("id", .string(record.id)), Field("status", .string(record.status.rawValue))]
        switch (record.kind, record.action) {
        case (.question, .resolved):
            // The question's decision is its answers as JSON text.
            if let text = record.decision, let answers = try? JSONValue(parsing: text) {
                fields.append(Field("answers", answers["answers"] ?? answers))
            }
        case (_, .requested):
            break
        default:
            fields.append(Field("decision", record.decision.map(JSONValue.string) ?? .null))
        }
        if record.action == .resolveAttempt {
            if let applied = record.applied { fields.append(Field("applied", .bool(applied))) }
            if let method = record.method { fields.append(Field("method", .string(method))) }
        }
        if let surface = record.surface, record.action != .requested { fields.append(Field("surface", .string(surface))) }
        return ConsoleEventLine("\(record.kind).\(record.action.rawValue)", fields)
    }
}
