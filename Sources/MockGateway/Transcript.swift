import Foundation
import GatewayProtocol
import Synchronization

/// One line of a Gateway transcript: a frame in or out, a connection opening or closing.
public struct TranscriptEntry: Sendable, Hashable {
    /// What happened.
    public enum Kind: String, Sendable, Hashable {
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
        /// A note from the Gateway or the scenario (a fault that was injected, for example).
        case note
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

    /// Creates an entry.
    public init(monotonicMs: Int64, gatewayMs: Int64, connectionId: String, kind: Kind,
                message: JSONValue? = nil, closeCode: Int? = nil, text: String? = nil) {
        self.monotonicMs = monotonicMs
        self.gatewayMs = gatewayMs
        self.connectionId = connectionId
        self.kind = kind
        self.message = message
        self.closeCode = closeCode
        self.text = text
    }

    /// The entry as one JSON object (one JSON Lines record).
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "t": .int(monotonicMs), "clock": .int(gatewayMs), "conn": .string(connectionId), "kind": .string(kind.rawValue),
        ]
        if let message { object["frame"] = message }
        if let closeCode { object["code"] = .int(Int64(closeCode)) }
        if let text { object["text"] = .string(text) }
        return .object(object)
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

    private let state = Mutex(State())
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
    private let handle: Mutex<FileHandle>

    init(url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: 0)
        self.handle = Mutex(handle)
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
