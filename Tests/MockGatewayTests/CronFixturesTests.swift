import Foundation
import GatewayProtocol
import Testing
@testable import MockGateway

/// The cron fixtures (`--fixtures` `"cron"`): the example of docs/harness-serve.md is read, a job
/// or run that does not fit upstream's closed shape is refused with its JSON pointer, and the pure
/// rules answer the documented example. The wire behaviour is checked by the `cron-list`,
/// `cron-get` and `cron-runs` checks of the apps suite (`ServeInteropTests`).
@Suite("cron fixtures")
struct CronFixturesTests {
    static let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/harness-serve.md")

    /// The JSON example under "Fixtures file".
    static func documentedExample() throws -> Data {
        let text = try String(contentsOf: docs, encoding: .utf8)
        let section = try #require(text.range(of: "### Fixtures file"))
        let open = try #require(text.range(of: "```json\n", range: section.upperBound..<text.endIndex))
        let close = try #require(text.range(of: "```", range: open.upperBound..<text.endIndex))
        return Data(text[open.upperBound..<close.lowerBound].utf8)
    }

    @Test func theDocumentedExampleIsReadAndAnswered() throws {
        let fixtures = try GatewayFixtures(data: Self.documentedExample())
        #expect(fixtures.cron.jobs.map(\.id) == ["nightly"])
        #expect(fixtures.cron.runs.count == 1)
        let list = try CronSchedule.list(nil, cron: fixtures.cron, defaultAgentId: "main").get()
        #expect(list["total"] == 1 && list["limit"] == 1 && list["nextOffset"] == .null)
        #expect(list["jobs"]?.arrayValue?.first?["nextRunAtMs"] == 1_767_250_800_000)
        #expect(list["deliveryPreviews"]?["nightly"] == ["label": "not requested", "detail": "not requested"])
        let runs = try CronSchedule.runs(["id": "nightly"], cron: fixtures.cron).get()
        #expect(runs["entries"]?.arrayValue?.first?["jobName"] == "Nightly digest" && runs["limit"] == 50)
    }

    @Test func aJobOrRunOutsideTheClosedShapeIsRefusedWithItsPointer() throws {
        let job: JSONValue = ["id": "j", "name": "J", "enabled": true, "createdAtMs": 1, "updatedAtMs": 1,
                              "schedule": ["kind": "hourly"], "sessionTarget": "main", "wakeMode": "now",
                              "payload": ["kind": "systemEvent", "text": "t"], "state": [:]]
        #expect(throws: GatewayFixtures.FixtureError(pointer: "/cron/jobs/0/schedule/kind",
                                                      problem: "must be one of at, every, cron, on-exit")) {
            try GatewayFixtures(json: ["cron": ["jobs": [job]]])
        }
        #expect(throws: GatewayFixtures.FixtureError(pointer: "/cron/runs/0", problem: "unexpected property 'jobName'")) {
            try GatewayFixtures(json: ["cron": ["runs": [["ts": 1, "jobId": "j", "action": "finished", "jobName": "J"]]]])
        }
    }

    @Test func theConsoleShowsAndReplacesTheCronFixtures() async throws {
        try await Gateway.withGateway(GatewayConfiguration()) { gateway in
            let console = GatewayConsole(gateway: gateway)
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xCE),
                                                                scopes: [OperatorScope.read.rawValue])
            let shown = try #require(await console.handle("cron"))
            #expect(shown.result.map { $0.text } == "cron jobs: (none); 0 runs")
            let set = try #require(await console.handle(#"""
                cron {"jobs":[{"id":"j","name":"J","enabled":true,"createdAtMs":1,"updatedAtMs":2,"schedule":{"kind":"every","everyMs":60000},"sessionTarget":"main","wakeMode":"now","payload":{"kind":"systemEvent","text":"t"},"state":{}}],"runs":[{"ts":5,"jobId":"j","action":"finished"}]}
                """#))
            #expect(set.result.map { $0.text } == "cron jobs: j; 1 run")
            let got = try await reader.client.request(GatewayMethod.cronGet.rawValue, params: ["id": "j"])
            #expect(got.payload?["name"] == "J")
            let runs = try await reader.client.request(GatewayMethod.cronRuns.rawValue, params: [:])
            #expect(runs.payload?["entries"] == [["ts": 5, "jobId": "j", "action": "finished", "jobName": "J"]])
            #expect(await console.handle(#"cron {"jobs":[{"id":"x"}]}"#)?.errorMessage
                == "cron: at /jobs/0: must have required property 'name'")
        }
    }
}
