import Foundation
import GatewayProtocol
import MockGateway
import Testing
import WebSocketTransport

/// Every fault command of the console, typed as a person would, with its effect seen by a
/// client on a real socket and its confirming `fault.injected` line.
@Suite("Console fault commands on the wire")
struct ConsoleFaultCommandTests {
    /// Runs one console line; fails the test when it is refused.
    @discardableResult
    static func run(_ console: GatewayConsole, _ line: String) async throws -> ConsoleResult {
        let reply = try #require(await console.handle(line), "\(line) gave no reply")
        guard let result = reply.result else {
            Issue.record("\(line): \(reply.errorMessage ?? "")")
            throw ConsoleError(reply.errorMessage ?? "failed")
        }
        return result
    }

    /// The `fault.injected` lines printed since `cursor`.
    static func faultLines(_ gateway: Gateway, from cursor: Int) -> [String] {
        gateway.events.all.dropFirst(cursor).compactMap { event in
            guard case .faultInjected = event else { return nil }
            return ConsoleEventLine.describing(event)?.rendered(.text)
        }
    }

    /// The next message as it arrived (with its frame count), within a deadline.
    static func nextReceived(_ connection: WebSocketConnection, timeout: Duration = .seconds(10)) async throws -> WebSocketReceivedMessage? {
        try await withThrowingTaskGroup(of: WebSocketReceivedMessage?.self) { group in
            group.addTask {
                for await received in connection.receivedMessages { return received }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw TestClient.Failure.timeout("a message")
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    static func reader(_ gateway: Gateway, _ seed: UInt8) async throws -> ConnectedSession {
        let session = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(seed),
                                                             scopes: ["operator.read", "operator.approvals"])
        _ = try await session.client.barrier()
        return session
    }

    @Test func dropNextLosesTheResponseAndCutsTheConnectionUnlessKept() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            let kept = try await Self.reader(gateway, 0xA0)
            var cursor = gateway.events.count
            try await Self.run(console, "drop-next gateway.identity.get --keep-connection")
            #expect(Self.faultLines(gateway, from: cursor) == ["fault.injected description=\"drop the next response to gateway.identity.get\""])
            try await kept.client.sendRequest("gateway.identity.get", params: nil, id: "lost")
            // The barrier is answered, the lost request never is, and the connection stays up.
            let frames = try await kept.client.barrier()
            #expect(!frames.contains { if case .response(let response) = $0 { response.id == "lost" } else { false } })
            #expect(try await kept.client.request("gateway.identity.get", params: nil).ok)

            let cut = try await Self.reader(gateway, 0xA1)
            cursor = gateway.events.count
            try await Self.run(console, "drop-next gateway.identity.get")
            try await cut.client.sendRequest("gateway.identity.get", params: nil, id: "lost-too")
            let (after, info) = try await cut.client.framesUntilClosed()
            #expect(!after.contains { if case .response = $0 { true } else { false } })
            #expect(info.code == .abnormal, "cut without a close frame")
            #expect(Self.faultLines(gateway, from: cursor).contains { $0.contains("dropped the response to gateway.identity.get") })
        }
    }

    @Test func delayHoldsResponsesBackUntilTurnedOff() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            let delayed = try await Self.reader(gateway, 0xA2)
            let prompt = try await Self.reader(gateway, 0xA3)
            let cursor = gateway.events.count
            try await Self.run(console, "delay 3600000")
            #expect(Self.faultLines(gateway, from: cursor).first?.contains("delay responses by 3600.0 seconds") == true)
            try await delayed.client.sendRequest("gateway.identity.get", params: nil, id: "held")
            #expect(await gateway.waitForEvent(from: cursor, timeout: .seconds(10)) { event in
                if case .requestHandled(let connectionId, "gateway.identity.get", _, _) = event { return connectionId == delayed.connectionId }
                return false
            } != nil, "the Gateway answered; the answer waits an hour before it is written")
            try await Self.run(console, "delay off")
            #expect(try await prompt.client.request("gateway.identity.get", params: nil).ok, "after `delay off` others are answered at once")
            await #expect(throws: TestClient.Failure.self, "the held answer is still an hour away") {
                _ = try await delayed.client.nextFrame(timeout: .milliseconds(500))
            }
        }
    }

    @Test func stopAndResumeTicks() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            let session = try await Self.reader(gateway, 0xA4)
            try await Self.run(console, "stop-ticks")
            try await Self.run(console, "advance 90")
            #expect(TestClient.events("tick", in: try await session.client.barrier()).isEmpty)
            let cursor = gateway.events.count
            try await Self.run(console, "resume-ticks")
            #expect(Self.faultLines(gateway, from: cursor) == ["fault.injected description=\"ticks resumed\""])
            try await Self.run(console, "advance 30")
            #expect(TestClient.events("tick", in: try await session.client.barrier()).count == 1)
        }
    }

    @Test func skipSeqLeavesOneGapAndEventsAreSentAsTyped() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            let session = try await Self.reader(gateway, 0xA5)
            try await Self.run(console, #"event latest test.first {"n": 1}"#)
            try await Self.run(console, "skip-seq 4")
            let result = try await Self.run(console, #"event all tick {"ts": 1}"#)
            #expect(result == .eventSent(name: "tick", connectionIds: [session.connectionId]))
            let frames = try await session.client.barrier()
            let first = try #require(TestClient.events("test.first", in: frames).first)
            #expect(first.payload == ["n": 1])
            let second = try #require(TestClient.events("tick", in: frames).first)
            #expect(second.seq == first.seq.map { $0 + 5 })
        }
    }

    @Test func startingRefusesConnectsWith1013UntilOff() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            try await Self.run(console, "starting on")
            let client = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0xA6))
            let refused = try await client.connect(client.connectParams())
            #expect(refused.error?.code == "UNAVAILABLE")
            #expect(try await client.closed().code.rawValue == 1013)
            try await Self.run(console, "starting off")
            let again = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0xA6))
            let response = try await again.connect(again.connectParams())
            #expect(response.error?.code != "UNAVAILABLE")
        }
    }

    @Test func resetAndCloseEndTheLatestConnection() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            let first = try await Self.reader(gateway, 0xA7)
            let cursor = gateway.events.count
            try await Self.run(console, "reset latest")
            #expect(try await first.client.closed().code == .abnormal)
            #expect(Self.faultLines(gateway, from: cursor) == ["fault.injected description=\"TCP reset of \(first.connectionId)\""])

            let second = try await Self.reader(gateway, 0xA8)
            // A prefix of the id is enough.
            try await Self.run(console, #"close \#(second.connectionId.prefix(8)) 4000 "bye now""#)
            let info = try await second.client.closed()
            #expect(info.received == WebSocketCloseFrame(code: WebSocketCloseCode(4000), reason: "bye now"))
            let error = await console.handle("reset latest")?.errorMessage
            #expect(error == "reset: no open connection")
        }
    }

    @Test func sendBinaryAndFragmentChangeHowEventsTravel() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            let session = try await Self.reader(gateway, 0xA9)
            var cursor = gateway.events.count
            try await Self.run(console, "send-binary 1")
            #expect(Self.faultLines(gateway, from: cursor).count == 1)
            try await Self.run(console, "event latest test.binary")
            let binary = try #require(try await session.client.nextMessage())
            guard case .binary(let bytes) = binary else {
                Issue.record("expected a binary message, got \(binary)")
                return
            }
            guard case .event(let event) = try Frame(decoding: Data(bytes)) else {
                Issue.record("the binary message is not an event frame")
                return
            }
            #expect(event.event == "test.binary")
            try await Self.run(console, "event latest test.text")
            guard case .text = try #require(try await session.client.nextMessage()) else {
                Issue.record("only the next event is binary")
                return
            }

            cursor = gateway.events.count
            try await Self.run(console, "fragment 1")
            #expect(Self.faultLines(gateway, from: cursor) == [
                "fault.injected description=\"fragment the next 1 event into 3 frames with pings between\"",
            ])
            try await Self.run(console, "event latest test.fragmented")
            // On the wire: one message in three frames, which the client reassembles into the event.
            let fragmented = try #require(try await Self.nextReceived(session.client.connection))
            #expect(fragmented.frameCount == 3)
            guard case .text(let text) = fragmented.message, case .event(let event) = try Frame(decoding: Data(text.utf8)) else {
                Issue.record("the fragmented message is not a text event frame: \(fragmented.message)")
                return
            }
            #expect(event.event == "test.fragmented")
            try await Self.run(console, "event latest test.whole")
            #expect(try #require(try await Self.nextReceived(session.client.connection)).frameCount == 1, "only the next event is fragmented")
        }
    }

    @Test func presenceReplyAnswersTheNextBeacon() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            let node = try await TestSessions.nodeSession(gateway, identity: try TestIdentities.make(0xAA))
            try await Self.run(console, "presence-reply false persist_failed")
            let beacon: JSONValue = ["event": "node.presence.alive", "payloadJSON": #"{"trigger":"silent_push"}"#]
            let forced = try await node.client.request("node.event", params: beacon)
            #expect(forced.payload?["handled"] == false)
            #expect(forced.payload?["reason"] == "persist_failed")
            let normal = try await node.client.request("node.event", params: beacon)
            #expect(normal.payload?["reason"] == "persisted")
        }
    }

    @Test func raceAndExpireApprovals() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            let approver = try await Self.reader(gateway, 0xAB)
            guard case .approvalCreated(let raced) = try await Self.run(console, "approval deploy") else {
                Issue.record("no approval")
                return
            }
            let cursor = gateway.events.count
            try await Self.run(console, "race-approval latest deny")
            #expect(Self.faultLines(gateway, from: cursor).count == 1)
            let response = try await approver.client.request(
                "approval.resolve", params: ["id": .string(raced.id), "kind": "exec", "decision": "allow-once"])
            #expect(response.payload?["applied"] == false, "the other surface answered first")
            #expect(response.payload?["approval"]?["decision"] == "deny")

            guard case .approvalCreated(let record) = try await Self.run(console, "approval other") else {
                Issue.record("no approval")
                return
            }
            try await Self.run(console, "expire-approval \(record.id)")
            let read = try await approver.client.request("approval.get", params: ["id": .string(record.id)])
            #expect(read.payload?["approval"]?["status"] == "expired")
        }
    }

    @Test func raceAndExpireQuestions() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            let answerer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xAF),
                                                                  scopes: ["operator.questions"])
            _ = try await answerer.client.barrier()
            guard case .questionCreated(let raced) = try await Self.run(console, #"question "Deploy to?" --options Staging,Production"#) else {
                Issue.record("no question")
                return
            }
            let cursor = gateway.events.count
            try await Self.run(console, #"race-question latest ["Production"]"#)
            #expect(Self.faultLines(gateway, from: cursor).count == 1)
            let lost = try await answerer.client.request(
                "question.resolve", params: ["id": .string(raced.id), "answers": ["answers": ["q1": ["Staging"]]]])
            #expect(lost.error?.details?["reason"] == "QUESTION_ALREADY_TERMINAL", "the watch answered first: \(lost)")
            let read = try await answerer.client.request("question.get", params: ["id": .string(raced.id)])
            #expect(read.payload?["question"]?["status"] == "answered")
            #expect(read.payload?["question"]?["answers"] == ["answers": ["q1": ["Production"]]], "\(read)")

            guard case .questionCreated(let expiring) = try await Self.run(console, #"question "Now?" --options yes,no"#) else {
                Issue.record("no question")
                return
            }
            try await Self.run(console, "expire-question \(expiring.id)")
            let frames = try await answerer.client.barrier()
            let resolved = TestClient.events("question.resolved", in: frames).compactMap(\.payload)
            #expect(resolved.contains { $0["id"]?.stringValue == expiring.id && $0["status"] == "expired" }, "\(resolved)")
            let late = try await answerer.client.request(
                "question.resolve", params: ["id": .string(expiring.id), "answers": ["answers": ["q1": ["yes"]]]])
            #expect(late.error?.details?["reason"] == "QUESTION_ALREADY_TERMINAL")
            #expect(await console.handle(#"race-question latest"#)?.errorMessage
                    == "race-question: usage: race-question <id|latest> <answersJSON> [--client-first] [--surface NAME]")
        }
    }

    @Test func restartClosesEveryConnectionWith1012() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            let session = try await Self.reader(gateway, 0xAC)
            #expect(try await Self.run(console, "restart") == .restarted)
            let (frames, info) = try await session.client.framesUntilClosed()
            #expect(TestClient.events("shutdown", in: frames).count == 1)
            #expect(info.code == .serviceRestart)
        }
    }

    @Test func restartStayingDownDropsConnectionsUntilResume() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            let session = try await Self.reader(gateway, 0xB0)
            try await Self.run(console, "restart --stay-down --expected-ms 5000")
            let (frames, info) = try await session.client.framesUntilClosed()
            let shutdown = try #require(TestClient.events("shutdown", in: frames).first)
            #expect(shutdown.payload?["restartExpectedMs"] == 5000)
            #expect(info.code == .serviceRestart)
            #expect(try await Self.run(console, "status").text.contains("faults: down until resume"))
            // While down, a new connection is dropped before its challenge.
            await #expect(throws: (any Error).self) {
                _ = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0xB1))
            }
            try await Self.run(console, "resume")
            let again = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0xB1))
            #expect(again.challenge != nil)
            #expect(try await Self.run(console, "status").text.contains("faults: none"))
            #expect(await console.handle("restart --expected-ms 5000")?.errorMessage
                    == "restart: --expected-ms goes with --stay-down (a restart without --stay-down comes straight back)")
        }
    }

    @Test func forgivingApprovalAndOneLineListings() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            #expect(await console.handle("approve")?.errorMessage == "no pending pairing request")
            let first = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0xAD))
            _ = try await first.connect(first.connectParams())
            let request = try #require(await gateway.nextPairingRequest(timeout: .seconds(10)))
            let cursor = gateway.events.count
            let second = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0xAE))
            _ = try await second.connect(second.connectParams())
            _ = try #require(await gateway.nextPairingRequest(after: cursor, timeout: .seconds(10)))
            let ambiguous = await console.handle("approve")?.errorMessage
            #expect(ambiguous == "2 pairing requests are pending: approve one by id (see pending), or approve latest")
            // A unique prefix of a request id, as `pending` prints it, is enough.
            guard case .approved(let approvedId, _) = try await Self.run(console, "approve \(request.requestId.prefix(8))") else {
                Issue.record("not approved")
                return
            }
            #expect(approvedId == request.requestId)
            guard case .approved = try await Self.run(console, "approve") else {
                Issue.record("the only pending request was not approved")
                return
            }
            let devices = try await Self.run(console, "devices")
            for line in devices.text.split(separator: "\n") { #expect(line.count <= 100, "\(line)") }
            #expect(devices.text.split(separator: "\n").count == 2)
            let status = try await Self.run(console, "status").text
            #expect(status.contains("2 devices") && status.contains("0 pending") && status.contains("faults: none"), "\(status)")
            try await Self.run(console, "stop-ticks")
            #expect(try await Self.run(console, "status").text.contains("faults: ticks stopped"))
            #expect(try await Self.run(console, "help drop-next").text.hasPrefix("drop-next <method> [--keep-connection]"))
            #expect(await console.handle("help frobnicate")?.errorMessage == "help: unknown command 'frobnicate' (type 'help' for the list)")
        }
    }
}
