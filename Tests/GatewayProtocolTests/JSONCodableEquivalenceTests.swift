import Foundation
import Testing

@testable import GatewayProtocol

/// One Codable sample and the checks run on it, type-erased so that one list holds them all.
struct CodableSample: CustomStringConvertible, Sendable {
    let description: String
    /// The value encoded by `JSONValue(encoding:)` and through Foundation.
    let encodings: @Sendable () -> (ours: Outcome<JSONValue>, foundation: Outcome<JSONValue>)
    /// Decodes a JSON value both ways; `nil` when they agree, else what differs.
    let decodeMismatch: @Sendable (JSONValue) -> String?
    /// Whether decoding the encoding gives the value back.
    let roundTrips: @Sendable () -> Bool

    init<T: Codable & Equatable & Sendable>(_ value: T, _ label: String? = nil) {
        description = label ?? "\(T.self)"
        encodings = {
            (Outcome { try JSONValue(encoding: value) }, Outcome { try JSONCoding.foundationValue(encoding: value) })
        }
        decodeMismatch = { json in
            let ours = Outcome { try json.decode(as: T.self) }
            let theirs = Outcome { try JSONCoding.foundationDecode(json, as: T.self) }
            return ours == theirs ? nil : "ours \(ours)\n foundation \(theirs)"
        }
        roundTrips = { (try? JSONValue(encoding: value).decode(as: T.self)) == value }
    }
}

@Suite("JSON coding of the protocol types, against Foundation")
struct JSONCodableEquivalenceTests {
    static let presence = PresenceEntry(
        ts: 1_767_225_600_000, host: "h", ip: "127.0.0.1", version: "v", platform: "p", deviceFamily: "f", modelIdentifier: "m",
        mode: "node", lastInputSeconds: 3, reason: "connect", tags: ["t"], text: "x", deviceId: "d", roles: ["node"], scopes: [],
        instanceId: "i")
    static let hello = HelloOK(
        server: HelloServerInfo(version: "2026.8.1", connId: "c"),
        features: HelloFeatures(methods: ["node.event"], events: ["tick"], capabilities: ["c"]),
        snapshot: HelloSnapshot(
            presence: [presence], health: ["ok": true, "ratio": 0.5], stateVersion: StateVersion(presence: 2, health: 3), uptimeMs: 9,
            configPath: "/c", stateDir: "/s", sessionDefaults: SessionDefaults(scope: "per-sender"), authMode: "token",
            updateAvailable: ["version": "2"], appliedConfigHash: "h"),
        auth: HelloAuth(role: .node, scopes: [], deviceToken: "dt", issuedAtMs: 5,
                        deviceTokens: [IssuedDeviceToken(deviceToken: "op", role: .operator, scopes: ["operator.read"], issuedAtMs: 5)]),
        policy: HelloPolicy(attachments: AttachmentPolicy(maxBytes: 10, maxImageBytes: 5)),
        pluginSurfaceUrls: ["canvas": "http://h/c"], canvasHostUrl: "http://h", controlUiTabs: ["x": 1, "y": [1.5, "z", nil]])
    static let connect = ConnectParams(
        client: ClientInfo(id: .iOS, displayName: "Ana's iPhone", version: "2026.8.1", buildId: "b7", platform: "iOS 18.4.0",
                           deviceFamily: "iPhone", modelIdentifier: "iPhone17,1", timeZone: "Europe/Paris", mode: .node, instanceId: "A1"),
        role: .node, scopes: [], caps: ["canvas"], commands: ["camera.list"], permissions: ["camera.capture": true, "location": false],
        pathEnv: "/usr/bin", auth: ConnectAuth(token: "t", bootstrapToken: "b", deviceToken: "d", password: "p"),
        device: DeviceProof(id: "abc", publicKey: "key", signature: "sig", signedAt: 1_767_225_600_000, nonce: "n"),
        locale: "en-US", userAgent: "Version 18.4 (Build 22E240)")

    static let samples: [CodableSample] = [
        CodableSample(connect, "ConnectParams (full)"),
        CodableSample(ConnectParams(client: ClientInfo(id: .nodeHost, version: "1", platform: "darwin", mode: .node)), "ConnectParams (minimal)"),
        CodableSample(connect.client), CodableSample(ConnectAuth(token: "t")), CodableSample(connect.device),
        CodableSample(hello, "HelloOK"), CodableSample(hello.server), CodableSample(hello.features), CodableSample(hello.snapshot),
        CodableSample(HelloSnapshot(uptimeMs: 1), "HelloSnapshot (minimal)"), CodableSample(SessionDefaults()), CodableSample(presence),
        CodableSample(PresenceEntry(ts: 5), "PresenceEntry (minimal)"), CodableSample(hello.auth),
        CodableSample(IssuedDeviceToken(deviceToken: "t", role: .operator, scopes: ["a"])), CodableSample(HelloPolicy()),
        CodableSample(AttachmentPolicy(maxBytes: 1, maxImageBytes: 2)),
        CodableSample(ConnectChallenge(nonce: "n", ts: 1_767_225_600_000)), CodableSample(TickEvent(ts: 9)),
        CodableSample(ShutdownEvent()), CodableSample(ShutdownEvent(reason: "r", restartExpectedMs: 5000), "ShutdownEvent (restart)"),
        CodableSample(PresenceEvent(presence: [presence])), CodableSample(VoiceWakeChangedEvent(triggers: ["hey"])),
        CodableSample(NodeInvokeRequest(id: "i", nodeId: "n", command: "location.get", paramsJSON: #"{"a":1}"#, idempotencyKey: "k")),
        CodableSample(NodeInvokeRequest(id: "i", nodeId: "n", command: "c", timeoutMs: nil), "NodeInvokeRequest (no timeout)"),
        CodableSample(NodeInvokeError(code: "X", message: "m")),
        CodableSample(NodeInvokeResult(id: "i", nodeId: "n", ok: true, payload: ["lat": 1.25, "deep": [[["x"]]]])),
        CodableSample(NodeInvokeResult(id: "i", nodeId: "n", ok: false, payloadJSON: "{}", error: NodeInvokeError(code: "E")), "NodeInvokeResult (failed)"),
        CodableSample(NodeEventParams(event: "e", payload: ["x": 1], payloadJSON: "{}")),
        CodableSample(NodeEventResult.structured(event: "e", handled: true, reason: "persisted")), CodableSample(NodeEventResult.bare, "NodeEventResult (bare)"),
        CodableSample(ErrorShape(code: "UNAVAILABLE", message: "m", details: ["reason": "startup", "n": 1.5], retryable: true, retryAfterMs: 500)),
        CodableSample(StateVersion(presence: 1, health: 2)), CodableSample(ErrorCode.invalidRequest), CodableSample(ConnectErrorDetailCode.pairingRequired),
        CodableSample(RecommendedNextStep.retryWithDeviceToken), CodableSample(AuthFailureReason.tokenMismatch), CodableSample(GatewayMethod.connect),
        CodableSample(GatewayEventName.tick), CodableSample(NodeEventName(rawValue: "node.presence.alive")), CodableSample(GatewayRole.node),
        CodableSample(ClientID.iOS), CodableSample(ClientMode.node), CodableSample(DeviceAuthPayload.Version.v3),
        CodableSample(["a": connect], "[String: ConnectParams]"), CodableSample([hello.auth, hello.auth], "[HelloAuth]"),
        CodableSample(Optional(presence), "PresenceEntry?"),
    ]

    @Test(arguments: samples)
    func encodesAsJSONEncoderAndRoundTrips(_ sample: CodableSample) {
        let (ours, theirs) = sample.encodings()
        #expect(ours == theirs)
        #expect(sample.roundTrips())
    }

    /// Decoding the encoding and every variant with one member removed, nulled or of another
    /// type: the same value or the same error as JSONDecoder.
    @Test(arguments: samples)
    func decodesEveryMutationAsJSONDecoder(_ sample: CodableSample) throws {
        guard case .value(let json) = sample.encodings().foundation else {
            Issue.record("\(sample) does not encode")
            return
        }
        let replacements: [JSONValue?] = [
            nil, .null, "x", "", 1, -1, 0, 1.5, 4.0, 1e300, .int(.max), .double(9_007_199_254_740_994), true, [], ["x"], [1], [:],
            ["a": 1], .double(.nan),
        ]
        var checked = 0
        for path in allPaths(json) {
            for replacement in replacements {
                if path.isEmpty && replacement == nil { continue }
                let mutated = replacing(path[...], in: json, with: replacement)
                checked += 1
                if let mismatch = sample.decodeMismatch(mutated) {
                    Issue.record("\(sample) at \(path) := \(String(describing: replacement)):\n \(mismatch)")
                }
            }
        }
        #expect(checked > 0)
    }

    @Test func framesEncodeTheirMembersAsJSONEncoderDoes() throws {
        let error = ErrorShape(code: "INVALID_REQUEST", message: "m", details: ["d": [1, 2.5]], retryable: false, retryAfterMs: 250)
        let response = Frame.response(.failure(id: "x", error: error))
        #expect(response.json["error"] == (try JSONCoding.foundationValue(encoding: error)))
        let event = Frame.event(EventFrame(event: "presence", payload: ["presence": []], seq: 3, stateVersion: StateVersion(presence: 1, health: 2)))
        #expect(event.json["stateVersion"] == (try JSONCoding.foundationValue(encoding: StateVersion(presence: 1, health: 2))))
        for frame in [response, event] {
            #expect(try Frame(decoding: frame.encoded()) == frame)
        }
    }
}

// MARK: - Codable corner cases

/// Encodes through nested containers, a super encoder and every scalar type.
struct Everything: Codable, Equatable, Sendable {
    var bool = true
    var int = -5
    var int8: Int8 = -8
    var int16: Int16 = 16
    var int32: Int32 = -32
    var int64: Int64 = .min
    var uint: UInt = 42
    var uint8: UInt8 = 255
    var uint16: UInt16 = 16
    var uint32: UInt32 = 32
    var uint64: UInt64 = 1 << 40
    var float: Float = 0.1
    var double = 0.1
    var string = "s/\u{1}"
    var data = Data([0, 1, 2, 250])
    var url = URL(string: "https://example.com/a b?c=d")
    var date = Date(timeIntervalSinceReferenceDate: 12.5)
    var decimal = Decimal(string: "3.14159")!
    var optional: Int? = nil
    var array: [Double] = [1, 2.5, -0.0]
    var dictionary: [Int: String] = [1: "a", -2: "b"]
    var nested = Nested()

    struct Nested: Codable, Equatable, Sendable {
        var inner = [1, 2]
        var flag: Bool? = false

        enum CodingKeys: String, CodingKey { case inner, flag, extra }
        enum ExtraKeys: String, CodingKey { case list, object }

        init() {}

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let extra = try container.nestedContainer(keyedBy: ExtraKeys.self, forKey: .extra)
            var list = try extra.nestedUnkeyedContainer(forKey: .list)
            var values: [Int] = []
            while !list.isAtEnd { values.append(try list.decode(Int.self)) }
            // `encode(to:)` appends 99 through a second nested container for the same key.
            inner = Array(values.prefix { $0 != 99 })
            flag = try container.decodeIfPresent(Bool.self, forKey: .flag)
            _ = try extra.nestedContainer(keyedBy: CodingKeys.self, forKey: .object)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            var extra = container.nestedContainer(keyedBy: ExtraKeys.self, forKey: .extra)
            var list = extra.nestedUnkeyedContainer(forKey: .list)
            for value in inner { try list.encode(value) }
            var object = extra.nestedContainer(keyedBy: CodingKeys.self, forKey: .object)
            try object.encodeNil(forKey: .inner)
            var again = container.nestedContainer(keyedBy: ExtraKeys.self, forKey: .extra)
            var more = again.nestedUnkeyedContainer(forKey: .list)
            try more.encode(99)
            try container.encodeIfPresent(flag, forKey: .flag)
        }
    }
}

class Base: Codable, @unchecked Sendable {
    // @unchecked Sendable: the properties are `let` and the class is only read after init.
    let name: String
    init(name: String) { self.name = name }
}

final class Derived: Base, @unchecked Sendable {
    // @unchecked Sendable: as for `Base`, immutable after init.
    let level: Int
    init(name: String, level: Int) {
        self.level = level
        super.init(name: name)
    }
    enum CodingKeys: String, CodingKey { case level, base }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        level = try container.decode(Int.self, forKey: .level)
        try super.init(from: try container.superDecoder(forKey: .base))
    }
    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(level, forKey: .level)
        try super.encode(to: container.superEncoder(forKey: .base))
        try super.encode(to: container.superEncoder())
    }
}

extension Derived: Equatable {
    static func == (lhs: Derived, rhs: Derived) -> Bool { lhs.name == rhs.name && lhs.level == rhs.level }
}

/// An unkeyed layout with nested containers and super encoders inserted mid-array.
struct Unkeyed: Codable, Equatable, Sendable {
    var values: [Int?] = [1, nil, 3]

    init() {}

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        values = []
        _ = try container.nestedUnkeyedContainer()
        let superDecoder = try container.superDecoder()
        _ = try superDecoder.singleValueContainer().decode(String.self)
        while !container.isAtEnd {
            if try container.decodeNil() { values.append(nil) } else { values.append(try container.decode(Int.self)) }
        }
        // Past the end: decodeIfPresent still advances, decode throws.
        _ = try container.decodeIfPresent(Int.self)
        _ = try container.decodeIfPresent(String.self)
        if container.currentIndex != values.count + 4 { throw DecodingError.dataCorruptedError(in: container, debugDescription: "index \(container.currentIndex)") }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        var nested = container.nestedUnkeyedContainer()
        try nested.encode(true)
        let superEncoder = container.superEncoder()
        var single = superEncoder.singleValueContainer()
        try single.encode("super")
        for value in values {
            if let value { try container.encode(value) } else { try container.encodeNil() }
        }
    }
}

/// Synthesized conformances of an enum with associated values use nested keyed containers.
enum Shape: Codable, Equatable, Sendable {
    case circle(radius: Double)
    case polygon(sides: Int, name: String?)
    case empty
}

/// Encodes nothing.
struct Silent: Codable, Equatable, Sendable {
    init() {}
    init(from decoder: any Decoder) throws {}
    func encode(to encoder: any Encoder) throws {}
}

/// Encodes a non-finite number deep inside.
struct BadNumber: Encodable {
    var values: [String: [Double]] = ["a": [1, .nan]]
    var float: Float = .infinity
}

@Suite("JSON coding corner cases, against Foundation")
struct JSONCodableCornerCaseTests {
    static let samples: [CodableSample] = [
        CodableSample(Everything()), CodableSample(Derived(name: "n", level: 2), "Derived (super coders)"), CodableSample(Unkeyed()),
        CodableSample(Shape.circle(radius: 2.5), "Shape.circle"), CodableSample(Shape.polygon(sides: 3, name: nil), "Shape.polygon"),
        CodableSample(Shape.empty, "Shape.empty"), CodableSample([Shape.empty, .circle(radius: 1)], "[Shape]"), CodableSample(Silent()),
        CodableSample([Silent()], "[Silent]"), CodableSample(["k": Silent()], "[String: Silent]"), CodableSample(Data([1, 2, 3])),
        CodableSample(URL(string: "http://x/y?z")!), CodableSample(Date(timeIntervalSinceReferenceDate: -1.5)),
        CodableSample(Decimal(string: "-12.5e3")!), CodableSample([Float(0.1), 1e10, 16_777_216, 3.4e38]), CodableSample(UInt64.max),
        CodableSample(UInt.max), CodableSample([Int64.min, .max]),
        CodableSample([Int8.min]), CodableSample(["a": [["b": [1.0: "one"]]]], "nested dictionaries"),
        CodableSample([true: 1], "[Bool: Int]"), CodableSample([JSONValue?.none, .some(.null), 1], "[JSONValue?]"),
    ]

    @Test(arguments: samples)
    func encodesAsJSONEncoder(_ sample: CodableSample) {
        let (ours, theirs) = sample.encodings()
        #expect(ours == theirs)
    }

    @Test(arguments: samples)
    func decodesEveryMutationAsJSONDecoder(_ sample: CodableSample) {
        guard case .value(let json) = sample.encodings().foundation else {
            // Silent at the top level encodes nothing; the error itself is compared above.
            return
        }
        let replacements: [JSONValue?] = [nil, .null, "x", "AQI=", "!", "", 1, -1, 300, 1.5, 1e300, true, [], [1], [:], ["a": 1]]
        for path in allPaths(json) {
            for replacement in replacements {
                if path.isEmpty && replacement == nil { continue }
                if let mismatch = sample.decodeMismatch(replacing(path[...], in: json, with: replacement)) {
                    Issue.record("\(sample) at \(path) := \(String(describing: replacement)):\n \(mismatch)")
                }
            }
        }
    }

    @Test func roundTripsThroughTheEncoderAndDecoder() throws {
        #expect(try JSONValue(encoding: Everything()).decode(as: Everything.self) == Everything())
        #expect(try JSONValue(encoding: Derived(name: "n", level: 2)).decode(as: Derived.self) == Derived(name: "n", level: 2))
        #expect(try JSONValue(encoding: Unkeyed()).decode(as: Unkeyed.self) == Unkeyed())
        #expect(try JSONValue(encoding: Shape.polygon(sides: 3, name: "tri")).decode(as: Shape.self) == .polygon(sides: 3, name: "tri"))
        let everything = try JSONValue(encoding: Everything())
        #expect(everything["nested"] == ["extra": ["list": [1, 2, 99], "object": ["inner": nil]], "flag": false])
        #expect(try JSONValue(encoding: Unkeyed()) == [[true], "super", 1, nil, 3])
        #expect(try JSONValue(encoding: Derived(name: "n", level: 2)) == ["level": 2, "base": ["name": "n"], "super": ["name": "n"]])
    }

    @Test func nonFiniteNumbersThrowWhereJSONEncoderThrows() {
        let ours = Outcome { try JSONValue(encoding: BadNumber()) }
        let theirs = Outcome { try JSONCoding.foundationValue(encoding: BadNumber()) }
        #expect(ours == theirs)
        #expect(ours == .failure("invalidValue at /values/a/Index 1: Unable to encode Double.nan directly in JSON."))
        let json: JSONValue = ["x": [1, ["y": .double(-.infinity)]]]
        #expect(Outcome { try JSONValue(encoding: json) } == .failure("invalidValue at /x/Index 1/y: Unable to encode Double.-inf directly in JSON."))
        #expect(Outcome { try JSONValue(encoding: json) } == Outcome { try JSONCoding.foundationValue(encoding: json) })
        #expect(Outcome { try JSONValue(encoding: Float.nan) } == Outcome { try JSONCoding.foundationValue(encoding: Float.nan) })
        // encoded() writes them as null instead.
        #expect(json.jsonString == #"{"x":[1,{"y":null}]}"#)
    }

    @Test func errorsNameTheMember() {
        struct Wanted: Decodable, Equatable { var a: Int; var b: [String]? }
        let cases: [(JSONValue, String)] = [
            (["b": []], #"keyNotFound(a) at /: No value associated with key CodingKeys(stringValue: "a", intValue: nil) ("a")."#),
            (["a": "1"], "typeMismatch(Int) at /a: Expected to decode Int but found a string instead."),
            (["a": nil], "valueNotFound(Int) at /a: Cannot get value of type Int -- found null value instead"),
            (["a": 1, "b": ["x", 2]], "typeMismatch(String) at /b/Index 1: Expected to decode String but found number instead."),
            (["a": 1, "b": "x"], "typeMismatch(Array<Any>) at /b: Expected to decode Array<Any> but found a string instead."),
            ([1], "typeMismatch(Dictionary<String, Any>) at /: Expected to decode Dictionary<String, Any> but found an array instead."),
            (nil, "valueNotFound(Dictionary<String, Any>) at /: Cannot get keyed decoding container -- found null value instead"),
        ]
        for (json, expected) in cases {
            let ours = Outcome { try json.decode(as: Wanted.self) }
            #expect(ours == .failure(expected))
            #expect(ours == Outcome { try JSONCoding.foundationDecode(json, as: Wanted.self) })
        }
        // A number that does not fit names its path (JSONDecoder reports none).
        do {
            _ = try jv(["x": [300]]).decode(as: [String: [Int8]].self)
            Issue.record("300 decoded as Int8")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.codingPath.map(\.stringValue) == ["x", "Index 0"])
            #expect(context.debugDescription == "Number 300 does not fit in Int8.")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func lenientIntegersDecodeAsBefore() throws {
        let text = #"{"minProtocol":4.0,"maxProtocol":4e0,"client":{"id":"cli","version":"1","platform":"linux","mode":"cli"},"device":{"id":"i","publicKey":"k","signature":"s","signedAt":1767225600000.0,"nonce":"n"}}"#
        let json = try JSONValue(parsing: text)
        #expect(json["minProtocol"] == 4)
        let ours = try json.decode(as: ConnectParams.self)
        #expect(ours == (try JSONDecoder().decode(ConnectParams.self, from: Data(text.utf8))))
        #expect(ours.device?.signedAt == 1_767_225_600_000)
        let fractional: JSONValue = ["nonce": "n", "ts": 5.5]
        #expect(Outcome { try fractional.decode(as: ConnectChallenge.self) }
            == .failure("dataCorrupted at /ts: not an integer"))
        #expect(Outcome { try fractional.decode(as: ConnectChallenge.self) }
            == Outcome { try JSONCoding.foundationDecode(fractional, as: ConnectChallenge.self) })
    }
}
