import GatewayProtocol

extension MethodRegistry {
    /// Every method the fake Gateway knows, one entry each. To add a method: declare its name in
    /// `GatewayMethod` (Sources/GatewayProtocol/Names.swift), add one entry here and write its
    /// handler (docs/architecture.md "Adding a Gateway method").
    ///
    /// Scopes: upstream `src/gateway/method-scopes.ts` (read: `node.list`, `node.describe`,
    /// `gateway.identity.get`, `health`, `status`, ...; write: `node.invoke`, `push.test`, ...),
    /// docs/protocol.md (pairing, approvals, questions). The role split: upstream `role-policy.ts`.
    static let standard = MethodRegistry(nodeMethods + pairingMethods + nodeOperatorMethods + sessionMethods
        + approvalMethods + questionMethods + appMethods + classifiedMethods)

    private static let read = MethodScopeRequirement(.read)
    private static let write = MethodScopeRequirement(.write)
    private static let pairing = MethodScopeRequirement(.pairing)
    private static let admin = MethodScopeRequirement(.admin)
    private static let talk = MethodScopeRequirement(.talk)
    /// Upstream's `dynamic`: `operator.write` admits the call, the handler asks for more from the
    /// params (`SessionMutationScope`; `sessions.delete` asks `operator.admin` unless it is an
    /// archive-then-delete).
    private static let writeRaisedByParams = MethodScopeRequirement(.write, raisedByParams: true)
    /// `talk.config`: `operator.read` admits the call; `includeSecrets: true` asks for
    /// `operator.admin` or `operator.talk.secrets` in the handler (``TalkConfig``).
    private static let readRaisedByParams = MethodScopeRequirement(.read, raisedByParams: true)
    private static let approvals = MethodScopeRequirement(.approvals)
    /// "own-run question boundary": `operator.sessions.write` is admitted for every question
    /// method; the fake Gateway has no runs to tell own from foreign.
    private static let questions = MethodScopeRequirement(.questions, alsoAdmittedBy: [.sessionsWrite])

    /// The methods of a `role:"node"` socket.
    static let nodeMethods: [MethodSpec] = [
        .node(.nodeInvokeResult) { core, call in core.handleInvokeResult(call) },
        .node(.nodeEvent) { core, call in core.handleNodeEvent(call) },
        .node(.nodePendingPull) { core, call in core.nodePendingPull(call) },
        .node(.nodePendingAck) { core, call in core.nodePendingAck(call) },
        .node(.skillsBins) { core, call in core.reply(call, ["bins": []]) },
        .node(.nodePendingDrain, .newerNodeMethods) { core, call in
            core.reply(call, ["nodeId": .string(call.nodeId), "revision": 0, "items": [], "hasMore": false])
        },
        .node(.nodePluginSurfaceRefresh, .newerNodeMethods) { core, call in core.pluginSurfaceRefresh(call) },
        // Protocol-3-era shape (CanvasSurface): the v2026.4 clients read `canvasCapability`.
        .node(.nodeCanvasCapabilityRefresh, .olderNodeMethods) { core, call in
            core.reply(call, core.canvasSurface.capabilityRefreshPayload(
                capability: core.issueCanvasCapability(connectionId: call.connectionId, nodeId: call.nodeId),
                nowMs: core.nowMs))
        },
        .node(.nodeInvokeProgress, .newerNodeMethods) { core, call in core.reply(call, ["ok": true]) },
        .node(.nodeSkillsUpdate, .newerNodeMethods) { core, call in core.reply(call, ["ok": true]) },
        .node(.nodePluginToolsUpdate, .newerNodeMethods) { core, call in core.reply(call, ["ok": true]) },
    ]

    /// Device pairing and device tokens.
    static let pairingMethods: [MethodSpec] = [
        .operator(.devicePairList, pairing) { core, call in core.devicePairList(call) },
        .operator(.nodePairList, pairing) { core, call in core.nodePairList(call) },
        .operator(.nodePairApprove, pairing) { core, call in core.nodePairApprove(call) },
        .operator(.nodePairReject, pairing) { core, call in core.nodePairReject(call) },
        .operator(.devicePairApprove, pairing) { core, call in core.devicePairApprove(call) },
        .operator(.devicePairReject, pairing) { core, call in core.devicePairReject(call) },
        .operator(.devicePairRemove, pairing) { core, call in core.devicePairRemove(call) },
        .operator(.devicePairRename, pairing) { core, call in core.devicePairRename(call) },
        // Served where the profile has the lifecycle, and, as upstream, "intentionally omitted
        // from advertised discovery" (`docs/gateway/protocol.md` "Device pairing and device
        // tokens" in openclaw/docs).
        .operator(.devicePairSetupCode, admin, .setupCodeLifecycle, advertised: false) { core, call in
            core.devicePairSetupCode(call)
        },
        .operator(.devicePairSetupStatus, admin, .setupCodeLifecycle, advertised: false) { core, call in
            core.devicePairSetupStatus(call)
        },
        .operator(.deviceTokenRotate, pairing) { core, call in core.deviceTokenChange(call, rotate: true) },
        .operator(.deviceTokenRevoke, pairing) { core, call in core.deviceTokenChange(call, rotate: false) },
    ]

    /// Nodes, the Gateway identity and push, for operators.
    static let nodeOperatorMethods: [MethodSpec] = [
        .operator(.nodeList, read) { core, call in core.reply(call, ["ts": .int(core.nowMs), "nodes": .array(core.nodeListing())]) },
        .operator(.nodeDescribe, read) { core, call in core.nodeDescribe(call) },
        // The operator's name for node.pluginSurface.refresh: the same handler renews the
        // operator's own hello-ok.pluginSurfaceUrls (scope: core-descriptors.ts, "<=2026.7").
        .operator(.pluginSurfaceRefresh, read, .newerNodeMethods) { core, call in core.pluginSurfaceRefresh(call) },
        .operator(.nodeInvoke, write) { core, call in core.nodeInvoke(call) },
        .operator(.gatewayIdentityGet, read) { core, call in
            core.reply(call, ["deviceId": .string(core.identity.deviceId), "publicKey": .string(core.identity.publicKeyBase64URL)])
        },
        // Served but not advertised: upstream leaves `push.test` out of `features.methods`.
        .operator(.pushTest, write, advertised: false) { core, call in core.pushTestMethod(call) },
    ]

    /// Chat and session subscriptions. `chat.*` predates protocol 3. Upstream lists the four
    /// subscription methods with `since: "<=2026.7"`; whether a 2026.4 Gateway served them is not
    /// dated, and serving them is the tolerant reading: otherwise an older Gateway's chat would
    /// have no live messages at all.
    static let sessionMethods: [MethodSpec] = [
        .operator(.chatSend, write) { core, call in core.chatSend(call) },
        .operator(.chatAbort, write) { core, call in core.chatAbort(call) },
        .operator(.agentWait, write) { core, call in core.agentWait(call) },
        .operator(.chatHistory, read) { core, call in core.chatHistory(call) },
        .operator(.chatMessageGet, read) { core, call in core.chatMessageGet(call) },
        // `chat.startup` is in the newest chat generation only (the one with the newest node methods).
        .operator(.chatStartup, read, .newerNodeMethods) { core, call in core.chatStartup(call) },
        .operator(.sessionsPatch, writeRaisedByParams) { core, call in core.sessionsPatch(call) },
        .operator(.sessionsReset, admin) { core, call in core.sessionsReset(call) },
        .operator(.sessionsCompact, admin) { core, call in core.sessionsCompact(call) },
        .operator(.sessionsDelete, writeRaisedByParams) { core, call in core.sessionsDelete(call) },
        .operator(.sessionsBranchesList, read) { core, call in core.sessionsBranchesList(call) },
        .operator(.sessionsFork, write) { core, call in core.sessionsFork(call) },
        .operator(.sessionsRewind, admin) { core, call in core.sessionsRewind(call) },
        .operator(.sessionsBranchesSwitch, admin) { core, call in core.sessionsBranchesSwitch(call) },
        .operator(.sessionsCreate, writeRaisedByParams) { core, call in core.sessionsCreate(call) },
        .operator(.sessionsObserverVisibility, read) { core, call in core.sessionsObserverVisibility(call) },
        .operator(.sessionsGroupsList, read) { core, call in core.sessionsGroupsList(call) },
        .operator(.sessionsGroupsPut, write) { core, call in core.sessionsGroupsPut(call) },
        .operator(.sessionsGroupsRename, write) { core, call in core.sessionsGroupsRenameOrDelete(call, rename: true) },
        .operator(.sessionsGroupsDelete, write) { core, call in core.sessionsGroupsRenameOrDelete(call, rename: false) },
        .operator(.sessionsList, read) { core, call in core.sessionsList(call) },
        .operator(.modelsList, read) { core, call in core.answer(call, ModelsList.answer(call.params, models: core.appSurfaces.models)) },
        .operator(.sessionsMessagesSubscribe, read) { core, call in core.sessionsMessagesSubscribe(call) },
        .operator(.sessionsMessagesUnsubscribe, read) { core, call in core.sessionsMessagesUnsubscribe(call) },
        .operator(.sessionsSubscribe, read) { core, call in core.sessionsSubscribe(call, true) },
        .operator(.sessionsUnsubscribe, read) { core, call in core.sessionsSubscribe(call, false) },
    ]

    /// Both approval families (ApprovalStore): the legacy `exec.approval.*` everywhere, the
    /// unified `approval.*` with unified approvals.
    static let approvalMethods: [MethodSpec] = [
        .operatorCore(.approvalGet, approvals, .unifiedApprovals) { state, call in
            state.approvals.handleGet(params: call.params, caller: call.caller, nowMs: call.nowMs)
        },
        .operatorCore(.approvalResolve, approvals, .unifiedApprovals) { state, call in
            state.approvals.handleResolve(params: call.params, caller: call.caller, nowMs: call.nowMs)
        },
        .operatorCore(.approvalHistory, approvals, .unifiedApprovals) { state, call in
            state.approvals.handleHistory(params: call.params, caller: call.caller, nowMs: call.nowMs)
        },
        .operatorCore(.execApprovalRequest, approvals) { state, call in
            state.approvals.handleExecRequest(params: call.params, caller: call.caller, route: call.route, nowMs: call.nowMs)
        },
        .operatorCore(.execApprovalWaitDecision, approvals) { state, call in
            state.approvals.handleExecWaitDecision(params: call.params, caller: call.caller, nowMs: call.nowMs)
        },
        .operatorCore(.execApprovalResolve, approvals) { state, call in
            state.approvals.handleExecResolve(params: call.params, caller: call.caller, nowMs: call.nowMs)
        },
        .operatorCore(.execApprovalGet, approvals) { state, call in
            state.approvals.handleExecGet(params: call.params, caller: call.caller, nowMs: call.nowMs)
        },
        .operatorCore(.execApprovalList, approvals) { state, call in
            state.approvals.handleExecList(params: call.params, caller: call.caller, nowMs: call.nowMs)
        },
    ]

    /// Agent questions (QuestionStore), with the question family.
    static let questionMethods: [MethodSpec] = [
        .operatorCore(.questionRequest, questions, .questions) { state, call in
            state.questions.handleRequest(params: call.params, caller: call.caller, nowMs: call.nowMs)
        },
        .operatorCore(.questionWaitAnswer, questions, .questions) { state, call in
            state.questions.handleWaitAnswer(params: call.params, caller: call.caller, nowMs: call.nowMs)
        },
        .operatorCore(.questionResolve, questions, .questions) { state, call in
            state.questions.handleResolve(params: call.params, caller: call.caller, nowMs: call.nowMs)
        },
        .operatorCore(.questionGet, questions, .questions) { state, call in
            state.questions.handleGet(params: call.params, caller: call.caller, nowMs: call.nowMs)
        },
        .operatorCore(.questionList, questions, .questions) { state, call in
            state.questions.handleList(params: call.params, caller: call.caller, nowMs: call.nowMs)
        },
    ]

    /// The agents, their workspaces and the voice wake triggers (``AppSurfaces``). Scopes:
    /// upstream `src/gateway/methods/core-descriptors.ts` (the table with the `since` column).
    static let appMethods: [MethodSpec] = [
        .operator(.agentsList, read) { core, call in core.answer(call, core.appSurfaces.agents.agentsList(call.params)) },
        .operator(.agentsWorkspaceList, read) { core, call in
            core.answer(call, AgentWorkspaceBrowser.list(call.params, agents: core.appSurfaces.agents))
        },
        .operator(.agentsWorkspaceGet, read) { core, call in
            core.answer(call, AgentWorkspaceBrowser.get(call.params, agents: core.appSurfaces.agents))
        },
        .operator(.agentsFilesList, read) { core, call in core.answer(call, AgentFiles.list(call.params, agents: core.appSurfaces.agents)) },
        .operator(.agentsFilesGet, read) { core, call in core.answer(call, AgentFiles.get(call.params, agents: core.appSurfaces.agents)) },
        .operator(.agentsFilesSet, admin) { core, call in core.answer(call, AgentFiles.set(call.params, agents: core.appSurfaces.agents)) },
        .operator(.voicewakeGet, read) { core, call in core.reply(call, core.appSurfaces.voiceWake.getResult) },
        .operator(.voicewakeSet, write) { core, call in core.voicewakeSet(call) },
        .operator(.commandsList, read) { core, call in core.commandsList(call) },
        .operator(.talkMode, talk) { core, call in core.talkMode(call) },
        .operator(.configGet, read) { core, call in core.answer(call, ConfigSnapshot.answer(call.params, config: core.appSurfaces.config)) },
        .operator(.tasksList, read) { core, call in core.answer(call, TaskLedger.list(call.params, tasks: core.appSurfaces.tasks)) },
        .operator(.cronList, read) { core, call in core.cronList(call) },
        .operator(.cronGet, read) { core, call in core.cronGet(call) },
        .operator(.cronRuns, read) { core, call in core.cronRuns(call) },
        .operator(.chatMetadata, read) { core, call in
            core.answer(call, ChatMetadata.answer(call.params, models: core.appSurfaces.models,
                                                  commands: core.appSurfaces.commands, agents: core.appSurfaces.agents))
        },
        .operator(.skillsStatus, read) { core, call in
            core.answer(call, SkillsReport.status(call.params, skills: core.appSurfaces.skills, agents: core.appSurfaces.agents))
        },
        .operator(.skillsInstall, admin) { core, call in core.skillsInstall(call) },
        .operator(.talkConfig, readRaisedByParams) { core, call in
            core.answer(call, TalkConfig.answer(call.params, scopes: call.session.scopes, config: core.appSurfaces.config))
        },
        .operator(.artifactsDownload, read) { core, call in core.answer(call, ArtifactsDownload.answer(call.params) { core.chat.store.messages(in: $0) }) },
        .operator(.health, read) { core, call in
            core.reply(call, HealthReport.summary(agents: core.appSurfaces.agents,
                                                  sessions: core.chat.store.healthSessionStamps, nowMs: core.nowMs))
        },
    ]

    /// Operator methods upstream serves and this Gateway does not: classified so that a node
    /// calling one is refused by role, `unknown method` to operators.
    static let classifiedMethods: [MethodSpec] = [
        .unserved(.status, read), .unserved(.systemPresence, read),
        .unserved(.lastHeartbeat, read), .unserved(.sessionsGet, read),
        .unserved(.nodePendingEnqueue, write), .unserved(.send, write),
        .unserved(.agent, write),
        .unserved(.execApprovalGrantsList, approvals), .unserved(.execApprovalGrantsRevoke, approvals),
        .unserved(.pluginApprovalRequest, approvals), .unserved(.pluginApprovalList, approvals),
        .unserved(.pluginApprovalWaitDecision, approvals), .unserved(.pluginApprovalResolve, approvals),
        .unserved(.nodePairRequest, pairing), .unserved(.nodePairRemove, pairing), .unserved(.nodePairVerify, pairing),
        .unserved(.nodeRename, pairing),
    ]
}
