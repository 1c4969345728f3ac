import Foundation
import GatewayProtocol
import MockGateway
import Testing
import WebSocketTransport

/// Agent questions over real sockets: request, waitAnswer, resolve, get, list, and the
/// `question.resolved` broadcast for every way a question ends.
@Suite("Operator questions end to end")
struct OperatorQuestionsEndToEndTests {
    static let questionScopes = ["operator.questions"]

    static let destinationQuestion: JSONValue = [
        "questionId": "destination", "header": "Deploy to", "question": "Where should I deploy the build?",
        "options": [["label": "Staging"], ["label": "Production"]], "multiSelect": false, "isOther": false,
    ]

    static func answers(_ values: [String]) -> JSONValue {
        ["answers": ["destination": .array(values.map(JSONValue.string))]]
    }

    /// Two sessions with `operator.questions` and one without, all past their hello traffic.
    static func audience(_ gateway: Gateway, seed: UInt8) async throws -> (asker: ConnectedSession, answerer: ConnectedSession, outsider: ConnectedSession) {
        let asker = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(seed), scopes: questionScopes)
        let answerer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(seed + 1), scopes: questionScopes)
        let outsider = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(seed + 2), scopes: ["operator.approvals"])
        for session in [asker, answerer, outsider] { _ = try await session.client.barrier() }
        return (asker, answerer, outsider)
    }

    /// The `question.resolved` payloads `session` received up to now (plus `earlier` frames).
    static func resolvedEvents(_ session: ConnectedSession, earlier: [Frame] = []) async throws -> [JSONValue] {
        TestClient.events("question.resolved", in: earlier + (try await session.client.barrier())).compactMap(\.payload)
    }

    @Test func questionRoundTripOverTheWire() async throws {
        try await Gateway.withGateway { gateway in
            let (asker, answerer, outsider) = try await Self.audience(gateway, seed: 0x70)

            let created = try await asker.client.request("question.request", params: [
                "questions": [Self.destinationQuestion], "agentId": "main", "timeoutMs": 600_000,
            ])
            let id = try #require(created.payload?["id"]?.stringValue)
            #expect(created.payload?["expiresAtMs"]?.int64Value == gateway.clock.nowMs + 600_000)

            let announced = try await answerer.client.event("question.requested")
            #expect(announced.payload?["id"]?.stringValue == id)
            #expect(announced.payload?["status"] == "pending")
            let listed = try await answerer.client.request("question.list", params: [:])
            #expect(listed.payload?["questions"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [id])
            let got = try await answerer.client.request("question.get", params: ["id": .string(id)])
            #expect(got.payload?["question"]?["questions"]?.arrayValue?.first?["questionId"] == "destination")

            // The asker long-polls; the answerer answers; both see the same outcome.
            try await asker.client.sendRequest("question.waitAnswer", params: ["id": .string(id)], id: "wait")
            let (resolved, answererFrames) = try await answerer.client.requestCollecting("question.resolve", params: [
                "id": .string(id), "answers": Self.answers(["Staging"]), "resolvedBy": "ios",
            ])
            #expect(resolved.payload == ["status": "answered", "answers": Self.answers(["Staging"])])
            let (waited, askerFrames) = try await asker.client.collect(untilResponseTo: "wait")
            #expect(waited.payload == ["status": "answered", "answers": Self.answers(["Staging"])])

            let expected: JSONValue = ["id": .string(id), "status": "answered", "answers": Self.answers(["Staging"])]
            #expect(try await Self.resolvedEvents(answerer, earlier: answererFrames) == [expected])
            #expect(try await Self.resolvedEvents(asker, earlier: askerFrames) == [expected])
            #expect(try await Self.resolvedEvents(outsider).isEmpty)

            let afterwards = try await answerer.client.request("question.list", params: nil)
            #expect(afterwards.payload?["questions"]?.arrayValue?.isEmpty == true, "terminal questions are not listed")
            let tombstone = try await answerer.client.request("question.get", params: ["id": .string(id)])
            #expect(tombstone.payload?["question"]?["status"] == "answered")
        }
    }

    @Test func cancellingAQuestionBroadcastsCancelled() async throws {
        try await Gateway.withGateway { gateway in
            let (asker, answerer, outsider) = try await Self.audience(gateway, seed: 0x74)
            let question = try await gateway.createQuestion("Continue?", options: ["Yes", "No"])
            let (cancelled, frames) = try await answerer.client.requestCollecting("question.resolve", params: ["id": .string(question.id), "cancel": true])
            #expect(cancelled.payload == ["status": "cancelled"])
            let expected: JSONValue = ["id": .string(question.id), "status": "cancelled"]
            #expect(try await Self.resolvedEvents(answerer, earlier: frames) == [expected])
            #expect(try await Self.resolvedEvents(asker) == [expected])
            #expect(try await Self.resolvedEvents(outsider).isEmpty)

            let late = try await asker.client.request("question.resolve", params: ["id": .string(question.id), "answers": ["answers": ["q1": ["Yes"]]]])
            #expect(late.error?.message == "question '\(question.id)' is already cancelled")
            #expect(late.error?.details?["reason"] == "QUESTION_ALREADY_TERMINAL")
        }
    }

    @Test func expiryBroadcastsExpiredAndALateAnswerGetsAlreadyTerminal() async throws {
        try await Gateway.withGateway { gateway in
            let (asker, answerer, outsider) = try await Self.audience(gateway, seed: 0x78)
            let question = try await gateway.createQuestion("Pick one", options: ["A", "B"], expiresIn: .seconds(60))
            try await asker.client.sendRequest("question.waitAnswer", params: ["id": .string(question.id)], id: "wait")
            _ = try await asker.client.barrier()

            await gateway.advance(by: .seconds(60))
            let expected: JSONValue = ["id": .string(question.id), "status": "expired"]
            let (waited, askerFrames) = try await asker.client.collect(untilResponseTo: "wait")
            #expect(waited.payload == ["status": "expired"])
            #expect(try await Self.resolvedEvents(asker, earlier: askerFrames) == [expected])
            #expect(try await Self.resolvedEvents(answerer) == [expected])
            #expect(try await Self.resolvedEvents(outsider).isEmpty)

            let late = try await answerer.client.request("question.resolve", params: ["id": .string(question.id), "answers": ["answers": ["q1": ["A"]]]])
            #expect(late.error?.code == "INVALID_REQUEST")
            #expect(late.error?.message == "question '\(question.id)' is already expired")
            #expect(late.error?.details?["reason"] == "QUESTION_ALREADY_TERMINAL")

            // After the 15 s grace the tombstone is gone.
            await gateway.advance(by: .seconds(15))
            let gone = try await answerer.client.request("question.get", params: ["id": .string(question.id)])
            #expect(gone.error?.details?["reason"] == "QUESTION_NOT_FOUND")
        }
    }

    @Test func questionsExpireAfterFifteenMinutesByDefault() async throws {
        try await Gateway.withGateway { gateway in
            let (asker, answerer, _) = try await Self.audience(gateway, seed: 0x7C)
            let created = try await asker.client.request("question.request", params: ["questions": [Self.destinationQuestion]])
            let id = try #require(created.payload?["id"]?.stringValue)
            #expect(created.payload?["expiresAtMs"]?.int64Value == gateway.clock.nowMs + 900_000)

            await gateway.advance(by: .seconds(899))
            let stillPending = try await answerer.client.request("question.get", params: ["id": .string(id)])
            #expect(stillPending.payload?["question"]?["status"] == "pending")
            #expect(try await Self.resolvedEvents(answerer).isEmpty)

            await gateway.advance(by: .seconds(2))
            #expect(try await Self.resolvedEvents(answerer) == [["id": .string(id), "status": "expired"]])
            let late = try await answerer.client.request("question.resolve", params: ["id": .string(id), "answers": Self.answers(["Staging"])])
            #expect(late.error?.details?["reason"] == "QUESTION_ALREADY_TERMINAL")
        }
    }

    @Test func anInvalidAnswerLeavesTheQuestionPending() async throws {
        try await Gateway.withGateway { gateway in
            let (_, answerer, _) = try await Self.audience(gateway, seed: 0x80)
            let question = try await gateway.createQuestion("Pick one", options: ["A", "B"])
            let invalid = try await answerer.client.request("question.resolve", params: ["id": .string(question.id), "answers": ["answers": ["q1": ["C"]]]])
            #expect(invalid.error?.details?["reason"] == "QUESTION_INVALID_ANSWER")
            #expect(try await Self.resolvedEvents(answerer).isEmpty)
            let valid = try await answerer.client.request("question.resolve", params: ["id": .string(question.id), "answers": ["answers": ["q1": ["B"]]]])
            #expect(valid.payload?["status"] == "answered")
            #expect(await gateway.question(id: question.id)?.status == .answered)
        }
    }

    @Test func waitAnswerWithATimeoutAnswersPendingOnTheGatewayClock() async throws {
        try await Gateway.withGateway { gateway in
            let (asker, _, _) = try await Self.audience(gateway, seed: 0x84)
            let question = try await gateway.createQuestion("Pick one", options: ["A", "B"])
            try await asker.client.sendRequest("question.waitAnswer", params: ["id": .string(question.id), "timeoutMs": 10_000], id: "wait")
            _ = try await asker.client.barrier()
            await gateway.advance(by: .seconds(10))
            let (waited, _) = try await asker.client.collect(untilResponseTo: "wait")
            #expect(waited.payload == ["status": "pending"])
        }
    }

    @Test func aWaitParkedOnAClosedConnectionIsDropped() async throws {
        try await Gateway.withGateway { gateway in
            let (asker, answerer, _) = try await Self.audience(gateway, seed: 0x88)
            let question = try await gateway.createQuestion("Pick one", options: ["A", "B"])
            try await asker.client.sendRequest("question.waitAnswer", params: ["id": .string(question.id)], id: "wait")
            _ = try await asker.client.barrier()
            let connectionId = asker.connectionId
            await asker.client.close()
            let closed = await gateway.waitForEvent(timeout: .seconds(10)) { event in
                if case .connectionClosed(let id, _, _) = event { return id == connectionId }
                return false
            }
            #expect(closed != nil)
            try await gateway.answerQuestion(id: question.id, answers: ["q1": ["A"]])
            // The answer is settled and broadcast; nothing is answered on the closed connection.
            _ = try await Self.resolvedEvents(answerer)
            let answeredOnClosed = gateway.events.all.contains { event in
                if case .requestHandled(let id, "question.waitAnswer", _, _) = event { return id == connectionId }
                return false
            }
            #expect(!answeredOnClosed, "a parked waitAnswer of a closed connection is not answered")
        }
    }
}
