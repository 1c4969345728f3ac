import Foundation
import GatewayProtocol
import Simulation
import WebSocketTransport

/// What the Watch mode of the reference client is doing (docs/protocol.md §13).
public enum WatchDirectStatus: String, Sendable, Hashable {
    /// No session yet, or between a 401 and the next connect.
    case connecting
    /// A session: it polls.
    case polling
    /// Nothing to connect with (no device token, no bootstrap token) or the Gateway refused
    /// the credential: it waits for a setup code.
    case waitingForCredential
    /// A newer poll superseded its poll (409): another poller owns the session; it stopped.
    case superseded
    /// Stopped.
    case stopped
}

/// A point-in-time view of the Watch mode of the reference client.
public struct WatchDirectSnapshot: Sendable, Hashable {
    /// What it is doing.
    public var status: WatchDirectStatus
    /// The credential each successful connect presented, in order (`bootstrap` or `device`).
    public var connects: [String]
    /// How many polls it sent.
    public var polls: Int
}

/// The Apple Watch direct mode of the reference client (docs/protocol.md §13): plain HTTP
/// requests to `/api/nodes/watch/*` instead of a WebSocket. It pairs with the bootstrap token of
/// a `node` setup code, keeps the issued device token and forgets the bootstrap token; then it
/// polls one request at a time, answers each `node.invoke.request` through `result`, polls again
/// after an empty answer (the poll timeout), challenges and connects again after a 401 (an
/// expired or closed session) with its device token, and stops after a `409` (its poll was
/// superseded). Every wait is a request the Gateway answers; retries after a failed request
/// wait on the client clock.
actor WatchDirectClient {
    /// The routes (docs/protocol.md §13.1).
    enum Route {
        static let base = "/api/nodes/watch"
        static let challenge = base + "/challenge"
        static let connect = base + "/connect"
        static let poll = base + "/poll"
        static let result = base + "/result"
    }

    /// The commands a Watch declares (the bounded Watch surface: never `canvas.*`).
    static let commands = [NodeCommandName.deviceInfo, .deviceStatus, .systemNotify].map(\.rawValue)
    /// How long to wait before retrying a request that got no answer.
    static let retryDelayMs: Int64 = 1_000

    let configuration: ReferenceConfiguration
    let store: DeviceStateStore
    let gatewayURL: String
    private(set) var status = WatchDirectStatus.connecting
    /// Connects that succeeded, and the credential each presented (`bootstrap` or `device`).
    private(set) var connects: [String] = []
    /// Polls sent.
    private(set) var polls = 0
    private var sessionToken: String?
    private var task: Task<Void, Never>?
    /// The second poll loop of the `watch-second-poll` mutant.
    private var secondPoller: Task<Void, Never>?
    private var commandRuns = 0

    init(configuration: ReferenceConfiguration, store: DeviceStateStore, gatewayURL: String) {
        self.configuration = configuration
        self.store = store
        self.gatewayURL = gatewayURL
    }

    /// The state now.
    var snapshot: WatchDirectSnapshot { WatchDirectSnapshot(status: status, connects: connects, polls: polls) }

    /// Starts the loop (again, after it waited for a credential).
    func start() {
        guard task == nil else { return }
        status = .connecting
        task = spawnTask { await self.run() }
    }

    /// Stops the loop; a held poll is abandoned.
    func stop() {
        task?.cancel()
        task = nil
        secondPoller?.cancel()
        secondPoller = nil
        sessionToken = nil
        status = .stopped
    }

    /// `http(s)://host:port` of the Gateway's `ws(s)://` URL.
    var baseURL: String {
        var url = gatewayURL
        if url.hasPrefix("wss://") { url = "https://" + url.dropFirst(6) } else if url.hasPrefix("ws://") { url = "http://" + url.dropFirst(5) }
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    private func run() async {
        while !Task.isCancelled {
            if sessionToken == nil {
                guard await connect() else { break }
                continue
            }
            guard await pollOnce() else { break }
        }
        task = nil
    }

    // MARK: Requests

    /// `Retry-After` of the last response, in seconds (0 without one).
    private var retryAfterSeconds: Int64 = 0

    private func send(_ method: String, _ path: String, body: JSONValue? = nil, bearer: String? = nil) async -> (Int, JSONValue?)? {
        var headers: WebSocketHTTPHeaders = [:]
        var bytes: [UInt8] = []
        if let body {
            bytes = Array(body.jsonString.utf8)
            headers.add(name: "Content-Type", value: "application/json")
        }
        if let bearer { headers.add(name: "Authorization", value: "Bearer " + bearer) }
        guard let response = try? await configuration.connector.send(
            HTTPRequest(method: method, target: path, headers: headers, body: bytes), to: baseURL + path,
            configuration: WebSocketConfiguration()) else { return nil }
        retryAfterSeconds = response.headers["Retry-After"].flatMap { Int64($0) } ?? 0
        return (response.status, try? JSONValue(parsing: Data(response.body)))
    }

    /// Waits `delayMs` on the client clock; `false` when cancelled.
    private func wait(_ delayMs: Int64) async -> Bool {
        do {
            try await configuration.clock.sleep(untilMs: configuration.clock.nowMs + delayMs)
            return true
        } catch {
            return false
        }
    }

    /// Challenge and connect with the stored device token or, before pairing, the bootstrap
    /// token. `false` ends the loop (no credential, refused, cancelled).
    private func connect() async -> Bool {
        status = .connecting
        let stored = store.token(gateway: gatewayURL, role: .node)?.token
        let bootstrap = store.bootstrapToken(gateway: gatewayURL)
        let auth: ConnectAuth
        let kind: String
        if configuration.has(.watchKeepBootstrap), let bootstrap {
            // The mutant still holds the spent bootstrap token and prefers it.
            auth = ConnectAuth(bootstrapToken: bootstrap)
            kind = "bootstrap"
        } else if let stored {
            auth = ConnectAuth(deviceToken: stored)
            kind = "device"
        } else if let bootstrap {
            auth = ConnectAuth(bootstrapToken: bootstrap)
            kind = "bootstrap"
        } else {
            status = .waitingForCredential
            return false
        }
        guard let (challengeStatus, challenge) = await send("GET", Route.challenge) else { return await wait(Self.retryDelayMs) }
        guard challengeStatus == 200, let nonce = challenge?["nonce"]?.stringValue else {
            return await wait(Self.retryDelayMs)
        }
        let signedAt = challenge?["ts"]?.int64Value.map { Int($0) } ?? Int(configuration.clock.nowMs)
        let persona = configuration.persona.clientId == .watchOS ? configuration.persona : .appleWatch
        let commands = configuration.has(.watchDeclaresCanvas) ? Self.commands + [NodeCommandName.canvasPresent.rawValue] : Self.commands
        var params = ConnectParams(
            minProtocol: 3, maxProtocol: ProtocolVersion.current,
            client: ClientInfo(id: .watchOS, displayName: persona.displayName, version: persona.version, platform: persona.platform,
                               deviceFamily: persona.deviceFamily, modelIdentifier: persona.modelIdentifier, mode: .node),
            role: .node, caps: [], commands: commands, permissions: ["notifications": true], auth: auth)
        let identity = store.identity
        let payload = DeviceAuthPayload.v3(
            deviceId: identity.deviceId, clientId: params.client.id.rawValue, clientMode: params.client.mode.rawValue,
            role: GatewayRole.node.rawValue, scopes: [], signedAtMs: signedAt, token: params.signatureToken, nonce: nonce,
            platform: params.client.platform, deviceFamily: params.client.deviceFamily)
        params.device = DeviceProof(id: identity.deviceId, publicKey: identity.publicKeyBase64URL, signature: identity.sign(payload),
                                    signedAt: signedAt, nonce: nonce)
        guard let body = try? JSONValue(encoding: params) else { return false }
        guard let (status, answer) = await send("POST", Route.connect, body: body) else { return await wait(Self.retryDelayMs) }
        switch status {
        case 200:
            guard let session = answer?["sessionToken"]?.stringValue, let deviceToken = answer?["deviceToken"]?.stringValue else {
                return await wait(Self.retryDelayMs)
            }
            store.storeToken(StoredDeviceToken(token: deviceToken, scopes: [], issuedAtMs: Int(configuration.clock.nowMs)),
                             gateway: gatewayURL, role: .node)
            // The bootstrap token is single-use: once a device token is issued it is gone.
            if !configuration.has(.watchKeepBootstrap) { store.setBootstrapToken(nil, gateway: gatewayURL) }
            sessionToken = session
            connects.append(kind)
            self.status = .polling
            if configuration.has(.watchSecondPoll) {
                secondPoller?.cancel()
                secondPoller = spawnTask { await self.pollBesideTheLoop(session) }
            }
            return true
        case 429:
            return await wait(max(1, retryAfterSeconds) * 1_000)
        case 401, 400, 403:
            // The credential (or the declared surface) is refused: no retry storm; a new setup
            // code starts again.
            self.status = .waitingForCredential
            return false
        default:
            return await wait(Self.retryDelayMs)
        }
    }

    /// One poll and what follows it; `false` ends the loop.
    private func pollOnce() async -> Bool {
        guard let token = sessionToken else { return true }
        polls += 1
        guard let (status, answer) = await send("POST", Route.poll, bearer: token) else { return await wait(Self.retryDelayMs) }
        switch status {
        case 200:
            guard let event = answer?["event"], event != .null else {
                // The poll's 20 s passed without an event: poll again (the mutant stops here).
                if configuration.has(.watchNoRepoll) {
                    self.status = .stopped
                    return false
                }
                return true
            }
            if event["event"]?.stringValue == GatewayEventName.nodeInvokeRequest.rawValue, let payload = event["payload"] {
                await answerInvoke(payload, token: token)
            }
            return true
        case 401:
            // The session expired or was closed: challenge and connect again (the mutant stops).
            sessionToken = nil
            if configuration.has(.watchNoRechallenge) {
                self.status = .stopped
                return false
            }
            return true
        case 409:
            // A newer poll holds the session: polling again would supersede it in turn.
            self.status = .superseded
            return false
        default:
            return await wait(Self.retryDelayMs)
        }
    }

    /// The `watch-second-poll` mutant's second poller: polls with `token` next to the loop until
    /// an answer other than 200 (its own 409, the session's 401).
    private func pollBesideTheLoop(_ token: String) async {
        while !Task.isCancelled, sessionToken == token {
            polls += 1
            guard let (status, answer) = await send("POST", Route.poll, bearer: token), status == 200 else { return }
            if let event = answer?["event"], event["event"]?.stringValue == GatewayEventName.nodeInvokeRequest.rawValue,
               let payload = event["payload"] {
                await answerInvoke(payload, token: token)
            }
        }
    }

    private func answerInvoke(_ payload: JSONValue, token: String) async {
        guard let id = payload["id"]?.stringValue, let command = payload["command"]?.stringValue else { return }
        let outcome = await NodeCommands.run(command, paramsJSON: payload["paramsJSON"]?.stringValue, persona: configuration.persona,
                                             deviceId: store.identity.deviceId, counter: commandRuns, clock: configuration.clock,
                                             configuration: configuration)
            ?? .failure(ErrorCode.invalidRequest.rawValue, "unknown command")
        commandRuns += 1
        var result: [String: JSONValue] = ["id": .string(id), "ok": .bool(outcome.ok)]
        if let payloadJSON = outcome.payloadJSON { result["payloadJSON"] = .string(payloadJSON) }
        if !outcome.ok {
            result["error"] = ["code": .string(outcome.errorCode ?? ErrorCode.unavailable.rawValue),
                               "message": .string(outcome.errorMessage ?? "failed")]
        }
        _ = await send("POST", Route.result, body: .object(result), bearer: token)
    }
}
