import Foundation
import GatewayProtocol
import Locking

/// How one message travelled as WebSocket frames.
public struct TranscriptWire: Sendable, Hashable {
    /// The WebSocket message type.
    public enum FrameKind: String, Sendable, Hashable, CaseIterable {
        /// A text message (opcode 0x1).
        case text
        /// A binary message (opcode 0x2).
        case binary
    }

    /// Text or binary.
    public var frameKind: FrameKind
    /// How many WebSocket frames carried the message (1: not fragmented), when known.
    public var frameCount: Int?
    /// The compression the message was sent or received with. Always `none`: the Gateway
    /// negotiates no WebSocket extension (no `permessage-deflate`).
    public var compression: String

    /// Creates a wire description.
    public init(frameKind: FrameKind, frameCount: Int? = nil, compression: String = "none") {
        self.frameKind = frameKind
        self.frameCount = frameCount
        self.compression = compression
    }

    /// Whether the message was split into more than one frame (`false` when unknown).
    public var isFragmented: Bool { (frameCount ?? 1) > 1 }
}

/// The injected fault that changed how one message was sent.
public struct TranscriptFault: Sendable, Hashable {
    /// The message was not sent at all.
    public var dropped: Bool
    /// The send waited this long first (real time).
    public var delayMs: Int64?
    /// The message was cut into this many frames on purpose.
    public var fragmentedInto: Int?
    /// Pings were sent between the fragments.
    public var pingsBetween: Bool
    /// The message went out as binary where text is the norm.
    public var binary: Bool

    /// Creates a fault description.
    public init(dropped: Bool = false, delayMs: Int64? = nil, fragmentedInto: Int? = nil, pingsBetween: Bool = false,
                binary: Bool = false) {
        self.dropped = dropped
        self.delayMs = delayMs
        self.fragmentedInto = fragmentedInto
        self.pingsBetween = pingsBetween
        self.binary = binary
    }

    /// Whether nothing was changed.
    public var isEmpty: Bool { !dropped && delayMs == nil && fragmentedInto == nil && !pingsBetween && !binary }

    /// E.g. `binary, fragmented into 3 with pings between`.
    public var summary: String {
        var parts: [String] = []
        if dropped { parts.append("dropped") }
        if let delayMs { parts.append("delayed \(delayMs) ms") }
        if let fragmentedInto { parts.append("fragmented into \(fragmentedInto)\(pingsBetween ? " with pings between" : "")") }
        if binary { parts.append("sent as binary") }
        return parts.joined(separator: ", ")
    }

    var json: JSONValue {
        var object: [String: JSONValue] = [:]
        if dropped { object["dropped"] = true }
        if let delayMs { object["delayMs"] = .int(delayMs) }
        if let fragmentedInto { object["fragmentedInto"] = .int(Int64(fragmentedInto)) }
        if pingsBetween { object["pingsBetween"] = true }
        if binary { object["binary"] = true }
        return .object(object)
    }

    init(json: JSONValue) throws(TranscriptEntry.DecodingError) {
        guard let object = json.objectValue else { throw .init("\"fault\" is not an object") }
        dropped = object["dropped"]?.boolValue ?? false
        delayMs = object["delayMs"]?.int64Value
        fragmentedInto = object["fragmentedInto"]?.int64Value.map { Int($0) }
        pingsBetween = object["pingsBetween"]?.boolValue ?? false
        binary = object["binary"]?.boolValue ?? false
    }
}

/// One line of a Gateway transcript: a frame in or out, a connection opening or closing.
public struct TranscriptEntry: Sendable, Hashable {
    /// What happened.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A WebSocket connection was accepted.
        case open
        /// A message arrived from the client.
        case inbound = "in"
        /// A message was sent to the client.
        case outbound = "out"
        /// An outbound message was deliberately not sent (fault injection).
        case dropped
        /// The connection ended.
        case close
        /// A note from the Gateway or the scenario (what the scenario did, an invalid frame).
        case note
        /// A fault was injected (the text says which; `conn` names the connection it targets,
        /// `-` when it applies to the whole Gateway).
        case fault
        /// A scenario step failed here (written by the conformance runner; the text is the
        /// failure message).
        case failure
    }

    /// A transcript line that could not be read.
    public struct DecodingError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong.
        public var message: String

        init(_ message: String) { self.message = message }

        /// The message.
        public var description: String { message }
    }

    /// Milliseconds since the transcript started, on the monotonic clock.
    public var monotonicMs: Int64
    /// The Gateway clock when it happened.
    public var gatewayMs: Int64
    /// The connection id (`hello-ok.server.connId`).
    public var connectionId: String
    /// What happened.
    public var kind: Kind
    /// The message as JSON, or as `{"text": ...}` / `{"binaryBase64": ...}` when it was not JSON.
    public var message: JSONValue?
    /// The close code, for `close`.
    public var closeCode: Int?
    /// The close reason or a note's text.
    public var text: String?
    /// How the message travelled (for `in`, `out` and `dropped`).
    public var wire: TranscriptWire?
    /// The injected fault that changed how the message was sent, if any.
    public var fault: TranscriptFault?

    /// Creates an entry.
    public init(monotonicMs: Int64, gatewayMs: Int64, connectionId: String, kind: Kind,
                message: JSONValue? = nil, closeCode: Int? = nil, text: String? = nil,
                wire: TranscriptWire? = nil, fault: TranscriptFault? = nil) {
        self.monotonicMs = monotonicMs
        self.gatewayMs = gatewayMs
        self.connectionId = connectionId
        self.kind = kind
        self.message = message
        self.closeCode = closeCode
        self.text = text
        self.wire = wire
        self.fault = fault.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The entry as one JSON object (one JSON Lines record).
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "t": .int(monotonicMs), "clock": .int(gatewayMs), "conn": .string(connectionId), "kind": .string(kind.rawValue),
        ]
        if let message { object["frame"] = message }
        if let closeCode { object["code"] = .int(Int64(closeCode)) }
        if let text { object["text"] = .string(text) }
        if let wire {
            object["frameKind"] = .string(wire.frameKind.rawValue)
            object["compression"] = .string(wire.compression)
            if kind != .dropped { object["fragmented"] = .bool(wire.isFragmented) }
            if let count = wire.frameCount { object["frames"] = .int(Int64(count)) }
        }
        if let fault { object["fault"] = fault.json }
        return .object(object)
    }

    /// Reads one JSON Lines record written by ``json``. Members it does not know are ignored,
    /// so transcripts of older and newer versions can be read.
    /// - Throws: `DecodingError` naming the member that is missing or has the wrong type.
    public init(json: JSONValue) throws(DecodingError) {
        guard let object = json.objectValue else { throw DecodingError("not a JSON object") }
        guard let kindText = object["kind"]?.stringValue else { throw DecodingError("no \"kind\" string") }
        guard let kind = Kind(rawValue: kindText) else {
            throw DecodingError("unknown kind \"\(kindText)\" (expected one of \(Kind.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        guard let t = object["t"]?.int64Value else { throw DecodingError("no integer \"t\"") }
        let clock = object["clock"]?.int64Value ?? 0
        let conn = object["conn"]?.stringValue ?? ""
        var wire: TranscriptWire?
        if let frameKind = object["frameKind"]?.stringValue {
            guard let parsed = TranscriptWire.FrameKind(rawValue: frameKind) else {
                throw DecodingError("unknown frameKind \"\(frameKind)\"")
            }
            wire = TranscriptWire(frameKind: parsed, frameCount: object["frames"]?.int64Value.map { Int($0) },
                                  compression: object["compression"]?.stringValue ?? "none")
        }
        var fault: TranscriptFault?
        if let value = object["fault"] { fault = try TranscriptFault(json: value) }
        self.init(monotonicMs: t, gatewayMs: clock, connectionId: conn, kind: kind, message: object["frame"],
                  closeCode: object["code"]?.int64Value.map { Int($0) }, text: object["text"]?.stringValue,
                  wire: wire, fault: fault)
    }
}

/// Every frame the Gateway saw or sent, both directions, with close codes, in order.
///
/// Secrets (tokens, passwords, bootstrap tokens, push grants) are redacted when recorded unless
/// the transcript was created with `redactSecrets: false`. Entries are kept in memory (the most
/// recent `capacity`) and, when a file is given, appended to it as JSON Lines as they happen.
public final class Transcript: Sendable {
    /// Keys whose string values are secrets.
    public static let secretKeys: Set<String> = [
        "token", "deviceToken", "bootstrapToken", "password", "sendGrant", "relayHandle",
        "approvalRuntimeToken", "agentRuntimeIdentityToken", "setupCode",
    ]

    private struct State: Sendable {
        var entries: [TranscriptEntry] = []
        var dropped = 0
    }

    private let state = Locked(State())
    private let start = ContinuousClock.now
    private let capacity: Int
    private let sink: FileSink?

    /// Whether secrets are replaced by `"<redacted>"`.
    public let redactSecrets: Bool

    /// Creates a transcript.
    /// - Parameters:
    ///   - redactSecrets: replace secret values (the default).
    ///   - capacity: how many entries to keep in memory; older ones are discarded first.
    ///   - fileURL: a JSON Lines file to append every entry to, if any.
    /// - Throws: when `fileURL` cannot be created.
    public init(redactSecrets: Bool = true, capacity: Int = 100_000, fileURL: URL? = nil) throws {
        self.redactSecrets = redactSecrets
        self.capacity = max(1, capacity)
        self.sink = try fileURL.map { try FileSink(url: $0) }
    }

    /// Milliseconds since the transcript was created, on the monotonic clock.
    public var elapsedMs: Int64 { (ContinuousClock.now - start).milliseconds }

    /// Records an entry, redacting secrets in its message.
    public func record(_ entry: TranscriptEntry) {
        var entry = entry
        if redactSecrets, let message = entry.message { entry.message = Self.redact(message) }
        state.withLock { state in
            state.entries.append(entry)
            if state.entries.count > capacity {
                state.entries.removeFirst(state.entries.count - capacity)
                state.dropped += 1
            }
        }
        sink?.append(entry.json.jsonString + "\n")
    }

    /// The entries kept in memory, oldest first.
    public var entries: [TranscriptEntry] { state.withLock { $0.entries } }

    /// The kept entries as JSON Lines.
    public func jsonLines() -> String {
        entries.map { $0.json.jsonString + "\n" }.joined()
    }

    /// Writes the kept entries to `url` as JSON Lines, replacing the file.
    /// - Throws: when the file cannot be written.
    public func write(to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(jsonLines().utf8).write(to: url, options: .atomic)
    }

    /// `value` with every secret string replaced by `"<redacted>"`.
    public static func redact(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members):
            var result: [String: JSONValue] = [:]
            for (key, member) in members {
                if secretKeys.contains(key), case .string = member {
                    result[key] = "<redacted>"
                } else if (key == "payloadJSON" || key == "paramsJSON"), case .string(let text) = member,
                          let inner = try? JSONValue(parsing: text), inner.objectValue != nil {
                    // Push registrations carry their secrets inside the JSON string.
                    result[key] = .string(redact(inner).jsonString)
                } else {
                    result[key] = redact(member)
                }
            }
            return .object(result)
        case .array(let items):
            return .array(items.map(redact))
        default:
            return value
        }
    }
}

/// Appends lines to a file; writes are serialised by a mutex.
private final class FileSink: Sendable {
    // The FileHandle is only touched while holding the mutex, which makes the sink safe to share.
    private let handle: Locked<FileHandle>

    init(url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: 0)
        self.handle = Locked(handle)
    }

    func append(_ line: String) {
        handle.withLock { handle in
            try? handle.write(contentsOf: Data(line.utf8))
        }
    }

    deinit {
        handle.withLock { try? $0.close() }
    }
}
