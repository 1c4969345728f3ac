/// Protocol version numbers (docs/protocol.md §3.6).
public enum ProtocolVersion {
    /// `PROTOCOL_VERSION`: the version the current Gateway speaks and announces in `hello-ok`.
    public static let current = 4
    /// `MIN_CLIENT_PROTOCOL_VERSION`: the oldest version an ordinary client may offer.
    public static let minimumClient = 4
    /// `MIN_NODE_PROTOCOL_VERSION`: the legacy (N-1) version still accepted from node clients.
    public static let minimumNode = 3
    /// `MIN_PROBE_PROTOCOL_VERSION`: the legacy (N-1) version still accepted from probes.
    public static let minimumProbe = 3
}

/// A request method name (docs/protocol.md §3, §5.12, §6.2 and §7).
public struct GatewayMethod: WireName {
    /// The wire value.
    public var rawValue: String
    /// Wraps a wire value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `connect`: the handshake request; valid only as the first request.
    public static let connect: GatewayMethod = "connect"

    /// `node.invoke.result`: a node's terminal answer to `node.invoke.request`.
    public static let nodeInvokeResult: GatewayMethod = "node.invoke.result"
    /// `node.invoke.progress`: a streamed chunk of a running invoke (newest).
    public static let nodeInvokeProgress: GatewayMethod = "node.invoke.progress"
    /// `node.event`: a node-originated event (`node.presence.alive`, `push.apns.register`, ...).
    public static let nodeEvent: GatewayMethod = "node.event"
    /// `node.pending.pull`: fetch foreground actions queued while the node was in the background.
    public static let nodePendingPull: GatewayMethod = "node.pending.pull"
    /// `node.pending.ack`: acknowledge pulled actions.
    public static let nodePendingAck: GatewayMethod = "node.pending.ack"
    /// `node.pending.enqueue`: queue a foreground action for a node (operators).
    public static let nodePendingEnqueue: GatewayMethod = "node.pending.enqueue"
    /// `node.pending.drain`: drain queued status/location requests.
    public static let nodePendingDrain: GatewayMethod = "node.pending.drain"
    /// `node.pluginSurface.refresh`: refresh `pluginSurfaceUrls` (newest).
    public static let nodePluginSurfaceRefresh: GatewayMethod = "node.pluginSurface.refresh"
    /// `plugin.surface.refresh {surface}`: the operator's name for `node.pluginSurface.refresh`
    /// (upstream serves both from one handler), renewing the operator's own `pluginSurfaceUrls`.
    public static let pluginSurfaceRefresh: GatewayMethod = "plugin.surface.refresh"
    /// `node.canvas.capability.refresh`: protocol-3-era predecessor of `node.pluginSurface.refresh`.
    public static let nodeCanvasCapabilityRefresh: GatewayMethod = "node.canvas.capability.refresh"
    /// `node.pluginTools.update` (newest).
    public static let nodePluginToolsUpdate: GatewayMethod = "node.pluginTools.update"
    /// `node.skills.update` (newest).
    public static let nodeSkillsUpdate: GatewayMethod = "node.skills.update"
    /// `skills.bins`: binaries the TypeScript node host asks about.
    public static let skillsBins: GatewayMethod = "skills.bins"

    /// `gateway.identity.get`: the Gateway's own Ed25519 identity (operators).
    public static let gatewayIdentityGet: GatewayMethod = "gateway.identity.get"
    /// `node.list` (operators).
    public static let nodeList: GatewayMethod = "node.list"
    /// `node.describe` (operators).
    public static let nodeDescribe: GatewayMethod = "node.describe"
    /// `node.invoke`: invoke a node command (operators).
    public static let nodeInvoke: GatewayMethod = "node.invoke"
    /// `node.rename` (operators).
    public static let nodeRename: GatewayMethod = "node.rename"
    /// `device.pair.list` (operators).
    public static let devicePairList: GatewayMethod = "device.pair.list"
    /// `device.pair.approve` (operators).
    public static let devicePairApprove: GatewayMethod = "device.pair.approve"
    /// `device.pair.reject` (operators).
    public static let devicePairReject: GatewayMethod = "device.pair.reject"
    /// `device.pair.remove` (operators).
    public static let devicePairRemove: GatewayMethod = "device.pair.remove"
    /// `device.pair.rename` (operators).
    public static let devicePairRename: GatewayMethod = "device.pair.rename"
    /// `device.pair.setupCode` (operators).
    public static let devicePairSetupCode: GatewayMethod = "device.pair.setupCode"
    /// `device.pair.setupStatus` (operators).
    public static let devicePairSetupStatus: GatewayMethod = "device.pair.setupStatus"
    /// `device.token.rotate` (operators).
    public static let deviceTokenRotate: GatewayMethod = "device.token.rotate"
    /// `device.token.revoke` (operators).
    public static let deviceTokenRevoke: GatewayMethod = "device.token.revoke"
    /// `node.pair.request`: ask for approval of a node's capability surface (operators).
    public static let nodePairRequest: GatewayMethod = "node.pair.request"
    /// `node.pair.list` (operators).
    public static let nodePairList: GatewayMethod = "node.pair.list"
    /// `node.pair.approve` (operators).
    public static let nodePairApprove: GatewayMethod = "node.pair.approve"
    /// `node.pair.reject` (operators).
    public static let nodePairReject: GatewayMethod = "node.pair.reject"
    /// `node.pair.remove` (operators).
    public static let nodePairRemove: GatewayMethod = "node.pair.remove"
    /// `node.pair.verify`: verify a node's pairing (operators).
    public static let nodePairVerify: GatewayMethod = "node.pair.verify"
    /// `push.test` (operators).
    public static let pushTest: GatewayMethod = "push.test"
    /// `sessions.messages.subscribe` `{key, includeApprovals?}` (operators): `session.message`
    /// for one session, and with `includeApprovals` its `session.approval` (unified approvals).
    public static let sessionsMessagesSubscribe: GatewayMethod = "sessions.messages.subscribe"
    /// `sessions.messages.unsubscribe` `{key}` (operators).
    public static let sessionsMessagesUnsubscribe: GatewayMethod = "sessions.messages.unsubscribe"
    /// `sessions.subscribe` `{}` (operators): session events, `session.message` of every session.
    public static let sessionsSubscribe: GatewayMethod = "sessions.subscribe"
    /// `sessions.unsubscribe` `{}` (operators).
    public static let sessionsUnsubscribe: GatewayMethod = "sessions.unsubscribe"

    /// `sessions.list` (operators): the chat sessions.
    public static let sessionsList: GatewayMethod = "sessions.list"
    /// `sessions.get` (operators).
    public static let sessionsGet: GatewayMethod = "sessions.get"
    /// `chat.send` `{sessionKey, message, idempotencyKey}` (operators).
    public static let chatSend: GatewayMethod = "chat.send"
    /// `chat.history` `{sessionKey, cursor?, limit?, offset?, inputRunIds?, …}` (operators).
    public static let chatHistory: GatewayMethod = "chat.history"
    /// `chat.message.get` `{sessionKey, messageId, maxChars?}` (operators): one row, or why it is unavailable.
    public static let chatMessageGet: GatewayMethod = "chat.message.get"
    /// `chat.startup` (operators): `chat.history` params (or a short chat link), the first page.
    public static let chatStartup: GatewayMethod = "chat.startup"
    /// `sessions.patch` `{key, …settings}` (operators).
    public static let sessionsPatch: GatewayMethod = "sessions.patch"
    /// `sessions.reset` `{key, reason?}` (operators): a new transcript.
    public static let sessionsReset: GatewayMethod = "sessions.reset"
    /// `sessions.compact` `{key, maxLines?}` (operators).
    public static let sessionsCompact: GatewayMethod = "sessions.compact"
    /// `sessions.delete` `{key, deleteTranscript?, archivedOnly?, expected…?}` (operators): removes a session.
    public static let sessionsDelete: GatewayMethod = "sessions.delete"
    /// `sessions.branches.list` `{sessionKey, agentId?}` (operators): the tips of a session's transcript.
    public static let sessionsBranchesList: GatewayMethod = "sessions.branches.list"
    /// `sessions.fork` `{sessionKey, agentId?, entryId}` (operators): a new session from the transcript before a user message.
    public static let sessionsFork: GatewayMethod = "sessions.fork"
    /// `sessions.rewind` `{sessionKey, agentId?, entryId}` (operators): the active path moves to
    /// before a user message; the old tip stays as another branch.
    public static let sessionsRewind: GatewayMethod = "sessions.rewind"
    /// `sessions.branches.switch` `{sessionKey, agentId?, leafEntryId}` (operators): the active
    /// path moves to another tip of the transcript.
    public static let sessionsBranchesSwitch: GatewayMethod = "sessions.branches.switch"
    /// `sessions.create` `{key?, label?, message?, parentSessionKey?, fork?, …}` (operators): creates
    /// or adopts a session, optionally starting a run with a first message.
    public static let sessionsCreate: GatewayMethod = "sessions.create"
    /// `sessions.observer.visibility` `{visible}` (operators): whether this connection shows the
    /// session observer's output.
    public static let sessionsObserverVisibility: GatewayMethod = "sessions.observer.visibility"
    /// `sessions.groups.list` `{}` (operators): the custom session group catalog.
    public static let sessionsGroupsList: GatewayMethod = "sessions.groups.list"
    /// `sessions.groups.put` `{names, sectionOrder?}` (operators): replaces the catalog.
    public static let sessionsGroupsPut: GatewayMethod = "sessions.groups.put"
    /// `sessions.groups.rename` `{name, to}` (operators): renames a group and its members' category.
    public static let sessionsGroupsRename: GatewayMethod = "sessions.groups.rename"
    /// `sessions.groups.delete` `{name}` (operators): removes a group and clears its members' category.
    public static let sessionsGroupsDelete: GatewayMethod = "sessions.groups.delete"
    /// `chat.abort` `{sessionKey, agentId?, runId?}` (operators): stops a session's runs.
    public static let chatAbort: GatewayMethod = "chat.abort"
    /// `agent.wait` `{runId, timeoutMs?}` (operators): waits for a run's end.
    public static let agentWait: GatewayMethod = "agent.wait"
    /// `send`: an outbound channel message (operators).
    public static let send: GatewayMethod = "send"
    /// `agent`: start an agent run (operators).
    public static let agent: GatewayMethod = "agent"
    /// `talk.mode` (operators).
    public static let talkMode: GatewayMethod = "talk.mode"
    /// `health`: the health summary (operators).
    public static let health: GatewayMethod = "health"
    /// `status` (operators).
    public static let status: GatewayMethod = "status"
    /// `system-presence` (operators).
    public static let systemPresence: GatewayMethod = "system-presence"
    /// `last-heartbeat` (operators).
    public static let lastHeartbeat: GatewayMethod = "last-heartbeat"
    /// `models.list` (operators).
    public static let modelsList: GatewayMethod = "models.list"
    /// `tasks.list` `{status?, agentId?, sessionKey?, limit?, cursor?}`: a page of the task
    /// ledger (operators).
    public static let tasksList: GatewayMethod = "tasks.list"
    /// `config.get` `{}`: the Gateway configuration snapshot with secrets redacted (operators).
    public static let configGet: GatewayMethod = "config.get"
    /// `commands.list`: the slash-command catalogue (operators).
    public static let commandsList: GatewayMethod = "commands.list"
    /// `agents.list` (operators).
    public static let agentsList: GatewayMethod = "agents.list"
    /// `approval.get` (operators; unified approvals).
    public static let approvalGet: GatewayMethod = "approval.get"
    /// `approval.resolve` (operators; unified approvals).
    public static let approvalResolve: GatewayMethod = "approval.resolve"
    /// `approval.history` (operators; unified approvals).
    public static let approvalHistory: GatewayMethod = "approval.history"
    /// `exec.approval.request` (operators).
    public static let execApprovalRequest: GatewayMethod = "exec.approval.request"
    /// `exec.approval.waitDecision` (operators).
    public static let execApprovalWaitDecision: GatewayMethod = "exec.approval.waitDecision"
    /// `exec.approval.resolve` (operators).
    public static let execApprovalResolve: GatewayMethod = "exec.approval.resolve"
    /// `exec.approval.get` (operators).
    public static let execApprovalGet: GatewayMethod = "exec.approval.get"
    /// `exec.approval.list` (operators).
    public static let execApprovalList: GatewayMethod = "exec.approval.list"
    /// `exec.approval.grants.list` (operators).
    public static let execApprovalGrantsList: GatewayMethod = "exec.approval.grants.list"
    /// `exec.approval.grants.revoke` (operators).
    public static let execApprovalGrantsRevoke: GatewayMethod = "exec.approval.grants.revoke"
    /// `plugin.approval.request` (operators).
    public static let pluginApprovalRequest: GatewayMethod = "plugin.approval.request"
    /// `plugin.approval.list` (operators).
    public static let pluginApprovalList: GatewayMethod = "plugin.approval.list"
    /// `plugin.approval.waitDecision` (operators).
    public static let pluginApprovalWaitDecision: GatewayMethod = "plugin.approval.waitDecision"
    /// `plugin.approval.resolve` (operators).
    public static let pluginApprovalResolve: GatewayMethod = "plugin.approval.resolve"
    /// `question.request` (operators; questions).
    public static let questionRequest: GatewayMethod = "question.request"
    /// `question.waitAnswer` (operators; questions).
    public static let questionWaitAnswer: GatewayMethod = "question.waitAnswer"
    /// `question.resolve` (operators; questions).
    public static let questionResolve: GatewayMethod = "question.resolve"
    /// `question.get` (operators; questions).
    public static let questionGet: GatewayMethod = "question.get"
    /// `question.list` (operators; questions).
    public static let questionList: GatewayMethod = "question.list"

    // MARK: Agent workspace and voice wake (the apps' Files card and Voice settings)

    /// `agents.workspace.list` `{agentId, path?, offset?, limit?}`: one directory of an agent
    /// workspace (operators, read-only browsing).
    public static let agentsWorkspaceList: GatewayMethod = "agents.workspace.list"
    /// `agents.workspace.get` `{agentId, path}`: a preview of one workspace file (operators).
    public static let agentsWorkspaceGet: GatewayMethod = "agents.workspace.get"
    /// `agents.files.list` `{agentId}`: the agent's bootstrap files (operators).
    public static let agentsFilesList: GatewayMethod = "agents.files.list"
    /// `agents.files.get` `{agentId, name}`: one bootstrap file with its content and hash.
    public static let agentsFilesGet: GatewayMethod = "agents.files.get"
    /// `agents.files.set` `{agentId, name, content, expectedHash? | expectedMissing?}`: writes a
    /// bootstrap file, compare-and-set on its SHA-256 (operators, `operator.admin`).
    public static let agentsFilesSet: GatewayMethod = "agents.files.set"
    /// `voicewake.get`: the voice wake triggers (operators).
    public static let voicewakeGet: GatewayMethod = "voicewake.get"
    /// `voicewake.set` `{triggers}`: replaces the voice wake triggers and broadcasts
    /// `voicewake.changed` (operators).
    public static let voicewakeSet: GatewayMethod = "voicewake.set"

    // MARK: Cron jobs (the Android app's and the Control UI's automation screens)

    /// `cron.get` `{id} | {jobId}`: one cron job's read view (operators).
    public static let cronGet: GatewayMethod = "cron.get"
    /// `cron.list` `{includeDisabled?, limit?, offset?, query?, enabled?, scheduleKind?,
    /// lastRunStatus?, sortBy?, sortDir?, agentId?, compact?}`: a page of the cron jobs (operators).
    public static let cronList: GatewayMethod = "cron.list"
    /// `cron.runs` `{scope?, id?, jobId?, runId?, limit?, offset?, statuses?, status?,
    /// deliveryStatuses?, deliveryStatus?, query?, sortDir?}`: a page of the run history (operators).
    public static let cronRuns: GatewayMethod = "cron.runs"

    // MARK: Chat metadata, skills, talk configuration and artifacts (served from fixtures)

    /// `chat.metadata` `{agentId?}`: the model picker's models and the text slash commands of an
    /// agent in one answer (operators).
    public static let chatMetadata: GatewayMethod = "chat.metadata"
    /// `skills.status` `{}`: the skills of the default agent's workspace (operators).
    public static let skillsStatus: GatewayMethod = "skills.status"
    /// `skills.install` `{name, installId, timeoutMs?}`: runs one installer of a skill (operators,
    /// `operator.admin`).
    public static let skillsInstall: GatewayMethod = "skills.install"
    /// `talk.config` `{includeSecrets?}`: the talk configuration, redacted unless the caller may
    /// read its secrets (operators).
    public static let talkConfig: GatewayMethod = "talk.config"
    /// `artifacts.download` `{sessionKey?, runId?, taskId?, artifactId}`: one artifact of a
    /// session's transcript, inline or by URL (operators).
    public static let artifactsDownload: GatewayMethod = "artifacts.download"

    /// Method-name prefixes of admin-only families (approval policy files, config, wizard,
    /// update): every method under one needs `operator.admin`, and a node calling one is refused
    /// by role.
    public static let adminFamilyPrefixes: [String] = ["exec.approvals.", "config.", "wizard.", "update."]

    /// The methods a `role:"node"` socket may call (docs/protocol.md §6.2).
    public static let nodeMethods: [GatewayMethod] = [
        .nodeInvokeResult, .nodeInvokeProgress, .nodeEvent, .nodePendingPull, .nodePendingAck, .nodePendingDrain,
        .nodePluginSurfaceRefresh, .nodeCanvasCapabilityRefresh, .nodePluginToolsUpdate, .nodeSkillsUpdate,
        .skillsBins,
    ]
}

/// An event name carried by `type:"event"` frames (docs/protocol.md §11.1, §2.6, §3, §5.7, §6).
public struct GatewayEventName: WireName {
    /// The wire value.
    public var rawValue: String
    /// Wraps a wire value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `connect.challenge` `{nonce, ts}`: the first frame on every socket, without `seq`.
    public static let connectChallenge: GatewayEventName = "connect.challenge"
    /// `tick` `{ts}`: liveness, every `policy.tickIntervalMs`.
    public static let tick: GatewayEventName = "tick"
    /// `presence` `{presence:[PresenceEntry]}` with `stateVersion`.
    public static let presence: GatewayEventName = "presence"
    /// `health`: the health summary, with `stateVersion`.
    public static let health: GatewayEventName = "health"
    /// `heartbeat`.
    public static let heartbeat: GatewayEventName = "heartbeat"
    /// `shutdown` `{reason, restartExpectedMs}`, followed by close 1012.
    public static let shutdown: GatewayEventName = "shutdown"
    /// `voicewake.changed` `{triggers}`, sent to nodes after connect.
    public static let voicewakeChanged: GatewayEventName = "voicewake.changed"
    /// `node.invoke.request`: a command for the node to run.
    public static let nodeInvokeRequest: GatewayEventName = "node.invoke.request"
    /// `node.invoke.cancel` `{invokeId, nodeId}`: the caller cancelled (newest).
    public static let nodeInvokeCancel: GatewayEventName = "node.invoke.cancel"
    /// `node.invoke.input` `{id, nodeId, seq, payloadJSON}`: stdin-like input (newest).
    public static let nodeInvokeInput: GatewayEventName = "node.invoke.input"
    /// `node.presence` (operators only).
    public static let nodePresence: GatewayEventName = "node.presence"
    /// `device.pair.requested`: a pending device pairing request was created.
    public static let devicePairRequested: GatewayEventName = "device.pair.requested"
    /// `device.pair.resolved` `{requestId, deviceId, decision, ts}`.
    public static let devicePairResolved: GatewayEventName = "device.pair.resolved"
    /// `device.pair.setup.completed` `{setupId, deviceId, deviceName?, access, ts}`: a setup
    /// code's hand-off delivered its credentials (to `operator.pairing`).
    public static let devicePairSetupCompleted: GatewayEventName = "device.pair.setup.completed"
    /// `device.pair.setup.deliveryUncertain`: same payload; the setup code was used up but the
    /// credential-bearing response may not have arrived.
    public static let devicePairSetupDeliveryUncertain: GatewayEventName = "device.pair.setup.deliveryUncertain"
    /// `exec.approval.requested`: an exec approval awaits a decision (operators).
    public static let execApprovalRequested: GatewayEventName = "exec.approval.requested"
    /// `exec.approval.resolved`: an exec approval was decided (operators).
    public static let execApprovalResolved: GatewayEventName = "exec.approval.resolved"
    /// `plugin.approval.requested`: a plugin approval awaits a decision (operators).
    public static let pluginApprovalRequested: GatewayEventName = "plugin.approval.requested"
    /// `plugin.approval.resolved`: a plugin approval was decided (operators).
    public static let pluginApprovalResolved: GatewayEventName = "plugin.approval.resolved"
    /// `openclaw.approval.resolved`: an approval of the unified family was decided (operators).
    public static let openclawApprovalResolved: GatewayEventName = "openclaw.approval.resolved"
    /// `question.requested`: an agent question awaits an answer (operators).
    public static let questionRequested: GatewayEventName = "question.requested"
    /// `question.resolved`: an agent question was answered, expired or cancelled (operators).
    public static let questionResolved: GatewayEventName = "question.resolved"
    /// `question.pending`: the older question generation's name for `question.requested` (an
    /// older `src/gateway/server-methods/question.ts` upstream).
    public static let questionPending: GatewayEventName = "question.pending"
    /// `question.expired`: the older question generation's expiry event (newer Gateways send
    /// `question.resolved` with `status:"expired"`).
    public static let questionExpired: GatewayEventName = "question.expired"
    /// `session.approval`: an approval of a session, sent only to sessions subscribed to its key
    /// with `includeApprovals:true` (operators; unified approvals).
    public static let sessionApproval: GatewayEventName = "session.approval"
    /// `sessions.changed` `{sessionKey, reason, compacted?, ts, …session row}`: a session was patched,
    /// reset or compacted; sent to connections that called `sessions.subscribe` (operators).
    public static let sessionsChanged: GatewayEventName = "sessions.changed"
    /// `session.message`: a new transcript row, sent only to sessions subscribed to its session
    /// (`sessions.messages.subscribe {key}`) or to every session (`sessions.subscribe`) (operators).
    public static let sessionMessage: GatewayEventName = "session.message"
    /// `node.pair.requested`: a node capability surface awaits approval.
    public static let nodePairRequested: GatewayEventName = "node.pair.requested"
    /// `node.pair.resolved` `{requestId, nodeId, decision, ts}`.
    public static let nodePairResolved: GatewayEventName = "node.pair.resolved"
    /// `chat` `{runId, sessionKey, seq, state, message}`: a chat run's progress (operators with
    /// `operator.read`).
    public static let chat: GatewayEventName = "chat"
    /// `talk.mode`: the talk mode changed (operators with `operator.write`).
    public static let talkMode: GatewayEventName = "talk.mode"
    /// `talk.event` `{nodeId, command, talkEvent}`: a node's push-to-talk capture changed after a
    /// successful `talk.ptt.*` invoke (operators with `operator.read`).
    public static let talkEvent: GatewayEventName = "talk.event"
    /// `update.available`: a newer Gateway build exists (every authenticated socket).
    public static let updateAvailable: GatewayEventName = "update.available"

    /// Every event name above, in declaration order: the events a client can know of
    /// (`WireNameCatalogueTests` fails when a constant above is missing here).
    public static let allKnown: [GatewayEventName] = [
        .connectChallenge, .tick, .presence, .health, .heartbeat, .shutdown, .voicewakeChanged, .nodeInvokeRequest,
        .nodeInvokeCancel, .nodeInvokeInput, .nodePresence, .devicePairRequested, .devicePairResolved,
        .devicePairSetupCompleted, .devicePairSetupDeliveryUncertain, .execApprovalRequested, .execApprovalResolved,
        .pluginApprovalRequested, .pluginApprovalResolved, .openclawApprovalResolved, .questionRequested,
        .questionResolved, .questionPending, .questionExpired, .sessionApproval, .sessionsChanged, .sessionMessage,
        .nodePairRequested, .nodePairResolved, .chat, .talkMode, .talkEvent, .updateAvailable,
    ]
}

/// A family of Gateway events: the dotted stem of every event under it (`device.pair` holds
/// `device.pair.requested` and `device.pair.resolved`), by which broadcasts are scoped
/// (docs/protocol.md §2.6).
public struct GatewayEventFamily: WireName {
    /// The wire value.
    public var rawValue: String
    /// Wraps a wire value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `device.pair.*`.
    public static let devicePair: GatewayEventFamily = "device.pair"
    /// `node.pair.*`.
    public static let nodePair: GatewayEventFamily = "node.pair"
    /// `exec.approval.*`.
    public static let execApproval: GatewayEventFamily = "exec.approval"
    /// `plugin.approval.*`.
    public static let pluginApproval: GatewayEventFamily = "plugin.approval"
    /// `openclaw.approval.*`.
    public static let openclawApproval: GatewayEventFamily = "openclaw.approval"
    /// `question.*`.
    public static let question: GatewayEventFamily = "question"
    /// `plugin.*`.
    public static let plugin: GatewayEventFamily = "plugin"
    /// `chat` and `chat.*`.
    public static let chat: GatewayEventFamily = "chat"
    /// `agent` and `agent.*`.
    public static let agent: GatewayEventFamily = "agent"
    /// `session.*`.
    public static let session: GatewayEventFamily = "session"
    /// `sessions.*`.
    public static let sessions: GatewayEventFamily = "sessions"

    /// Whether `event` is the stem itself or an event under it.
    public func contains(_ event: String) -> Bool {
        event == rawValue || event.hasPrefix(rawValue + ".")
    }
}

/// A key of `connect.params.permissions`: a permission a node reports it holds.
public struct NodePermissionKey: WireName {
    /// The wire value.
    public var rawValue: String
    /// Wraps a wire value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `camera.capture`.
    public static let cameraCapture: NodePermissionKey = "camera.capture"
    /// `location`.
    public static let location: NodePermissionKey = "location"
}

/// The `details.type` of an `agents.workspace.*` refusal (upstream
/// `src/gateway/server-methods/agents-workspace.ts`): every one travels as `INVALID_REQUEST`.
public struct WorkspaceErrorType: WireName {
    /// The wire value.
    public var rawValue: String
    /// Wraps a wire value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The path is absolute or leaves the workspace (`details.path` is the path as sent).
    public static let pathInvalid: WorkspaceErrorType = "workspace_path_invalid"
    /// `agents.workspace.list` of a path that is not a directory of the workspace.
    public static let pathNotFound: WorkspaceErrorType = "workspace_path_not_found"
    /// `agents.workspace.get` of a path that is not a regular file (or is a link).
    public static let fileNotFound: WorkspaceErrorType = "workspace_file_not_found"
    /// The file is larger than its preview cap (`details {maxBytes, path, size}`).
    public static let fileTooLarge: WorkspaceErrorType = "workspace_file_too_large"
    /// The file is neither UTF-8 text nor a supported image by its bytes.
    public static let fileUnsupported: WorkspaceErrorType = "workspace_file_unsupported"
    /// `agents.files.set`: the file's hash is not the expected one (`details {name, currentHash?}`).
    public static let agentFileConflict: WorkspaceErrorType = "agent_file_conflict"
}

/// The `event` of a `node.event` request (docs/protocol.md §6.5); any other name is accepted
/// and answered with `{ok:true}`.
public struct NodeEventName: WireName {
    /// The wire value.
    public var rawValue: String
    /// Wraps a wire value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `node.presence.alive`: background alive beacon.
    public static let presenceAlive: NodeEventName = "node.presence.alive"
    /// `node.presence.activity` (macOS idle time).
    public static let presenceActivity: NodeEventName = "node.presence.activity"
    /// `push.apns.register`: APNs registration (direct or relay).
    public static let pushAPNsRegister: NodeEventName = "push.apns.register"
    /// `exec.started`.
    public static let execStarted: NodeEventName = "exec.started"
    /// `exec.finished`.
    public static let execFinished: NodeEventName = "exec.finished"
    /// `exec.denied`.
    public static let execDenied: NodeEventName = "exec.denied"
    /// `voice.transcript`.
    public static let voiceTranscript: NodeEventName = "voice.transcript"
    /// `agent.request`: deep link to the agent.
    public static let agentRequest: NodeEventName = "agent.request"
    /// `notifications.changed` (Android).
    public static let notificationsChanged: NodeEventName = "notifications.changed"
    /// `chat.subscribe` `{sessionKey}`.
    public static let chatSubscribe: NodeEventName = "chat.subscribe"
    /// `chat.unsubscribe` `{sessionKey}`.
    public static let chatUnsubscribe: NodeEventName = "chat.unsubscribe"
}

/// The `role` of a connection (docs/protocol.md §3.5); `operator` when absent.
public struct GatewayRole: WireName {
    /// The wire value.
    public var rawValue: String
    /// Wraps a wire value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `operator`: control surfaces (apps' operator connections, CLI, UIs); the default.
    public static let `operator`: GatewayRole = "operator"
    /// `node`: a device that runs commands.
    public static let node: GatewayRole = "node"
    /// `worker`: the closed worker protocol.
    public static let worker: GatewayRole = "worker"

    /// The roles the Gateway knows; any other role is rejected with `invalid role`.
    public static let known: Set<GatewayRole> = [.operator, .node, .worker]
}

/// A command a node runs on `node.invoke.request` (`command`); nodes declare theirs in
/// `connect.params.commands`. Open: every node has its own set.
public struct NodeCommandName: WireName {
    /// The wire value.
    public var rawValue: String
    /// Wraps a wire value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `device.info`.
    public static let deviceInfo: NodeCommandName = "device.info"
    /// `device.status`.
    public static let deviceStatus: NodeCommandName = "device.status"
    /// `system.notify` `{title?, body?}`.
    public static let systemNotify: NodeCommandName = "system.notify"
    /// `location.get`.
    public static let locationGet: NodeCommandName = "location.get"
    /// `canvas.present`.
    public static let canvasPresent: NodeCommandName = "canvas.present"
    /// `canvas.navigate` `{url}`.
    public static let canvasNavigate: NodeCommandName = "canvas.navigate"
    /// `camera.list`.
    public static let cameraList: NodeCommandName = "camera.list"
    /// `camera.snap`.
    public static let cameraSnap: NodeCommandName = "camera.snap"
    /// `screen.record`.
    public static let screenRecord: NodeCommandName = "screen.record"
    /// `debug.slow` `{durationMs?}`: a harness-only command of the reference client that answers late.
    public static let debugSlow: NodeCommandName = "debug.slow"
    /// `debug.counter`: a harness-only command of the reference client that counts its runs.
    public static let debugCounter: NodeCommandName = "debug.counter"
    /// `canvas.hide`.
    public static let canvasHide: NodeCommandName = "canvas.hide"
    /// `camera.clip` (dangerous: needs `gateway.nodes.commands.allow`).
    public static let cameraClip: NodeCommandName = "camera.clip"
    /// `camera.ptz.status` (macOS).
    public static let cameraPtzStatus: NodeCommandName = "camera.ptz.status"
    /// `camera.ptz.control` (dangerous).
    public static let cameraPtzControl: NodeCommandName = "camera.ptz.control"
    /// `screen.snapshot` (desktops).
    public static let screenSnapshot: NodeCommandName = "screen.snapshot"
    /// `desktop.stream` (desktops).
    public static let desktopStream: NodeCommandName = "desktop.stream"
    /// `computer.act` (desktop computer use).
    public static let computerAct: NodeCommandName = "computer.act"
    /// `mobile.ui.observe` (Android Accessibility Control).
    public static let mobileUiObserve: NodeCommandName = "mobile.ui.observe"
    /// `mobile.ui.act` (Android Accessibility Control).
    public static let mobileUiAct: NodeCommandName = "mobile.ui.act"
    /// `notifications.list` (Android).
    public static let notificationsList: NodeCommandName = "notifications.list"
    /// `notifications.actions` (Android).
    public static let notificationsActions: NodeCommandName = "notifications.actions"
    /// `device.permissions` (Android).
    public static let devicePermissions: NodeCommandName = "device.permissions"
    /// `device.health` (Android).
    public static let deviceHealth: NodeCommandName = "device.health"
    /// `device.apps`.
    public static let deviceApps: NodeCommandName = "device.apps"
    /// `contacts.search`.
    public static let contactsSearch: NodeCommandName = "contacts.search"
    /// `contacts.add` (dangerous).
    public static let contactsAdd: NodeCommandName = "contacts.add"
    /// `calendar.events`.
    public static let calendarEvents: NodeCommandName = "calendar.events"
    /// `calendar.add` (dangerous).
    public static let calendarAdd: NodeCommandName = "calendar.add"
    /// `callLog.search` (Android).
    public static let callLogSearch: NodeCommandName = "callLog.search"
    /// `reminders.list`.
    public static let remindersList: NodeCommandName = "reminders.list"
    /// `reminders.add` (dangerous).
    public static let remindersAdd: NodeCommandName = "reminders.add"
    /// `photos.latest`.
    public static let photosLatest: NodeCommandName = "photos.latest"
    /// `motion.activity`.
    public static let motionActivity: NodeCommandName = "motion.activity"
    /// `motion.pedometer`.
    public static let motionPedometer: NodeCommandName = "motion.pedometer"
    /// `health.summary` `{period:"today"}` (iOS HealthKit; dangerous: opt-in, node error `HEALTH_ACCESS_DISABLED` when sharing is off).
    public static let healthSummary: NodeCommandName = "health.summary"
    /// `sms.send` (dangerous).
    public static let smsSend: NodeCommandName = "sms.send"
    /// `sms.search` (dangerous).
    public static let smsSearch: NodeCommandName = "sms.search"
    /// `talk.ptt.start`: push-to-talk capture starts (mirrored as `talk.event`).
    public static let talkPttStart: NodeCommandName = "talk.ptt.start"
    /// `talk.ptt.stop`.
    public static let talkPttStop: NodeCommandName = "talk.ptt.stop"
    /// `talk.ptt.cancel`.
    public static let talkPttCancel: NodeCommandName = "talk.ptt.cancel"
    /// `talk.ptt.once`.
    public static let talkPttOnce: NodeCommandName = "talk.ptt.once"
    /// `watch.status` (the iPhone's relay to its Watch).
    public static let watchStatus: NodeCommandName = "watch.status"
    /// `watch.notify` (the iPhone's relay to its Watch).
    public static let watchNotify: NodeCommandName = "watch.notify"
    /// `system.run.prepare` (node hosts).
    public static let systemRunPrepare: NodeCommandName = "system.run.prepare"
    /// `system.run` (node hosts).
    public static let systemRun: NodeCommandName = "system.run"
    /// `system.which` (node hosts).
    public static let systemWhich: NodeCommandName = "system.which"
    /// `system.execApprovals.get`: never invocable through `node.invoke`.
    public static let systemExecApprovalsGet: NodeCommandName = "system.execApprovals.get"
    /// `system.execApprovals.set`: never invocable through `node.invoke`.
    public static let systemExecApprovalsSet: NodeCommandName = "system.execApprovals.set"
    /// `fs.listDir` (node hosts; admin-only).
    public static let fsListDir: NodeCommandName = "fs.listDir"
    /// `terminal.upload` (node hosts; admin-only).
    public static let terminalUpload: NodeCommandName = "terminal.upload"
    /// `browser.proxy` (node hosts; admin-only).
    public static let browserProxy: NodeCommandName = "browser.proxy"
    /// `browser.proxy.upload.v1` (node hosts; admin-only).
    public static let browserProxyUploadV1: NodeCommandName = "browser.proxy.upload.v1"
    /// `mcp.tools.call.v1` (node hosts).
    public static let mcpToolsCallV1: NodeCommandName = "mcp.tools.call.v1"
    /// `agent.cli.claude.run.v1` (node hosts).
    public static let agentCliClaudeRunV1: NodeCommandName = "agent.cli.claude.run.v1"
    /// The private worker controls (`worker.*.v1`): never part of an invocable command surface.
    public static let privateWorkerControls: [NodeCommandName] = [
        "worker.bundle.install.v1", "worker.launch.v1", "worker.status.v1",
        "worker.cancel.v1", "worker.environment.stop.v1", "worker.workspace.exec.v1",
        "worker.workspace.retain.v1", "worker.desktop.stream.v1", "worker.desktop.launch.v1",
        "worker.desktop.computer.v1", "worker.portal.stream.v1",
    ]
}

/// The `openclaw.kind` of an APNs payload the Gateway sends (upstream
/// `src/infra/push-apns-payloads.ts@09a333a9`).
public struct PushPayloadKind: WireName {
    /// The wire value.
    public var rawValue: String
    /// Wraps a wire value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `push.test`: the alert of the `push.test` method.
    public static let pushTest: PushPayloadKind = "push.test"
    /// `node.wake`: a silent background wake.
    public static let nodeWake: PushPayloadKind = "node.wake"
}

/// The `transport` of a push registration (`push.apns.register`) and
/// of a push the Gateway sends: through the hosted relay, or straight to APNs. Open, so that an
/// unknown value a client sends is kept as it came.
public struct PushTransport: WireName {
    /// The wire value.
    public var rawValue: String
    /// Wraps a wire value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `relay`: through the hosted push relay, signed with the Gateway's identity.
    public static let relay: PushTransport = "relay"
    /// `direct`: straight to APNs with the device's token (the default when absent).
    public static let direct: PushTransport = "direct"
}

/// `client.id` (docs/protocol.md §3.4). Upstream it is a closed enum; this type stays open so
/// that unknown and legacy ids (for example `moltbot-ios`) decode.
public struct ClientID: WireName {
    /// The wire value.
    public var rawValue: String
    /// Wraps a wire value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `webchat-ui`.
    public static let webchatUI: ClientID = "webchat-ui"
    /// `openclaw-control-ui`.
    public static let controlUI: ClientID = "openclaw-control-ui"
    /// `openclaw-browser-copilot`.
    public static let browserCopilot: ClientID = "openclaw-browser-copilot"
    /// `openclaw-tui`.
    public static let tui: ClientID = "openclaw-tui"
    /// `webchat`.
    public static let webchat: ClientID = "webchat"
    /// `cli`.
    public static let cli: ClientID = "cli"
    /// `gateway-client`.
    public static let gatewayClient: ClientID = "gateway-client"
    /// `openclaw-macos`.
    public static let macOS: ClientID = "openclaw-macos"
    /// `openclaw-linux`.
    public static let linux: ClientID = "openclaw-linux"
    /// `openclaw-ios`.
    public static let iOS: ClientID = "openclaw-ios"
    /// `openclaw-watchos`.
    public static let watchOS: ClientID = "openclaw-watchos"
    /// `openclaw-android`.
    public static let android: ClientID = "openclaw-android"
    /// `node-host`: the TypeScript headless node host.
    public static let nodeHost: ClientID = "node-host"
    /// `openclaw-worker`.
    public static let worker: ClientID = "openclaw-worker"
    /// `test`.
    public static let test: ClientID = "test"
    /// `fingerprint`.
    public static let fingerprint: ClientID = "fingerprint"
    /// `openclaw-probe`.
    public static let probe: ClientID = "openclaw-probe"

    /// The upstream enum.
    public static let allKnown: [ClientID] = [
        .webchatUI, .controlUI, .browserCopilot, .tui, .webchat, .cli, .gatewayClient, .macOS, .linux, .iOS,
        .watchOS, .android, .nodeHost, .worker, .test, .fingerprint, .probe,
    ]
}

/// `client.mode` (docs/protocol.md §3.4); open for the same reason as `ClientID`.
public struct ClientMode: WireName {
    /// The wire value.
    public var rawValue: String
    /// Wraps a wire value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `webchat`.
    public static let webchat: ClientMode = "webchat"
    /// `cli`.
    public static let cli: ClientMode = "cli"
    /// `ui`: the apps' operator connections.
    public static let ui: ClientMode = "ui"
    /// `backend`.
    public static let backend: ClientMode = "backend"
    /// `node`: node connections.
    public static let node: ClientMode = "node"
    /// `worker`.
    public static let worker: ClientMode = "worker"
    /// `probe`: gets the legacy N-1 protocol window.
    public static let probe: ClientMode = "probe"
    /// `test`.
    public static let test: ClientMode = "test"

    /// The upstream enum.
    public static let allKnown: [ClientMode] = [.webchat, .cli, .ui, .backend, .node, .worker, .probe, .test]
}
