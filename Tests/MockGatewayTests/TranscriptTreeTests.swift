import GatewayProtocol
@testable import MockGateway
import Testing

/// The transcript tree of a chat session as a value: a linear transcript answers as before, a
/// rewind keeps the old tip as a second branch, a switch returns to it, and the refusals come in
/// upstream's order (`sessions-rewind.ts`, `session-message-cut-plan.ts`).
@Suite("Transcript tree rules")
struct TranscriptTreeTests {
    /// A store with `texts` sent to `key` and each echoed at once: user, echo, user, echo, …
    static func store(_ texts: [String], key: String = "main") -> ChatStore {
        var store = ChatStore()
        for (index, text) in texts.enumerated() {
            _ = store.send(sessionKey: key, text: text, idempotencyKey: "k\(index)", mode: nil, nowMs: Int64(index * 10))
            _ = store.releaseDue(nowMs: Int64(index * 10))
        }
        return store
    }

    static func branches(_ store: ChatStore, _ key: String = "main") -> [JSONValue] {
        store.branchesListing(key)["branches"]?.arrayValue ?? []
    }

    @Test func aLinearTranscriptIsOnePathAndOneActiveBranch() {
        let store = Self.store(["one", "two"])
        let rows = store.messages(in: "main")
        #expect(rows.map(\.text) == ["one", "echo: one", "two", "echo: two"])
        let state = store.sessionStates["main"]
        #expect(state?.tree.activePath == rows)
        #expect(state?.tree.tips == [rows[3].id])
        let listed = Self.branches(store)
        #expect(listed.count == 1)
        #expect(listed.first?["leafEntryId"] == .string(rows[3].id) && listed.first?["active"] == true
                && listed.first?["messageCount"] == 4 && listed.first?["headline"] == "echo: two")
    }

    @Test func aRewindKeepsTheOldTipAsASecondBranchAndASwitchReturnsToIt() throws {
        var store = Self.store(["one", "two"])
        let rows = store.messages(in: "main")
        let before = store.sessionId("main")
        let editorText = try store.rewind(sessionKey: "main", entryId: rows[2].id).get()
        #expect(editorText == "two")
        #expect(store.messages(in: "main") == Array(rows.prefix(2)), "the active path ends at the cut message's parent")
        #expect(store.sessionId("main") != before, "a rewind rotates the transcript id")
        let afterRewind = Self.branches(store)
        #expect(afterRewind.map { $0["leafEntryId"] } == [.string(rows[1].id), .string(rows[3].id)])
        #expect(afterRewind.map { $0["active"] } == [true, false])
        #expect(afterRewind.map { $0["messageCount"] } == [2, 4])

        // A new message continues from the rewound leaf: the old tip stays a branch.
        _ = store.send(sessionKey: "main", text: "three", idempotencyKey: "k9", mode: nil, nowMs: 100)
        _ = store.releaseDue(nowMs: 100)
        let active = store.messages(in: "main")
        #expect(active.map(\.text) == ["one", "echo: one", "three", "echo: three"])
        let listed = Self.branches(store)
        #expect(listed.map { $0["leafEntryId"] } == [.string(active[3].id), .string(rows[3].id)])
        #expect(listed.map { $0["headline"] } == ["echo: three", "echo: two"])

        try store.switchBranch(sessionKey: "main", leafEntryId: rows[3].id).get()
        #expect(store.messages(in: "main") == rows)
        #expect(Self.branches(store).map { $0["active"] } == [true, false])
        #expect(Self.branches(store).first?["leafEntryId"] == .string(rows[3].id))
    }

    @Test func inactiveTipsAreListedNewestFirstAfterTheActiveOne() throws {
        var store = Self.store(["one", "two"])
        let first = store.messages(in: "main")
        _ = try store.rewind(sessionKey: "main", entryId: first[2].id).get()
        _ = store.send(sessionKey: "main", text: "three", idempotencyKey: "k3", mode: nil, nowMs: 50)
        _ = store.releaseDue(nowMs: 50)
        let second = store.messages(in: "main")
        _ = try store.rewind(sessionKey: "main", entryId: second[2].id).get()
        #expect(store.sessionStates["main"]?.tree.tips == [first[1].id, second[3].id, first[3].id])
    }

    @Test func refusalsComeInUpstreamsOrder() {
        var store = Self.store(["one", "two"])
        let rows = store.messages(in: "main")
        let noSession = store.rewind(sessionKey: "nowhere", entryId: rows[0].id).refusal
        let noEntry = store.rewind(sessionKey: "main", entryId: "nope").refusal
        let notUser = store.rewind(sessionKey: "main", entryId: rows[1].id).refusal
        let noBranch = store.switchBranch(sessionKey: "main", leafEntryId: "nope").refusal
        let notTip = store.switchBranch(sessionKey: "main", leafEntryId: rows[1].id).refusal
        let active = store.switchBranch(sessionKey: "main", leafEntryId: rows[3].id).refusal
        #expect(noSession == .missingSession("nowhere") && noEntry == .missingEntry("nope") && notUser == .notUserMessage(rows[1].id))
        #expect(noBranch == .missingBranch("nope") && notTip == .notBranchTip(rows[1].id) && active == .alreadyActive(rows[3].id))
        _ = store.rewind(sessionKey: "main", entryId: rows[2].id)
        let offPath = store.rewind(sessionKey: "main", entryId: rows[2].id).refusal
        let forkOffPath = store.fork(sessionKey: "main", entryId: rows[2].id, targetKey: "f")
        #expect(offPath == .offActivePath(rows[2].id), "the rewound message is on the other branch now")
        #expect(forkOffPath == .failure(.offActivePath(rows[2].id)))
        store.holdRun(sessionKey: "main")
        let busy = store.switchBranch(sessionKey: "main", leafEntryId: rows[3].id).refusal
        #expect(busy == .busy(.switchBranch))
        _ = store.releaseRun(sessionKey: "main", collectAll: false, nowMs: 200)
        store.patch(sessionKey: "main", settings: ["archived": true])
        let archivedSwitch = store.switchBranch(sessionKey: "main", leafEntryId: rows[3].id).refusal
        let archivedRewind = store.rewind(sessionKey: "main", entryId: rows[0].id).refusal
        #expect(archivedSwitch == .archived(.switchBranch) && archivedRewind == .archived(.rewind))
    }

    @Test func theRefusalsReadAsUpstreamWritesThem() {
        #expect(MessageCutRefusal.busy(.rewind).shape == ErrorShape(code: "UNAVAILABLE", message: "Rewind is unavailable while the agent is working."))
        #expect(MessageCutRefusal.busy(.switchBranch).shape.message == "Branch switch is unavailable while the agent is working.")
        #expect(MessageCutRefusal.archived(.switchBranch).shape == ErrorShape(code: "INVALID_REQUEST",
                                                                               message: "Branch switch is unavailable for archived sessions."))
        #expect(MessageCutRefusal.missingBranch("x").shape.message == "branch entry not found: x")
        #expect(MessageCutRefusal.notBranchTip("x").shape.message == "entry is not a branch tip: x")
        #expect(MessageCutRefusal.alreadyActive("x").shape.message == "branch is already active: x")
        #expect(MessageCutRefusal.offActivePath("x").shape.message == "message entry is not on the active path: x")
    }

    @Test func rewindingToTheFirstMessageEmptiesTheActivePath() throws {
        var store = Self.store(["one"])
        let rows = store.messages(in: "main")
        _ = try store.rewind(sessionKey: "main", entryId: rows[0].id).get()
        #expect(store.messages(in: "main").isEmpty)
        let listed = Self.branches(store)
        #expect(listed.count == 1 && listed.first?["active"] == false && listed.first?["leafEntryId"] == .string(rows[1].id))
        #expect(store.messageGet(sessionKey: "main", messageId: rows[0].id, maxChars: nil)["unavailableReason"] == "not_visible")
    }

    @Test func aCompactionHidesRowsOnEveryBranchButKeepsTheTips() throws {
        var store = Self.store(["one", "two"])
        let rows = store.messages(in: "main")
        _ = try store.rewind(sessionKey: "main", entryId: rows[2].id).get()
        _ = store.compact(sessionKey: "main", keep: 1)
        #expect(store.messages(in: "main") == [rows[1]])
        #expect(Self.branches(store).map { $0["messageCount"] } == [1, 3])
        try store.switchBranch(sessionKey: "main", leafEntryId: rows[3].id).get()
        #expect(store.messages(in: "main") == Array(rows.suffix(3)))
    }

    @Test func createAdoptsOrForksAndWritesItsSettings() {
        var store = Self.store(["one"], key: "stem")
        let created = store.create(key: "leaf", settings: ["label": "Leaf"], forkFrom: "stem")
        #expect(created)
        #expect(store.messages(in: "leaf").map(\.id) == store.messages(in: "stem").map(\.id))
        #expect(store.sessionRow("leaf")["label"] == "Leaf")
        let adopted = !store.create(key: "leaf", settings: ["label": "Again"], forkFrom: "stem")
        #expect(adopted, "an existing key is adopted")
        #expect(store.sessionRow("leaf")["label"] == "Again")
    }

    @Test func createParamsAreClosedAndTheirRefusalsNeedTheIndex() throws {
        #expect(throws: GatewayError.self) { try SessionCreateRequest.parse(["nickname": "x"]).get() }
        let relative = SessionCreateRequest.parse(["cwd": "work"])
        #expect(relative.failureMessage == "sessions.create cwd must be absolute")
        #expect(SessionCreateRequest.parse(["cwd": #"C:\work"#, "execNode": "n1"]).failureMessage == nil)
        let request = try SessionCreateRequest.parse(["task": "  ", "message": "hi", "label": "L", "worktree": true]).get()
        #expect(request.initialMessage == "hi" && request.settings == ["label": "L"])
        #expect(try SessionCreateRequest.parse(["fork": true]).get().refusal { _ in true }?.message == "fork requires parentSessionKey")
        #expect(try SessionCreateRequest.parse(["parentSessionKey": "p"]).get().refusal { _ in false }?.message == "unknown parent session: p")
        #expect(try SessionCreateRequest.parse(["parentSessionKey": "p", "key": " p "]).get().refusal { _ in true }?.message
                == "sessions.create key must differ from parentSessionKey")
    }

    @Test func createScopeIsRaisedByPrivilegedMembers() {
        #expect(SessionMutationScope.createRequires(["label": "x"]) == .write)
        #expect(SessionMutationScope.createRequires(nil) == .write)
        for params: JSONValue in [["incognito": true], ["execNode": "n"], ["toolOverrides": [:]], ["permissionMode": "full"],
                                  ["key": "agent:main:dashboard:incognito-1"], ["parentSessionKey": "Agent:main:subagent:INCOGNITO-x"]] {
            #expect(SessionMutationScope.createRequires(params) == .admin, "\(params.jsonString)")
        }
        #expect(!SessionMutationScope.isIncognitoKey("agent:main:dashboard:incognito-"))
        #expect(!SessionMutationScope.isIncognitoKey("dashboard:incognito-1"))
    }
}

extension Result where Failure == MessageCutRefusal {
    /// The refusal, `nil` on success.
    var refusal: MessageCutRefusal? {
        if case .failure(let refusal) = self { return refusal }
        return nil
    }
}

extension Result where Failure == GatewayError {
    /// The refusal's message, `nil` on success.
    var failureMessage: String? {
        if case .failure(let error) = self { return error.shape.message }
        return nil
    }
}
