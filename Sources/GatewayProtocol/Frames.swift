import Foundation

/// The error object of a failed response (`res` with `ok:false`).
///
/// Swift clients cannot decode an error without `message`, so both `code` and `message` are
/// required (docs/protocol.md §10.1).
public struct ErrorShape: Sendable, Hashable, Codable {
    /// A top-level code such as `INVALID_REQUEST` or `NOT_PAIRED`.
    public var code: String
    /// Human-readable text; never empty on the wire.
    public var message: String
    /// Structured detail; for connect failures `details.code` drives client policy.
    public var details: JSONValue?
    /// Whether the client may retry.
    public var retryable: Bool?
    /// How long the client should wait before retrying, in milliseconds.
    public var retryAfterMs: Int?

    /// Creates an error.
    public init(code: String, message: String, details: JSONValue? = nil, retryable: Bool? = nil, retryAfterMs: Int? = nil) {
        self.code = code
        self.message = message
        self.details = details
        self.retryable = retryable
        self.retryAfterMs = retryAfterMs
    }

    /// `details.code` when `details` is an object holding a string `code`.
    public var detailCode: String? { details?["code"]?.stringValue }
}

/// A request frame (`type:"req"`), sent by clients.
public struct RequestFrame: Sendable, Hashable {
    /// Request id, echoed in the response.
    public var id: String
    /// The method name, for example `connect` or `node.event`.
    public var method: String
    /// Parameters, any JSON.
    public var params: JSONValue?
    /// Optional W3C trace context (at most 128 characters).
    public var traceparent: String?

    /// Creates a request.
    public init(id: String, method: String, params: JSONValue? = nil, traceparent: String? = nil) {
        self.id = id
        self.method = method
        self.params = params
        self.traceparent = traceparent
    }
}

/// A response frame (`type:"res"`), exactly one per request.
public struct ResponseFrame: Sendable, Hashable {
    /// The id of the request being answered.
    public var id: String
    /// Success flag.
    public var ok: Bool
    /// Result payload on success.
    public var payload: JSONValue?
    /// Error on failure.
    public var error: ErrorShape?

    /// Creates a response.
    public init(id: String, ok: Bool, payload: JSONValue? = nil, error: ErrorShape? = nil) {
        self.id = id
        self.ok = ok
        self.payload = payload
        self.error = error
    }

    /// A successful response.
    public static func success(id: String, payload: JSONValue?) -> ResponseFrame {
        ResponseFrame(id: id, ok: true, payload: payload)
    }

    /// A failed response.
    public static func failure(id: String, error: ErrorShape) -> ResponseFrame {
        ResponseFrame(id: id, ok: false, error: error)
    }
}

/// The `stateVersion` counters carried by `presence` and `health` events.
public struct StateVersion: Sendable, Hashable, Codable {
    /// Presence version.
    public var presence: Int
    /// Health version.
    public var health: Int

    /// Creates a state version.
    public init(presence: Int, health: Int) {
        self.presence = presence
        self.health = health
    }
}

/// An event frame (`type:"event"`), sent by the Gateway.
public struct EventFrame: Sendable, Hashable {
    /// The event name, for example `tick` or `node.invoke.request`.
    public var event: String
    /// Event payload.
    public var payload: JSONValue?
    /// Per-connection sequence number; absent on `connect.challenge` and targeted events.
    public var seq: Int?
    /// State counters on `presence` and `health` events.
    public var stateVersion: StateVersion?

    /// Creates an event.
    public init(event: String, payload: JSONValue? = nil, seq: Int? = nil, stateVersion: StateVersion? = nil) {
        self.event = event
        self.payload = payload
        self.seq = seq
        self.stateVersion = stateVersion
    }
}

/// A cancel frame (`type:"cancel"`), newest protocol only: cancels one of the sender's requests.
public struct CancelFrame: Sendable, Hashable {
    /// The id of the request to cancel.
    public var id: String

    /// Creates a cancel frame.
    public init(id: String) { self.id = id }
}

/// One protocol frame: exactly one JSON document per WebSocket message.
public enum Frame: Sendable, Hashable {
    /// `type:"req"`.
    case request(RequestFrame)
    /// `type:"res"`.
    case response(ResponseFrame)
    /// `type:"event"`.
    case event(EventFrame)
    /// `type:"cancel"`.
    case cancel(CancelFrame)
}

/// Why bytes could not be read as a frame.
public struct FrameDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A sentence naming what is wrong, suitable for an `INVALID_REQUEST` message.
    public var description: String
    /// Why the bytes are not JSON, when that is the problem (`.tooDeep` for over-deep nesting).
    public var parseError: JSONValue.ParseError?

    /// Creates an error with a description.
    public init(_ description: String) {
        self.description = description
        self.parseError = nil
    }

    /// Creates the error for bytes that are not JSON.
    public init(_ description: String, parseError: JSONValue.ParseError) {
        self.description = description
        self.parseError = parseError
    }
}

extension Frame {
    /// Decodes a frame, tolerating unknown fields.
    /// - Throws: `FrameDecodingError` for invalid JSON (with its `parseError`), a non-object, an
    ///   unknown `type`, or a missing or mistyped required field.
    public init(decoding data: Data) throws {
        let value: JSONValue
        do {
            value = try JSONValue.parse(data)
        } catch {
            throw FrameDecodingError("invalid JSON", parseError: error)
        }
        try self.init(json: value)
    }

    /// Decodes a frame from a JSON value, tolerating unknown fields.
    /// - Throws: `FrameDecodingError` as for `init(decoding:)`.
    public init(json value: JSONValue) throws {
        guard let object = value.objectValue else { throw FrameDecodingError("frame is not an object") }
        guard let type = object["type"]?.stringValue else { throw FrameDecodingError("frame has no type") }
        func string(_ key: String) throws -> String {
            guard let text = object[key]?.stringValue, !text.isEmpty else {
                throw FrameDecodingError("\(type) frame needs a non-empty string \(key)")
            }
            return text
        }
        func optional(_ key: String) -> JSONValue? {
            guard let member = object[key] else { return nil }
            return member
        }
        switch type {
        case "req":
            let traceparent = object["traceparent"]?.stringValue
            self = .request(RequestFrame(id: try string("id"), method: try string("method"),
                                         params: optional("params"), traceparent: traceparent))
        case "res":
            guard let ok = object["ok"]?.boolValue else { throw FrameDecodingError("res frame needs a boolean ok") }
            var error: ErrorShape?
            if let raw = object["error"], !raw.isNull {
                do { error = try raw.decode(as: ErrorShape.self) } catch {
                    throw FrameDecodingError("res frame has a malformed error")
                }
            }
            self = .response(ResponseFrame(id: try string("id"), ok: ok, payload: optional("payload"), error: error))
        case "event":
            var seq: Int?
            if let raw = object["seq"], !raw.isNull {
                guard let number = raw.int64Value, number >= 0 else { throw FrameDecodingError("event seq must be a non-negative integer") }
                seq = Int(number)
            }
            var stateVersion: StateVersion?
            if let raw = object["stateVersion"], !raw.isNull {
                stateVersion = try? raw.decode(as: StateVersion.self)
            }
            self = .event(EventFrame(event: try string("event"), payload: optional("payload"), seq: seq, stateVersion: stateVersion))
        case "cancel":
            self = .cancel(CancelFrame(id: try string("id")))
        default:
            throw FrameDecodingError("unknown frame type \(type)")
        }
    }

    /// The frame as a JSON value; optional members that are `nil` are omitted.
    public var json: JSONValue {
        var object: [String: JSONValue] = [:]
        switch self {
        case .request(let frame):
            object = ["type": "req", "id": .string(frame.id), "method": .string(frame.method)]
            if let params = frame.params { object["params"] = params }
            if let traceparent = frame.traceparent { object["traceparent"] = .string(traceparent) }
        case .response(let frame):
            object = ["type": "res", "id": .string(frame.id), "ok": .bool(frame.ok)]
            if let payload = frame.payload { object["payload"] = payload }
            if let error = frame.error, let encoded = try? error.json() { object["error"] = encoded }
        case .event(let frame):
            object = ["type": "event", "event": .string(frame.event)]
            if let payload = frame.payload { object["payload"] = payload }
            if let seq = frame.seq { object["seq"] = .int(Int64(seq)) }
            if let stateVersion = frame.stateVersion { object["stateVersion"] = stateVersion.json }
        case .cancel(let frame):
            object = ["type": "cancel", "id": .string(frame.id)]
        }
        return .object(object)
    }

    /// The compact JSON encoding of the frame (sorted keys).
    public func encoded() -> Data { json.encoded() }
}
