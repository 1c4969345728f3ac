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

/// One line of a Gateway transcript: a frame in or out, a connection opening or closing, a note,
/// a fault, an operator action.
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
        /// An operator action through the Gateway's scripting API (the `serve` console, a
        /// scenario, a test): `approve`, `reject`, `wake`, ... The text says what was asked for;
        /// `conn` is `-`. Written before the action, so the frames it causes follow it.
        case operatorAction = "operator"
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
/// Secrets are redacted when recorded (``SecretRedactor``: by key and by value, in parsed and in
/// raw frames, in the upgrade request, in notes and close reasons) unless the transcript was
/// created with `redactSecrets: false`.
///
/// Memory is bounded by a ``TranscriptBudget``: a message larger than `frameBytes` is kept in
/// memory as a summary (size, kind, the first bytes), frames of connections refused before
/// authentication as a summary of `refusedFrameBytes`, and when a connection's entries exceed
/// `connectionBytes` or all entries exceed `totalBytes`, the oldest are dropped, with a `note`
/// entry in their place saying how many. When a file is given, every entry is appended to it
/// whole as it happens (JSON Lines), whatever the memory budget keeps.
public final class Transcript: Sendable {
    /// Keys whose string values are secrets (see ``SecretRedactor/isSecretKey(_:)`` for the
    /// full rule).
    public static let secretKeys: Set<String> = [
        "token", "deviceToken", "bootstrapToken", "password", "sendGrant", "relayHandle",
        "approvalRuntimeToken", "agentRuntimeIdentityToken", "setupCode",
    ]

    private enum Slot: Sendable {
        case entry(TranscriptEntry, cost: Int)
        /// Entries of one connection dropped over its budget, shown where the first one was.
        case marker(TranscriptEntry, count: Int, bytes: Int)
        case gone
    }

    private struct ConnectionUsage: Sendable {
        var bytes = 0
        /// Positions of its entries still kept, oldest first (from `head`).
        var kept: [Int] = []
        var head = 0
        /// The position of its marker slot, while that is kept.
        var marker: Int?

        mutating func popOldest() -> Int? {
            guard head < kept.count else { return nil }
            defer {
                head += 1
                if head > 256, head * 2 > kept.count {
                    kept.removeFirst(head)
                    head = 0
                }
            }
            return kept[head]
        }

        var isEmpty: Bool { head >= kept.count && marker == nil && bytes == 0 }
    }

    private struct State: Sendable {
        var slots: [Slot] = []
        /// The position of `slots[0]`.
        var base = 0
        /// The index in `slots` of the first slot still kept.
        var head = 0
        var bytes = 0
        var droppedAtStart = 0
        var droppedAtStartBytes = 0
        var connections: [String: ConnectionUsage] = [:]

        var keptSlots: Int { slots.count - head }
    }

    private let state = Locked(State())
    private let start = ContinuousClock.now
    private let capacity: Int
    private let sink: FileSink?

    /// Whether secrets are replaced by `"<redacted>"`.
    public let redactSecrets: Bool
    /// The redactor every entry goes through (shared with the Gateway's console).
    public let redactor: SecretRedactor
    /// What is kept in memory.
    public let budget: TranscriptBudget

    /// Creates a transcript.
    /// - Parameters:
    ///   - redactSecrets: replace secret values (the default); ignored when `redactor` is given.
    ///   - capacity: how many entries to keep in memory at most; older ones are discarded first.
    ///   - budget: how many bytes to keep in memory.
    ///   - fileURL: a JSON Lines file to append every entry to, whole, if any.
    ///   - redactor: the redactor to use (a new one when `nil`).
    /// - Throws: when `fileURL` cannot be created.
    public init(redactSecrets: Bool = true, capacity: Int = 100_000, budget: TranscriptBudget = .standard,
                fileURL: URL? = nil, redactor: SecretRedactor? = nil) throws {
        let redactor = redactor ?? SecretRedactor(enabled: redactSecrets)
        self.redactor = redactor
        self.redactSecrets = redactor.isEnabled
        self.capacity = max(1, capacity)
        self.budget = budget
        self.sink = try fileURL.map { try FileSink(url: $0) }
    }

    /// Milliseconds since the transcript was created, on the monotonic clock.
    public var elapsedMs: Int64 { (ContinuousClock.now - start).milliseconds }

    /// Whether entries are also written to a file.
    public var hasFile: Bool { sink != nil }

    /// Records an entry, redacting secrets in its message and texts.
    public func record(_ entry: TranscriptEntry) {
        var entry = entry
        if redactor.isEnabled {
            if let message = entry.message { entry.message = redactor.redact(message) }
            if let text = entry.text { entry.text = redactor.redact(text: text) }
        }
        sink?.append(entry.json.jsonString + "\n")
        keep(entry, limit: budget.frameBytes, why: "larger than the \(Self.format(bytes: budget.frameBytes)) kept per frame in memory")
    }

    /// Records a message a client sent, from its bytes: parsed when it is JSON (`parsed`), as
    /// redacted text or base64 otherwise. With `refused`, the connection was refused before it
    /// authenticated, and memory keeps at most `refusedFrameBytes` of it.
    func recordInbound(connectionId: String, gatewayMs: Int64, bytes: UnsafeBufferPointer<UInt8>, binary: Bool,
                       wire: TranscriptWire? = nil, parsed: JSONValue?, refused: Bool) {
        let limit = refused ? budget.refusedFrameBytes : budget.frameBytes
        let summarized = bytes.count > limit
        var entry = TranscriptEntry(monotonicMs: elapsedMs, gatewayMs: gatewayMs, connectionId: connectionId, kind: .inbound,
                                    wire: wire)
        // The whole message is only redacted and encoded when it is kept whole somewhere.
        if sink != nil || !summarized {
            entry.message = parsed.map { redactor.redact($0) } ?? rawMessage(bytes, binary: binary)
            sink?.append(entry.json.jsonString + "\n")
        } else if let parsed {
            redactor.learnSecrets(in: parsed)
        }
        guard summarized else {
            keep(entry, limit: budget.frameBytes, why: "larger than the \(Self.format(bytes: budget.frameBytes)) kept per frame in memory")
            return
        }
        entry.message = summary(
            of: bytes, binary: binary, parsed: parsed != nil, head: refused ? budget.refusedFrameBytes : 256,
            why: refused ? "frame of a connection refused before authentication"
                : "larger than the \(Self.format(bytes: budget.frameBytes)) kept per frame in memory")
        keep(entry, limit: .max, why: "")
    }

    /// A message that is not JSON: `{"text": …}` for UTF-8 (binary messages too: the entry's
    /// `wire` says which), `{"binaryBase64": …}` otherwise; secrets redacted either way.
    private func rawMessage(_ bytes: UnsafeBufferPointer<UInt8>, binary: Bool) -> JSONValue {
        if let text = String(validating: bytes, as: UTF8.self) {
            return ["text": .string(redactor.redact(text: text))]
        }
        let masked = redactor.isEnabled ? Array(redactor.redact(text: String(decoding: bytes, as: UTF8.self)).utf8) : Array(bytes)
        return ["binaryBase64": .string(Data(masked).base64EncodedString())]
    }

    /// `{"summary": {bytes, kind, head | headBase64, why}}`.
    private func summary(of bytes: UnsafeBufferPointer<UInt8>, binary: Bool, parsed: Bool, head: Int, why: String) -> JSONValue {
        var summary: [String: JSONValue] = [
            "bytes": .int(Int64(bytes.count)), "kind": .string(parsed ? "json" : binary ? "binary" : "text"), "why": .string(why),
        ]
        var prefix = Array(bytes.prefix(head))
        // Do not cut a UTF-8 sequence.
        while !prefix.isEmpty, String(validating: prefix, as: UTF8.self) == nil, bytes.count > prefix.count,
              prefix.count > head - 4 {
            prefix.removeLast()
        }
        if let text = String(validating: prefix, as: UTF8.self) {
            summary["head"] = .string(redactor.redact(text: text))
        } else {
            summary["headBase64"] = .string(Data(prefix).base64EncodedString())
        }
        return ["summary": .object(summary)]
    }

    /// Keeps `entry` in memory, as a summary when its message is over `limit`.
    private func keep(_ entry: TranscriptEntry, limit: Int, why: @autoclosure () -> String) {
        var entry = entry
        var cost = 96 + entry.connectionId.utf8.count + (entry.text?.utf8.count ?? 0)
        if let message = entry.message {
            let size = message.approximateByteCount
            if size > limit {
                let text = message.jsonString
                let head = String(text.utf8.prefix(256)) ?? String(text.prefix(64))
                entry.message = ["summary": ["bytes": .int(Int64(text.utf8.count)), "kind": "json", "head": .string(head),
                                             "why": .string(why())]]
                cost += entry.message?.approximateByteCount ?? 0
            } else {
                cost += size
            }
        }
        state.withLock { state in
            let position = state.base + state.slots.count
            state.slots.append(.entry(entry, cost: cost))
            state.bytes += cost
            // One lookup for the connection's usage, taken out of the table while it changes (a
            // value still in the table would make the change copy its `kept` positions).
            var usage = state.connections.removeValue(forKey: entry.connectionId) ?? ConnectionUsage()
            usage.bytes += cost
            usage.kept.append(position)
            if usage.bytes > budget.connectionBytes { trimConnection(&state, &usage, entry.connectionId) }
            state.connections[entry.connectionId] = usage
            trimTotal(&state)
        }
    }

    /// Drops the oldest entries of `connectionId` (whose usage is `usage`, out of
    /// `state.connections` meanwhile) while it is over its budget.
    private func trimConnection(_ state: inout State, _ usage: inout ConnectionUsage, _ connectionId: String) {
        while usage.bytes > budget.connectionBytes, let position = usage.popOldest() {
            let index = position - state.base
            guard index >= state.head, index < state.slots.count, case .entry(let entry, let cost) = state.slots[index] else {
                continue
            }
            usage.bytes -= cost
            state.bytes -= cost
            if let marker = usage.marker, marker - state.base >= state.head,
               case .marker(let note, let count, let bytes) = state.slots[marker - state.base] {
                state.slots[marker - state.base] = .marker(note, count: count + 1, bytes: bytes + cost)
                state.slots[index] = .gone
            } else {
                let note = TranscriptEntry(monotonicMs: entry.monotonicMs, gatewayMs: entry.gatewayMs, connectionId: connectionId,
                                           kind: .note)
                state.slots[index] = .marker(note, count: 1, bytes: cost)
                usage.marker = position
            }
        }
    }

    /// Drops the oldest slots while everything is over the total budget or the capacity.
    private func trimTotal(_ state: inout State) {
        while state.head < state.slots.count, state.bytes > budget.totalBytes || state.keptSlots > capacity {
            let position = state.base + state.head
            switch state.slots[state.head] {
            case .entry(let entry, let cost):
                state.bytes -= cost
                state.droppedAtStart += 1
                state.droppedAtStartBytes += cost
                if var usage = state.connections[entry.connectionId] {
                    if usage.head < usage.kept.count, usage.kept[usage.head] == position { _ = usage.popOldest() }
                    usage.bytes -= cost
                    state.connections[entry.connectionId] = usage.isEmpty ? nil : usage
                }
            case .marker(let note, let count, let bytes):
                state.droppedAtStart += count
                state.droppedAtStartBytes += bytes
                if var usage = state.connections[note.connectionId], usage.marker == position {
                    usage.marker = nil
                    state.connections[note.connectionId] = usage.isEmpty ? nil : usage
                }
            case .gone:
                break
            }
            state.slots[state.head] = .gone
            state.head += 1
        }
        if state.head > 1_024, state.head * 2 > state.slots.count {
            state.slots.removeFirst(state.head)
            state.base += state.head
            state.head = 0
        }
    }

    /// The entries kept in memory, oldest first, with a `note` wherever entries were dropped.
    public var entries: [TranscriptEntry] {
        state.withLock { state in
            var result: [TranscriptEntry] = []
            result.reserveCapacity(state.keptSlots + 1)
            if state.droppedAtStart > 0 {
                var firstTime: (Int64, Int64) = (elapsedMs, 0)
                for slot in state.slots[state.head...] {
                    if case .entry(let entry, _) = slot { firstTime = (entry.monotonicMs, entry.gatewayMs); break }
                }
                result.append(TranscriptEntry(
                    monotonicMs: firstTime.0, gatewayMs: firstTime.1, connectionId: "-", kind: .note,
                    text: "transcript: \(state.droppedAtStart) earlier entries (\(Self.format(bytes: state.droppedAtStartBytes))) "
                        + "dropped to stay within the \(Self.format(bytes: budget.totalBytes)) memory budget"))
            }
            for slot in state.slots[state.head...] {
                switch slot {
                case .entry(let entry, _): result.append(entry)
                case .marker(var note, let count, let bytes):
                    note.text = "transcript: \(count) entries of this connection (\(Self.format(bytes: bytes))) dropped "
                        + "to stay within its \(Self.format(bytes: budget.connectionBytes)) memory budget"
                    result.append(note)
                case .gone: break
                }
            }
            return result
        }
    }

    /// The bytes the kept entries cost, as estimated for the budget.
    public var retainedBytes: Int { state.withLock { $0.bytes } }

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

    /// `value` with every string under a secret key replaced by `"<redacted>"` (by key only;
    /// a Gateway's ``redactor`` also redacts by value).
    public static func redact(_ value: JSONValue) -> JSONValue {
        keyOnlyRedactor.redact(value)
    }

    /// `text` with secret members and `key=value` pairs redacted (by key only).
    public static func redactText(_ text: String) -> String {
        keyOnlyRedactor.redact(text: text)
    }

    private static let keyOnlyRedactor = SecretRedactor(enabled: true, learning: false)

    /// `12 KiB`, `3.5 MiB`.
    static func format(bytes: Int) -> String {
        if bytes >= 1 << 20 {
            let mib = Double(bytes) / Double(1 << 20)
            return mib == mib.rounded() ? "\(Int(mib)) MiB" : String(format: "%.1f MiB", mib)
        }
        if bytes >= 1 << 10 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}

/// Appends lines to a file; writes are serialised by a lock.
private final class FileSink: Sendable {
    // The FileHandle is only touched while holding the lock, which makes the sink safe to share.
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
