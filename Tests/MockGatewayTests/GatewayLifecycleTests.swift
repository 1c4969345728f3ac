import Foundation
import GatewayProtocol
import MockGateway
import Testing
import WebSocketTransport

/// Connection and Gateway lifecycle over real sockets: restart, startup, handshake timeout and
/// size limit, repeated connects, node replacement, the transcript, shutdown.
@Suite("Gateway lifecycle end to end")
struct GatewayLifecycleTests {
    // MARK: - Restart and startup

    @Test func restartSendsShutdownThenClosesEverySocketWith1012AndKeepsState() async throws {
        try await Gateway.withGateway { gateway in
            let nodeIdentity = try TestIdentities.make(0xA0)
            let node = try await TestSessions.nodeSession(gateway, identity: nodeIdentity)
            let operatorIdentity = try TestIdentities.make(0xA1)
            let operatorSession = try await TestSessions.operatorSession(gateway, identity: operatorIdentity, scopes: ["operator.pairing"])
            // A pending pairing request that must survive the restart.
            let applicant = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0xA2))
            let requestId = try #require(try await applicant.connect(applicant.connectParams()).error?.details?["requestId"]?.stringValue)

            await gateway.beginRestart(restartExpectedMs: 1_000)
            for session in [node, operatorSession] {
                let (frames, info) = try await session.client.framesUntilClosed()
                let shutdown = TestClient.events("shutdown", in: frames)
                #expect(shutdown.count == 1)
                #expect(shutdown.first?.payload?["restartExpectedMs"]?.int64Value == 1_000)
                #expect(TestClient.eventNames(frames).last == "shutdown", "nothing follows shutdown")
                #expect(info.code == .serviceRestart)
                #expect(info.reason == "service restart")
            }
            // While restarting, new sockets are dropped before the challenge.
            await #expect(throws: (any Error).self) { _ = try await TestClient.open(gateway.url, identity: nodeIdentity) }

            await gateway.resumeAfterRestart()
            let back = try await TestSessions.connect(gateway, identity: nodeIdentity) { $0.connectParams(token: node.deviceToken) }
            #expect(back.deviceToken == node.deviceToken, "devices and tokens survive a restart")
            let operatorBack = try await TestSessions.connect(gateway, identity: operatorIdentity) {
                $0.operatorParams(scopes: ["operator.pairing"], token: operatorSession.deviceToken)
            }
            let list = try await operatorBack.client.request("device.pair.list", params: nil)
            #expect(list.payload?["pending"]?.arrayValue?.compactMap { $0["requestId"]?.stringValue } == [requestId])
        }
    }

    @Test func restartConvenienceAcceptsConnectionsRightAfterwards() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let identity = try TestIdentities.make(0xA3)
            let node = try await TestSessions.nodeSession(gateway, identity: identity)
            await gateway.restart()
            #expect(try await node.client.closed().code == .serviceRestart)
            let back = try await TestSessions.connect(gateway, identity: identity) { $0.connectParams(token: node.deviceToken) }
            #expect(back.deviceToken == node.deviceToken)
            #expect(await gateway.waitUntilNodeConnected(identity.deviceId, timeout: .seconds(10)))
        }
    }

    @Test func restartCancelsPendingApprovalsAndForgetsQuestions() async throws {
        // Approvals are durable and a new process epoch cancels the old pending ones
        // (`gateway-restart`, docs/protocol.md §7.5); questions are process-local (docs/protocol.md §7.8).
        try await Gateway.withGateway { gateway in
            let identity = try TestIdentities.make(0xAF)
            let scopes = ["operator.approvals", "operator.questions"]
            let session = try await TestSessions.operatorSession(gateway, identity: identity, scopes: scopes)
            let pending = try await gateway.createApproval(command: "make release")
            let decided = try await gateway.createApproval(command: "make test")
            await gateway.resolveApproval(id: decided.id, decision: .allowOnce)
            let question = try await gateway.createQuestion("Ship it?", options: ["Yes", "No"])

            await gateway.restart()
            _ = try await session.client.closed()
            let back = try await TestSessions.connect(gateway, identity: identity) { $0.operatorParams(scopes: scopes, token: session.deviceToken) }
            let cancelled = try await back.client.request("approval.get", params: ["id": .string(pending.id)])
            #expect(cancelled.payload?["approval"]?["status"] == "cancelled")
            #expect(cancelled.payload?["approval"]?["reason"] == "gateway-restart")
            let kept = try await back.client.request("approval.get", params: ["id": .string(decided.id)])
            #expect(kept.payload?["approval"]?["decision"] == "allow-once", "terminal approvals survive unchanged")
            let lost = try await back.client.request("question.get", params: ["id": .string(question.id)])
            #expect(lost.error?.details?["reason"] == "QUESTION_NOT_FOUND")
            let list = try await back.client.request("question.list", params: nil)
            #expect(list.payload?["questions"]?.arrayValue?.isEmpty == true)
        }
    }

    @Test func startingUpAnswersUnavailableAndCloses1013() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            await gateway.setStartingUp(true)
            let identity = try TestIdentities.make(0xA4)
            let client = try await TestClient.open(gateway.url, identity: identity)
            let response = try await client.connect(client.connectParams())
            #expect(response.error?.code == "UNAVAILABLE")
            #expect(response.error?.message == "gateway starting; retry shortly")
            #expect(response.error?.retryable == true)
            #expect(response.error?.retryAfterMs == 500)
            #expect(response.error?.details?["reason"] == "startup-sidecars")
            let info = try await client.closed()
            #expect(info.code == .tryAgainLater)
            #expect(info.reason == "gateway starting")

            await gateway.setStartingUp(false)
            _ = try await TestSessions.connect(gateway, identity: identity) { $0.connectParams() }
        }
    }

    // MARK: - Handshake limits

    @Test func aSocketThatDoesNotConnectWithinTheHandshakeTimeoutIsClosed() async throws {
        try await Gateway.withGateway { gateway in
            let client = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0xA5))
            await gateway.advance(by: .milliseconds(15_000))
            let info = try await client.closed()
            #expect(info.code == .normal)
            #expect(info.reason == "")
        }
    }

    @Test func aSocketStillOpenJustBeforeTheHandshakeTimeoutIsAnswered() async throws {
        try await Gateway.withGateway { gateway in
            let client = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0xA6))
            await gateway.advance(by: .milliseconds(14_999))
            // signedAt must be fresh against the moved clock.
            let response = try await client.connect(client.connectParams(signedAt: Int(gateway.clock.nowMs)))
            #expect(response.error?.detailCode == "PAIRING_REQUIRED", "the connect was processed, not timed out")
        }
    }

    @Test func aFirstFrameOverSixtyFourKiBIsClosedWith1009() async throws {
        try await Gateway.withGateway { gateway in
            let client = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0xA7))
            try await client.connection.send(.text(String(repeating: "x", count: 64 * 1024 + 1)))
            let info = try await client.closed()
            #expect(info.code == .messageTooBig)
            #expect(info.reason == "preauth payload too large")
        }
    }

    @Test func framesOverSixtyFourKiBAreFineAfterHello() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xA8), scopes: ["operator.read"])
            let big = String(repeating: "y", count: 200 * 1024)
            let response = try await session.client.request("node.list", params: ["padding": .string(big)])
            #expect(response.ok)
        }
    }

    @Test func aSecondConnectAfterHelloIsRefusedAndTheSocketStaysOpen() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let session = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xA9), scopes: ["operator.read"])
            let again = try await session.client.request("connect", params: try JSONValue(encoding: session.client.operatorParams(scopes: ["operator.read"])))
            #expect(again.error?.code == "INVALID_REQUEST")
            #expect(again.error?.message == "connect is only valid as the first request")
            #expect(try await session.client.request("node.list", params: nil).ok)
            #expect(session.client.connection.closeInfo == nil)
        }
    }

    // MARK: - Nodes

    @Test func aNewerSocketOfTheSameNodeBecomesTheInvokeTarget() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let identity = try TestIdentities.make(0xAA)
            let older = try await TestSessions.nodeSession(gateway, identity: identity)
            let newer = try await TestSessions.connect(gateway, identity: identity) { $0.connectParams(token: older.deviceToken) }
            let olderId = older.connectionId
            let replaced = await gateway.waitForEvent(timeout: .seconds(10)) { event in
                if case .nodeDisconnected(let nodeId, let connectionId) = event { return nodeId == identity.deviceId && connectionId == olderId }
                return false
            }
            #expect(replaced != nil, "the replaced registration is logged")
            #expect(await gateway.connectedNodes().map(\.connectionId) == [newer.connectionId])

            async let outcome = gateway.invoke(nodeId: identity.deviceId, command: "device.info", wait: .seconds(10))
            let request = try await newer.client.event("node.invoke.request")
            let invoke = try #require(try request.payload?.decode(as: NodeInvokeRequest.self))
            _ = try await newer.client.request("node.invoke.result", params: try JSONValue(encoding: NodeInvokeResult(
                id: invoke.id, nodeId: identity.deviceId, ok: true, payloadJSON: "{}")))
            guard case .result = await outcome else {
                Issue.record("the invoke was not answered through the newer socket")
                return
            }
            #expect(TestClient.events("node.invoke.request", in: try await older.client.barrier()).isEmpty)

            // The older socket closing does not unregister the node.
            await older.client.close()
            #expect(await gateway.waitForEvent(timeout: .seconds(10)) { event in
                if case .connectionClosed(let id, _, _) = event { return id == olderId }
                return false
            } != nil)
            #expect(await gateway.connectedNodes().map(\.connectionId) == [newer.connectionId])
        }
    }

    @Test func anInvokeInFlightOnAReplacedSocketFailsWhenThatSocketCloses() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let identity = try TestIdentities.make(0xAB)
            let older = try await TestSessions.nodeSession(gateway, identity: identity)
            async let outcome = gateway.invoke(nodeId: identity.deviceId, command: "device.info", wait: .seconds(10))
            _ = try await older.client.event("node.invoke.request")
            _ = try await TestSessions.connect(gateway, identity: identity) { $0.connectParams(token: older.deviceToken) }
            await older.client.close()
            #expect(await outcome == .nodeDisconnected, "nobody can answer an invoke sent on a closed socket")
        }
    }

    // MARK: - Transcript

    @Test func theTranscriptRecordsBothDirectionsRedactedWithCloseCodesAsJSONLines() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("e2e-transcript-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto, transcriptFile: file)) { gateway in
            let identity = try TestIdentities.make(0xAC)
            let first = try await TestSessions.nodeSession(gateway, identity: identity)
            let token = try #require(first.deviceToken)
            let second = try await TestSessions.connect(gateway, identity: identity) { $0.connectParams(token: token) }
            await gateway.close(connectionId: second.connectionId, code: 4001, reason: "bye")
            _ = try await second.client.closed()
            let secondId = second.connectionId
            _ = await gateway.waitForEvent(timeout: .seconds(10)) { event in
                if case .connectionClosed(let id, _, _) = event { return id == secondId }
                return false
            }

            let entries = gateway.transcript.entries.filter { $0.connectionId == secondId }
            let connect = try #require(entries.first { $0.kind == .inbound && $0.message?["method"] == "connect" })
            #expect(connect.message?["params"]?["auth"]?["token"] == "<redacted>")
            let hello = try #require(entries.first { $0.kind == .outbound && $0.message?["payload"]?["type"] == "hello-ok" })
            #expect(hello.message?["payload"]?["auth"]?["deviceToken"] == "<redacted>")
            let close = try #require(entries.first { $0.kind == .close })
            #expect(close.closeCode == 4001)
            #expect(entries.first?.kind == .open)

            let lines = gateway.transcript.jsonLines().split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            #expect(!lines.isEmpty)
            #expect(!gateway.transcript.jsonLines().contains(token), "no raw token anywhere")
            let kinds = Set(TranscriptEntry.Kind.allCases.map(\.rawValue))
            for line in lines {
                let object = try JSONValue(parsing: String(line))
                #expect(object["kind"]?.stringValue.map(kinds.contains) == true)
                // Every line reads back as the entry it was written from.
                #expect(try TranscriptEntry(json: object).json == object)
                #expect(object["conn"]?.stringValue != nil)
                #expect(object["clock"]?.int64Value != nil)
            }
            let fileText = try String(contentsOf: file, encoding: .utf8)
            #expect(fileText.contains(secondId))
            #expect(!fileText.contains(token))
        }
    }

    // MARK: - Shutdown

    @Test func shutdownClosesEveryConnectionWith1001AndEndsTheEventLog() async throws {
        let gateway = try await Gateway.start(GatewayConfiguration(autoApproval: .auto))
        let node = try await TestSessions.nodeSession(gateway, identity: try TestIdentities.make(0xAD))
        let idle = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0xAE))
        await gateway.shutdown()
        #expect(try await node.client.closed().code == .goingAway)
        #expect(try await idle.closed().code == .goingAway)
        // A finished log answers waits at once.
        #expect(await gateway.waitForEvent(from: gateway.events.count, timeout: .seconds(10)) { _ in true } == nil)
        await gateway.shutdown()
    }
}
