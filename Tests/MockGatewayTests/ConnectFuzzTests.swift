import Foundation
import GatewayProtocol
import MockGateway
import Testing
import WebSocketTransport

/// Bounded, seeded fuzzing of the connect path over real sockets: malformed first frames never
/// crash the Gateway, never leave a connection hanging, and never disturb other sessions.
@Suite("Connect fuzzing")
struct ConnectFuzzTests {
    static let seed: UInt64 = 42
    static let caseCount = 300
    /// Close codes a rejected handshake may end with: policy (1008), protocol mismatch or a
    /// broken frame (1002), invalid UTF-8 (1007), too big (1009).
    static let rejectionCloseCodes: Set<UInt16> = [1002, 1007, 1008, 1009]

    // MARK: - First frames

    @Test func malformedFirstFramesAlwaysEndInACloseAndTheGatewayKeepsWorking() async throws {
        try await Gateway.withGateway { gateway in
            let bystander = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xB0), scopes: ["operator.read"])
            let fuzzIdentity = try TestIdentities.make(0xB1)
            var random = SeededRandom(seed: Self.seed)
            let cursor = gateway.events.count
            var admitted = 0

            for index in 0..<Self.caseCount {
                let client = try await TestClient.open(gateway.url, identity: fuzzIdentity)
                let template = try Self.connectFrame(client.connectParams())
                let message = FuzzCase.make(index: index, random: &random, template: template)
                let outcome = try await Self.run(message, on: client)
                switch outcome {
                case .admitted:
                    admitted += 1
                case .rejected(let code, let response):
                    #expect(Self.rejectionCloseCodes.contains(code), "case \(index) (\(message.label)) closed with \(code)")
                    if let error = response?["error"] {
                        #expect(error["code"]?.stringValue?.isEmpty == false, "case \(index): an error needs a code")
                        #expect(error["message"]?.stringValue?.isEmpty == false, "case \(index): an error needs a message")
                    }
                }
            }
            #expect(admitted < Self.caseCount / 10, "almost every mutated frame is refused")

            // The Gateway saw every fuzz connection end, too.
            let opened = gateway.events.elements(from: cursor).compactMap { event -> String? in
                if case .connectionOpened(let id, _, _) = event { return id }
                return nil
            }
            #expect(opened.count == Self.caseCount)
            for connectionId in opened {
                let ended = await gateway.waitForEvent(from: cursor, timeout: .seconds(10)) { event in
                    if case .connectionClosed(let id, _, _) = event { return id == connectionId }
                    return false
                }
                #expect(ended != nil, "connection \(connectionId) never ended on the Gateway side")
            }

            // Other sessions keep working, and a well-formed node still pairs and connects.
            #expect(try await bystander.client.request("node.list", params: nil).ok)
            let node = try await TestSessions.nodeSession(gateway, identity: try TestIdentities.make(0xB2))
            #expect(node.hello.auth.role == .node)
            #expect(try await node.client.request("node.pending.pull", params: nil).ok)
        }
    }

    @Test func theFuzzCasesAreDeterministic() throws {
        let template: JSONValue = [
            "type": "req", "id": "connect-1", "method": "connect",
            "params": ["minProtocol": 3, "maxProtocol": 4, "role": "node", "scopes": [],
                       "client": ["id": "openclaw-ios", "version": "1", "platform": "iOS", "mode": "node"]],
        ]
        var first = SeededRandom(seed: Self.seed)
        var second = SeededRandom(seed: Self.seed)
        for index in 0..<Self.caseCount {
            #expect(FuzzCase.make(index: index, random: &first, template: template)
                    == FuzzCase.make(index: index, random: &second, template: template))
        }
    }

    // MARK: - After hello

    @Test func malformedFramesAfterHelloLeaveTheSessionUsable() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xB4), scopes: ["operator.read"])
            let fixed: [WebSocketMessage] = [
                .text("{"), .text("not json"), .text(""), .text("null"), .text("[]"), .text("\"req\""), .text("42"),
                .text(#"{"type":"weird","id":"w-1"}"#),
                .text(#"{"type":"req","method":"node.list"}"#),
                .text(#"{"type":"req","id":"","method":"node.list"}"#),
                .text(#"{"type":"req","id":7,"method":"node.list"}"#),
                .text(#"{"type":"req","id":"m-1","method":""}"#),
                .text(#"{"type":"res","id":"r-1","ok":true}"#),
                .text(#"{"type":"event","event":"tick","payload":{"ts":1}}"#),
                .text(#"{"type":"cancel","id":"nothing-in-flight"}"#),
                .text(#"{"type":"req","id":"t-1","method":"node.list","traceparent":""# + String(repeating: "0", count: 200) + #""}"#),
                .text(String(repeating: "[", count: 20_000) + String(repeating: "]", count: 20_000)),
                .binary([0x00, 0xFF, 0x7B, 0x22]),
                .binary(Array(#"{"type":"req","id":"bin-1","method":"node.list"}"#.utf8)),
            ]
            var random = SeededRandom(seed: Self.seed)
            var messages = fixed
            for _ in 0..<40 {
                let bytes = random.bytes(Int(random.next() % 200))
                messages.append(.binary(bytes))
            }
            for message in messages { try await session.client.connection.send(message) }

            // A frame with an id but no method is answered with an error for that id.
            try await session.client.connection.send(.text(#"{"type":"req","id":"bad-1"}"#))
            // Every message got exactly one answer except the cancel frame (ignored) and the two
            // valid node.list requests; read them raw, since some echo a numeric or empty id.
            var answers: [JSONValue] = []
            while true {
                let message = try #require(try await session.client.nextMessage(), "the session stays open")
                guard let value = try? JSONValue(parsing: Data(message.payload)), value["type"] == "res" else { continue }
                answers.append(value)
                if value["id"] == "bad-1" { break }
            }
            let bad = try #require(answers.last)
            #expect(bad["error"]?["code"] == "INVALID_REQUEST")
            let errors = answers.filter { $0["ok"] == false }
            #expect(errors.count == messages.count - 3 + 1, "one INVALID_REQUEST per malformed frame")
            #expect(errors.allSatisfy { $0["error"]?["code"] == "INVALID_REQUEST" })
            #expect(errors.contains { $0["id"] == 7 }, "a numeric id is echoed verbatim")
            #expect(errors.contains { $0["id"] == "w-1" })
            #expect(errors.filter { $0["id"] == "invalid" }.count >= 40, "frames without an id are answered with id \"invalid\"")
            #expect(answers.filter { $0["ok"] == true }.count == 2, "the two valid node.list requests were answered")

            let valid = try await session.client.request("node.list", params: nil)
            #expect(valid.ok)
            #expect(session.client.connection.closeInfo == nil, "the session is still open")
            let invalidNotes = gateway.transcript.entries.filter { $0.kind == .note && $0.text?.hasPrefix("invalid frame answered") == true }
            #expect(invalidNotes.count == errors.count, "answered frames are recorded")
        }
    }

    // MARK: - Running a case

    enum Outcome {
        /// The frame was a valid connect after all: `hello-ok` (the test then closed the socket).
        case admitted
        /// The Gateway closed the connection with `code`, after answering with `response` (if any).
        case rejected(code: UInt16, response: JSONValue?)
    }

    /// Sends one fuzz message as the first frame and waits (with a deadline) until the connection
    /// has ended.
    static func run(_ fuzz: FuzzCase, on client: TestClient) async throws -> Outcome {
        switch fuzz.payload {
        case .message(let message):
            try? await client.connection.send(message)
        case .raw(let bytes):
            try? await client.connection.sendRaw(bytes)
        }
        var response: JSONValue?
        while let message = try await client.nextMessage(timeout: .seconds(10)) {
            guard let json = try? JSONValue(parsing: Data(message.payload)), json["type"] == "res" else { continue }
            if json["ok"] == true {
                // Admitted: end it from this side; that must complete as well.
                _ = await client.connection.close(code: .normal)
                _ = try await client.closed()
                return .admitted
            }
            response = json
        }
        let info = try await client.closed()
        return .rejected(code: info.code.rawValue, response: response)
    }

    /// `{"type":"req","id":"connect-1","method":"connect","params":…}` as JSON.
    static func connectFrame(_ params: ConnectParams) throws -> JSONValue {
        ["type": "req", "id": "connect-1", "method": "connect", "params": try JSONValue(encoding: params)]
    }
}

/// One fuzz input: what is sent as the first WebSocket message (or raw bytes on the socket).
struct FuzzCase: Hashable {
    enum Payload: Hashable {
        case message(WebSocketMessage)
        case raw([UInt8])
    }

    let label: String
    let payload: Payload

    static func text(_ label: String, _ json: JSONValue) -> FuzzCase {
        FuzzCase(label: label, payload: .message(.text(json.jsonString)))
    }

    /// The case for `index`, drawn from `random` (the same seed gives the same cases).
    static func make(index: Int, random: inout SeededRandom, template: JSONValue) -> FuzzCase {
        func pick(_ count: Int) -> Int { Int(random.next() % UInt64(max(1, count))) }
        let encoded = Array(template.jsonString.utf8)
        switch pick(15) {
        case 0:
            return FuzzCase(label: "random bytes", payload: .message(.binary(random.bytes(pick(512)))))
        case 1:
            let scalars = (0..<pick(300)).map { _ in Character(UnicodeScalar(UInt8(32 + pick(95)))) }
            return FuzzCase(label: "random text", payload: .message(.text(String(scalars))))
        case 2:
            let cut = pick(encoded.count)
            return FuzzCase(label: "truncated at \(cut)", payload: .message(.text(String(decoding: encoded[..<cut], as: UTF8.self))))
        case 3:
            var bytes = encoded
            for _ in 0..<(1 + pick(8)) { bytes[pick(bytes.count)] ^= UInt8(truncatingIfNeeded: 1 << pick(8)) }
            return FuzzCase(label: "flipped bits", payload: .message(.binary(bytes)))
        case 4:
            let paths = template.fuzzPaths()
            let path = paths[pick(paths.count)]
            return text("dropped \(path)", template.replacing(at: path[...], with: nil))
        case 5:
            let paths = template.fuzzPaths()
            let path = paths[pick(paths.count)]
            let replacements: [JSONValue] = [.null, true, 0, -1, 1.5, 9_007_199_254_740_993, "", "x", [], [:], [1, "a"], ["k": "v"]]
            return text("wrong type at \(path)", template.replacing(at: path[...], with: replacements[pick(replacements.count)]))
        case 6:
            let stringPaths = template.fuzzPaths().filter { template.value(at: $0[...])?.stringValue != nil }
            let path = stringPaths[pick(stringPaths.count)]
            let huge = String(repeating: "é", count: 10_000 + pick(20_000))
            return text("huge string at \(path)", template.replacing(at: path[...], with: .string(huge)))
        case 7:
            let depth = 100 + pick(25_000)
            let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            let json = #"{"type":"req","id":"deep","method":"connect","params":"# + nested + "}"
            return FuzzCase(label: "nesting depth \(depth)", payload: .message(.text(json)))
        case 8:
            let ids: [JSONValue] = [7, -1, 1.25, 1e300, .null, true, [], ["id": 1]]
            return text("id \(index)", template.replacing(at: [.key("id")][...], with: ids[pick(ids.count)]))
        case 9:
            let kinds: [JSONValue] = [
                ["type": "req", "id": "x", "method": "node.list"],
                ["type": "res", "id": "x", "ok": true],
                ["type": "event", "event": "tick"],
                ["type": "cancel", "id": "x"],
                ["type": "hello", "id": "x"],
                .null, [], "connect", 0,
            ]
            return text("other frame", kinds[pick(kinds.count)])
        case 10:
            let numbers: [JSONValue] = [0, -3, 2, 5, 99, 2_147_483_648, 1e20, -0.0, 3.5]
            let key = ["minProtocol", "maxProtocol"][pick(2)]
            return text("\(key) value", template.replacing(at: [.key("params"), .key(key)][...], with: numbers[pick(numbers.count)]))
        case 11:
            let roles: [JSONValue] = ["", "admin", "NODE", "operator", "worker", "node\u{0}", 1]
            return text("role", template.replacing(at: [.key("params"), .key("role")][...], with: roles[pick(roles.count)]))
        case 12:
            // A text frame that is not UTF-8 (the transport must refuse it with 1007).
            let frame = WebSocketFrame(opcode: .text, payload: [0x7B, 0xC3, 0x28, 0xFF, 0x7D])
            return FuzzCase(label: "invalid UTF-8 text", payload: .raw(frame.encoded(maskingKey: [0x11, 0x22, 0x33, 0x44])))
        case 13:
            let escapes = [#"\ud800"#, #"\u0000"#, #"\udfff\ud800"#, #"\uFFFF"#]
            let escape = escapes[pick(escapes.count)]
            let text = template.jsonString.replacingOccurrences(of: #""openclaw-ios""#, with: "\"\(escape)\"")
            return FuzzCase(label: "escape \(escape)", payload: .message(.text(text)))
        default:
            // The valid frame as binary or text, perhaps with an extra unknown field.
            var frame = template
            if pick(2) == 0 { frame = frame.replacing(at: [.key("params"), .key("unknownField")][...], with: "surprise") }
            let data = frame.jsonString
            return FuzzCase(label: "well-formed", payload: .message(pick(2) == 0 ? .text(data) : .binary(Array(data.utf8))))
        }
    }
}

/// A step into a JSON document.
enum JSONPathStep: Hashable, CustomStringConvertible {
    case key(String)
    case index(Int)

    var description: String {
        switch self {
        case .key(let key): "." + key
        case .index(let index): "[\(index)]"
        }
    }
}

extension JSONValue {
    /// Every path to a member or element, depth first, in a stable order.
    func fuzzPaths(prefix: [JSONPathStep] = []) -> [[JSONPathStep]] {
        switch self {
        case .object(let members):
            return members.keys.sorted().flatMap { key -> [[JSONPathStep]] in
                let path = prefix + [.key(key)]
                return [path] + (members[key]?.fuzzPaths(prefix: path) ?? [])
            }
        case .array(let items):
            return items.indices.flatMap { index -> [[JSONPathStep]] in
                let path = prefix + [.index(index)]
                return [path] + items[index].fuzzPaths(prefix: path)
            }
        default:
            return []
        }
    }

    /// The value at `path`, if any.
    func value(at path: ArraySlice<JSONPathStep>) -> JSONValue? {
        guard let step = path.first else { return self }
        switch (self, step) {
        case (.object(let members), .key(let key)): return members[key]?.value(at: path.dropFirst())
        case (.array(let items), .index(let index)) where items.indices.contains(index): return items[index].value(at: path.dropFirst())
        default: return nil
        }
    }

    /// A copy with the value at `path` replaced (`nil` removes it; a missing object member is added).
    func replacing(at path: ArraySlice<JSONPathStep>, with newValue: JSONValue?) -> JSONValue {
        guard let step = path.first else { return newValue ?? .null }
        switch (self, step) {
        case (.object(var members), .key(let key)):
            if path.count == 1 {
                members[key] = newValue
            } else if let child = members[key] {
                members[key] = child.replacing(at: path.dropFirst(), with: newValue)
            }
            return .object(members)
        case (.array(var items), .index(let index)) where items.indices.contains(index):
            if path.count == 1 {
                if let newValue { items[index] = newValue } else { items.remove(at: index) }
            } else {
                items[index] = items[index].replacing(at: path.dropFirst(), with: newValue)
            }
            return .array(items)
        default:
            return self
        }
    }
}
