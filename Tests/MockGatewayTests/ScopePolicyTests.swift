import GatewayProtocol
import Testing
@testable import MockGateway

@Suite("Operator scopes, role policy and event gating")
struct ScopePolicyTests {
    @Test("operator.admin satisfies every operator scope, including unknown future ones")
    func adminSatisfiesEverything() {
        let granted: Set<OperatorScope> = [.admin]
        for scope: OperatorScope in [.read, .write, .approvals, .pairing, .questions, .talkSecrets, "operator.future"] {
            #expect(scope.isGranted(by: granted), "\(scope)")
        }
    }

    @Test("operator.write implies read and talk, but not approvals or pairing")
    func writeImpliesReadAndTalk() {
        let granted: Set<OperatorScope> = [.write]
        #expect(OperatorScope.read.isGranted(by: granted))
        #expect(OperatorScope.talk.isGranted(by: granted))
        #expect(!OperatorScope.approvals.isGranted(by: granted))
        #expect(!OperatorScope.pairing.isGranted(by: granted))
        #expect(!OperatorScope.talkSecrets.isGranted(by: granted))
    }

    @Test("operator.sessions.write implies operator.sessions.read; unknown scopes need an exact match")
    func sessionsWriteAndUnknownScopes() {
        #expect(OperatorScope.sessionsRead.isGranted(by: [.sessionsWrite]))
        #expect(!OperatorScope.sessionsWrite.isGranted(by: [.sessionsRead]))
        #expect(OperatorScope("operator.future").isGranted(by: ["operator.future"]))
        #expect(!OperatorScope("operator.future").isGranted(by: [.write, .read]))
    }

    @Test("every operator method the fake Gateway serves has the scope of the specification", arguments: [
        ("device.pair.list", "operator.pairing"), ("device.pair.approve", "operator.pairing"),
        ("device.pair.reject", "operator.pairing"), ("device.pair.remove", "operator.pairing"),
        ("device.pair.rename", "operator.pairing"), ("device.token.rotate", "operator.pairing"),
        ("device.token.revoke", "operator.pairing"), ("node.pair.list", "operator.pairing"),
        ("node.pair.approve", "operator.pairing"), ("node.rename", "operator.pairing"),
        ("device.pair.setupCode", "operator.admin"), ("node.list", "operator.read"),
        ("node.describe", "operator.read"), ("gateway.identity.get", "operator.read"),
        ("node.invoke", "operator.write"), ("approval.get", "operator.approvals"),
        ("approval.resolve", "operator.approvals"), ("approval.history", "operator.approvals"),
        ("exec.approval.request", "operator.approvals"), ("exec.approval.waitDecision", "operator.approvals"),
        ("exec.approval.resolve", "operator.approvals"), ("exec.approval.get", "operator.approvals"),
        ("exec.approval.list", "operator.approvals"), ("plugin.approval.resolve", "operator.approvals"),
        ("exec.approvals.set", "operator.admin"), ("question.request", "operator.questions"),
        ("question.waitAnswer", "operator.questions"), ("question.resolve", "operator.questions"),
        ("question.get", "operator.questions"), ("question.list", "operator.questions"),
    ])
    func methodScopeTable(method: String, scope: String) {
        #expect(OperatorMethodPolicy.requirement(for: method).scope.rawValue == scope)
    }

    @Test("an unclassified method needs operator.admin (default deny)")
    func unclassifiedNeedsAdmin() {
        let error = OperatorMethodPolicy.authorize(method: "secrets.mystery", role: .operator, scopes: [.read, .write],
                                                   style: .forbidden)
        #expect(error?.message == "missing scope: operator.admin")
        #expect(OperatorMethodPolicy.authorize(method: "secrets.mystery", role: .operator, scopes: [.admin], style: .forbidden) == nil)
    }

    @Test("question methods also admit operator.sessions.write; operator.sessions.read alone misses operator.questions")
    func questionMethodsAdmitSessionsWrite() {
        #expect(OperatorMethodPolicy.authorize(method: "question.resolve", role: .operator, scopes: [.sessionsWrite],
                                               style: .forbidden) == nil)
        let error = OperatorMethodPolicy.authorize(method: "question.list", role: .operator, scopes: [.sessionsRead],
                                                   style: .forbidden)
        #expect(error?.details?["missingScope"] == "operator.questions")
    }

    @Test("current style: FORBIDDEN with details code MISSING_SCOPE, missingScope and requiredScopes")
    func missingScopeCurrentStyle() {
        let error = OperatorMethodPolicy.authorize(method: "question.list", role: .operator, scopes: [.read],
                                                   style: .forbidden)
        #expect(error == ErrorShape(code: "FORBIDDEN", message: "missing scope: operator.questions", details: [
            "code": "MISSING_SCOPE", "missingScope": "operator.questions", "requiredScopes": ["operator.questions"],
        ]))
    }

    @Test("legacy style: INVALID_REQUEST with the same message and no details")
    func missingScopeLegacyStyle() {
        let error = OperatorMethodPolicy.authorize(method: "node.list", role: .operator, scopes: [.approvals],
                                                   style: .invalidRequest)
        #expect(error == ErrorShape(code: "INVALID_REQUEST", message: "missing scope: operator.read"))
    }

    @Test("a node calling an operator method gets INVALID_REQUEST \"unauthorized role: node\"")
    func nodeCannotCallOperatorMethods() {
        for method in ["device.pair.list", "approval.resolve", "question.list", "node.list"] {
            let error = OperatorMethodPolicy.authorize(method: method, role: .node, scopes: [.admin], style: .forbidden)
            #expect(error == ErrorShape(code: "INVALID_REQUEST", message: "unauthorized role: node"), "\(method)")
        }
    }

    @Test("an operator calling a node-only method gets \"unauthorized role: operator\"; a node may call it without scopes")
    func nodeOnlyMethods() {
        let error = OperatorMethodPolicy.authorize(method: "node.event", role: .operator, scopes: [.admin], style: .forbidden)
        #expect(error == ErrorShape(code: "INVALID_REQUEST", message: "unauthorized role: operator"))
        for method in ["node.invoke.result", "node.event", "node.pending.pull", "skills.bins"] {
            #expect(OperatorMethodPolicy.authorize(method: method, role: .node, scopes: [], style: .forbidden) == nil)
        }
    }

    @Test("the scope check runs only after the role check passes")
    func operatorWithScopesPasses() {
        #expect(OperatorMethodPolicy.authorize(method: "approval.resolve", role: .operator, scopes: [.approvals],
                                               style: .forbidden) == nil)
        #expect(OperatorMethodPolicy.authorize(method: "node.invoke", role: .operator, scopes: [.write],
                                               style: .forbidden) == nil)
        #expect(OperatorMethodPolicy.authorize(method: "node.list", role: .operator, scopes: [.write],
                                               style: .forbidden) == nil)
    }

    @Test("broadcast events are gated by the scopes of docs/protocol.md §2.6", arguments: [
        ("device.pair.requested", ["operator.pairing"], true), ("device.pair.resolved", ["operator.read"], false),
        ("node.pair.requested", ["operator.pairing"], true), ("node.pair.resolved", ["operator.write"], false),
        ("exec.approval.requested", ["operator.approvals"], true), ("exec.approval.resolved", ["operator.read"], false),
        ("plugin.approval.requested", ["operator.approvals"], true), ("plugin.approval.requested", ["operator.write"], false),
        ("session.approval", ["operator.read"], false), ("session.approval", ["operator.approvals"], true),
        ("question.requested", ["operator.questions"], true), ("question.resolved", ["operator.approvals"], false),
        ("question.resolved", ["operator.sessions.write"], true),
        ("chat", ["operator.read"], true), ("agent", ["operator.write"], true), ("chat", ["operator.approvals"], false),
        ("plugin.status", ["operator.write"], true), ("plugin.status", ["operator.read"], false),
        ("node.presence", ["operator.read"], true),
        ("voicewake.changed", ["operator.read"], true), ("voicewake.changed", [], false),
        ("tick", [], true), ("presence", [], true), ("heartbeat", [], true), ("health", [], true), ("shutdown", [], true),
        ("mystery.event", ["operator.read", "operator.write", "operator.approvals"], false),
        ("mystery.event", ["operator.admin"], false),
        ("device.pair.requested", ["operator.admin"], true),
    ])
    func eventGating(event: String, scopes: [String], allowed: Bool) {
        #expect(EventScopeGate.allows(event: event, scopes: Set(wire: scopes), role: .operator) == allowed)
    }

    @Test("a node socket receives only unrestricted and node-targeted events, whatever scopes it claims")
    func nodeEventGating() {
        let claimed: Set<OperatorScope> = [.admin, .pairing, .approvals]
        for event in ["tick", "presence", "health", "heartbeat", "shutdown", "voicewake.changed", "node.invoke.request"] {
            #expect(EventScopeGate.allows(event: event, scopes: claimed, role: .node), "\(event)")
        }
        for event in ["device.pair.requested", "exec.approval.requested", "question.requested", "chat", "node.presence"] {
            #expect(!EventScopeGate.allows(event: event, scopes: claimed, role: .node), "\(event)")
        }
        #expect(!EventScopeGate.allows(event: "node.invoke.request", scopes: [.admin], role: .operator))
    }
}
