/// A known client bug that the reference client can switch on, to prove that a conformance
/// scenario catches it.
///
/// Each mutant breaks exactly one rule, at the one place in the client where that rule lives (a
/// single `configuration.has(.x)` check), so the mutated client differs from the correct one in
/// nothing else. ``catalogueIDs`` names the scenarios (docs: `CATALOGUE.md`) expected to fail
/// against it; ``rule`` states the rule it breaks.
public enum Mutant: String, CaseIterable, Sendable, Hashable, Codable {
    // MARK: Handshake

    /// Sends `connect` as soon as the socket opens, without waiting for `connect.challenge`
    /// (so it has no nonce to echo).
    case connectBeforeChallenge = "connect-before-challenge"
    /// Offers `minProtocol 5, maxProtocol 5`, a range that contains neither 4 nor 3.
    case wrongProtocolRange = "wrong-protocol-range"
    /// Sends a `device.id` that is the SHA-256 of the base64url key text instead of the raw key.
    case wrongDeviceId = "wrong-device-id"
    /// Signs the legacy v1 payload (no nonce) and omits `device.nonce`.
    case signWithoutNonce = "sign-without-nonce"
    /// Signs with a `signedAt` five minutes before the challenge `ts`.
    case staleSignedAt = "stale-signed-at"
    /// Keeps reconnecting after `PROTOCOL_MISMATCH` / close 1002.
    case reconnectAfterProtocolMismatch = "reconnect-after-protocol-mismatch"
    /// After a `hello-ok`, offers only the protocol version it announced (`4..4` once a current
    /// Gateway answered 4), so an older Gateway that speaks 3 is refused on later connects.
    case pinNegotiatedProtocol = "pin-negotiated-protocol"
    /// Drops the connection on an unknown `hello-ok` member or an unknown event name.
    case rejectUnknownFields = "reject-unknown-fields"
    /// Never checks ticks: a silent Gateway keeps the socket forever.
    case noTickWatchdog = "no-tick-watchdog"
    /// Treats close 1012 (service restart) as final and stops reconnecting.
    case noReconnectAfterRestart = "no-reconnect-after-restart"
    /// Ignores `retryAfterMs` on `UNAVAILABLE` / close 1013 and retries after its own backoff
    /// step, as if the Gateway had given no hint.
    case ignoreRetryAfter = "ignore-retry-after"
    /// Puts a member the closed `connect` schema does not have into `connect.params.client`
    /// (`client.nickname`).
    case connectMemberOutsideSchema = "connect-member-outside-schema"
    /// Never makes the one-shot `auth.deviceToken` retry after `AUTH_TOKEN_MISMATCH`, also on a
    /// trusted endpoint where the Gateway offers it (`canRetryWithDeviceToken`).
    case noDeviceTokenRetry = "no-device-token-retry"
    /// Ignores `retryAfterMs` on `AUTH_RATE_LIMITED` and retries after 100 ms.
    case ignoreRateLimitRetryAfter = "ignore-rate-limit-retry-after"
    /// Takes close 4001 ("gateway auth changed") as final and stops reconnecting.
    case stopAfterAuthChanged = "stop-after-auth-changed"
    /// Accepts a `connect.challenge` without an integer `ts` and signs with its own clock.
    case acceptChallengeWithoutTs = "accept-challenge-without-ts"

    // MARK: Pairing and tokens

    /// Creates a new device identity for each retry while pairing is pending.
    case pairingChurn = "pairing-churn"
    /// Creates a new device identity for every connect.
    case newKeyEveryConnect = "new-key-every-connect"
    /// Reconnects every 100 ms whatever happened (no exponential backoff, no pairing pause).
    case tightReconnectLoop = "tight-reconnect-loop"
    /// Never stores `hello-ok.auth.deviceToken`.
    case forgetDeviceToken = "forget-device-token"
    /// When a retry reports a different `requestId`, believes its own request was rejected and
    /// stops retrying instead of following the new request.
    case followSupersededRequest = "follow-superseded-request"
    /// After a pairing wait ends in `hello-ok`, opens a second, parallel node session.
    case secondSessionAfterApproval = "second-session-after-approval"
    /// On reinstall keeps the old device tokens and presents them with the new key.
    case oldTokenAfterReinstall = "old-token-after-reinstall"
    /// Keeps presenting a stored device token that the Gateway refused.
    case keepRevokedToken = "keep-revoked-token"
    /// Stops reconnecting after a session is closed with 1008 (policy), e.g. a removed device.
    case stopOnPolicyClose = "stop-on-policy-close"
    /// Sends operator scopes on its node connect.
    case nodeSendsScopes = "node-sends-scopes"
    /// Stops for good on `PAIRING_REQUIRED`: no retry, and an explicit `connect` does nothing
    /// either (pausing until the user acts is allowed; never coming back is not).
    case noPairingRetry = "no-pairing-retry"
    /// Keeps presenting the setup-code bootstrap token after device tokens were issued.
    case reuseBootstrapToken = "reuse-bootstrap-token"
    /// Forgets the setup-code bootstrap token when told that pairing is pending, although the
    /// Gateway said `wait_then_retry`.
    case dropBootstrapWhilePending = "drop-bootstrap-while-pending"
    /// After a restart, asks for its default operator scopes instead of the scopes stored with
    /// its device token.
    case ignoreStoredScopes = "ignore-stored-scopes"
    /// Forgets its device token after `AUTH_SCOPE_MISMATCH` (as if the token were bad).
    case clearTokenOnScopeMismatch = "clear-token-on-scope-mismatch"
    /// Starts its pairing retry backoff over whenever a retry reports another `requestId` (as
    /// if that were progress): with node and operator connections alternating, every retry does.
    case resetBackoffOnNewRequestId = "reset-backoff-on-new-request-id"
    /// Takes `AUTH_RATE_LIMITED` as a verdict on its device and creates a new device identity
    /// before it retries (one more node-pairing request from the same address).
    case newIdentityAfterRateLimit = "new-identity-after-rate-limit"

    // MARK: node.invoke

    /// Sends every `node.invoke.result` twice.
    case duplicateInvokeResult = "duplicate-invoke-result"
    /// Sends every `node.invoke.result` twice back to back, the second without waiting for the
    /// Gateway's answer to the first (both arrive together).
    case immediateDuplicateInvokeResult = "immediate-duplicate-invoke-result"
    /// Puts the Gateway's `nodeId` placeholder `"?"` into results instead of its own id.
    case wrongResultNodeId = "wrong-result-node-id"
    /// Sends error results with a `message` but no `code`.
    case errorWithoutCode = "error-without-code"
    /// Never answers an unknown command.
    case unknownCommandSilence = "unknown-command-silence"
    /// Answers each invoke with the id of the most recently received invoke.
    case mixedInvokeIds = "mixed-invoke-ids"
    /// Does not race commands against `timeoutMs`.
    case noInvokeTimeout = "no-invoke-timeout"
    /// Runs a repeated `idempotencyKey` again instead of returning the first result.
    case noIdempotency = "no-idempotency"
    /// Runs foreground-only commands while in the background.
    case ignoreBackground = "ignore-background"
    /// Sends a result on the new socket for an invoke received on an earlier socket.
    case staleSocketResult = "stale-socket-result"
    /// Never pulls the foreground actions the Gateway queued while the app was in the background.
    case noPendingDrain = "no-pending-drain"
    /// Declares one more command (`health.summary`) on every node reconnect than on its first
    /// connect, as a client that rebuilds its command list from stale feature state would.
    case commandsDrift = "commands-drift"
    /// Reconnects (declaring its commands again) when a command it declared has not been invoked
    /// within 60 s of a node connect, as a client that takes an unused command for a lost surface
    /// would: a node whose widened surface waits for approval never receives its withheld
    /// commands, so it reconnects every minute.
    case reconnectUnusedSurface = "reconnect-unused-surface"
    /// Fails `canvas.present` when the canvas page answers 401, instead of refreshing the
    /// capability (`node.pluginSurface.refresh`) and loading the page again.
    case noCanvasRefresh = "no-canvas-refresh"

    // MARK: Presence beacons

    /// Reconnects on a background wake but sends no `node.presence.alive`.
    case noWakeBeacon = "no-wake-beacon"
    /// Counts a bare `{ok:true}` reply as a durable beacon.
    case okTrueIsDurable = "ok-true-is-durable"
    /// Sends a beacon on every wake, ignoring the 10-minute minimum interval.
    case beaconEveryWake = "beacon-every-wake"
    /// Counts `handled:false` as a durable beacon.
    case handledFalseIsDurable = "handled-false-is-durable"
    /// Sends the beacon over its operator session instead of its node session.
    case beaconOnOperatorSession = "beacon-on-operator-session"
    /// After a wake by a silent push, reports the beacon's trigger as `background` instead of
    /// `silent_push`.
    case wrongPushWakeTrigger = "wrong-push-wake-trigger"

    // MARK: Push

    /// Registers relay push with its own device id as `gatewayDeviceId`.
    case pushWrongGatewayId = "push-wrong-gateway-id"
    /// Does not register push again after switching Gateways.
    case noPushAfterSwitch = "no-push-after-switch"
    /// A silent push does not bring a disconnected node back: it stays away until the user opens
    /// the app.
    case ignoreSilentPush = "ignore-silent-push"
    /// Takes an alert push (the Gateway's reopen nudge, no `content-available`) for a silent wake:
    /// reconnects and reports a `silent_push` wake without the user opening the app.
    case alertAsSilentWake = "alert-as-silent-wake"
    /// Sends an operator `node.invoke` once more after any `retryable: true` refusal, also
    /// `ROUTE_CHANGED`, whose outcome upstream's operator code treats as unknown.
    case resendRetryableInvoke = "resend-retryable-invoke"

    // MARK: Approvals

    /// Sends any requested decision, also one not in `allowedDecisions`.
    case ignoreAllowedDecisions = "ignore-allowed-decisions"
    /// Resolves again after a loser answer (`applied:false` / `APPROVAL_ALREADY_RESOLVED`).
    case retryAfterLosingRace = "retry-after-losing-race"
    /// Unlocks the card after a lost resolve reply without reading the record back.
    case noReadbackAfterLostAck = "no-readback-after-lost-ack"
    /// Resolves an approval that expired.
    case resolveExpiredApproval = "resolve-expired-approval"
    /// Uses `approval.*` even when `hello-ok.features.methods` offers only `exec.approval.*`.
    case legacyOnlyUnifiedApprovals = "legacy-only-unified-approvals"
    /// Resolves a prompt of the previous Gateway on the new connection after a switch.
    case resolveOldGatewayPrompt = "resolve-old-gateway-prompt"
    /// Keeps local pending approvals that an authoritative reconnect replay
    /// (`approvalReplay.truncated:false`) no longer lists.
    case ignoreApprovalReplay = "ignore-approval-replay"
    /// Sends `kind:"exec"` on every `approval.resolve`, whatever the record's kind.
    case execKindForEveryApproval = "exec-kind-for-every-approval"

    // MARK: Questions

    /// Does not reload pending questions (`question.list`) after reconnecting.
    case noQuestionReload = "no-question-reload"
    /// Answers a question that expired.
    case answerExpiredQuestion = "answer-expired-question"
    /// Answers again after `QUESTION_ALREADY_TERMINAL`.
    case retryTerminalQuestion = "retry-terminal-question"
    /// Answers a cancelled question.
    case answerCancelledQuestion = "answer-cancelled-question"
    /// Sends several values for a single-select question.
    case singleSelectMultiAnswer = "single-select-multi-answer"

    // MARK: Lifecycle

    /// Disconnects when an event `seq` skips a number.
    case seqGapDisconnect = "seq-gap-disconnect"
    /// Gives up on a request after 1 s (instead of 15 s, 30 s for `connect`).
    case giveUpSlowResponse = "give-up-slow-response"
    /// Ignores binary WebSocket messages from the Gateway.
    case dropBinaryFrames = "drop-binary-frames"
    /// Takes a drain refusal (`UNAVAILABLE` with `details.reason` `gateway-restarting`, ...) as
    /// final and never sends the request again.
    case giveUpOnDrain = "give-up-on-drain"

    // MARK: Chat outbox and transcript cache

    /// After a send whose ack was lost, sends the message again under a new idempotency key
    /// without reading history first.
    case resendAmbiguousNewKey = "resend-ambiguous-new-key"
    /// Retires an outbox message when its ack arrives instead of when history shows it.
    case retireOnAck = "retire-on-ack"
    /// Flushes the outbox newest first.
    case reorderFlush = "reorder-flush"
    /// Accepts the 51st queued message without a word and never sends it.
    case dropOverLimit = "drop-over-limit"
    /// Shows no cached transcript on a cold start (an empty chat until the Gateway answers).
    case noColdStartCache = "no-cold-start-cache"
    /// Keeps the cached transcripts after a reset (reinstall / forget).
    case keepCacheAfterReset = "keep-cache-after-reset"
    /// Keeps one outbox for every Gateway: a switch flushes the old Gateway's messages into the new one.
    case sharedOutbox = "shared-outbox"
    /// Retires a message when a history row has a top-level `idempotencyKey` equal to its key
    /// (the envelope's `__openclaw.idempotencyKey = "<key>:user"` is ignored).
    case retireOnTopLevelKey = "retire-on-top-level-key"
    /// Never asks for or reads `inputReceipts`: an input another run consumed stays in the outbox.
    case ignoreInputReceipts = "ignore-input-receipts"
    /// Resends an ambiguous message that `pendingInputs` / a `pending` receipt shows accepted.
    case resendPendingInput = "resend-pending-input"
    /// Keeps its merged transcript and cursor on a `{kind:"reset"}` answer (no fresh tail).
    case ignoreHistoryReset = "ignore-history-reset"
    /// Sends the cursor back as a `deltaCursor` request member instead of `cursor`.
    case deltaCursorMember = "delta-cursor-member"

    // MARK: Apple Watch direct mode (the client runs with transport .watchDirect)

    /// Ends its loop on a 401 to a poll (an expired or closed session) instead of fetching a new
    /// challenge and connecting again with its device token.
    case watchNoRechallenge = "watch-no-rechallenge"
    /// Keeps the setup code's bootstrap token after pairing and presents it again on its next
    /// connect instead of the device token it was issued.
    case watchKeepBootstrap = "watch-keep-bootstrap"
    /// Keeps a second poll in flight next to the first, so that each supersedes the other (409).
    case watchSecondPoll = "watch-second-poll"
    /// Declares `canvas.present` next to the Watch commands on its connect.
    case watchDeclaresCanvas = "watch-declares-canvas"
    /// Stops polling after an empty answer (`event: null`, the poll's 20 s) instead of polling again.
    case watchNoRepoll = "watch-no-repoll"

    /// Whether the mutant is a bug of the Apple Watch direct mode: the reference client then runs
    /// with ``ReferenceTransport/watchDirect``.
    public var isWatchMode: Bool {
        switch self {
        case .watchNoRechallenge, .watchKeepBootstrap, .watchSecondPoll, .watchDeclaresCanvas, .watchNoRepoll: true
        default: false
        }
    }

    // MARK: Files view and voice wake settings

    /// Takes `workspace_file_too_large` for a passing failure and asks for the preview again
    /// every second while it is open.
    case retryOversizedPreview = "retry-oversized-preview"
    /// Asks for 1000 entries a page when it lists a workspace folder (the Gateway serves 500 at most).
    case workspaceLimitOverMax = "workspace-limit-over-max"
    /// Takes its own edit of the voice wake triggers as the truth: a `voicewake.changed` from
    /// another device is answered with `voicewake.set` of the local list.
    case overwriteVoiceWakeTriggers = "overwrite-voice-wake-triggers"

    // MARK: Session list

    /// Ignores `sessions.changed` with `reason: "delete"`: a session deleted on another device
    /// stays in the session list.
    case keepDeletedSession = "keep-deleted-session"
    /// Ignores `sessions.changed` with `reason: "reset"`, `"new"` or `"compact"`: the chat view
    /// keeps showing the cached transcript of a session reset or compacted elsewhere.
    case ignoreSessionResetEvent = "ignore-session-reset-event"

    /// The catalogue scenarios expected to fail against this mutant.
    public var catalogueIDs: [String] {
        switch self {
        case .connectBeforeChallenge: ["HS-001", "HS-004"]
        case .wrongProtocolRange: ["HS-002"]
        case .wrongDeviceId: ["HS-003"]
        case .signWithoutNonce: ["HS-001", "HS-004"]
        case .staleSignedAt: ["HS-005"]
        case .reconnectAfterProtocolMismatch: ["HS-006"]
        case .pinNegotiatedProtocol: ["HS-016"]
        case .rejectUnknownFields: ["HS-007"]
        case .noTickWatchdog: ["HS-008"]
        case .noReconnectAfterRestart: ["HS-009"]
        case .ignoreRetryAfter: ["HS-010"]
        case .connectMemberOutsideSchema: ["HS-011"]
        case .noDeviceTokenRetry: ["HS-012"]
        case .ignoreRateLimitRetryAfter: ["HS-013", "PAIR-017"]
        case .stopAfterAuthChanged: ["HS-014"]
        case .acceptChallengeWithoutTs: ["HS-015"]
        case .pairingChurn: ["PAIR-001", "PAIR-002"]
        case .newKeyEveryConnect: ["PAIR-002", "PAIR-004"]
        case .tightReconnectLoop: ["PAIR-003", "PAIR-005", "LIFE-001", "HS-010"]
        case .forgetDeviceToken: ["PAIR-004"]
        case .followSupersededRequest: ["PAIR-006"]
        case .secondSessionAfterApproval: ["PAIR-007"]
        case .oldTokenAfterReinstall: ["PAIR-008"]
        case .keepRevokedToken: ["PAIR-009"]
        case .stopOnPolicyClose: ["PAIR-010"]
        case .nodeSendsScopes: ["PAIR-011"]
        case .noPairingRetry: ["PAIR-012"]
        case .reuseBootstrapToken: ["PAIR-013"]
        case .dropBootstrapWhilePending: ["PAIR-014"]
        case .ignoreStoredScopes: ["PAIR-015"]
        case .clearTokenOnScopeMismatch: ["PAIR-016"]
        case .resetBackoffOnNewRequestId: ["PAIR-002"]
        case .newIdentityAfterRateLimit: ["PAIR-017"]
        case .duplicateInvokeResult: ["INV-001"]
        case .immediateDuplicateInvokeResult: ["INV-001"]
        case .wrongResultNodeId: ["INV-001"]
        case .errorWithoutCode: ["INV-002"]
        case .unknownCommandSilence: ["INV-003"]
        case .mixedInvokeIds: ["INV-004"]
        case .noInvokeTimeout: ["INV-005"]
        case .noIdempotency: ["INV-006"]
        case .ignoreBackground: ["INV-007"]
        case .staleSocketResult: ["INV-008"]
        case .commandsDrift: ["INV-010"]
        case .reconnectUnusedSurface: ["INV-012"]
        case .noPendingDrain: ["INV-009"]
        case .noCanvasRefresh: ["INV-011"]
        case .watchNoRechallenge: ["WATCH-001"]
        case .watchKeepBootstrap: ["WATCH-002"]
        case .watchSecondPoll: ["WATCH-003"]
        case .watchDeclaresCanvas: ["WATCH-004"]
        case .watchNoRepoll: ["WATCH-005"]
        case .noWakeBeacon: ["PRES-001"]
        case .okTrueIsDurable: ["PRES-002"]
        case .beaconEveryWake: ["PRES-003"]
        case .handledFalseIsDurable: ["PRES-004"]
        case .beaconOnOperatorSession: ["PRES-005", "PRES-001"]
        case .wrongPushWakeTrigger: ["PRES-006"]
        case .pushWrongGatewayId: ["PUSH-001", "PRES-006"]
        case .noPushAfterSwitch: ["PUSH-002"]
        case .ignoreSilentPush: ["PUSH-003", "PRES-006"]
        case .alertAsSilentWake: ["PUSH-004"]
        case .resendRetryableInvoke: ["INV-013"]
        case .ignoreAllowedDecisions: ["APPR-001"]
        case .retryAfterLosingRace: ["APPR-002"]
        case .noReadbackAfterLostAck: ["APPR-003"]
        case .resolveExpiredApproval: ["APPR-004"]
        case .legacyOnlyUnifiedApprovals: ["APPR-005", "APPR-001", "APPR-002", "APPR-003", "APPR-006"]
        case .resolveOldGatewayPrompt: ["APPR-006"]
        case .ignoreApprovalReplay: ["APPR-007"]
        case .execKindForEveryApproval: ["APPR-008"]
        case .noQuestionReload: ["QUES-001"]
        case .answerExpiredQuestion: ["QUES-002"]
        case .retryTerminalQuestion: ["QUES-003"]
        case .answerCancelledQuestion: ["QUES-004"]
        case .singleSelectMultiAnswer: ["QUES-005"]
        case .seqGapDisconnect: ["LIFE-002"]
        case .giveUpSlowResponse: ["LIFE-003"]
        case .dropBinaryFrames: ["LIFE-004"]
        case .resendAmbiguousNewKey: ["OUTBOX-002"]
        case .retireOnAck: ["OUTBOX-003"]
        case .reorderFlush: ["OUTBOX-001"]
        case .dropOverLimit: ["OUTBOX-004"]
        case .noColdStartCache: ["CACHE-001"]
        case .keepCacheAfterReset: ["CACHE-002"]
        case .sharedOutbox: ["OUTBOX-005"]
        case .retireOnTopLevelKey: ["OUTBOX-003"]
        case .ignoreInputReceipts: ["OUTBOX-006"]
        case .resendPendingInput: ["OUTBOX-007"]
        case .ignoreHistoryReset: ["CACHE-003"]
        case .deltaCursorMember: ["CACHE-001"]
        case .retryOversizedPreview: ["WS-001"]
        case .workspaceLimitOverMax: ["WS-002"]
        case .overwriteVoiceWakeTriggers: ["VW-001"]
        case .keepDeletedSession: ["SESS-001"]
        case .ignoreSessionResetEvent: ["SESS-002"]
        case .giveUpOnDrain: ["LIFE-005"]
        }
    }

    /// The rule the mutant breaks, with its source in the protocol documents.
    public var rule: String {
        switch self {
        case .connectBeforeChallenge: "Wait for connect.challenge, then send connect as the first request (docs/protocol.md §3.1-3.2)."
        case .wrongProtocolRange: "minProtocol..maxProtocol contains 4, or 3 for a node (docs/protocol.md §3.6)."
        case .wrongDeviceId: "device.id is the lowercase hex SHA-256 of the raw public key (docs/protocol.md §3.8)."
        case .signWithoutNonce: "Sign v3 or v2 including the challenge nonce and echo it (docs/protocol.md §3.9-3.11)."
        case .staleSignedAt: "signedAt is the challenge ts, within 2 minutes of the Gateway clock (docs/protocol.md §3.11)."
        case .reconnectAfterProtocolMismatch: "Stop reconnecting after PROTOCOL_MISMATCH (docs/protocol.md §3.6, §11.3)."
        case .pinNegotiatedProtocol: "Keep offering every supported version: a client that speaks 3 reaches a protocol-3 Gateway (docs/protocol.md §3.6)."
        case .rejectUnknownFields: "Ignore unknown hello-ok members, events and features (docs/protocol.md §2.3, §4.2)."
        case .noTickWatchdog: "Drop and reconnect when no tick arrives for 2x tickIntervalMs (docs/protocol.md §11.1)."
        case .noReconnectAfterRestart: "Reconnect after shutdown and close 1012 (docs/protocol.md §11.4)."
        case .ignoreRetryAfter: "Wait at least retryAfterMs after UNAVAILABLE / 1013 (docs/protocol.md §3.7, §11.3)."
        case .connectMemberOutsideSchema: "connect params stay inside the closed schema (frames.ts ConnectParamsSchema)."
        case .noDeviceTokenRetry: "On a trusted endpoint (loopback, pinned wss://), retry once with auth.deviceToken after AUTH_TOKEN_MISMATCH (docs protocol.md Auth)."
        case .ignoreRateLimitRetryAfter: "Wait at least retryAfterMs after AUTH_RATE_LIMITED (docs security/rate-limiting.md)."
        case .stopAfterAuthChanged: "After close 4001 gateway auth changed, reconnect with fresh credentials (connect-auth.ts)."
        case .acceptChallengeWithoutTs: "A connect.challenge without an integer ts is invalid; do not sign with it (docs protocol.md Handshake)."
        case .pairingChurn: "While pending, every retry presents the same identity (docs/protocol.md §5.9)."
        case .newKeyEveryConnect: "Keep one persistent device identity (docs/protocol.md §3.8, §5.9)."
        case .tightReconnectLoop: "Back off (0.5 s doubling to 30 s); pairing retries at most 2/s (docs/protocol.md §11.3)."
        case .forgetDeviceToken: "Store hello-ok.auth.deviceToken and present it next time (docs/protocol.md §5.2, §5.4)."
        case .followSupersededRequest: "Follow the newest requestId after supersession (docs/protocol.md §5.9)."
        case .secondSessionAfterApproval: "One session per role; an approval race ends with one session (docs/protocol.md §5.4)."
        case .oldTokenAfterReinstall: "A reinstall wipes identity and tokens together (docs/protocol.md §5.14)."
        case .keepRevokedToken: "Clear a refused device token and fall back to pairing (docs/protocol.md §5.5-5.6)."
        case .stopOnPolicyClose: "Reconnect after a removal closes the session, to get a fresh request (docs/protocol.md §5.6)."
        case .nodeSendsScopes: "Node connects send scopes [] (docs/protocol.md §3.5)."
        case .noPairingRetry: "While pairing is pending, retry with backoff, or at the latest when the user reconnects (docs/protocol.md §5.9, §11.3)."
        case .reuseBootstrapToken: "Never present a bootstrap token after tokens were issued (docs/protocol.md §5.13)."
        case .dropBootstrapWhilePending: "While wait_then_retry, keep reconnecting with the same bootstrap token (docs protocol.md Auth)."
        case .ignoreStoredScopes: "Reuse the scopes stored with the device token (hello-ok.auth.scopes) on reconnect (docs protocol.md Auth)."
        case .clearTokenOnScopeMismatch: "AUTH_SCOPE_MISMATCH is not a bad token: keep it (docs protocol.md Auth)."
        case .resetBackoffOnNewRequestId: "A new requestId from supersession is no progress: keep backing off, no storm (docs/protocol.md §5.9, §11.3)."
        case .newIdentityAfterRateLimit: "AUTH_RATE_LIMITED is about the address, not the device: keep the identity and retry after retryAfterMs (connect-node-session.ts)."
        case .duplicateInvokeResult: "Exactly one node.invoke.result per invoke id (docs/protocol.md §6.3-6.4)."
        case .immediateDuplicateInvokeResult: "Exactly one node.invoke.result per invoke id, also when both would leave at once (docs/protocol.md §6.3-6.4)."
        case .wrongResultNodeId: "Results carry the client's own nodeId (docs/protocol.md §6.4)."
        case .errorWithoutCode: "Error results carry code and message (docs/protocol.md §6.4)."
        case .unknownCommandSilence: "Unknown commands are answered ok:false with an error code (docs/protocol.md §6.3)."
        case .mixedInvokeIds: "Concurrent invokes are answered independently, ids never mix (docs/protocol.md §6.3)."
        case .noInvokeTimeout: "Answer with an error before timeoutMs (docs/protocol.md §6.3)."
        case .noIdempotency: "A repeated idempotencyKey returns the first result (docs/protocol.md §6.3)."
        case .ignoreBackground: "Foreground-only commands fail with NODE_BACKGROUND_UNAVAILABLE in the background (docs/protocol.md §6.4)."
        case .staleSocketResult: "Never send a result for an invoke of a previous socket (docs/protocol.md §6.1)."
        case .commandsDrift: "Declare the same commands on every reconnect unless a feature changed (docs/protocol.md §6.7)."
        case .reconnectUnusedSurface:
            "Stay connected while a widened command surface waits for approval: a declared command that is never invoked is no reason to reconnect (docs/protocol.md §6.7)."
        case .noPendingDrain: "Back in the foreground, pull the queued actions (node.pending.pull) and ack them (docs/protocol.md §6.4, §6.9)."
        case .watchNoRechallenge: "A Watch answers a 401 by fetching a new challenge and connecting again with its device token (docs/protocol.md §13.4)."
        case .watchKeepBootstrap: "A Watch keeps the issued device token and deletes the bootstrap token after pairing (docs/protocol.md §13.4)."
        case .watchSecondPoll: "A Watch keeps one poll in flight; a second poll supersedes the first with 409 (docs/protocol.md §13.4)."
        case .watchDeclaresCanvas: "A Watch declares only the Watch commands, never canvas commands (docs/protocol.md §13.4)."
        case .watchNoRepoll: "A Watch polls again after every answer, the empty one after 20 s included (docs/protocol.md §13.4)."
        case .noCanvasRefresh: "After a 401 from the canvas page, refresh the capability (node.pluginSurface.refresh) and load the fresh URL (docs/protocol.md §6.10)."
        case .noWakeBeacon: "Send node.presence.alive after a background wake (docs/protocol.md §6.6)."
        case .okTrueIsDurable: "A bare {ok:true} is not a durable beacon (docs/protocol.md §6.6)."
        case .beaconEveryWake: "After handled:true, do not resend within 10 minutes (docs/protocol.md §6.6)."
        case .handledFalseIsDurable: "handled:false is not a durable beacon (docs/protocol.md §6.6)."
        case .beaconOnOperatorSession: "Beacons travel on the authenticated node session (docs/protocol.md §6.6)."
        case .wrongPushWakeTrigger: "A beacon sent because a silent push woke the app names trigger silent_push (docs/protocol.md §6.6, §9.3)."
        case .pushWrongGatewayId: "Relay push carries gatewayDeviceId from gateway.identity.get (docs/protocol.md §9.1)."
        case .noPushAfterSwitch: "Register push again after switching Gateways (docs/protocol.md §9.1)."
        case .ignoreSilentPush: "A node woken by the silent push of a node.invoke reconnects in time to take the invoke (docs/protocol.md §6.9.1)."
        case .alertAsSilentWake: "The reopen nudge is an alert for the user, not a silent wake (docs/protocol.md §6.9.1)."
        case .resendRetryableInvoke: "Never send a node.invoke again automatically after a failure whose outcome is unknown, ROUTE_CHANGED included (docs/protocol.md §6.9.2)."
        case .ignoreAllowedDecisions: "Offer and send only allowedDecisions (docs/protocol.md §7.2, §7.4)."
        case .retryAfterLosingRace: "Accept the loser answer and do not retry (docs/protocol.md §7.4)."
        case .noReadbackAfterLostAck: "Read the record back after a lost reply before another decision (docs/protocol.md §7.5, §7.11)."
        case .resolveExpiredApproval: "Send no resolve after expiry (docs/protocol.md §7.5)."
        case .legacyOnlyUnifiedApprovals: "Use exec.approval.* when approval.* is not advertised (docs/protocol.md §7.6)."
        case .resolveOldGatewayPrompt: "Old Gateway prompts cannot be resolved after a switch (docs/protocol.md §7.11)."
        case .ignoreApprovalReplay: "approvalReplay with truncated:false replaces the local pending set (docs/protocol.md §7.3)."
        case .execKindForEveryApproval: "approval.resolve carries the record's exact kind; a wrong kind force-denies (docs/protocol.md §7.4)."
        case .noQuestionReload: "Reload pending questions with question.list after reconnect (docs/protocol.md §7.9)."
        case .answerExpiredQuestion: "Never answer an expired question (docs/protocol.md §7.9)."
        case .retryTerminalQuestion: "Lock the card on QUESTION_ALREADY_TERMINAL without retrying (docs/protocol.md §7.9)."
        case .answerCancelledQuestion: "Never answer a cancelled question (docs/protocol.md §7.9)."
        case .singleSelectMultiAnswer: "Answers respect single/multi select and isOther (docs/protocol.md §7.8)."
        case .seqGapDisconnect: "Tolerate a gap in event seq (docs/protocol.md §2.5)."
        case .giveUpSlowResponse: "Do not give up on a slow (2 s) response early (docs/protocol.md §11.2)."
        case .dropBinaryFrames: "Understand binary and fragmented frames (docs/protocol.md §1.1)."
        case .resendAmbiguousNewKey: "Resolve an ambiguous send by reading chat.history; resend only under the same key (iOS/Android outbox)."
        case .retireOnAck: "Retire an outbox message only when canonical chat.history shows it (iOS/Android outbox)."
        case .reorderFlush: "Flush queued messages in the order they were written (iOS/Android outbox)."
        case .dropOverLimit: "Refuse the 51st queued message visibly (50 per Gateway; iOS/Android outbox)."
        case .noColdStartCache: "Show the cached transcript at once on a cold start, then refresh (iOS/Android cache)."
        case .keepCacheAfterReset: "A reset or forget clears the transcript cache (iOS/Android cache)."
        case .sharedOutbox: "Outbox and cache are per Gateway; a switch never flushes into another Gateway (iOS/Android)."
        case .retireOnTopLevelKey: "Retire a message on the row whose envelope carries `__openclaw.idempotencyKey = \"<key>:user\"` (upstream chat history)."
        case .ignoreInputReceipts: "Ask chat.history for `inputReceipts` and retire an input consumed by another run (upstream accepted-input custody)."
        case .resendPendingInput: "Never resend an input that `pendingInputs` or a `pending` receipt shows accepted (upstream accepted-input custody)."
        case .ignoreHistoryReset: "On `{kind:\"reset\"}` drop what was merged and fetch a fresh tail (upstream chat.history cursor)."
        case .deltaCursorMember: "Pass the tail's `deltaCursor` back as `cursor`; `chat.history` has no `deltaCursor` member (upstream closed schema)."
        case .retryOversizedPreview: "A preview refused as too large is shown as such and not asked for again in a loop (docs/protocol.md §9.5)."
        case .workspaceLimitOverMax: "A workspace listing asks for at most 500 entries a page and pages with offset (docs/protocol.md §9.5)."
        case .overwriteVoiceWakeTriggers: "voicewake.changed replaces the local trigger list; never write the local list back over it (docs/protocol.md §9.4)."
        case .keepDeletedSession: "A session deleted elsewhere (sessions.changed reason delete) leaves the session list (docs/protocol.md §8.6)."
        case .ignoreSessionResetEvent: "A reset or compaction elsewhere (sessions.changed) drops the session's cached transcript and reads it again (docs/protocol.md §8.6)."
        case .giveUpOnDrain: "Resend a request refused by a restart, suspend or closing drain after retryAfterMs (docs/protocol.md §11.4)."
        }
    }

    /// Every catalogue ID covered by at least one mutant.
    public static var coveredCatalogueIDs: Set<String> { Set(allCases.flatMap(\.catalogueIDs)) }
}
