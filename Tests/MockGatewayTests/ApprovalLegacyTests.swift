import GatewayProtocol
import Testing
@testable import MockGateway

private let t0: Int64 = 1_767_225_600_000
private let agent = OperatorCaller(scopes: [.admin], surface: "conn-agent", clientId: "gateway-client")
private let phone = OperatorCaller(scopes: [.read, .approvals], surface: "conn-phone", deviceId: "dev-phone",
                                   clientId: "openclaw-ios", displayName: "iPhone")

private func makeStore(_ features: OperatorProfileFeatures = .current) -> ApprovalStore {
    ApprovalStore(features: features, random: SeededRandom(seed: 11))
}

/// Opens an approval through `exec.approval.request` and returns the request's waiter.
@discardableResult
private func request(_ store: inout ApprovalStore, id: String = "ex-1", extra: [String: JSONValue] = [:],
                     at nowMs: Int64 = t0) throws -> (waiter: OperatorWaiter, outcome: OperatorOutcome) {
    var params: [String: JSONValue] = ["id": .string(id), "command": "npm publish", "host": "gateway",
                                       "agentId": "main", "sessionKey": "agent:main:main"]
    params.merge(extra) { _, new in new }
    let outcome = store.handleExecRequest(params: .object(params), caller: agent, nowMs: nowMs)
    return (try #require(outcome.waiter), outcome)
}

private func resolve(_ store: inout ApprovalStore, _ id: String, _ decision: String, by caller: OperatorCaller = phone,
                     at nowMs: Int64) -> OperatorOutcome {
    store.handleExecResolve(params: ["id": .string(id), "decision": .string(decision)], caller: caller, nowMs: nowMs)
}

private func settlement(in effects: [OperatorEffect]) -> OperatorSettlement? {
    effects.compactMap { if case .settled(let value) = $0 { value } else { nil } }.first
}

@Suite("Legacy exec approvals (exec.approval.*)")
struct ApprovalLegacyTests {
    @Test("exec.approval.request keeps the request open and announces exec.approval.requested with the stored request")
    func requestIsDeferred() throws {
        var store = makeStore()
        let (waiter, outcome) = try request(&store)
        #expect(waiter.subject == .approval(id: "ex-1"))
        #expect(waiter.interimReply == nil)
        let event = try #require(outcome.events.first)
        #expect(event.name == "exec.approval.requested")
        #expect(event.payload["approvalKind"] == "exec")
        #expect(event.payload["request"]?["command"] == "npm publish")
        #expect(event.payload["request"]?["sessionKey"] == "agent:main:main")
        #expect(event.payload["request"]?["allowedDecisions"] == ["allow-once", "allow-always", "deny"])
        #expect(event.payload["expiresAtMs"] == .int(t0 + 1_800_000), "default timeout is 30 minutes")
    }

    @Test("timeoutMs sets the deadline; the legacy default timeout is a profile parameter")
    func customTimeout() throws {
        var store = makeStore()
        try request(&store, id: "short", extra: ["timeoutMs": 120_000])
        #expect(store.record(id: "short")?.expiresAtMs == t0 + 120_000)
        var older = makeStore(OperatorProfileFeatures(unifiedApprovals: false, questions: false, missingScopeStyle: .invalidRequest,
                                                      defaultExecApprovalTimeoutMs: 120_000))
        try request(&older, id: "old")
        #expect(older.record(id: "old")?.expiresAtMs == t0 + 120_000)
    }

    @Test("twoPhase answers accepted first, then the decision")
    func twoPhase() throws {
        var store = makeStore()
        let (waiter, _) = try request(&store, extra: ["twoPhase": true])
        #expect(waiter.interimReply == [
            "status": "accepted", "id": "ex-1", "deliveryRoute": "approval-client",
            "createdAtMs": .int(t0), "expiresAtMs": .int(t0 + 1_800_000),
        ])
        let resolved = resolve(&store, "ex-1", "allow-once", at: t0 + 5)
        let final = try #require(settlement(in: resolved.effects).flatMap(waiter.finalReply(for:)))
        #expect(final == ["id": "ex-1", "decision": "allow-once", "createdAtMs": .int(t0), "expiresAtMs": .int(t0 + 1_800_000)])
    }

    static let invalidRequests: [([String: JSONValue], String)] = [
        (["command": ""], "command is required"),
        (["id": "plugin:abc"], "approval ids starting with plugin: are reserved"),
        (["host": "node", "nodeId": "n1"], "commandArgv is required for host=node"),
        (["host": "node", "commandArgv": ["ls"]], "nodeId is required for host=node"),
        (["timeoutMs": "soon"], "invalid exec.approval.request params: timeoutMs must be an integer in 1...2147483647"),
        (["unavailableDecisions": ["deny"]], "invalid exec.approval.request params: unavailableDecisions may only contain allow-always"),
        ]

    @Test("exec.approval.request rejects bad requests with the upstream messages", arguments: invalidRequests)
    func requestValidation(extra: [String: JSONValue], message: String) {
        var store = makeStore()
        var params: [String: JSONValue] = ["id": "ex-1", "command": "npm publish"]
        params.merge(extra) { _, new in new }
        let outcome = store.handleExecRequest(params: .object(params), caller: agent, nowMs: t0)
        #expect(outcome.error?.code == "INVALID_REQUEST")
        #expect(outcome.error?.message == message)
        #expect(store.all.isEmpty)
    }

    @Test("a command too long to display is refused with EXEC_APPROVAL_COMMAND_DISPLAY_LIMIT")
    func commandDisplayLimit() {
        var store = makeStore()
        let long = String(repeating: "x", count: ApprovalStore.commandDisplayLimit + 1)
        let outcome = store.handleExecRequest(params: ["command": .string(long)], caller: agent, nowMs: t0)
        #expect(outcome.error?.details?["reason"] == "EXEC_APPROVAL_COMMAND_DISPLAY_LIMIT")
    }

    @Test("an id that is still pending is refused; a finished id starts a new lifecycle")
    func duplicateIds() throws {
        var store = makeStore()
        try request(&store)
        let duplicate = store.handleExecRequest(params: ["id": "ex-1", "command": "ls"], caller: agent, nowMs: t0 + 1)
        #expect(duplicate.error == ErrorShape(code: "INVALID_REQUEST", message: "approval id already pending"))
        _ = resolve(&store, "ex-1", "deny", at: t0 + 2)
        let reused = store.handleExecRequest(params: ["id": "ex-1", "command": "ls"], caller: agent, nowMs: t0 + 3)
        #expect(reused.waiter != nil)
        #expect(store.record(id: "ex-1")?.status == .pending)
    }

    @Test("without an approval route the request ends at once with decision null")
    func noRoute() {
        var store = makeStore()
        let outcome = store.handleExecRequest(params: ["id": "ex-1", "command": "ls"], caller: agent, route: .none, nowMs: t0)
        #expect(outcome.payload == ["id": "ex-1", "decision": nil, "createdAtMs": .int(t0), "expiresAtMs": .int(t0 + 1_800_000)])
        let wait = store.handleExecWaitDecision(params: ["id": "ex-1"], caller: agent, nowMs: t0 + 1)
        #expect(wait.payload?["terminalReason"] == "no-approval-route")
    }

    @Test("exec.approval.resolve answers {ok:true}, publishes exec.approval.resolved and completes the waiting request")
    func resolveSucceeds() throws {
        var store = makeStore()
        let (waiter, _) = try request(&store)
        let outcome = resolve(&store, "ex-1", "allow-always", at: t0 + 40)
        #expect(outcome.payload == ["ok": true])
        let event = try #require(outcome.events.first { $0.name == "exec.approval.resolved" })
        #expect(event.payload["decision"] == "allow-always")
        #expect(event.payload["resolvedBy"] == "iPhone")
        #expect(event.payload["ts"] == .int(t0 + 40))
        #expect(event.payload["request"]?["command"] == "npm publish")
        let final = try #require(settlement(in: outcome.effects).flatMap(waiter.finalReply(for:)))
        #expect(final["decision"] == "allow-always")
    }

    @Test("an identical retry is {ok:true}; a different decision is APPROVAL_ALREADY_RESOLVED")
    func loserAnswers() throws {
        var store = makeStore()
        try request(&store)
        _ = resolve(&store, "ex-1", "deny", at: t0 + 1)
        let retry = resolve(&store, "ex-1", "deny", at: t0 + 2)
        #expect(retry.payload == ["ok": true])
        #expect(retry.events.isEmpty)
        let loser = resolve(&store, "ex-1", "allow-once", at: t0 + 3)
        #expect(loser.error == ErrorShape(code: "INVALID_REQUEST", message: "approval already resolved",
                                          details: ["reason": "APPROVAL_ALREADY_RESOLVED"]))
        #expect(store.resolveAttempts.map(\.result) == [.applied, .idempotentRetry, .lost(winnerStatus: "denied")])
    }

    @Test("allow-always that was not offered is refused and the approval stays pending")
    func allowAlwaysUnavailable() throws {
        var store = makeStore()
        try request(&store, extra: ["unavailableDecisions": ["allow-always"]])
        #expect(store.record(id: "ex-1")?.allowedDecisions == [.allowOnce, .deny])
        let outcome = resolve(&store, "ex-1", "allow-always", at: t0 + 1)
        #expect(outcome.error == ErrorShape(code: "INVALID_REQUEST", message: "allow-always is unavailable for this command",
                                            details: ["reason": "APPROVAL_ALLOW_ALWAYS_UNAVAILABLE"]))
        #expect(store.record(id: "ex-1")?.status == .pending)
    }

    @Test("an unknown decision is \"invalid decision\"")
    func invalidDecision() throws {
        var store = makeStore()
        try request(&store)
        #expect(resolve(&store, "ex-1", "maybe", at: t0 + 1).error == ErrorShape(code: "INVALID_REQUEST", message: "invalid decision"))
    }

    @Test("legacy resolve accepts a unique id prefix and refuses an ambiguous one")
    func prefixes() throws {
        var store = makeStore()
        try request(&store, id: "abc-111")
        try request(&store, id: "abc-222")
        #expect(resolve(&store, "abc", "deny", at: t0 + 1).error == ErrorShape(
            code: "INVALID_REQUEST", message: "ambiguous approval id prefix; use the full id"))
        #expect(resolve(&store, "abc-1", "deny", at: t0 + 2).payload == ["ok": true])
        #expect(store.record(id: "abc-111")?.status == .denied)
    }

    @Test("exec.approval.get is pending-only: the flat view while pending, \"unknown or expired approval id\" once finished")
    func getIsPendingOnly() throws {
        var store = makeStore()
        try request(&store, extra: ["commandPreview": "publish", "warningText": "Publishes to npm"])
        let pending = store.handleExecGet(params: ["id": "ex-1"], caller: phone, nowMs: t0 + 1)
        #expect(pending.payload == [
            "id": "ex-1", "commandText": "npm publish", "commandPreview": "publish",
            "allowedDecisions": ["allow-once", "allow-always", "deny"], "host": "gateway", "nodeId": nil,
            "agentId": "main", "expiresAtMs": .int(t0 + 1_800_000),
        ])
        _ = resolve(&store, "ex-1", "deny", at: t0 + 2)
        #expect(store.handleExecGet(params: ["id": "ex-1"], caller: phone, nowMs: t0 + 3).error == ErrorShape(
            code: "INVALID_REQUEST", message: "unknown or expired approval id",
            details: ["reason": "APPROVAL_NOT_FOUND",
                      "remediation": "Re-request the action; pending approvals are cleared after expiry or restart."]))
    }

    @Test("a finished record answers legacy resolves for 15 s, then it is unknown (APPROVAL_NOT_FOUND)")
    func legacyGraceWindow() throws {
        var store = makeStore()
        try request(&store)
        _ = resolve(&store, "ex-1", "deny", at: t0 + 100)
        #expect(resolve(&store, "ex-1", "allow-once", at: t0 + 100 + 14_999).error == ApprovalErrors.alreadyResolved)
        #expect(resolve(&store, "ex-1", "allow-once", at: t0 + 100 + 15_000).error == ApprovalErrors.legacyNotFound)
        // The unified family still has the record (current profile).
        #expect(store.handleGet(params: ["id": "ex-1"], caller: phone, nowMs: t0 + 100 + 15_000).payload != nil)
    }

    @Test("on the legacy profile a finished record vanishes entirely after 15 s")
    func legacyProfileForgets() throws {
        var store = makeStore(.legacy)
        try request(&store)
        _ = resolve(&store, "ex-1", "allow-once", at: t0 + 1)
        _ = store.expire(nowMs: t0 + 1 + 14_999)
        #expect(store.record(id: "ex-1") != nil)
        _ = store.expire(nowMs: t0 + 1 + 15_000)
        #expect(store.record(id: "ex-1") == nil)
    }

    @Test("exec.approval.waitDecision waits while pending and answers the decision once finished")
    func waitDecision() throws {
        var store = makeStore()
        try request(&store)
        let waiting = store.handleExecWaitDecision(params: ["id": "ex-1"], caller: agent, nowMs: t0 + 1)
        let waiter = try #require(waiting.waiter)
        let resolved = resolve(&store, "ex-1", "allow-once", at: t0 + 2)
        #expect(settlement(in: resolved.effects).flatMap(waiter.finalReply(for:))?["decision"] == "allow-once")
        let late = store.handleExecWaitDecision(params: ["id": "ex-1"], caller: agent, nowMs: t0 + 3)
        #expect(late.payload == ["id": "ex-1", "decision": "allow-once", "createdAtMs": .int(t0), "expiresAtMs": .int(t0 + 1_800_000)])
    }

    @Test("expiry completes waiters with decision null and terminalReason timeout, and sends no legacy event")
    func expiryGivesNullDecision() throws {
        var store = makeStore()
        let (requestWaiter, _) = try request(&store, extra: ["timeoutMs": 1_000])
        let waitWaiter = try #require(store.handleExecWaitDecision(params: ["id": "ex-1"], caller: agent, nowMs: t0).waiter)
        let effects = store.expire(nowMs: t0 + 1_000)
        let settled = try #require(settlement(in: effects))
        #expect(requestWaiter.finalReply(for: settled) == ["id": "ex-1", "decision": nil, "createdAtMs": .int(t0), "expiresAtMs": .int(t0 + 1_000)])
        #expect(waitWaiter.finalReply(for: settled)?["terminalReason"] == "timeout")
        #expect(!effects.contains { if case .publish(let e) = $0 { e.name.hasPrefix("exec.approval") } else { false } })
        #expect(waitWaiter.finalReply(for: .approval(ApprovalRecord(
            id: "other", presentation: .exec(ExecApprovalPresentation(commandText: "x")), allowedDecisions: [],
            createdAtMs: t0, expiresAtMs: t0))) == nil, "a waiter ignores other records")
    }

    @Test("exec.approval.list returns the pending exec approvals as a bare array, oldest first")
    func list() throws {
        var store = makeStore()
        try request(&store, id: "first", at: t0)
        try request(&store, id: "second", at: t0 + 1)
        try request(&store, id: "third", at: t0 + 2)
        _ = resolve(&store, "second", "deny", at: t0 + 3)
        let outcome = store.handleExecList(params: [:], caller: phone, nowMs: t0 + 4)
        let items = try #require(outcome.payload?.arrayValue)
        #expect(items.compactMap { $0["id"]?.stringValue } == ["first", "third"])
        #expect(items.first?["approvalKind"] == "exec")
        #expect(items.first?["request"]?["command"] == "npm publish")
    }

    @Test("an approval opened through the legacy family is readable through approval.get")
    func legacyRecordIsUnified() throws {
        var store = makeStore()
        try request(&store)
        let outcome = store.handleGet(params: ["id": "ex-1"], caller: phone, nowMs: t0 + 1)
        #expect(outcome.payload?["approval"]?["presentation"]?["commandText"] == "npm publish")
    }
}
