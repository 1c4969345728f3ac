// JSON benchmark: JSONValue's own parser, writer, encoder and decoder against the Foundation path
// they replaced (JSONDecoder/JSONEncoder, kept as JSONCoding.foundation…), on the frames a
// conformance run exchanges, measured in the same process and run. Prints the median time per
// document for both and their ratio. See Benchmarks/README.md.
import Foundation
import GatewayProtocol

struct Options {
    var runs = 7
    var iterations = 2_000

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--runs": runs = iterator.next().flatMap { Int($0) }.map { max(1, $0) } ?? runs
            case "--iterations": iterations = iterator.next().flatMap { Int($0) }.map { max(1, $0) } ?? iterations
            case "--help", "-h":
                print("usage: JSONBench [--runs N (default 7)] [--iterations N per run and side (default 2000)]")
                exit(0)
            default:
                FileHandle.standardError.write(Data("JSONBench: unknown argument \(argument) (see --help)\n".utf8))
                exit(2)
            }
        }
    }
}

// Frames shaped like the ones of a conformance run (values invented, field names as on the wire).
let presence = PresenceEntry(
    ts: 1_767_225_600_000, host: "Ana's iPhone", ip: "127.0.0.1", version: "2026.8.1", platform: "iOS 18.4.0",
    deviceFamily: "iPhone", modelIdentifier: "iPhone17,1", mode: "node", lastInputSeconds: 3, reason: "connect",
    tags: ["node"], text: "Node: Ana's iPhone", deviceId: String(repeating: "ab", count: 32), roles: ["node"], scopes: [],
    instanceId: "A1B2C3")
let hello = HelloOK(
    server: HelloServerInfo(version: "2026.8.1", connId: "c-0001"),
    features: HelloFeatures(methods: ["node.event", "node.invoke.result", "node.pending.pull", "node.pending.ack"],
                            events: ["tick", "presence", "node.invoke.request", "shutdown"], capabilities: ["canvas"]),
    snapshot: HelloSnapshot(
        presence: [presence, presence], health: ["ok": true, "ratio": 0.5], stateVersion: StateVersion(presence: 2, health: 3),
        uptimeMs: 90_125, configPath: "/home/u/.openclaw/openclaw.json", stateDir: "/home/u/.openclaw",
        sessionDefaults: SessionDefaults(scope: "per-sender"), authMode: "token", updateAvailable: nil, appliedConfigHash: "h"),
    auth: HelloAuth(role: .node, scopes: [], deviceToken: "dt-" + String(repeating: "x", count: 40), issuedAtMs: 1_767_225_600_000,
                    deviceTokens: nil),
    policy: HelloPolicy(attachments: AttachmentPolicy(maxBytes: 26_214_400, maxImageBytes: 10_485_760)),
    pluginSurfaceUrls: nil, canvasHostUrl: "http://127.0.0.1:18793", controlUiTabs: nil)
let connect = ConnectParams(
    client: ClientInfo(id: .iOS, displayName: "Ana's iPhone", version: "2026.8.1", buildId: "b7", platform: "iOS 18.4.0",
                       deviceFamily: "iPhone", modelIdentifier: "iPhone17,1", timeZone: "Europe/Paris", mode: .node, instanceId: "A1B2C3"),
    role: .node, scopes: [], caps: ["canvas", "camera", "location"], commands: ["camera.list", "camera.snap", "location.get"],
    permissions: ["camera.capture": true, "location": false], pathEnv: nil, auth: ConnectAuth(token: "t-123456"),
    device: DeviceProof(id: String(repeating: "ab", count: 32), publicKey: String(repeating: "K", count: 43),
                        signature: String(repeating: "S", count: 86), signedAt: 1_767_225_600_000, nonce: "n-7f3a9c"),
    locale: "en-US", userAgent: "Version 18.4 (Build 22E240)")

func frames() throws -> [JSONValue] {
    [
        ["type": "req", "id": "1", "method": "connect", "params": try JSONValue(encoding: connect)],
        ["type": "res", "id": "1", "ok": true, "payload": try JSONValue(encoding: hello)],
        ["type": "event", "event": "tick", "payload": ["ts": 1_767_225_630_000], "seq": 7],
        ["type": "event", "event": "node.invoke.request", "seq": 8, "payload": [
            "id": "inv-42", "nodeId": .string(String(repeating: "ab", count: 32)), "command": "location.get",
            "paramsJSON": "{\"desiredAccuracy\":\"balanced\",\"timeoutMs\":10000}", "timeoutMs": 30_000,
            "idempotencyKey": "k-42"]],
        ["type": "req", "id": "2", "method": "node.invoke.result", "params": [
            "id": "inv-42", "nodeId": .string(String(repeating: "ab", count: 32)), "ok": true,
            "payloadJSON": "{\"lat\":48.85,\"lon\":2.35,\"accuracyMeters\":35,\"text\":\"caf\\u00e9 \\ud83d\\ude00\"}"]],
        ["type": "req", "id": "3", "method": "node.event", "params": [
            "event": "node.presence.alive", "payloadJSON": "{\"trigger\":\"connect\"}"]],
    ]
}

struct Case {
    var name: String
    var ours: () throws -> Int
    var foundation: () throws -> Int
}

func measure(_ body: () throws -> Int, iterations: Int) rethrows -> (Double, Int) {
    var checksum = 0
    let clock = ContinuousClock()
    let start = clock.now
    for _ in 0 ..< iterations { checksum &+= try body() }
    let elapsed = clock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    return (seconds * 1e6 / Double(iterations), checksum)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let values = try frames()
let texts = values.map { $0.encoded() }
let helloValue = try JSONValue(encoding: hello)
let connectValue = try JSONValue(encoding: connect)
let documentCount = values.count

// Both sides must agree before they are timed.
for (value, text) in zip(values, texts) {
    guard try JSONValue.parse(text) == (try JSONCoding.foundationParse(text)), value.encoded() == JSONCoding.foundationEncoded(value) else {
        FileHandle.standardError.write(Data("JSONBench: the two paths disagree on \(String(decoding: text, as: UTF8.self))\n".utf8))
        exit(1)
    }
}

let cases: [Case] = [
    Case(name: "parse (bytes to JSONValue), 6 frames",
         ours: { try texts.reduce(0) { sum, text in sum &+ (try JSONValue.parse(text).objectValue?.count ?? 0) } },
         foundation: { try texts.reduce(0) { sum, text in sum &+ (try JSONCoding.foundationParse(text).objectValue?.count ?? 0) } }),
    Case(name: "serialize (JSONValue to bytes), 6 frames",
         ours: { values.reduce(0) { $0 &+ $1.encoded().count } },
         foundation: { values.reduce(0) { $0 &+ JSONCoding.foundationEncoded($1).count } }),
    Case(name: "encode HelloOK + ConnectParams to JSONValue",
         ours: { (try JSONValue(encoding: hello).objectValue?.count ?? 0) &+ (try JSONValue(encoding: connect).objectValue?.count ?? 0) },
         foundation: {
             (try JSONCoding.foundationValue(encoding: hello).objectValue?.count ?? 0)
                 &+ (try JSONCoding.foundationValue(encoding: connect).objectValue?.count ?? 0)
         }),
    Case(name: "decode HelloOK + ConnectParams from JSONValue",
         ours: { (try helloValue.decode(as: HelloOK.self).snapshot.presence.count) &+ (try connectValue.decode(as: ConnectParams.self).caps?.count ?? 0) },
         foundation: {
             (try JSONCoding.foundationDecode(helloValue, as: HelloOK.self).snapshot.presence.count)
                 &+ (try JSONCoding.foundationDecode(connectValue, as: ConnectParams.self).caps?.count ?? 0)
         }),
]

print("JSONBench: \(options.runs) runs x \(options.iterations) iterations per side; \(documentCount) frames, \(texts.reduce(0) { $0 + $1.count }) bytes")
print("")
print("| case | ours (µs) | Foundation (µs) | Foundation / ours |")
print("|---|---:|---:|---:|")
var sink = 0
for benchmark in cases {
    var ours: [Double] = []
    var foundation: [Double] = []
    // Warm up, then alternate which side goes first.
    _ = try measure(benchmark.ours, iterations: max(1, options.iterations / 10))
    _ = try measure(benchmark.foundation, iterations: max(1, options.iterations / 10))
    for run in 0 ..< options.runs {
        if run % 2 == 0 {
            let (a, x) = try measure(benchmark.ours, iterations: options.iterations)
            let (b, y) = try measure(benchmark.foundation, iterations: options.iterations)
            ours.append(a); foundation.append(b); sink &+= x &+ y
        } else {
            let (b, y) = try measure(benchmark.foundation, iterations: options.iterations)
            let (a, x) = try measure(benchmark.ours, iterations: options.iterations)
            ours.append(a); foundation.append(b); sink &+= x &+ y
        }
    }
    let o = median(ours), f = median(foundation)
    print("| \(benchmark.name) | \(String(format: "%.1f", o)) | \(String(format: "%.1f", f)) | \(String(format: "%.1f", f / o))x |")
}
if sink == 42 { print("") }  // keeps the work observable
