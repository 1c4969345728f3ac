import GatewayProtocol
import Testing
@testable import ReferenceNode

/// The client's rule for requests refused by a draining Gateway.
@Suite("Drain retry rule")
struct DrainRetryRuleTests {
    @Test("a retryable UNAVAILABLE with a drain reason is retried; startup and plain errors are not")
    func whatIsRetried() {
        for reason in ["gateway-restarting", "gateway-suspending", "gateway-closing"] {
            #expect(DrainRetryRule.isRetryable(ErrorShape(code: "UNAVAILABLE", message: "m", details: ["reason": .string(reason)],
                                                          retryable: true, retryAfterMs: 1_000)))
        }
        #expect(!DrainRetryRule.isRetryable(ErrorShape(code: "UNAVAILABLE", message: "m", details: ["reason": "gateway-restarting"])),
                "not marked retryable")
        #expect(!DrainRetryRule.isRetryable(ErrorShape(code: "UNAVAILABLE", message: "m", details: ["reason": "startup-sidecars"],
                                                       retryable: true)))
        #expect(!DrainRetryRule.isRetryable(ErrorShape(code: "INVALID_REQUEST", message: "m", details: ["reason": "gateway-restarting"],
                                                       retryable: true)))
    }

    @Test("the wait is retryAfterMs or the doubling backoff from 500 ms to 5 s, whichever is longer")
    func delays() {
        let hinted = ErrorShape(code: "UNAVAILABLE", message: "m", retryAfterMs: 1_000)
        #expect((0...5).map { DrainRetryRule.delayMs(for: hinted, attempt: $0) } == [1_000, 1_000, 2_000, 4_000, 5_000, 5_000])
        let bare = ErrorShape(code: "UNAVAILABLE", message: "m")
        #expect(DrainRetryRule.delayMs(for: bare, attempt: 0) == 500)
    }
}

/// The reconnect replay of approvals as the reference client applies it (docs/protocol.md §7.3).
@Suite("Approval replay on the client")
struct ApprovalReplayRuleTests {
    private func pendingSnapshot(_ id: String) -> JSONValue {
        ["id": .string(id), "status": "pending", "expiresAtMs": 9_000,
         "presentation": ["kind": "exec", "allowedDecisions": ["allow-once", "deny"]]]
    }

    @Test("truncated:false closes local pending cards the replay does not list and adds the listed ones")
    func authoritative() {
        var book = ApprovalBook(currentGateway: "gw")
        book.upsertPending(id: "stale", kind: "exec", allowedDecisions: ["allow-once", "deny"], expiresAtMs: nil, sessionKey: "k")
        book.upsertPending(id: "unbound", kind: "exec", allowedDecisions: ["allow-once", "deny"], expiresAtMs: nil)
        book.upsertPending(id: "elsewhere", kind: "exec", allowedDecisions: ["allow-once", "deny"], expiresAtMs: nil, sessionKey: "other")
        let changed = book.applyReplay(["sessionKey": "k", "approvals": [pendingSnapshot("fresh")], "truncated": false],
                                       configuration: TestSupport.configuration())
        #expect(Set(changed) == ["fresh", "stale"])
        #expect(book.card("stale")?.isLocked == true)
        #expect(book.card("fresh")?.phase == .pending)
        #expect(book.card("fresh")?.sessionKey == "k")
        #expect(book.card("unbound")?.phase == .pending, "a card of no known session is not the replay's to close")
        #expect(book.card("elsewhere")?.phase == .pending, "a card of another session is not the replay's to close")
    }

    @Test("truncated:true keeps unseen local cards; the mutant keeps them even when the replay is complete")
    func truncatedAndMutant() {
        var book = ApprovalBook(currentGateway: "gw")
        book.upsertPending(id: "local", kind: "exec", allowedDecisions: ["allow-once", "deny"], expiresAtMs: nil, sessionKey: "k")
        _ = book.applyReplay(["sessionKey": "k", "approvals": [], "truncated": true], configuration: TestSupport.configuration())
        #expect(book.card("local")?.phase == .pending)
        _ = book.applyReplay(["sessionKey": "k", "approvals": [], "truncated": false],
                             configuration: TestSupport.configuration([.ignoreApprovalReplay]))
        #expect(book.card("local")?.phase == .pending)
    }
}
