import Foundation
import GatewayProtocol
import Locking
import Simulation

/// A point-in-time view of the reference client, for tests and tools.
public struct ReferenceClientSnapshot: Sendable {
    /// The Gateway it talks to.
    public var gatewayURL: String
    /// Its device id.
    public var deviceId: String?
    /// The node session's state.
    public var nodeStatus: SessionStatus
    /// The operator session's state (`nil` when disabled).
    public var operatorStatus: SessionStatus?
    /// Stored device tokens for the current Gateway, by role.
    public var storedTokens: [String: StoredDeviceToken]
    /// Whether a setup-code bootstrap token is waiting to be used.
    public var hasPendingBootstrapToken: Bool
    /// The newest pairing request id the Gateway reported (node or operator session).
    public var pairingRequestId: String?
    /// Whether the app is in the background.
    public var inBackground: Bool
    /// The approval API family chosen from the operator session's `hello-ok`.
    public var approvalFamily: ApprovalFamily
    /// The current Gateway's approval cards.
    public var approvals: [ApprovalCard]
    /// The current Gateway's question cards.
    public var questions: [QuestionCard]
    /// The presence beacon state.
    public var beacon: PresenceBeaconState
    /// Gateways (URL keys) this client registered push with.
    public var pushRegisteredGateways: [String]
    /// `seq` gaps seen by the node and operator sessions.
    public var seqGaps: Int
}

/// The reference OpenClaw client: a node session and (optionally) an operator session sharing one
/// device identity, following every client rule of the protocol documents, with switchable bugs
/// (``Mutant``) for validating conformance scenarios.
///
/// ```swift
/// let client = ReferenceClient(configuration: ReferenceConfiguration(
///     gatewayURL: gateway.url, stateDirectory: directory, clock: clock))
/// try await client.start()
/// _ = await client.apply(.backgroundWake(trigger: "silent_push"))
/// await client.stop()
/// ```
///
/// Everything it does is appended to ``observations``; wait on those with a deadline.
public actor ReferenceClient {
    /// The configuration it was created with (URL and token change with `switch-gateway`).
    public nonisolated let configuration: ReferenceConfiguration
    /// What the client did, in order.
    public nonisolated let observations = ObservationLog()

    var gatewayURL: String
    private var sharedToken: String?
    var store: DeviceStateStore?
    var node: GatewaySession?
    var operatorSession: GatewaySession?
    private var consumers: [Task<Void, Never>] = []
    private var operatorGate: WakeSignal?
    private var sessionSeed: UInt64

    var currentNode: GatewayConnection?
    /// The canvas URL of the node session (`hello-ok`, then each refresh).
    var canvasURL: String?
    /// The methods the node session's Gateway lists.
    var nodeMethods: Set<String> = []
    var currentOperator: GatewayConnection?
    /// The Watch mode's HTTP loop (``ReferenceTransport/watchDirect`` only).
    var watch: WatchDirectClient?
    private var pairingRequestId: String?
    private var inBackground = false

    private var approvals: ApprovalBook
    private var questions: QuestionBook
    private var approvalFamily: ApprovalFamily = .unavailable
    private var beacon = PresenceBeaconState()
    private var pushWish: PushWish?
    private var pushRegistered: Set<String> = []
    private var pushInFlight = false
    private var gatewayIdentities: [String: String] = [:]

    private var answeredInvokes: Set<String> = []
    private var idempotentRuns: [String: Task<NodeInvokeOutcome?, Never>] = [:]
    private var lastInvokeId: String?
    /// How many `invoke-node` stimuli the operator side has run (names their idempotency keys).
    var operatorInvokeCount = 0
    /// The commands invoked on each node connection, by generation (read only under the
    /// `reconnect-unused-surface` mutant).
    private var invokedCommands: [Int: Set<String>] = [:]
    private var commandRuns = 0

    // The chat view (ReferenceClient+Chat.swift).
    var chat = ChatBook()
    /// The book as last written to the state directory (`nil`: not written by this process yet);
    /// an unchanged book is not written again.
    var savedChat: ChatBook?
    var chatOffline = false
    var chatSync: Task<Void, Never>?

    // The Files view and voice wake settings (ReferenceClient+Apps.swift).
    var workspace = WorkspaceView()
    /// The `retry-oversized-preview` mutant's reload loop, while it runs.
    var previewRetry: Task<Void, Never>?
    var voiceWake = VoiceWakeBook()

    // The session list (ReferenceClient+Sessions.swift): keys in `sessions.list` order.
    var sessionList: [String] = []

    /// Creates a client; nothing happens until ``start()``.
    public init(configuration: ReferenceConfiguration) {
        self.configuration = configuration
        gatewayURL = configuration.gatewayURL
        sharedToken = configuration.sharedToken
        sessionSeed = configuration.seed
        let key = DeviceStateStore.gatewayKey(configuration.gatewayURL)
        approvals = ApprovalBook(currentGateway: key)
        questions = QuestionBook(currentGateway: key)
    }

    /// The stimuli this client acts on (wire names); operator stimuli only with an operator session.
    public nonisolated var supportedStimuli: Set<String> {
        if configuration.transport == .watchDirect { return Set(ReferenceStimulus.watchNames) }
        var names = Set(ReferenceStimulus.allNames)
        if configuration.operatorSession == .disabled { names.subtract(ReferenceStimulus.operatorNames) }
        return names
    }

    private var clock: any ClientClock { configuration.clock }
    var gatewayKey: String { DeviceStateStore.gatewayKey(gatewayURL) }

    // MARK: - Lifecycle

    /// Loads (or creates) the state directory and starts connecting.
    /// - Throws: `DeviceStateError` when the state directory cannot be used.
    public func start() async throws {
        guard node == nil else { return }
        let store = try DeviceStateStore(directory: configuration.stateDirectory, nowMs: clock.nowMs,
                                         identifiers: IdentifierSource(seed: configuration.reproducible ? Self.keySeed(configuration.seed) : nil),
                                         durable: configuration.durableState, memory: configuration.memoryState)
        self.store = store
        loadChat()
        if let code = configuration.setupCode, let setup = try? SetupCodePayload(decoding: code) {
            let url = setup.url ?? gatewayURL
            // A device that already holds a token for that Gateway is paired: the code is spent.
            if store.allTokens[DeviceStateStore.gatewayKey(url)]?.isEmpty ?? true {
                adoptGateway(url: url)
                store.setBootstrapToken(setup.bootstrapToken, gateway: url)
            }
        }
        if configuration.transport == .watchDirect {
            let watch = WatchDirectClient(configuration: configuration, store: store, gatewayURL: gatewayURL)
            self.watch = watch
            await watch.start()
            return
        }
        startSessions(store, running: !chatOffline)
    }

    /// The Watch mode's state (`nil` unless ``ReferenceTransport/watchDirect``).
    public func watchSnapshot() async -> WatchDirectSnapshot? {
        await watch?.snapshot
    }

    /// The seed of the client's device keys, mixed from the run's seed so that it never equals
    /// another seed derived from it (the fake Gateway derives its own identity from the same one).
    static func keySeed(_ seed: UInt64) -> UInt64 {
        var random = SeededRandom(seed: seed ^ 0xC11E_47DE_71CE_5EED)
        return random.next()
    }

    /// Disconnects both sessions and stops every timer.
    public func stop() async {
        await watch?.stop()
        watch = nil
        await stopSessions()
    }

    /// The device identity's id (after ``start()``).
    public var deviceId: String? { store?.identity.deviceId }

    /// Creates both sessions; `running: false` leaves them idle until `connect` (offline).
    private func startSessions(_ store: DeviceStateStore, running: Bool = true) {
        let commands = configuration.declaredCommands ?? NodeCommands.declared
        sessionSeed &+= 1
        let (nodeStream, nodeSignals) = AsyncStream<SessionSignal>.makeStream()
        let node = GatewaySession(role: .node, configuration: configuration, store: store, gatewayURL: gatewayURL,
                                  sharedToken: sharedToken, commands: commands, startGate: nil, seed: sessionSeed,
                                  signals: nodeSignals)
        self.node = node
        consumers.append(spawnTask { [weak self] in
            for await signal in nodeStream { await self?.handle(signal) }
        })
        if configuration.operatorSession == .enabled {
            let gate = WakeSignal()
            operatorGate = gate
            let (operatorStream, operatorSignals) = AsyncStream<SessionSignal>.makeStream()
            let session = GatewaySession(role: .operator, configuration: configuration, store: store, gatewayURL: gatewayURL,
                                         sharedToken: sharedToken, commands: [], startGate: gate, seed: sessionSeed &+ 0x5EED,
                                         signals: operatorSignals)
            operatorSession = session
            consumers.append(spawnTask { [weak self] in
                for await signal in operatorStream { await self?.handle(signal) }
            })
            if running { spawnTask { await session.start() } }
        }
        if running { spawnTask { await node.start() } }
    }

    func stopSessions() async {
        stopAppSurfaces()
        let sessions = [node, operatorSession].compactMap { $0 }
        node = nil
        operatorSession = nil
        operatorGate?.open()
        operatorGate = nil
        for session in sessions { await session.stop() }
        let tasks = consumers
        consumers = []
        for task in tasks { task.cancel() }
        currentNode = nil
        currentOperator = nil
    }

    // MARK: - Inspection

    /// The client's state now.
    public func snapshot() async -> ReferenceClientSnapshot {
        let tokens = store?.allTokens[gatewayKey] ?? [:]
        return ReferenceClientSnapshot(
            gatewayURL: gatewayURL, deviceId: store?.identity.deviceId,
            nodeStatus: await node?.status ?? .idle, operatorStatus: await operatorSession?.status,
            storedTokens: tokens, hasPendingBootstrapToken: store?.bootstrapToken(gateway: gatewayURL) != nil,
            pairingRequestId: pairingRequestId, inBackground: inBackground, approvalFamily: approvalFamily,
            approvals: approvals.visibleCards, questions: questions.visibleCards, beacon: beacon,
            pushRegisteredGateways: pushRegistered.sorted(),
            seqGaps: (await node?.seqGaps ?? 0) + (await operatorSession?.seqGaps ?? 0))
    }

    // MARK: - Session signals

    private func handle(_ signal: SessionSignal) async {
        switch signal {
        case .attemptStarted(let role):
            observations.append(.attemptStarted(role: role.rawValue))
        case .connected(let connection, let hello):
            observations.append(.connected(role: connection.role.rawValue, generation: connection.generation))
            if connection.role == .node {
                currentNode = connection
                canvasURL = hello.canvasURL
                nodeMethods = hello.methods
                operatorGate?.open()
                spawnTask { _ = await self.registerPushIfNeeded() }
                if configuration.has(.reconnectUnusedSurface) { spawnTask { await self.reconnectIfSurfaceUnused(connection) } }
            } else {
                currentOperator = connection
                approvalFamily = ApprovalFamily.choose(methods: hello.methods, configuration: configuration)
                spawnTask { await self.operatorConnected(connection, hello: hello) }
            }
        case .event(let connection, let event):
            if connection.role == .node {
                if event.event == GatewayEventName.nodeInvokeRequest.rawValue { receiveInvoke(event.payload, on: connection) }
            } else {
                applyOperatorEvent(event)
                applyChatEvent(event)
                applyVoiceWakeEvent(event, on: connection)
                applySessionsChangedEvent(event, on: connection)
            }
        case .ended(let role, let end, let decision, let requestId):
            if role == .node {
                if currentNode?.isEnded ?? false { currentNode = nil }
                operatorGate?.open()
            } else if currentOperator?.isEnded ?? false {
                currentOperator = nil
            }
            if case .rejected(let error) = end, (error.detailCode ?? error.code) == ConnectErrorDetailCode.pairingRequired.rawValue {
                if let requestId { pairingRequestId = requestId }
                observations.append(.pairingPending(role: role.rawValue, requestId: requestId))
            }
            observations.append(.ended(role: role.rawValue, end: end, decision: decision))
        }
    }

    private func applyOperatorEvent(_ event: EventFrame) {
        let id = event.payload?["id"]?.stringValue ?? event.payload?["approval"]?["id"]?.stringValue
        if event.event.contains("approval") {
            approvals.apply(event: event.event, payload: event.payload)
            if let id { observations.append(.approvalChanged(id: id)) }
        } else if event.event.hasPrefix("question.") {
            questions.apply(event: event.event, payload: event.payload)
            if let id { observations.append(.questionChanged(id: id)) }
        }
    }

    private func operatorConnected(_ connection: GatewayConnection, hello: HelloSummary) async {
        // Reload pending questions after every (re)connect (B.5).
        if !configuration.has(.noQuestionReload), hello.methods.contains(GatewayMethod.questionList.rawValue) {
            await reloadQuestions(on: connection)
        }
        // Follow the chat sessions' live messages: the Gateway sends session.message only to
        // connections subscribed to the session (sessions.messages.subscribe {key}), and a
        // subscription ends with its connection, so it is sent after every (re)connect.
        if hello.methods.contains(GatewayMethod.sessionsMessagesSubscribe.rawValue) {
            await subscribeChatSessions(on: connection)
        }
        // Opt in to session.approval and take the reconnect replay (A.4); the opt-in is per
        // call, so it is sent after every (re)connect (after the plain chat subscriptions, which
        // would end the opt-in of the same key).
        if approvalFamily == .unified, hello.methods.contains(GatewayMethod.sessionsMessagesSubscribe.rawValue) {
            await subscribeApprovals(on: connection)
        }
        // Reconcile approvals whose reply was lost (D.3: "on operator reconnect").
        for id in approvals.readBackCandidates { await readBack(id, on: connection) }
        _ = await registerPushIfNeeded()
        // Read the voice wake triggers: the Gateway's list is the one shown (§9.4).
        await refreshVoiceWake(on: connection, methods: hello.methods)
        // Read the session list and follow sessions.changed (SESS-001, SESS-002).
        await refreshSessionList(on: connection, methods: hello.methods)
        // Reconcile the chat with history and flush the outbox (in order, stable keys).
        if !chatOffline { await syncChat() }
    }

    /// The chat session whose approvals the operator session follows (`session.approval`).
    public static let chatSessionKey = "agent:main:main"

    private func subscribeChatSessions(on connection: GatewayConnection) async {
        for key in chat.sessionKeys(gateway: gatewayKey) where !connection.isEnded {
            _ = await Self.result(of: connection, GatewayMethod.sessionsMessagesSubscribe.rawValue, ["key": .string(key)])
        }
    }

    private func subscribeApprovals(on connection: GatewayConnection) async {
        let params: JSONValue = ["key": .string(Self.chatSessionKey), "includeApprovals": true]
        guard case .success(let payload) = await Self.result(of: connection, GatewayMethod.sessionsMessagesSubscribe.rawValue, params),
              let replay = payload["approvalReplay"], !replay.isNull else { return }
        for id in approvals.applyReplay(replay, configuration: configuration) { observations.append(.approvalChanged(id: id)) }
    }

    private func reloadQuestions(on connection: GatewayConnection) async {
        guard let reply = try? await connection.request(GatewayMethod.questionList.rawValue, params: [:]), reply.ok else { return }
        let missing = questions.applyList(reply.payload ?? .null)
        for id in missing {
            let result = await Self.result(of: connection, GatewayMethod.questionGet.rawValue, ["id": .string(id)])
            questions.applyGet(id: id, result: result)
        }
        observations.append(.questionsReloaded)
    }

    private func readBack(_ id: String, on connection: GatewayConnection) async {
        let family = approvalFamily
        let result = await Self.result(of: connection, family.getMethod, ["id": .string(id)])
        // A connection that ended before the reply read nothing back: the card stays uncertain
        // and is read back on the next connect (the reconnect that follows a lost ack can start
        // while this connection's own reconcile is still under way).
        if case .failure(.connectionLost) = result { return }
        approvals.applyReadBack(id: id, family: family, result: result)
        observations.append(.approvalReadBack(id: id))
        observations.append(.approvalChanged(id: id))
    }

    static func result(of connection: GatewayConnection, _ method: String, _ params: JSONValue) async -> Result<JSONValue, RequestFailure> {
        do {
            let response = try await connection.request(method, params: params)
            return .success(try response.successPayload())
        } catch let failure as RequestFailure {
            return .failure(failure)
        } catch {
            return .failure(.connectionLost)
        }
    }

    // MARK: - node.invoke

    private func receiveInvoke(_ payload: JSONValue?, on connection: GatewayConnection) {
        // Swift also accepts the whole payload as a JSON string (docs/protocol.md §6.3).
        let object = payload?.stringValue.flatMap { try? JSONValue(parsing: $0) } ?? payload
        guard let request = try? object?.decode(as: NodeInvokeRequest.self) else { return }
        lastInvokeId = request.id
        invokedCommands[connection.generation, default: []].insert(request.command)
        let receivedAtMs = clock.nowMs
        spawnTask { await self.runInvoke(request, receivedAtMs: receivedAtMs, on: connection) }
    }

    /// The `reconnect-unused-surface` mutant: 60 s after a node connect, reconnects when a
    /// declared command was not invoked on that connection meanwhile.
    private func reconnectIfSurfaceUnused(_ connection: GatewayConnection) async {
        do { try await clock.sleep(forMs: 60_000) } catch { return }
        guard currentNode === connection, !connection.isEnded else { return }
        let declared = Set(configuration.declaredCommands ?? NodeCommands.declared)
        guard !declared.isSubset(of: invokedCommands[connection.generation] ?? []) else { return }
        await node?.reconnectNow()
    }

    private func runInvoke(_ request: NodeInvokeRequest, receivedAtMs: Int64, on connection: GatewayConnection) async {
        let outcome: NodeInvokeOutcome?
        if let refusal = NodeCommands.backgroundRefusal(for: request.command, inBackground: inBackground, configuration: configuration) {
            outcome = refusal
        } else if let key = request.idempotencyKey, !configuration.has(.noIdempotency), let first = idempotentRuns[key] {
            // A repeated idempotency key returns the first result (docs/protocol.md §6.3).
            outcome = await first.value
        } else {
            let run = spawnTask { await self.execute(request, receivedAtMs: receivedAtMs) }
            if let key = request.idempotencyKey { idempotentRuns[key] = run }
            outcome = await run.value
        }
        guard let outcome else {
            observations.append(.invokeDiscarded(id: request.id, reason: "no answer"))
            return
        }
        await sendResult(outcome, for: request, receivedOn: connection)
    }

    private func execute(_ request: NodeInvokeRequest, receivedAtMs: Int64) async -> NodeInvokeOutcome? {
        commandRuns += 1
        let counter = commandRuns - 1
        let deadline = (configuration.has(.noInvokeTimeout) ? nil : NodeCommands.answerDeadlineMs(timeoutMs: request.timeoutMs))
            .map { receivedAtMs + $0 }
        let persona = configuration.persona
        let deviceId = store?.identity.deviceId ?? ""
        let clock = clock
        let configuration = configuration
        return await withTaskGroup(of: NodeInvokeOutcome?.self) { group in
            group.addTask {
                if request.command == NodeCommandName.canvasPresent.rawValue,
                   configuration.declaredCommands?.contains(request.command) ?? true,
                   let outcome = await self.presentCanvas() {
                    return outcome
                }
                return await NodeCommands.run(request.command, paramsJSON: request.paramsJSON, persona: persona, deviceId: deviceId,
                                              counter: counter, clock: clock, configuration: configuration)
            }
            if let deadline {
                group.addTask {
                    do { try await clock.sleep(untilMs: deadline) } catch { return nil }
                    return NodeCommands.timedOut
                }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// `canvas.present` with a canvas URL: loads the page (CanvasLoader), refreshing the URL once
    /// after a 401; `nil` without a canvas URL (the plain answer then).
    private func presentCanvas() async -> NodeInvokeOutcome? {
        guard let url = canvasURL else { return nil }
        let connector = configuration.connector
        var status = await CanvasLoader.fetch(url, connector: connector)
        var shown = url
        var refreshed = false
        if status == 401, !configuration.has(.noCanvasRefresh), let connection = currentNode {
            let method = nodeMethods.contains(GatewayMethod.nodePluginSurfaceRefresh.rawValue) || nodeMethods.isEmpty
                ? GatewayMethod.nodePluginSurfaceRefresh : GatewayMethod.nodeCanvasCapabilityRefresh
            let params: JSONValue = method == .nodePluginSurfaceRefresh ? ["surface": "canvas"] : [:]
            if let response = try? await connection.request(method.rawValue, params: params), response.ok,
               let fresh = CanvasLoader.refreshedURL(in: response.payload) {
                canvasURL = fresh
                shown = fresh
                refreshed = true
                status = await CanvasLoader.fetch(fresh, connector: connector)
            }
        }
        observations.append(.canvasLoaded(status: status, refreshed: refreshed))
        guard status == 200 else {
            return .failure(ErrorCode.unavailable.rawValue, "the canvas page answered \(status.map(String.init) ?? "nothing")")
        }
        return .success(["presented": true, "url": .string(shown), "refreshed": .bool(refreshed)])
    }

    private func sendResult(_ outcome: NodeInvokeOutcome, for request: NodeInvokeRequest, receivedOn connection: GatewayConnection) async {
        var target = connection
        if connection.isEnded || currentNode !== connection {
            // A result belongs to the socket that carried the request; after a reconnect it is
            // discarded (docs/protocol.md §6.1: Swift drops results whose socket generation changed).
            guard configuration.has(.staleSocketResult), let current = currentNode else {
                observations.append(.invokeDiscarded(id: request.id, reason: "socket replaced"))
                return
            }
            target = current
        }
        guard !answeredInvokes.contains(request.id) else { return }
        answeredInvokes.insert(request.id)
        let resultId = configuration.has(.mixedInvokeIds) ? (lastInvokeId ?? request.id) : request.id
        let nodeId = configuration.has(.wrongResultNodeId) ? "?" : (store?.identity.deviceId ?? request.nodeId)
        let params = outcome.resultParams(id: resultId, nodeId: nodeId, configuration: configuration)
        if configuration.has(.immediateDuplicateInvokeResult) {
            // Written before the result below, without waiting for any answer: the two frames
            // reach the Gateway together.
            try? await target.send(.request(RequestFrame(id: "duplicate-\(resultId)", method: GatewayMethod.nodeInvokeResult.rawValue,
                                                         params: params)))
        }
        _ = try? await target.request(GatewayMethod.nodeInvokeResult.rawValue, params: params)
        if configuration.has(.duplicateInvokeResult) {
            _ = try? await target.request(GatewayMethod.nodeInvokeResult.rawValue, params: params)
        }
        observations.append(.invokeAnswered(id: request.id, ok: outcome.ok))
    }

    /// Back in the foreground: runs the foreground-only commands the Gateway queued while the app
    /// was in the background (`node.pending.pull`) and acknowledges them (`node.pending.ack`), as
    /// docs/protocol.md §6.9 describes the queue. The commands run locally; their results have
    /// no invoke to answer.
    private func drainPendingActions() async {
        guard let connection = currentNode, !connection.isEnded,
              connection.advertisedMethods.contains(GatewayMethod.nodePendingPull.rawValue) else { return }
        guard case .success(let pulled) = await Self.result(of: connection, GatewayMethod.nodePendingPull.rawValue, [:]) else { return }
        let actions = pulled["actions"]?.arrayValue ?? []
        var ids: [JSONValue] = []
        for action in actions {
            guard let id = action["id"]?.stringValue, let command = action["command"]?.stringValue else { continue }
            commandRuns += 1
            _ = await NodeCommands.run(command, paramsJSON: action["paramsJSON"]?.stringValue, persona: configuration.persona,
                                       deviceId: store?.identity.deviceId ?? "", counter: commandRuns - 1, clock: clock,
                                       configuration: configuration)
            ids.append(.string(id))
        }
        guard !ids.isEmpty else { return }
        _ = await Self.result(of: connection, GatewayMethod.nodePendingAck.rawValue, ["ids": .array(ids)])
    }

    // MARK: - Stimuli

    /// Acts on a stimulus given by wire name and params (the adapter protocol's form).
    public func apply(name: String, params: [String: JSONValue]) async -> StimulusOutcome {
        guard supportedStimuli.contains(name) else { return .unsupported("\(name) is not supported") }
        do {
            return await apply(try ReferenceStimulus(name: name, params: params))
        } catch {
            return .error("\(error)")
        }
    }

    /// Acts on a stimulus.
    /// - Returns: `.ok`, `.error` when the client tried and refused or failed, `.unsupported`.
    public func apply(_ stimulus: ReferenceStimulus) async -> StimulusOutcome {
        guard supportedStimuli.contains(stimulus.name) else { return .unsupported("\(stimulus.name) needs the operator session") }
        guard let store else { return .error("the client is not started") }
        switch stimulus {
        case .connect:
            // The mutant stays stopped after PAIRING_REQUIRED whatever the user does.
            if configuration.has(.noPairingRetry), currentNode?.isEnded ?? true { return .ok }
            chatOffline = false
            return await connectNow()
        case .disconnect:
            // The sessions stay in place, idle, until `connect`.
            await node?.stop()
            await operatorSession?.stop()
            currentNode = nil
            currentOperator = nil
            return .ok
        case .restart:
            await stopSessions()
            do { try await start() } catch { return .error("\(error)") }
            return .ok
        case .resetIdentity:
            await stopSessions()
            do {
                try store.reinstall(nowMs: clock.nowMs, keepTokensForNewKey: configuration.has(.oldTokenAfterReinstall))
            } catch {
                return .error("\(error)")
            }
            beacon = PresenceBeaconState()
            pushRegistered = []
            pairingRequestId = nil
            forgetChat()
            startSessions(store, running: !chatOffline)
            return .ok
        case .backgroundWake(let trigger, let push):
            // An alert push (no `aps.content-available`, such as the Gateway's reopen nudge) runs no
            // code in the background: it waits for the user (docs/protocol.md §6.9.1).
            if let push, !PresenceBeaconState.isSilentPush(push), !configuration.has(.alertAsSilentWake) { return .ok }
            if push != nil, configuration.has(.ignoreSilentPush) { return .ok }
            // A wake by a silent push is reported as one, whatever else the stimulus says (docs/protocol.md §6.6).
            let reported = push == nil ? trigger : (configuration.has(.wrongPushWakeTrigger) ? "background" : "silent_push")
            return await backgroundWake(trigger: reported)
        case .enterBackground:
            inBackground = true
            return .ok
        case .enterForeground:
            inBackground = false
            if !configuration.has(.noPendingDrain) { await drainPendingActions() }
            return .ok
        case .requestScopes(let scopes):
            guard let session = operatorSession else { return .unsupported("no operator session") }
            let cursor = observations.count
            await session.addScopes(scopes)
            await session.reconnectNow()
            return await outcomeOfNextAttempt(role: .operator, from: cursor)
        case .pushRegister(let transport, let environment):
            pushWish = PushWish(transport: transport, environment: environment ?? "production")
            pushRegistered.remove(gatewayKey)
            return await registerPushIfNeeded(waitForSessions: true)
        case .switchGateway(let url, let token):
            await switchGateway(url: url, token: token, store: store)
            return .ok
        case .resolveApproval(let id, let decision):
            return await resolveApproval(id: id, decision: decision)
        case .answerQuestion(let id, let answer):
            return await answerQuestion(id: id, answer: answer)
        case .sendMessage(let text, let sessionKey):
            return await sendMessage(text: text, sessionKey: sessionKey)
        case .goOffline:
            return await goOffline()
        case .goOnline:
            return await goOnline()
        case .coldStart(let offline):
            return await coldStart(offline: offline)
        case .expectTranscript(let texts, let sessionKey):
            return await expectTranscript(texts: texts, sessionKey: sessionKey)
        case .expectOutbox(let texts):
            return expectOutbox(texts: texts)
        case .watchPair(let code):
            guard let watch else { return .unsupported("watch-pair: the client runs WebSocket sessions, not the Apple Watch direct mode") }
            let setup: SetupCodePayload
            do { setup = try SetupCodePayload(decoding: code) } catch { return .error("\(error)") }
            store.setBootstrapToken(setup.bootstrapToken, gateway: gatewayURL)
            // A fresh credential: the Watch loop connects with it if it was waiting.
            await watch.start()
            return .ok
        case .browseWorkspace(let path, let agentId):
            return await browseWorkspace(path: path, agentId: agentId)
        case .openWorkspaceFile(let path, let agentId):
            return await openWorkspaceFile(path: path, agentId: agentId)
        case .setVoiceWakeTriggers(let triggers):
            return await setVoiceWakeTriggers(triggers)
        case .expectVoiceWakeTriggers(let triggers):
            return await expectVoiceWakeTriggers(triggers)
        case .invokeNode(let nodeId, let command, let params, let timeoutMs):
            return await invokeNode(nodeId: nodeId, command: command, params: params, timeoutMs: timeoutMs)
        case .expectSessions(let keys):
            return await expectSessions(keys)
        case .setupCode(let code):
            let setup: SetupCodePayload
            do { setup = try SetupCodePayload(decoding: code) } catch { return .error("\(error)") }
            if let url = setup.url, DeviceStateStore.gatewayKey(url) != gatewayKey {
                await switchGateway(url: url, token: nil, store: store)
            }
            store.setBootstrapToken(setup.bootstrapToken, gateway: gatewayURL)
            if let watch {
                // A fresh credential: the Watch loop connects with it if it was waiting.
                await watch.start()
                return .ok
            }
            let cursor = observations.count
            await node?.reconnectNow()
            return await outcomeOfNextAttempt(role: .node, from: cursor)
        }
    }

    func connectNow() async -> StimulusOutcome {
        guard let node else { return .error("not started") }
        if currentNode != nil, !(currentNode?.isEnded ?? true) {
            await operatorSession?.resume()
            return .ok
        }
        let cursor = observations.count
        await node.resume()
        await operatorSession?.resume()
        return await outcomeOfNextAttempt(role: .node, from: cursor)
    }

    /// Waits for the next connect attempt of `role` to succeed or fail (the end of an earlier,
    /// established session does not count); `.ok` when it connected.
    private func outcomeOfNextAttempt(role: GatewayRole, from cursor: Int) async -> StimulusOutcome {
        switch await nextAttemptResult(role: role, from: cursor) {
        case .connected?: return .ok
        case .ended(_, let end, _)?: return .error("connect attempt failed: \(end)")
        default: return .error("no connect attempt finished in time")
        }
    }

    private func nextAttemptResult(role: GatewayRole, from cursor: Int) async -> ClientObservation? {
        let name = role.rawValue
        return await observations.first(from: cursor, timeout: configuration.stimulusTimeout, on: clock.waitTimeline) { observation in
            switch observation {
            case .connected(let r, _): return r == name
            case .ended(let r, .rejected, _), .ended(let r, .transportFailure, _): return r == name
            default: return false
            }
        }
    }

    /// Waits until the session of `role` is connected (starting it if needed).
    func connection(for role: GatewayRole) async -> GatewayConnection? {
        func current() -> GatewayConnection? {
            let connection = role == .node ? currentNode : currentOperator
            return connection?.isEnded == false ? connection : nil
        }
        if let connection = current() { return connection }
        let cursor = observations.count
        if role == .node { await node?.resume() } else { await operatorSession?.resume() }
        if let connection = current() { return connection }
        _ = await nextAttemptResult(role: role, from: cursor)
        return current()
    }

    /// Points the client at `url` (sessions not running).
    private func adoptGateway(url: String) {
        guard DeviceStateStore.gatewayKey(url) != gatewayKey else { return }
        gatewayURL = url
        approvals.switchGateway(to: gatewayKey)
        questions.switchGateway(to: gatewayKey)
    }

    private func switchGateway(url: String, token: String?, store: DeviceStateStore) async {
        await stopSessions()
        // Picking another Gateway connects to it (the network is there); its outbox and cache
        // are its own (ChatBook is keyed by Gateway).
        chatOffline = false
        gatewayURL = url
        sharedToken = token
        pairingRequestId = nil
        // The old Gateway's prompts stay owner-scoped and can no longer be resolved (D.4).
        approvals.switchGateway(to: gatewayKey)
        questions.switchGateway(to: gatewayKey)
        approvalFamily = .unavailable
        // The push wish survives a switch, so the client registers with the new Gateway (docs/protocol.md §9.1).
        if configuration.has(.noPushAfterSwitch) { pushWish = nil }
        startSessions(store)
    }

    // MARK: - Presence

    private func backgroundWake(trigger: String) async -> StimulusOutcome {
        inBackground = true
        guard let nodeConnection = await connection(for: .node) else { return .error("could not reconnect after the wake") }
        if configuration.has(.noWakeBeacon) { return .ok }
        guard beacon.shouldSend(nowMs: clock.nowMs, configuration: configuration) else {
            observations.append(.beaconSkipped)
            return .ok
        }
        var target = nodeConnection
        if configuration.has(.beaconOnOperatorSession), let operatorConnection = await connection(for: .operator) {
            target = operatorConnection
        }
        let payload = PresenceBeaconState.payload(trigger: trigger, nowMs: clock.nowMs, persona: configuration.persona,
                                                  pushTransport: pushWish?.transport)
        let params: JSONValue = ["event": .string(NodeEventName.presenceAlive.rawValue), "payloadJSON": .string(payload.jsonString)]
        beacon.noteSent()
        observations.append(.beaconSent(trigger: PresenceBeaconState.normalizedTrigger(trigger)))
        let sentAt = clock.nowMs
        let reply = try? await requestThroughDrains(target, GatewayMethod.nodeEvent.rawValue, params: params)
        let payloadReply: JSONValue? = reply?.ok == true ? (reply?.payload ?? .object([:])) : nil
        beacon.record(reply: payloadReply, nowMs: sentAt, configuration: configuration)
        let durable = PresenceBeaconState.isDurable(reply: payloadReply, configuration: configuration)
        observations.append(.beaconReplied(durable: durable, reason: payloadReply?["reason"]?.stringValue))
        guard let reply else { return .error("no reply to the beacon") }
        return reply.ok ? .ok : .error("beacon refused: \(reply.error?.message ?? "error")")
    }

    /// Sends a request; a drain refusal (`DrainRetryRule`) is sent again after the rule's delay
    /// until it is served, the connection ends or `DrainRetryRule.windowMs` passed.
    private func requestThroughDrains(_ connection: GatewayConnection, _ method: String, params: JSONValue?) async throws -> ResponseFrame {
        let deadline = clock.nowMs + DrainRetryRule.windowMs
        var attempt = 0
        while true {
            let reply = try await connection.request(method, params: params)
            guard !reply.ok, let error = reply.error, DrainRetryRule.isRetryable(error),
                  !configuration.has(.giveUpOnDrain) else { return reply }
            let resendAt = clock.nowMs + DrainRetryRule.delayMs(for: error, attempt: attempt)
            guard resendAt <= deadline, !connection.isEnded else { return reply }
            try await clock.sleep(untilMs: resendAt)
            attempt += 1
        }
    }

    // MARK: - Push

    private func registerPushIfNeeded(waitForSessions: Bool = false) async -> StimulusOutcome {
        guard let wish = pushWish else { return .ok }
        let key = gatewayKey
        if pushRegistered.contains(key) { return .ok }
        guard !pushInFlight else { return .ok }
        pushInFlight = true
        defer { pushInFlight = false }
        let nodeConnection = waitForSessions ? await connection(for: .node) : (currentNode?.isEnded == false ? currentNode : nil)
        guard let nodeConnection else { return .error("node session not connected") }
        var gatewayDeviceId: String?
        if wish.transport == "relay" {
            // Relay registration needs the Gateway's identity, an operator method (docs/protocol.md §9.1-9.2).
            if let known = gatewayIdentities[key] {
                gatewayDeviceId = known
            } else {
                let operatorConnection = waitForSessions
                    ? await connection(for: .operator) : (currentOperator?.isEnded == false ? currentOperator : nil)
                guard let operatorConnection else { return .error("operator session not connected") }
                guard case .success(let identity) = await Self.result(of: operatorConnection, GatewayMethod.gatewayIdentityGet.rawValue, [:]),
                      let id = identity["deviceId"]?.stringValue else {
                    return .error("gateway.identity.get failed")
                }
                gatewayIdentities[key] = id
                gatewayDeviceId = id
            }
        }
        guard key == gatewayKey else { return .error("gateway changed during registration") }
        let payload = wish.payload(gatewayDeviceId: gatewayDeviceId, ownDeviceId: store?.identity.deviceId ?? "", configuration: configuration)
        let params: JSONValue = ["event": .string(NodeEventName.pushAPNsRegister.rawValue), "payloadJSON": .string(payload.jsonString)]
        switch await Self.result(of: nodeConnection, GatewayMethod.nodeEvent.rawValue, params) {
        case .success:
            pushRegistered.insert(key)
            observations.append(.pushRegistered(transport: wish.transport, gatewayDeviceId: payload["gatewayDeviceId"]?.stringValue))
            return .ok
        case .failure(let failure):
            return .error("push registration failed: \(failure)")
        }
    }

    // MARK: - Approvals

    private func resolveApproval(id: String, decision: String) async -> StimulusOutcome {
        guard let connection = await connection(for: .operator) else { return .error("operator session not connected") }
        let family = approvalFamily
        var plan = approvals.prepareResolve(id: id, decision: decision, family: family, gatewayNowMs: connection.gatewayNowMs,
                                            configuration: configuration)
        if plan == .fetchCard, family != .unavailable {
            if case .success(let payload) = await Self.result(of: connection, family.getMethod, ["id": .string(id)]) {
                approvals.applyFetched(id: id, family: family, payload: payload)
            }
            plan = approvals.prepareResolve(id: id, decision: decision, family: family, gatewayNowMs: connection.gatewayNowMs,
                                            configuration: configuration)
        }
        var retried = false
        while true {
            observations.append(.approvalChanged(id: id))
            switch plan {
            case .fetchCard:
                return .error("unknown approval \(id)")
            case .refuse(let reason):
                return .error(reason)
            case .send(let method, let params):
                let result = await Self.result(of: connection, method, params)
                let followUp = approvals.completeResolve(id: id, decision: decision, family: family, result: result,
                                                         configuration: configuration)
                observations.append(.approvalChanged(id: id))
                switch followUp {
                case .applied:
                    return .ok
                case .lost(let note):
                    return .error(note)
                case .readBack:
                    if !connection.isEnded { await readBack(id, on: connection) }
                    return .error("Decision status is unknown. Actions remain locked until OpenClaw reconnects.")
                case .retry(let again):
                    guard !retried else { return .error("already resolved elsewhere") }
                    retried = true
                    plan = approvals.prepareResolve(id: id, decision: again, family: family, gatewayNowMs: connection.gatewayNowMs,
                                                    configuration: configuration)
                }
            }
        }
    }

    // MARK: - Questions

    private func answerQuestion(id: String, answer: JSONValue) async -> StimulusOutcome {
        guard let connection = await connection(for: .operator) else { return .error("operator session not connected") }
        var plan = questions.prepareAnswer(id: id, answer: answer, gatewayNowMs: connection.gatewayNowMs, configuration: configuration)
        if plan == .fetchCard {
            let result = await Self.result(of: connection, GatewayMethod.questionGet.rawValue, ["id": .string(id)])
            if case .success(let payload) = result, let record = payload["question"] { questions.apply(record: record) }
            plan = questions.prepareAnswer(id: id, answer: answer, gatewayNowMs: connection.gatewayNowMs, configuration: configuration)
        }
        var retried = false
        while true {
            observations.append(.questionChanged(id: id))
            switch plan {
            case .fetchCard:
                return .error("unknown question \(id)")
            case .refuse(let reason):
                return .error(reason)
            case .send(let params):
                let result = await Self.result(of: connection, GatewayMethod.questionResolve.rawValue, params)
                let followUp = questions.completeAnswer(id: id, params: params, result: result, configuration: configuration)
                observations.append(.questionChanged(id: id))
                switch followUp {
                case .done:
                    if questions.card(id)?.status == .answered { return .ok }
                    return .error("question is \(questions.card(id)?.status.rawValue ?? "unknown")")
                case .reload:
                    if !connection.isEnded { await reloadQuestions(on: connection) }
                    return .error("answer outcome unknown")
                case .retry(let again):
                    guard !retried else { return .error("question already terminal") }
                    retried = true
                    plan = .send(params: again)
                }
            }
        }
    }
}
