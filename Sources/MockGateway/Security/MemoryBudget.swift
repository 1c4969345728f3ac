import Foundation
import GatewayProtocol

/// How much the Gateway keeps in memory about the traffic it saw: the in-memory transcript and
/// the event log. Both are bounded in bytes; the oldest records give way first, and a visible
/// marker says where something was dropped. Socket buffers are bounded per connection by the
/// frame limits (64 KiB before `hello-ok`, `maxPayloadBytes` after) and `maxBufferedBytes`.
public struct GatewayMemoryBudget: Sendable, Hashable {
    /// The in-memory transcript (the file of `transcriptFile` always gets everything).
    public var transcript: TranscriptBudget
    /// The bytes of frame payloads the event log keeps; older frame events keep their frame
    /// without its payload (positions never change, so cursors stay valid).
    public var eventLogBytes: Int

    /// Creates a budget.
    public init(transcript: TranscriptBudget = .standard, eventLogBytes: Int = GatewayMemoryBudget.standardEventLogBytes) {
        self.transcript = transcript
        self.eventLogBytes = eventLogBytes
    }

    /// 32 MiB of frame payloads in the event log.
    public static let standardEventLogBytes = 32 * 1024 * 1024

    /// The default of library use and of conformance runs: a 32 MiB transcript (8 MiB per
    /// connection, frames up to 256 KiB whole) and a 32 MiB event log. A run's transcript is
    /// what the runner writes for a failing run, so it keeps a whole scenario's worth.
    public static let standard = GatewayMemoryBudget()

    /// `harness serve`, which never reads its own transcript back: 8 MiB (4 MiB per connection,
    /// frames up to 64 KiB whole) and an 8 MiB event log.
    public static let serve = GatewayMemoryBudget(
        transcript: TranscriptBudget(totalBytes: 8 << 20, connectionBytes: 4 << 20, frameBytes: 64 << 10),
        eventLogBytes: 8 << 20)
}

/// How much of the transcript is kept in memory.
public struct TranscriptBudget: Sendable, Hashable {
    /// The most bytes of entries kept for all connections together; the oldest entries are
    /// dropped first and a note at the start says how many.
    public var totalBytes: Int
    /// The most bytes of entries kept for one connection; its oldest entries are dropped first
    /// and a note in their place says how many.
    public var connectionBytes: Int
    /// The largest message kept whole; a larger one is kept as a summary (size, kind, the first
    /// bytes).
    public var frameBytes: Int
    /// How much of a frame of a connection refused before authentication is kept: a larger
    /// frame is kept as a summary with this many bytes of its start.
    public var refusedFrameBytes: Int

    /// Creates a budget.
    public init(totalBytes: Int = 32 << 20, connectionBytes: Int = 8 << 20, frameBytes: Int = 256 << 10,
                refusedFrameBytes: Int = 2 << 10) {
        self.totalBytes = max(0, totalBytes)
        self.connectionBytes = max(0, connectionBytes)
        self.frameBytes = max(0, frameBytes)
        self.refusedFrameBytes = max(0, refusedFrameBytes)
    }

    /// 32 MiB in total, 8 MiB per connection, frames up to 256 KiB whole, 2 KiB of a refused frame.
    public static let standard = TranscriptBudget()
}

extension JSONValue {
    /// Roughly the bytes this value takes in memory (on the generous side: a value's slot, a
    /// string's heap storage, a dictionary's buckets); walks the value without recursion.
    var approximateByteCount: Int {
        var total = 0
        var stack: [JSONValue] = [self]
        while let value = stack.popLast() {
            switch value {
            case .null, .bool, .int, .double: total += 24
            case .string(let text): total += 24 + Self.heapBytes(text)
            case .illFormedString(let text): total += 56 + 2 * text.utf16.count
            case .array(let items):
                total += 64 + 24 * items.count
                stack.append(contentsOf: items)
            case .object(let members):
                total += 96
                for (key, member) in members {
                    total += 56 + Self.heapBytes(key)
                    stack.append(member)
                }
            }
        }
        return total
    }

    /// A string's storage beyond its inline 15 bytes: a 32-byte header and its UTF-8.
    static func heapBytes(_ text: String) -> Int {
        let count = text.utf8.count
        return count <= 15 ? 0 : 32 + count
    }
}

extension Frame {
    /// `json.approximateByteCount`, added up member by member without building the frame's JSON
    /// (every frame in and out of the Gateway is costed for the event log's budget). Every
    /// member name of a frame is short enough to be stored inline.
    var approximateJSONByteCount: Int {
        // An object; a member slot and a string or scalar value.
        let object = 96
        let member = 56
        func string(_ text: String) -> Int { member + 24 + JSONValue.heapBytes(text) }
        func scalar() -> Int { member + 24 }
        switch self {
        case .request(let request):
            var total = object + string("req") + string(request.id) + string(request.method)
            if let params = request.params { total += member + params.approximateByteCount }
            if let traceparent = request.traceparent { total += string(traceparent) }
            return total
        case .response(let response):
            var total = object + string("res") + string(response.id) + scalar()
            if let payload = response.payload { total += member + payload.approximateByteCount }
            if let error = response.error, let encoded = try? error.json() { total += member + encoded.approximateByteCount }
            return total
        case .event(let event):
            var total = object + string("event") + string(event.event)
            if let payload = event.payload { total += member + payload.approximateByteCount }
            if event.seq != nil { total += scalar() }
            if event.stateVersion != nil { total += member + object + 2 * scalar() }
            return total
        case .cancel(let cancel):
            return object + string("cancel") + string(cancel.id)
        }
    }

    /// The frame with its body (`params` / `payload`) replaced by `{"trimmed":true,"bytes":N}`,
    /// for records that must stay small.
    func trimmed(bytes: Int) -> Frame {
        let marker: JSONValue = ["trimmed": true, "bytes": .int(Int64(bytes))]
        switch self {
        case .request(var request):
            guard request.params != nil else { return self }
            request.params = marker
            return .request(request)
        case .response(var response):
            guard response.payload != nil else { return self }
            response.payload = marker
            return .response(response)
        case .event(var event):
            guard event.payload != nil else { return self }
            event.payload = marker
            return .event(event)
        case .cancel:
            return self
        }
    }
}

extension GatewayEvent {
    /// Roughly what keeping this event costs, in bytes.
    var retainedByteCount: Int {
        // A value slot in the log, its cost entry, and a connection id (36 characters) or two.
        let base = 160
        switch self {
        case .frameIn(_, let frame, _): return base + (frame?.approximateJSONByteCount ?? 0)
        case .frameOut(_, let frame): return base + frame.approximateJSONByteCount
        case .nodeEvent(_, _, let payloadJSON, _): return base + 160 + JSONValue.heapBytes(payloadJSON ?? "")
        case .operatorRecord(let record): return base + 320 + JSONValue.heapBytes(record.decision ?? "")
        case .chatMessageStored(let message):
            return base + 256 + JSONValue.heapBytes(message.text) + JSONValue.heapBytes(message.idempotencyKey ?? "")
        case .handshakeRejected(_, let error, _):
            return base + 128 + JSONValue.heapBytes(error.message) + (error.details?.approximateByteCount ?? 0)
        case .sessionOpened: return base + 512
        case .connectionOpened, .connectionClosed: return base + 96
        default: return base + 160
        }
    }

    /// The event without its bulk: a frame without payload, a `node.event` without its
    /// `payloadJSON`, each with a marker saying how many bytes were dropped.
    var compactedForRetention: GatewayEvent {
        switch self {
        case .frameIn(let connectionId, let frame, let binary):
            guard let frame else { return self }
            return .frameIn(connectionId: connectionId, frame: frame.trimmed(bytes: retainedByteCount), binary: binary)
        case .frameOut(let connectionId, let frame):
            return .frameOut(connectionId: connectionId, frame: frame.trimmed(bytes: retainedByteCount))
        case .nodeEvent(let nodeId, let event, let payloadJSON, let connectionId):
            guard let payloadJSON, payloadJSON.utf8.count > 64 else { return self }
            let marker: JSONValue = ["trimmed": true, "bytes": .int(Int64(payloadJSON.utf8.count))]
            return .nodeEvent(nodeId: nodeId, event: event, payloadJSON: marker.jsonString, connectionId: connectionId)
        default:
            return self
        }
    }

    /// The event log's retention for `budgetBytes`.
    static func retention(budgetBytes: Int) -> EventLog<GatewayEvent>.Retention {
        EventLog<GatewayEvent>.Retention(budgetBytes: budgetBytes, cost: { $0.retainedByteCount },
                                         compact: { $0.compactedForRetention })
    }
}
