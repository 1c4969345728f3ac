import Foundation
import GatewayProtocol
import Testing
import WebSocketTransport

@testable import MockGateway

// MARK: - Redaction

@Suite("Hostile input: redaction")
struct SecretRedactionTests {
    @Test func secretMembersOfTruncatedTextAreRedactedByKey() {
        let redactor = SecretRedactor()
        let text = #"{"type":"req","id":"c","method":"connect","params":{"auth":{"token":"SHAREDTOKEN-abc123XYZ","password":"PASS"#
        let redacted = redactor.redact(text: text)
        #expect(!redacted.contains("SHAREDTOKEN-abc123XYZ"))
        #expect(!redacted.contains("PASS"))
        #expect(redacted == #"{"type":"req","id":"c","method":"connect","params":{"auth":{"token":"<redacted>","password":"<redacted>"#)
    }

    @Test func theByteLevelKeyRuleAgreesWithTheStringRule() {
        // The rule as first written with Foundation strings; the byte-level one must agree on
        // every ASCII name.
        func stringRule(_ name: String) -> Bool {
            let lowered = name.lowercased()
            return SecretRedactor.secretKeyNames.contains(lowered) || lowered.hasSuffix("token")
                || lowered.contains("password") || lowered.contains("secret")
        }
        var names = ["", "t", "oken", "TOKEN", "xToKeN", "tokens", "passwor", "PassWord1", "my-secret-x", "secre",
                     "Set-Cookie", "api_key", "API-KEY", "pwd", "Pwd", "tokenx", "aToken", "secretive"]
        var random = SeededRandom(seed: 11)
        let alphabet = Array("tokenpaswrdsecTOKENPASWRDSEC-_x")
        for _ in 0..<2_000 {
            let length = Int(random.next() % 12)
            names.append(String((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }))
        }
        for name in names {
            #expect(SecretRedactor.isSecretKey(name) == stringRule(name), "\(name)")
        }
    }

    @Test func keyRulesCoverTheKnownNamesAndTheirFamilies() {
        for key in ["token", "deviceToken", "bootstrapToken", "password", "setupCode", "sendGrant", "relayHandle", "apiKey",
                    "clientSecret", "X-OpenClaw-Token", "Authorization", "adminPassword"] {
            #expect(SecretRedactor.isSecretKey(key), "\(key)")
        }
        for key in ["id", "method", "authMethod", "tokens", "role", "scopes", "deviceId"] {
            #expect(!SecretRedactor.isSecretKey(key), "\(key)")
        }
    }

    @Test func queryPairsBearerValuesAndHeadersAreRedacted() {
        let redactor = SecretRedactor()
        #expect(redactor.redact(requestTarget: "/ws?token=QUERYSECRET-555&x=1") == "/ws?token=<redacted>&x=1")
        #expect(redactor.redact(text: "sending Authorization: Bearer abc.def-123 now") == "sending Authorization: Bearer <redacted> now")
        let headers = redactor.redact(headers: [("Authorization", "Bearer HEADERSECRET-1"), ("Cookie", "a=b"), ("Host", "localhost")])
        #expect(headers.map(\.value) == ["Bearer <redacted>", "<redacted>", "localhost"])
        // What was redacted by key is then known by value, anywhere.
        #expect(redactor.redact(text: "echo QUERYSECRET-555 and HEADERSECRET-1") == "echo <redacted> and <redacted>")
    }

    @Test func pinnedAndLearnedValuesAreRedactedInParsedFrames() {
        let redactor = SecretRedactor()
        redactor.pin("configured secret!")
        _ = redactor.redact(["auth": ["deviceToken": "DEVTOKEN-0123456789"]])
        let frame: JSONValue = ["params": ["note": "token DEVTOKEN-0123456789, secret configured secret!",
                                           "payloadJSON": .string(#"{"sendGrant":"g-123456","n":1}"#)]]
        let redacted = redactor.redact(frame)
        #expect(redacted["params"]?["note"] == "token <redacted>, secret <redacted>")
        #expect(redacted["params"]?["payloadJSON"] == .string(#"{"n":1,"sendGrant":"<redacted>"}"#))
    }

    @Test func shortValuesAreRedactedByKeyOnly() {
        let redactor = SecretRedactor()
        redactor.pin("x")
        _ = redactor.redact(["token": "abc"])
        #expect(redactor.redact(text: "x marks abc") == "x marks abc")
        #expect(redactor.redact(text: #"{"token":"abc"}"#) == #"{"token":"<redacted>"}"#)
    }

    @Test func aDisabledRedactorChangesNothing() {
        let redactor = SecretRedactor(enabled: false)
        redactor.pin("configured-secret")
        #expect(redactor.redact(text: #"{"token":"configured-secret"} token=x"#) == #"{"token":"configured-secret"} token=x"#)
        #expect(redactor.knownSecretCount == 0)
    }

    @Test func aLongPayloadIsScannedWithoutChange() {
        let redactor = SecretRedactor()
        redactor.learn("SECRET-0123456789")
        let blob = String(repeating: "A", count: 2_000_000)
        #expect(redactor.redactKnownValues(in: blob) == blob)
        #expect(redactor.redactKnownValues(in: blob + " SECRET-0123456789") == blob + " <redacted>")
    }
}

// MARK: - Raw inspection

@Suite("Hostile input: raw frame inspection")
struct RawFrameInspectionTests {
    @Test func aCompleteFrameIsReadWithItsIdTypeAndMethod() {
        let facts = RawFrameInspection(Array(#"{"type":"req","id":"r-1","method":"node.list","params":{"a":[1,2,{}]}}"#.utf8))
        #expect(facts.isComplete)
        #expect(facts.isObject)
        #expect(facts.id == "r-1")
        #expect(facts.type == "req")
        #expect(facts.method == "node.list")
        #expect(facts.maxDepth == 4)
    }

    @Test func aTruncatedFrameStillGivesItsId() {
        let facts = RawFrameInspection(Array(#"{"type":"req","id":"r-2","method":"node.list","params":{"blob":"AAAA"#.utf8))
        #expect(!facts.isComplete)
        #expect(facts.id == "r-2")
        #expect(facts.method == "node.list")
    }

    @Test func aNumericIdIsKeptAsANumber() {
        #expect(RawFrameInspection(Array(#"{"id":42,"type":"req"}"#.utf8)).id == 42)
        #expect(RawFrameInspection(Array(#"{"type":"req","id":4"#.utf8)).id == nil, "a number cut off at the end is not trusted")
    }

    @Test func deepNestingIsMeasuredWithoutRecursion() {
        let depth = 100_000
        let text = #"{"id":"deep","params":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}"
        let facts = RawFrameInspection(Array(text.utf8))
        #expect(facts.isComplete)
        #expect(facts.maxDepth == depth + 1)
        #expect(facts.id == "deep")
    }

    @Test func garbageIsNotComplete() {
        for text in ["", "not json", "{", "[1,]", "{\"a\" 1}", "{}}", "[1] [2]", "{\"a\":tru}"] {
            #expect(!RawFrameInspection(Array(text.utf8)).isComplete, "\(text)")
        }
        for text in ["{}", "[]", "  [ ]  ", "{\"a\":[true,false,null,-1.5e3]}", "\"s\"", "12"] {
            #expect(RawFrameInspection(Array(text.utf8)).isComplete, "\(text)")
        }
    }
}

// MARK: - Memory budget

@Suite("Hostile input: memory budget")
struct MemoryBudgetTests {
    static func entry(_ connection: String, _ index: Int, bytes: Int = 1_000) -> TranscriptEntry {
        TranscriptEntry(monotonicMs: Int64(index), gatewayMs: Int64(index), connectionId: connection, kind: .outbound,
                        message: ["n": .int(Int64(index)), "pad": .string(String(repeating: "x", count: bytes))])
    }

    @Test func theTranscriptDropsItsOldestEntriesAndSaysSo() throws {
        let transcript = try Transcript(budget: TranscriptBudget(totalBytes: 20_000, connectionBytes: 1 << 30, frameBytes: 1 << 20))
        for index in 0..<100 { transcript.record(Self.entry("c\(index % 3)", index)) }
        let entries = transcript.entries
        let marker = try #require(entries.first)
        #expect(marker.kind == .note)
        #expect(marker.text?.hasPrefix("transcript: ") == true && marker.text?.contains("earlier entries") == true, "\(marker)")
        #expect(entries.last?.message?["n"] == 99, "the newest entries are kept")
        #expect(transcript.retainedBytes <= 20_000)
        #expect(entries.count < 30)
    }

    @Test func oneConnectionOverItsBudgetLosesItsOwnOldestEntriesOnly() throws {
        let transcript = try Transcript(budget: TranscriptBudget(totalBytes: 1 << 30, connectionBytes: 10_000, frameBytes: 1 << 20))
        transcript.record(Self.entry("quiet", 0))
        for index in 1...50 { transcript.record(Self.entry("noisy", index)) }
        let entries = transcript.entries
        #expect(entries.first?.connectionId == "quiet", "the quiet connection keeps its entry")
        let markers = entries.filter { $0.kind == .note }
        #expect(markers.count == 1, "one marker where the noisy connection's entries were dropped")
        #expect(markers.first?.connectionId == "noisy")
        #expect(markers.first?.text?.contains("entries of this connection") == true)
        #expect(entries.last?.message?["n"] == 50)
        #expect(entries.filter { $0.connectionId == "noisy" && $0.kind == .outbound }.count < 10)
    }

    @Test func aLargeMessageIsKeptAsASummaryInMemoryAndWholeInTheFile() throws {
        let directory = TemporaryFile()
        let transcript = try Transcript(budget: TranscriptBudget(frameBytes: 4_096), fileURL: directory.url)
        transcript.record(Self.entry("c", 1, bytes: 100_000))
        let kept = try #require(transcript.entries.first?.message?["summary"])
        #expect(kept["kind"] == "json")
        #expect((kept["bytes"]?.int64Value ?? 0) > 100_000)
        #expect((kept["head"]?.stringValue?.utf8.count ?? .max) <= 256)
        let file = try String(contentsOf: directory.url, encoding: .utf8)
        #expect(file.utf8.count > 100_000, "the file has the whole entry")
    }

    @Test func theEventLogCompactsOldFramesAndKeepsPositions() async {
        let log = EventLog<GatewayEvent>(retention: GatewayEvent.retention(budgetBytes: 300_000))
        let big = String(repeating: "A", count: 100_000)
        for index in 0..<10 {
            log.append(.frameIn(connectionId: "c", frame: .request(RequestFrame(id: "r\(index)", method: "m", params: ["blob": .string(big)])),
                                binary: false))
        }
        #expect(log.count == 10)
        #expect(log.compactedCount > 0)
        #expect(log.retainedBytes <= 300_000)
        // The oldest kept its id and says its body was dropped; the newest is whole.
        guard case .frameIn(_, .request(let first)?, _)? = log.elements(from: 0).first,
              case .frameIn(_, .request(let last)?, _)? = log.elements(from: 9).first else {
            Issue.record("frames missing")
            return
        }
        #expect(first.id == "r0")
        #expect(first.params?["trimmed"] == true)
        #expect(last.params?["blob"] == .string(big))
        // A wait from an old cursor still finds the event at its position.
        let found = await log.first(from: 3, timeout: .seconds(1)) { event in
            if case .frameIn(_, .request(let request)?, _) = event { return request.id == "r3" }
            return false
        }
        #expect(found?.position == 3)
    }

    @Test func theEventLogDropsTheOldestWhenEvenCompactedEventsExceedTheBudget() async {
        let log = EventLog<GatewayEvent>(retention: GatewayEvent.retention(budgetBytes: 16_000))
        for index in 0..<1_000 { log.append(.faultInjected(description: "fault \(index)")) }
        #expect(log.count == 1_000, "positions go on counting")
        #expect(log.droppedCount > 0)
        #expect(log.retainedBytes <= 16_000)
        let kept = log.elements(from: 0)
        #expect(kept.count == 1_000 - log.droppedCount)
        #expect(kept.last == .faultInjected(description: "fault 999"))
        let found = await log.first(from: 998, timeout: .seconds(1)) { _ in true }
        #expect(found?.position == 998)
        #expect(found?.element == .faultInjected(description: "fault 998"))
    }
}

/// A temporary file path, removed afterwards.
final class TemporaryFile {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("openclaw-test-\(UUID().uuidString).jsonl")
    deinit { try? FileManager.default.removeItem(at: url) }
}

// MARK: - Bad frames and device-less connects over the wire

@Suite("Hostile input: answers and device-less connects")
struct HostileWireTests {
    static let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)

    @Test func truncatedAndDeepFirstFramesAreClosedWithAReason() async throws {
        try await Gateway.withGateway { gateway in
            for frame in [#"{"type":"req","id":"c1","method":"connect","params":{"auth":{"token":"SECRET-1234567"#,
                          #"{"type":"req","id":"c2","method":"connect","params":"# + Self.deep + "}"] {
                let client = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0xC1))
                try await client.connection.send(.text(frame))
                let info = await client.connection.waitUntilClosed()
                #expect(info.code.rawValue == 1008)
                #expect(info.reason.hasPrefix("invalid request frame: "), "\(info.reason)")
            }
            let recorded = gateway.transcript.jsonLines()
            #expect(!recorded.contains("SECRET-1234567"))
        }
    }

    @Test func truncatedAndDeepFramesAfterHelloAreAnsweredWithTheirId() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xC2), scopes: ["operator.read"])
            let connection = session.client.connection
            try await connection.send(.text(#"{"type":"req","id":"t-1","method":"node.list","params":{"password":"PW-12345678"#))
            try await connection.send(.text(#"{"type":"req","id":"d-1","method":"node.list","params":"# + Self.deep + "}"))
            try await connection.send(.text(#"{"type":"req","id":7,"method":"node.list","params":"# + Self.deep + "}"))
            var answers: [JSONValue] = []
            while answers.count < 3 {
                let message = try #require(try await session.client.nextMessage())
                if let value = try? JSONValue(parsing: Data(message.payload)), value["type"] == "res" { answers.append(value) }
            }
            #expect(answers.map { $0["id"] } == ["t-1", "d-1", 7])
            #expect(answers.allSatisfy { $0["ok"] == false && $0["error"]?["code"] == "INVALID_REQUEST" })
            #expect(answers[0]["error"]?["message"] == "invalid request frame: not valid JSON")
            #expect(answers[1]["error"]?["message"] == "invalid request frame: JSON nested deeper than 512 levels")
            #expect(try await session.client.request("node.list", params: nil).ok, "the session goes on")
            #expect(!gateway.transcript.jsonLines().contains("PW-12345678"))
        }
    }

    @Test func aDeviceLessOperatorOnAuthNoneIsRefusedThroughLoopback() async throws {
        try await Gateway.withGateway { gateway in
            let client = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0xC3))
            var params = client.operatorParams(scopes: ["operator.admin"])
            params.device = nil
            let response = try await client.connect(params)
            #expect(!response.ok)
            #expect(response.error?.code == "NOT_PAIRED")
            #expect(response.error?.detailCode == "DEVICE_IDENTITY_REQUIRED")
            #expect(await client.connection.waitUntilClosed().code.rawValue == 1008)
        }
    }

    @Test func aDeviceLessOperatorWithTheSharedTokenGetsNoScopes() async throws {
        try await Gateway.withGateway(GatewayConfiguration(auth: .token("s3cret-token"))) { gateway in
            let client = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0xC4))
            var params = client.operatorParams(scopes: ["operator.admin"], token: "s3cret-token")
            params.device = nil
            let response = try await client.connect(params)
            #expect(response.ok, "\(String(describing: response.error))")
            let hello = try #require(try response.payload?.decode(as: HelloOK.self))
            #expect(hello.auth.scopes.isEmpty, "self-declared scopes without a device are cleared")
            let listing = try await client.request("device.pair.list", params: nil)
            #expect(!listing.ok, "device.pair.list needs operator.pairing or operator.admin")
        }
    }
}
