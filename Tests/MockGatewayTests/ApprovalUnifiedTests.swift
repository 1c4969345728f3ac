import GatewayProtocol
import Testing
@testable import MockGateway

private let t0: Int64 = 1_767_225_600_000
private let phone = OperatorCaller(scopes: [.read, .write, .approvals], surface: "conn-phone", deviceId: "dev-phone",
                                   clientId: "openclaw-ios", displayName: "iPhone")
private let controlUI = OperatorCaller(scopes: [.admin], surface: "conn-ui", deviceId: "dev-ui",
                                       clientId: "openclaw-control-ui", displayName: "Control UI")

private func makeStore(_ features: OperatorProfileFeatures = .current) -> ApprovalStore {
    ApprovalStore(features: features, random: SeededRandom(seed: 7))
}

private func createExec(_ store: inout ApprovalStore, id: String = "appr-1", decisions: [ApprovalDecision] = ApprovalDecision.allCases,
                        sessionKey: String? = nil, at nowMs: Int64 = t0) throws -> OperatorResult<ApprovalRecord> {
    let attempt = store.create(.exec("rm -rf ./build", id: id, allowedDecisions: decisions, expiresInMs: 1_800_000,
                                     sessionKey: sessionKey), nowMs: nowMs)
    return OperatorResult(try attempt.get(), effects: attempt.effects)
}

private func resolveParams(_ id: String, kind: String = "exec", decision: String) -> JSONValue {
    ["id": .string(id), "kind": .string(kind), "decision": .string(decision)]
}

@Suite("Unified approvals (approval.*)")
struct ApprovalUnifiedTests {
    @Test("creating an exec approval announces exec.approval.requested with the legacy payload")
    func createAnnounces() throws {
        var store = makeStore()
        let created = try createExec(&store)
        #expect(created.value.status == .pending)
        let events = created.effects.compactMap { if case .publish(let event) = $0 { event } else { nil } }
        #expect(events.map(\.name) == ["exec.approval.requested"])
        #expect(events.first?.payload == [
            "approvalKind": "exec", "id": "appr-1", "createdAtMs": .int(t0), "expiresAtMs": .int(t0 + 1_800_000),
            "request": [
                "command": "rm -rf ./build", "cwd": nil, "nodeId": nil, "host": "gateway", "security": nil, "ask": nil,
                "warningText": nil, "allowedDecisions": ["allow-once", "allow-always", "deny"], "agentId": "main",
                "resolvedPath": nil, "sessionKey": nil,
            ],
        ])
    }

    @Test("allowedDecisions always contains deny, without duplicates, in wire order", arguments: [
        ([ApprovalDecision.allowOnce], ["allow-once", "deny"]),
        ([], ["deny"]),
        ([.deny, .allowAlways, .allowAlways], ["allow-always", "deny"]),
        (ApprovalDecision.allCases, ["allow-once", "allow-always", "deny"]),
    ])
    func allowedDecisionsAlwaysContainDeny(offered: [ApprovalDecision], expected: [String]) throws {
        var store = makeStore()
        let record = try createExec(&store, decisions: offered).value
        #expect(record.allowedDecisions.map(\.rawValue) == expected)
    }

    @Test("system-agent approvals offer exactly allow-once and deny")
    func systemAgentDecisionsAreFixed() throws {
        var store = makeStore()
        let draft = ApprovalDraft(presentation: .systemAgent(SystemAgentApprovalPresentation(
            title: "Apply", description: "Apply the proposal", proposalHash: String(repeating: "a", count: 64))),
            allowedDecisions: ApprovalDecision.allCases)
        let record = try store.create(draft, nowMs: t0).get()
        #expect(record.allowedDecisions == [.allowOnce, .deny])
    }

    @Test("approval.get returns the pending snapshot exactly")
    func getPendingSnapshot() throws {
        var store = makeStore()
        _ = try createExec(&store)
        let outcome = store.handleGet(params: ["id": "appr-1"], caller: phone, nowMs: t0 + 1)
        #expect(outcome.payload == ["approval": [
            "id": "appr-1", "status": "pending", "urlPath": "/approve/appr-1", "createdAtMs": .int(t0),
            "expiresAtMs": .int(t0 + 1_800_000),
            "presentation": ["kind": "exec", "commandText": "rm -rf ./build", "host": "gateway", "agentId": "main",
                             "allowedDecisions": ["allow-once", "allow-always", "deny"]],
        ]])
    }

    @Test("urlPath honours the Control UI base path and escapes the id")
    func urlPathUsesBasePath() {
        let record = ApprovalRecord(id: "é 1", presentation: .exec(ExecApprovalPresentation(commandText: "ls")),
                                    allowedDecisions: [.deny], createdAtMs: t0, expiresAtMs: t0 + 1)
        #expect(record.urlPath(basePath: "/ui/") == "/ui/approve/%C3%A9%201")
        #expect(record.urlPath() == "/approve/%C3%A9%201")
    }

    @Test("approval.get of an unknown id is INVALID_REQUEST \"approval not found\" with APPROVAL_NOT_FOUND")
    func getUnknown() {
        var store = makeStore()
        let outcome = store.handleGet(params: ["id": "nope"], caller: phone, nowMs: t0)
        #expect(outcome.error == ErrorShape(code: "INVALID_REQUEST", message: "approval not found",
                                            details: ["reason": "APPROVAL_NOT_FOUND"]))
    }

    @Test("approval.get without an id is \"invalid approval.get params\"")
    func getWithoutId() {
        var store = makeStore()
        #expect(store.handleGet(params: [:], caller: phone, nowMs: t0).error?.message == "invalid approval.get params")
        #expect(store.handleGet(params: ["id": 5], caller: phone, nowMs: t0).error?.message == "invalid approval.get params")
    }

    @Test("ids are compared as exact bytes: composed and decomposed é are different approvals")
    func idsAreExactBytes() throws {
        var store = makeStore()
        _ = try createExec(&store, id: "caf\u{E9}")
        #expect(store.handleGet(params: ["id": "cafe\u{301}"], caller: phone, nowMs: t0).error != nil)
        #expect(store.handleGet(params: ["id": "caf\u{E9}"], caller: phone, nowMs: t0).payload != nil)
    }

    @Test("approval.resolve applies the first decision: {applied:true} with the terminal snapshot and the legacy resolved event")
    func resolveApplies() throws {
        var store = makeStore()
        _ = try createExec(&store)
        let outcome = store.handleResolve(params: resolveParams("appr-1", decision: "allow-always"), caller: phone, nowMs: t0 + 50)
        #expect(outcome.payload == [
            "applied": true,
            "approval": [
                "id": "appr-1", "status": "allowed", "decision": "allow-always", "reason": "user",
                "resolvedAtMs": .int(t0 + 50), "urlPath": "/approve/appr-1", "createdAtMs": .int(t0),
                "expiresAtMs": .int(t0 + 1_800_000),
                "presentation": ["kind": "exec", "commandText": "rm -rf ./build", "host": "gateway", "agentId": "main",
                                 "allowedDecisions": ["allow-once", "allow-always", "deny"]],
                "source": ["agentId": "main"], "resolver": ["kind": "device", "id": "dev-phone"],
            ],
        ])
        let resolved = try #require(outcome.events.first { $0.name == "exec.approval.resolved" })
        #expect(resolved.payload["id"] == "appr-1")
        #expect(resolved.payload["decision"] == "allow-always")
        #expect(resolved.payload["resolvedBy"] == "iPhone")
        #expect(resolved.payload["ts"] == .int(t0 + 50))
        #expect(resolved.payload["request"] == store.record(id: "appr-1")?.legacyRequest)
        #expect(outcome.effects.contains { if case .settled(.approval(let record)) = $0 { record.id == "appr-1" } else { false } })
    }

    @Test("a later resolve gets {applied:false} with the recorded winner and changes nothing")
    func loserGetsWinner() throws {
        var store = makeStore()
        _ = try createExec(&store)
        let winner = store.handleResolve(params: resolveParams("appr-1", decision: "allow-always"), caller: controlUI, nowMs: t0 + 50)
        let loser = store.handleResolve(params: resolveParams("appr-1", decision: "deny"), caller: phone, nowMs: t0 + 60)
        #expect(loser.payload?["applied"] == false)
        #expect(loser.payload?["approval"] == winner.payload?["approval"])
        #expect(loser.events.isEmpty)
        #expect(store.record(id: "appr-1")?.decision == .allowAlways)
    }

    @Test("an identical retry by the winner is idempotent: the same record, applied:false, no new events")
    func identicalRetryIsIdempotent() throws {
        var store = makeStore()
        _ = try createExec(&store)
        let first = store.handleResolve(params: resolveParams("appr-1", decision: "deny"), caller: phone, nowMs: t0 + 10)
        let retry = store.handleResolve(params: resolveParams("appr-1", decision: "deny"), caller: phone, nowMs: t0 + 20)
        #expect(retry.payload?["approval"] == first.payload?["approval"])
        #expect(retry.payload?["applied"] == false)
        #expect(retry.events.isEmpty)
        #expect(store.resolveAttempts.map(\.result) == [.applied, .lost(winnerStatus: "denied")])
    }

    @Test("a decision that was not offered force-denies the approval with malformed-verdict (applied)")
    func notOfferedDecisionForceDenies() throws {
        var store = makeStore()
        _ = try createExec(&store, decisions: [.allowOnce, .deny])
        let outcome = store.handleResolve(params: resolveParams("appr-1", decision: "allow-always"), caller: phone, nowMs: t0 + 5)
        #expect(outcome.payload?["applied"] == true)
        #expect(outcome.payload?["approval"]?["status"] == "denied")
        #expect(outcome.payload?["approval"]?["decision"] == "deny")
        #expect(outcome.payload?["approval"]?["reason"] == "malformed-verdict")
    }

    @Test("a wrong kind or an unknown decision force-denies with malformed-verdict", arguments: [
        ("plugin", "allow-once"), ("exec", "allow-sometimes"), ("system-agent", "deny"),
    ])
    func wrongKindForceDenies(kind: String, decision: String) throws {
        var store = makeStore()
        _ = try createExec(&store)
        let outcome = store.handleResolve(params: resolveParams("appr-1", kind: kind, decision: decision), caller: phone, nowMs: t0 + 5)
        #expect(outcome.payload?["applied"] == true)
        #expect(store.record(id: "appr-1")?.reason == .malformedVerdict)
    }

    @Test("deny is accepted even when the offered list was given without it")
    func denyAlwaysAccepted() throws {
        var store = makeStore()
        _ = try createExec(&store, decisions: [.allowOnce])
        let outcome = store.handleResolve(params: resolveParams("appr-1", decision: "deny"), caller: phone, nowMs: t0 + 5)
        #expect(outcome.payload?["approval"]?["reason"] == "user")
    }

    @Test("approval.resolve of an unknown id, or without an id, is \"approval not found\"")
    func resolveUnknown() {
        var store = makeStore()
        #expect(store.handleResolve(params: resolveParams("nope", decision: "deny"), caller: phone, nowMs: t0).error
            == ApprovalErrors.unifiedNotFound)
        #expect(store.handleResolve(params: ["decision": "deny"], caller: phone, nowMs: t0).error == ApprovalErrors.unifiedNotFound)
    }

    @Test("a reviewer-bound approval is invisible to other devices but not to listed devices or admin")
    func reviewerBinding() throws {
        var store = makeStore()
        var draft = ApprovalDraft.exec("ls", id: "bound")
        draft.reviewerDeviceIds = ["dev-watch"]
        let created = store.create(draft, nowMs: t0)
        #expect(created.value.map(\.status) == .success(.pending))
        let audiences = created.effects.compactMap { effect -> OperatorEvent.Audience? in
            if case .publish(let event) = effect { return event.audience }
            return nil
        }
        #expect(audiences == [.adminOrDevices(["dev-watch"])])
        #expect(store.handleGet(params: ["id": "bound"], caller: phone, nowMs: t0).error == ApprovalErrors.unifiedNotFound)
        let watch = OperatorCaller(scopes: [.approvals], surface: "conn-watch", deviceId: "dev-watch")
        #expect(store.handleGet(params: ["id": "bound"], caller: watch, nowMs: t0).payload != nil)
        #expect(store.handleGet(params: ["id": "bound"], caller: controlUI, nowMs: t0).payload != nil)
    }

    @Test("the deadline is authoritative: a read at expiresAtMs sees expired (reason timeout) and no decision")
    func expiryOnRead() throws {
        var store = makeStore()
        _ = try createExec(&store)
        #expect(store.nextDeadlineMs == t0 + 1_800_000)
        let stillPending = store.handleGet(params: ["id": "appr-1"], caller: phone, nowMs: t0 + 1_799_999)
        #expect(stillPending.payload?["approval"]?["status"] == "pending")
        let outcome = store.handleGet(params: ["id": "appr-1"], caller: phone, nowMs: t0 + 1_800_000)
        #expect(outcome.payload?["approval"]?["status"] == "expired")
        #expect(outcome.payload?["approval"]?["reason"] == "timeout")
        #expect(outcome.payload?["approval"]?["decision"] == nil)
        #expect(outcome.payload?["approval"]?["resolver"] == ["kind": "system"])
        #expect(outcome.events.isEmpty, "no legacy event exists for expiry")
        #expect(outcome.effects.contains { if case .settled = $0 { true } else { false } })
    }

    @Test("a resolve after the deadline loses to the expiry: applied:false with status expired")
    func resolveAfterExpiry() throws {
        var store = makeStore()
        _ = try createExec(&store)
        let outcome = store.handleResolve(params: resolveParams("appr-1", decision: "allow-once"), caller: phone,
                                          nowMs: t0 + 1_800_000)
        #expect(outcome.payload?["applied"] == false)
        #expect(outcome.payload?["approval"]?["status"] == "expired")
    }

    @Test("session-bound approvals publish session.approval pending and terminal events without attribution")
    func sessionApprovalEvents() throws {
        var store = makeStore()
        let created = try createExec(&store, sessionKey: "agent:main:main")
        let pendingEvent = try #require(created.value.sourceSessionKey.flatMap { _ in
            created.effects.compactMap { if case .publish(let e) = $0, e.name == "session.approval" { e } else { nil } }.first
        })
        #expect(pendingEvent.audience == .approvalSubscribers(sessionKey: "agent:main:main"))
        #expect(pendingEvent.payload["phase"] == "pending")
        let expired = store.expire(nowMs: t0 + 1_800_000)
        let terminal = try #require(expired.compactMap { if case .publish(let e) = $0, e.name == "session.approval" { e } else { nil } }.first)
        #expect(terminal.payload["phase"] == "terminal")
        #expect(terminal.payload["updatedAtMs"] == .int(t0 + 1_800_000))
        #expect(terminal.payload["approval"]?["status"] == "expired")
        #expect(terminal.payload["approval"]?["source"] == nil)
        #expect(terminal.payload["approval"]?["resolver"] == nil)
    }

    @Test("the legacy profile publishes no session.approval events")
    func legacyProfileHasNoSessionEvents() throws {
        var store = makeStore(.legacy)
        let created = try createExec(&store, sessionKey: "agent:main:main")
        #expect(!created.effects.contains { if case .publish(let e) = $0 { e.name == "session.approval" } else { false } })
    }

    @Test("cancellation ends a pending approval as cancelled with run-aborted; a restart cancels all with gateway-restart")
    func cancellation() throws {
        var store = makeStore()
        _ = try createExec(&store, id: "a")
        _ = try createExec(&store, id: "b")
        _ = try createExec(&store, id: "c")
        let cancelled = try store.cancel(id: "a", nowMs: t0 + 1).get()
        #expect(cancelled.status == .cancelled)
        #expect(cancelled.reason == .runAborted)
        #expect(store.cancel(id: "a", nowMs: t0 + 2).failure() == ApprovalErrors.unifiedNotFound)
        _ = store.cancelAllPendingForRestart(nowMs: t0 + 3)
        #expect(store.record(id: "b")?.reason == .gatewayRestart)
        #expect(store.record(id: "c")?.status == .cancelled)
        let late = store.handleResolve(params: resolveParams("b", decision: "allow-once"), caller: phone, nowMs: t0 + 4)
        #expect(late.payload?["applied"] == false)
        #expect(late.payload?["approval"]?["reason"] == "gateway-restart")
    }

    @Test("no approval route denies the approval at once with reason no-route and announces nothing to legacy clients")
    func noRouteDenies() throws {
        var store = makeStore()
        let created = store.create(.exec("ls", id: "lonely"), route: .none, nowMs: t0)
        let record = try created.get()
        #expect(record.status == .denied)
        #expect(record.reason == .noRoute)
        #expect(!created.effects.contains { if case .publish(let e) = $0 { e.name.hasPrefix("exec.approval") } else { false } })
    }

    @Test("unified terminal records stay readable for 30 days, then are forgotten")
    func unifiedRetention() throws {
        var store = makeStore()
        _ = try createExec(&store)
        _ = store.handleResolve(params: resolveParams("appr-1", decision: "deny"), caller: phone, nowMs: t0 + 10)
        let day = Int64(24 * 60 * 60 * 1000)
        #expect(store.handleGet(params: ["id": "appr-1"], caller: phone, nowMs: t0 + 10 + 15_000)
            .payload?["approval"]?["status"] == "denied")
        #expect(store.handleGet(params: ["id": "appr-1"], caller: phone, nowMs: t0 + 10 + 29 * day).payload != nil)
        #expect(store.handleGet(params: ["id": "appr-1"], caller: phone, nowMs: t0 + 10 + 30 * day).error
            == ApprovalErrors.unifiedNotFound)
    }

    @Test("approval.history lists terminal approvals newest first, pages with a cursor and filters by kind")
    func history() throws {
        var store = makeStore()
        for index in 0..<3 {
            _ = try createExec(&store, id: "e\(index)")
            _ = store.handleResolve(params: resolveParams("e\(index)", decision: "deny"), caller: phone, nowMs: t0 + Int64(index + 1))
        }
        _ = try createExec(&store, id: "still-pending")
        let plugin = ApprovalDraft(id: "p0", presentation: .plugin(PluginApprovalPresentation(title: "T", description: "D")))
        _ = try store.create(plugin, nowMs: t0).get()
        _ = store.resolve(id: "p0", decision: .deny, nowMs: t0 + 10)

        let first = store.handleHistory(params: ["limit": 2], caller: phone, nowMs: t0 + 20)
        #expect(first.payload?["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["p0", "e2"])
        let cursor = try #require(first.payload?["nextCursor"])
        let second = store.handleHistory(params: ["limit": 2, "cursor": cursor], caller: phone, nowMs: t0 + 20)
        #expect(second.payload?["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["e1", "e0"])
        #expect(second.payload?["nextCursor"] == nil)
        let plugins = store.handleHistory(params: ["kind": "plugin"], caller: phone, nowMs: t0 + 20)
        #expect(plugins.payload?["items"]?.arrayValue?.count == 1)
        #expect(store.handleHistory(params: ["cursor": "garbage"], caller: phone, nowMs: t0 + 20).error
            == ErrorShape(code: "INVALID_REQUEST", message: "invalid approval.history cursor"))
        #expect(store.handleHistory(params: ["limit": 101], caller: phone, nowMs: t0 + 20).error?.message
            == "invalid approval.history params")
    }
}
