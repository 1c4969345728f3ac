import Foundation
import GatewayProtocol
@testable import MockGateway
import Testing

/// The ledger a test starts the Gateway with (a fixtures document, as `harness serve --fixtures`
/// reads it): two tasks with the same activity time (ordered by id), one known only by its
/// `endedAt`, one whose agent is named only by its session key, one whose own `agentId`
/// overrides its session key.
private let ledger = #"""
    {"tasks": [
      {"id": "t-old", "status": "completed", "title": "Old", "createdAt": 100, "endedAt": 400},
      {"id": "t-b", "status": "running", "title": "B", "agentId": "main", "sessionKey": "agent:main:main",
       "createdAt": 200, "updatedAt": 900},
      {"id": "t-a", "status": "queued", "sessionKey": "agent:work:chat", "childSessionKey": "agent:work:sub:1",
       "createdAt": 300, "updatedAt": 900},
      {"id": "t-own", "status": "timed_out", "agentId": "main", "ownerKey": "agent:work:owner", "createdAt": 500},
      {"id": "t-fail", "status": "failed", "error": "boom", "runId": "r1", "createdAt": 50}
    ]}
    """#

private func configuration() throws -> GatewayConfiguration {
    var configuration = GatewayConfiguration()
    configuration.fixtures = try GatewayFixtures(json: try JSONValue(parsing: ledger))
    return configuration
}

private func ids(_ response: ResponseFrame) -> [String] {
    response.payload?["tasks"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
}

/// `tasks.list` over real sockets (upstream `src/gateway/server-methods/tasks.ts@0d6ce189`,
/// `taskUpdatedAt` in `task-summary.ts@0d6ce189`, `TasksListParamsSchema` in
/// `packages/gateway-protocol/src/schema/tasks.ts@0d6ce189`).
///
/// Breaks tried: ordering by `createdAt` instead of the last activity (the order test fails),
/// dropping the id tie-break (fails), letting a session key override a task's own `agentId`
/// (the filter test fails), answering `nextCursor` on the last page (the paging test fails).
@Suite("tasks.list")
struct TasksListMethodTests {
    @Test("the ledger newest activity first, ties by id; tasks as given; filters by status, agent and session")
    func listsAndFilters() async throws {
        try await Gateway.withGateway(try configuration()) { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xD1),
                                                                scopes: [OperatorScope.read.rawValue])
            #expect(reader.hello.features.methods.contains(GatewayMethod.tasksList.rawValue))
            let all = try await reader.client.request(GatewayMethod.tasksList.rawValue, params: nil)
            #expect(ids(all) == ["t-a", "t-b", "t-own", "t-old", "t-fail"])
            #expect(all.payload?["nextCursor"] == nil)
            #expect(all.payload?["tasks"]?.arrayValue?.last
                == ["id": "t-fail", "status": "failed", "error": "boom", "runId": "r1", "createdAt": 50])

            func listed(_ params: JSONValue) async throws -> [String] {
                ids(try await reader.client.request(GatewayMethod.tasksList.rawValue, params: params))
            }
            #expect(try await listed(["status": "running"]) == ["t-b"])
            #expect(try await listed(["status": ["failed", "timed_out"]]) == ["t-own", "t-fail"])
            #expect(try await listed(["status": []]) == [])
            // A task's own agentId decides; without one, an `agent:<id>:…` session key does.
            #expect(try await listed(["agentId": "work"]) == ["t-a"])
            #expect(try await listed(["agentId": "main"]) == ["t-b", "t-own"])
            #expect(try await listed(["sessionKey": "agent:work:sub:1"]) == ["t-a"])
            #expect(try await listed(["sessionKey": "agent:work:owner", "status": "timed_out"]) == ["t-own"])

            // The ledger is a fixture: the scripting API replaces it.
            await gateway.setTasks([TaskFixture(id: "only", status: "running", title: "Only", updatedAt: 7)])
            let replaced = try await reader.client.request(GatewayMethod.tasksList.rawValue, params: [:])
            #expect(replaced.payload == ["tasks": [["id": "only", "status": "running", "title": "Only", "updatedAt": 7]]])
        }
    }

    @Test("pages by a decimal offset cursor; nextCursor only while more follow")
    func pages() async throws {
        try await Gateway.withGateway(try configuration()) { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xD2),
                                                                scopes: [OperatorScope.read.rawValue])
            let first = try await reader.client.request(GatewayMethod.tasksList.rawValue, params: ["limit": 2])
            #expect(ids(first) == ["t-a", "t-b"] && first.payload?["nextCursor"] == "2")
            let second = try await reader.client.request(GatewayMethod.tasksList.rawValue,
                                                        params: ["limit": 2, "cursor": " 2 "])
            #expect(ids(second) == ["t-own", "t-old"] && second.payload?["nextCursor"] == "4")
            let last = try await reader.client.request(GatewayMethod.tasksList.rawValue, params: ["limit": 2, "cursor": "4"])
            #expect(ids(last) == ["t-fail"] && last.payload?["nextCursor"] == nil)
            let past = try await reader.client.request(GatewayMethod.tasksList.rawValue, params: ["cursor": "99"])
            #expect(past.payload == ["tasks": []])
            let empty = try await reader.client.request(GatewayMethod.tasksList.rawValue, params: ["cursor": ""])
            #expect(ids(empty).count == 5)
        }
        // The default page is 100, the largest 500.
        var big = GatewayConfiguration()
        big.fixtures = GatewayFixtures(tasks: (0..<600).map { TaskFixture(id: String(format: "t%03d", $0), status: "queued") })
        try await Gateway.withGateway(big) { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xD3),
                                                                scopes: [OperatorScope.read.rawValue])
            let page = try await reader.client.request(GatewayMethod.tasksList.rawValue, params: [:])
            #expect(ids(page).count == 100 && ids(page).first == "t000" && page.payload?["nextCursor"] == "100")
            let most = try await reader.client.request(GatewayMethod.tasksList.rawValue, params: ["limit": 500])
            #expect(ids(most).count == 500 && most.payload?["nextCursor"] == "500")
        }
    }

    @Test("closed params, typed members, a bad cursor; a node is refused by role, a pairing operator by scope")
    func refuses() async throws {
        try await Gateway.withGateway(try configuration()) { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xD4),
                                                                scopes: [OperatorScope.read.rawValue])
            let cases: [(JSONValue, String)] = [
                (["metadata": [:]], "invalid tasks.list params: at root: unexpected property 'metadata'"),
                (["limit": 0], "invalid tasks.list params: at /limit: must be >= 1"),
                (["limit": 501], "invalid tasks.list params: at /limit: must be <= 500"),
                (["limit": 1.5], "invalid tasks.list params: at /limit: must be integer"),
                (["agentId": ""], "invalid tasks.list params: at /agentId: must NOT have fewer than 1 characters"),
                (["sessionKey": 3], "invalid tasks.list params: at /sessionKey: must be string"),
                (["cursor": 2], "invalid tasks.list params: at /cursor: must be string"),
                (["status": ["running", "done"]], "invalid tasks.list params: at /status/1: must be equal to one of the allowed values"),
                (["status": "done"], "invalid tasks.list params: at /status: must match a schema in anyOf"),
                (["cursor": "abc"], "invalid tasks.list cursor"),
                (["cursor": "-1"], "invalid tasks.list cursor"),
                (["cursor": "99999999999999999"], "invalid tasks.list cursor"),
            ]
            for (params, message) in cases {
                let response = try await reader.client.request(GatewayMethod.tasksList.rawValue, params: params)
                #expect(response.error == ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: message), "\(params)")
            }
            try await TestSessions.expectReadRefusals(gateway, .tasksList, nodeByte: 0xD5, operatorByte: 0xD6)
        }
    }

    @Test("a fixtures document's tasks are upstream's closed TaskSummary; the first problem is named by its pointer")
    func fixtureDocument() throws {
        let cases: [(String, String)] = [
            (#"{"tasks":[{"status":"running"}]}"#, "at /tasks/0: must have required property 'id'"),
            (#"{"tasks":[{"id":"x","status":"done"}]}"#,
             "at /tasks/0/status: must be one of queued, running, completed, failed, cancelled, timed_out"),
            (#"{"tasks":[{"id":"","status":"running"}]}"#, "at /tasks/0/id: must NOT have fewer than 1 characters"),
            (#"{"tasks":[{"id":"x","status":"running","metadata":{}}]}"#, "at /tasks/0: unexpected property 'metadata'"),
            (#"{"tasks":[{"id":"x","status":"running","title":3}]}"#, "at /tasks/0/title: must be string"),
            (#"{"tasks":[{"id":"x","status":"running","updatedAt":-1}]}"#, "at /tasks/0/updatedAt: must be integer >= 0"),
        ]
        for (text, message) in cases {
            do {
                _ = try GatewayFixtures(json: try JSONValue(parsing: text))
                Issue.record("accepted: \(text)")
            } catch let error as GatewayFixtures.FixtureError {
                #expect(error.description == message, "\(text)")
            }
        }
    }
}
