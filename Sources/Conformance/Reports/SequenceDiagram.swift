import Foundation
import GatewayProtocol
import MockGateway

/// A transcript laid out as a sequence diagram: one lifeline for the operator and the scenario
/// (operator actions, notes), one for the Gateway, and lifelines for the client connections; one
/// row per transcript entry, runs of ticks and other long repeats folded into one row.
///
/// When a transcript has more than ``separateLaneLimit`` connections, a connection that opens
/// after another one closed takes over its lifeline (the lowest free one), so that a run with
/// many short-lived connections (reconnects, refused connects) stays narrow enough to read: a
/// lifeline lists the connections it carried, and each `open` row on it names its connection.
///
/// Pure: built from transcript entries, rendered by `HTMLReporter`.
public struct SequenceDiagram: Sendable, Hashable {
    /// A lifeline.
    public struct Lane: Sendable, Hashable {
        /// What the lifeline stands for.
        public enum Kind: String, Sendable, Hashable {
            /// The scenario and operator side: notes, stimuli, injected faults that are not the Gateway's.
            case scenario
            /// The Gateway.
            case gateway
            /// One client connection.
            case connection
        }

        /// What it stands for.
        public var kind: Kind
        /// The first connection's id, for connection lifelines.
        public var connectionId: String?
        /// The head line: `operator · scenario`, `Gateway`, `#2 operator`; for a lifeline that
        /// carried several connections one after the other, its first and last connection
        /// (`#2 operator, #3 node`, `#2 operator … #9 node`).
        public var title: String
        /// A second line: the client id and mode, the short connection id (of the first
        /// connection, `+ N later` when it carried more).
        public var subtitle: String
        /// The connections it carried, one after the other, in order.
        public var spans: [Span]

        /// The row index of its first `open` (connections), if recorded.
        public var openedAt: Int? { spans.first?.openedAt }
        /// The row index of its last `close` (connections), if recorded.
        public var closedAt: Int? { spans.last?.closedAt }
    }

    /// One connection on a connection lifeline.
    public struct Span: Sendable, Hashable {
        /// The connection id.
        public var connectionId: String
        /// The connection's number and role: `#3 node`.
        public var title: String
        /// The row index of its `open`, if recorded (else its first row).
        public var openedAt: Int?
        /// The row index of its `close`, if recorded.
        public var closedAt: Int?
    }

    /// What a row shows.
    public enum RowKind: String, Sendable, Hashable {
        /// A message from the client (arrow to the Gateway).
        case inbound = "in"
        /// A message to the client (arrow from the Gateway).
        case outbound = "out"
        /// A message a fault kept off the wire.
        case dropped
        /// A connection opened.
        case open
        /// A connection ended.
        case close
        /// A note.
        case note
        /// An injected fault.
        case fault
        /// Where a scenario step failed.
        case failure
        /// An operator action (console, scenario or test through the scripting API), drawn on
        /// the operator lifeline.
        case operatorAction = "operator"
    }

    /// One transcript entry as a row.
    public struct Row: Sendable, Hashable {
        /// The entry's position in the transcript.
        public var index: Int
        /// What it shows.
        public var kind: RowKind
        /// The lane it belongs to (the connection's for messages, opens and closes).
        public var lane: Int
        /// The arrow's or marker's text: `connect #A1401A72`, `res connect ✗ DEVICE_AUTH_...`,
        /// `tick seq 4`, a note's text.
        public var label: String
        /// Small tags: `binary`, `3 frames`, `fault: dropped`.
        public var badges: [String]
        /// The Gateway clock in milliseconds since the first entry.
        public var clockOffsetMs: Int64
        /// The Gateway clock (Unix milliseconds).
        public var clockMs: Int64
        /// Wall milliseconds since the transcript started.
        public var wallMs: Int64
        /// The message, for message rows.
        public var message: JSONValue?
        /// The wire line shown when a message is expanded (`text, 1 frame, compression none`).
        public var wire: String?
        /// What makes rows a repeat of each other (`nil`: never folded).
        var repeatSignature: String?
    }

    /// A row, or a folded run of similar rows.
    public enum Item: Sendable, Hashable {
        /// One row.
        case row(Row)
        /// `count` similar rows under one summary line.
        case repeated(label: String, rows: [Row])
    }

    /// The lifelines: operator and scenario, Gateway, then connections in the order they
    /// opened, later connections reusing the lifelines of closed ones.
    public var lanes: [Lane]
    /// The rows, some folded.
    public var items: [Item]
    /// The Gateway clock of the first entry.
    public var startClockMs: Int64

    /// Up to this many connections get a lifeline each; with more, closed connections' lifelines
    /// are reused (five connection lifelines fit a 1,400 px window).
    public static let separateLaneLimit = 5
    /// Runs of at least this many ticks fold into one row.
    public static let tickFoldThreshold = 3
    /// Runs of at least this many other identical rows fold into one row.
    public static let repeatFoldThreshold = 5

    /// Lays out `entries`.
    public init(entries: [TranscriptEntry]) {
        var lanes = [
            Lane(kind: .scenario, connectionId: nil, title: "operator · scenario", subtitle: "actions, notes, faults", spans: []),
            Lane(kind: .gateway, connectionId: nil, title: "Gateway", subtitle: "fake Gateway", spans: []),
        ]
        var laneOf: [String: Int] = [:]
        var connectionCount = 0
        let reuseLanes = Set(entries.lazy.map(\.connectionId).filter { !$0.isEmpty && $0 != "-" }).count > Self.separateLaneLimit
        // Roles come from each connection's connect frame.
        var connectParams: [String: JSONValue] = [:]
        for entry in entries where entry.kind == .inbound && connectParams[entry.connectionId] == nil {
            if entry.message?["method"]?.stringValue == GatewayMethod.connect.rawValue {
                connectParams[entry.connectionId] = entry.message?["params"] ?? .object([:])
            }
        }
        func describe(_ id: String) -> String {
            let params = connectParams[id]
            var subtitle: [String] = []
            if let client = params?["client"]?["id"]?.stringValue { subtitle.append(client) }
            if let mode = params?["client"]?["mode"]?.stringValue { subtitle.append(mode) }
            subtitle.append(Self.short(id))
            return subtitle.joined(separator: " · ")
        }
        /// The lifeline of connection `id`, first seen at row `index`: a new one, or the lowest
        /// one whose last connection closed before.
        func connectionLane(_ id: String, at index: Int) -> Int {
            if let lane = laneOf[id] { return lane }
            connectionCount += 1
            let span = Span(connectionId: id, title: "#\(connectionCount) \(connectParams[id]?["role"]?.stringValue ?? "(no connect)")",
                            openedAt: index, closedAt: nil)
            let free = !reuseLanes ? nil : lanes.indices.first { lane in
                lanes[lane].kind == .connection && lanes[lane].spans.last.map { $0.closedAt.map { $0 < index } ?? false } == true
            }
            if let free {
                lanes[free].spans.append(span)
                let count = lanes[free].spans.count
                let spans = lanes[free].spans
                lanes[free].title = count == 2 ? "\(spans[0].title), \(spans[1].title)" : "\(spans[0].title) … \(span.title)"
                lanes[free].subtitle = describe(spans[0].connectionId) + " + \(count - 1) later"
                laneOf[id] = free
                return free
            }
            lanes.append(Lane(kind: .connection, connectionId: id, title: span.title, subtitle: describe(id), spans: [span]))
            laneOf[id] = lanes.count - 1
            return lanes.count - 1
        }
        func closeSpan(_ id: String, lane: Int, at index: Int) {
            guard let position = lanes[lane].spans.lastIndex(where: { $0.connectionId == id }) else { return }
            lanes[lane].spans[position].closedAt = index
        }

        let start = entries.first?.gatewayMs ?? 0
        var requestMethods: [String: String] = [:]
        var rows: [Row] = []
        for (index, entry) in entries.enumerated() {
            var row = Row(index: index, kind: .note, lane: 0, label: entry.text ?? "", badges: [],
                          clockOffsetMs: entry.gatewayMs - start, clockMs: entry.gatewayMs, wallMs: entry.monotonicMs)
            let isConnection = !entry.connectionId.isEmpty && entry.connectionId != "-"
            switch entry.kind {
            case .open:
                row.kind = .open
                row.lane = connectionLane(entry.connectionId, at: index)
                row.label = "open" + (entry.text.map { " \($0)" } ?? "")
                if lanes[row.lane].spans.count > 1,
                   let span = lanes[row.lane].spans.last(where: { $0.connectionId == entry.connectionId }) {
                    // A reused lifeline: the row says whose it is from here on.
                    row.label = "open \(span.title) · \(describe(entry.connectionId))" + (entry.text.map { " \($0)" } ?? "")
                }
            case .close:
                row.kind = .close
                row.lane = connectionLane(entry.connectionId, at: index)
                let reason = entry.text.map { $0.isEmpty ? "" : " \($0)" } ?? ""
                row.label = "close \(entry.closeCode.map(String.init) ?? "?")\(reason)"
                closeSpan(entry.connectionId, lane: row.lane, at: index)
            case .inbound, .outbound, .dropped:
                row.kind = entry.kind == .inbound ? .inbound : entry.kind == .outbound ? .outbound : .dropped
                row.lane = connectionLane(entry.connectionId, at: index)
                row.message = entry.message
                row.label = Self.label(entry.message, connectionId: entry.connectionId, inbound: entry.kind == .inbound,
                                       methods: &requestMethods)
                row.badges = Self.badges(entry)
                row.wire = Self.wireLine(entry)
                if entry.kind == .outbound, entry.message?["type"] == "event", entry.message?["event"] == "tick" {
                    row.repeatSignature = "tick"
                } else {
                    row.repeatSignature = "\(row.kind.rawValue) \(row.lane) \(Self.signatureText(row.label)) \(row.badges)"
                }
            case .note:
                row.kind = .note
                row.lane = isConnection ? connectionLane(entry.connectionId, at: index) : (entry.connectionId == "-" ? 1 : 0)
                row.repeatSignature = "note \(row.lane) \(Self.signatureText(row.label))"
            case .fault:
                row.kind = .fault
                row.lane = isConnection ? connectionLane(entry.connectionId, at: index) : 1
            case .failure:
                row.kind = .failure
                row.lane = 0
            case .operatorAction:
                row.kind = .operatorAction
                row.lane = 0
            }
            rows.append(row)
        }
        self.lanes = lanes
        self.items = Self.fold(rows)
        self.startClockMs = start
    }

    /// Every row, folded or not, in order.
    public var rows: [Row] {
        items.flatMap { item -> [Row] in
            switch item {
            case .row(let row): return [row]
            case .repeated(_, let rows): return rows
            }
        }
    }

    /// Whether a connection of `lane` was open at row `index` (always true for the operator and
    /// the Gateway).
    public func isLive(lane: Int, at index: Int) -> Bool {
        let lane = lanes[lane]
        guard lane.kind == .connection else { return true }
        return lane.spans.contains { span in
            (span.openedAt.map { index >= $0 } ?? true) && (span.closedAt.map { index <= $0 } ?? true)
        }
    }

    // MARK: - Labels

    static func short(_ id: String) -> String {
        id.count > 12 ? String(id.prefix(8)) : id
    }

    static func label(_ message: JSONValue?, connectionId: String, inbound: Bool, methods: inout [String: String]) -> String {
        guard let message else { return "(no message)" }
        let id = message["id"]?.stringValue
        switch message["type"]?.stringValue {
        case "req":
            let method = message["method"]?.stringValue ?? "?"
            if let id { methods["\(connectionId) \(id)"] = method }
            return method + (id.map { " #\(short($0))" } ?? "")
        case "res":
            let method = id.flatMap { methods["\(connectionId) \($0)"] }
            var text = "res" + (method.map { " \($0)" } ?? "")
            if message["ok"]?.boolValue == true {
                text += " ok"
            } else {
                let code = message["error"]?["code"]?.stringValue ?? "error"
                let detail = message["error"]?["details"]?["code"]?.stringValue
                text += " ✗ \(code)" + (detail.map { "/\($0)" } ?? "")
            }
            return text + (id.map { " #\(short($0))" } ?? "")
        case "event":
            let name = message["event"]?.stringValue ?? "?"
            let seq = message["seq"]?.int64Value.map { " seq \($0)" } ?? ""
            return name + seq
        case "cancel":
            return "cancel" + (id.map { " #\(short($0))" } ?? "")
        default:
            if message["binaryBase64"] != nil, message.objectValue?.count == 1 { return "binary data (not JSON)" }
            if message["text"] != nil, message.objectValue?.count == 1 { return "text (not JSON)" }
            // Kept in memory as a summary (a large frame, a frame of a refused connection).
            if let summary = message["summary"], message.objectValue?.count == 1 {
                return "\(summary["bytes"]?.int64Value.map(String.init) ?? "?") bytes, summarised"
            }
            return "JSON that is not a frame"
        }
    }

    static func badges(_ entry: TranscriptEntry) -> [String] {
        var badges: [String] = []
        if entry.wire?.frameKind == .binary { badges.append("binary") }
        if let count = entry.wire?.frameCount, count > 1 { badges.append("\(count) frames") }
        if let fault = entry.fault, !fault.isEmpty { badges.append("fault: \(fault.summary)") }
        return badges
    }

    static func wireLine(_ entry: TranscriptEntry) -> String? {
        guard let wire = entry.wire else { return nil }
        var parts = [wire.frameKind.rawValue]
        if entry.kind != .dropped {
            if let count = wire.frameCount {
                parts.append(count == 1 ? "1 frame (not fragmented)" : "fragmented into \(count) frames")
            } else {
                parts.append("fragmentation not recorded")
            }
        }
        parts.append("compression \(wire.compression)")
        if let fault = entry.fault, !fault.isEmpty { parts.append("fault: \(fault.summary)") }
        return parts.joined(separator: ", ")
    }

    /// A label without its ids and numbers, for folding repeats.
    static func signatureText(_ label: String) -> String {
        String(label.map { $0.isNumber ? "#" : $0 }).replacingOccurrences(of: " #[^ ]*", with: "", options: .regularExpression)
    }

    // MARK: - Folding

    static func fold(_ rows: [Row]) -> [Item] {
        var items: [Item] = []
        var start = 0
        while start < rows.count {
            guard let signature = rows[start].repeatSignature else {
                items.append(.row(rows[start]))
                start += 1
                continue
            }
            var end = start + 1
            while end < rows.count, rows[end].repeatSignature == signature { end += 1 }
            let run = Array(rows[start..<end])
            let threshold = signature == "tick" ? tickFoldThreshold : repeatFoldThreshold
            if run.count >= threshold {
                let same = run.allSatisfy { $0.label == run[0].label }
                let what = signature == "tick" ? "tick" : same ? run[0].label : signatureText(run[0].label)
                items.append(.repeated(label: "\(what) × \(run.count)", rows: run))
            } else {
                items += run.map(Item.row)
            }
            start = end
        }
        return items
    }
}
