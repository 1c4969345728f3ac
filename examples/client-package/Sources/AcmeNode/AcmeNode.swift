import Conformance
import Foundation
import GatewayProtocol
import Simulation
import WebSocketTransport

/// Acme's node: a small OpenClaw node written for this example, independent of the project's
/// reference client. It connects, signs the challenge (v3 payload), pairs by retrying with
/// backoff, stores its device token, and answers two commands: `device.info` and Acme's own
/// `acme.weather`. The protocol rules it follows are those of the root package's
/// `docs/protocol.md`: challenge and signature §3.2, §3.9-3.11; pairing retries §5.8, §11.3;
/// the device token §4.4, §5.4; invokes §6.3-6.4.
///
/// Everything it does goes through what ``NodeConfiguration`` hands it: it connects with
/// `configuration.connector`, sleeps on `configuration.timeline` and creates its tasks with
/// `spawnTask`, so inside the harness it runs as part of a deterministic simulation.
public actor AcmeNode: NodeUnderTest {
    /// Deliberate bugs, to show that the example's own scenario can fail.
    public enum Bug: String, Sendable, CaseIterable {
        /// `acme.weather` answers for a fixed city whatever the request asked.
        case weatherIgnoresCity = "weather-ignores-city"
    }

    /// The commands this node declares in its `connect`.
    public static let commands = ["device.info", "acme.weather"]

    /// `restart` (relaunch keeping the state directory); the node reconnects by itself otherwise.
    public nonisolated let supportedStimuli: Set<StimulusKind> = [.restart]

    private let bug: Bug?
    private nonisolated let journal = Journal()
    private var configuration: NodeConfiguration?
    private var identity: DeviceIdentity?
    private var deviceToken: String?
    private var loop: Task<Void, Never>?
    private var socket: WebSocketConnection?
    private var requestNumber = 0

    /// Creates a node; nothing happens until ``start(_:)``.
    /// - Parameter bug: a deliberate bug, or `nil` for the correct node.
    public init(bug: Bug? = nil) {
        self.bug = bug
    }

    // MARK: - NodeUnderTest

    /// Loads or creates the device identity in the state directory and starts connecting.
    /// - Throws: when the state directory cannot be read or written.
    public func start(_ configuration: NodeConfiguration) async throws {
        self.configuration = configuration
        let directory = configuration.stateDirectory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        identity = try Self.loadIdentity(in: directory, seed: configuration.seed)
        deviceToken = try? String(contentsOf: directory.appendingPathComponent("device-token"), encoding: .utf8)
        journal.append("started as \(identity?.deviceId.prefix(12) ?? "?")…, token \(deviceToken == nil ? "none" : "stored")")
        launch()
    }

    /// Closes the connection and stops reconnecting.
    public func stop() async {
        loop?.cancel()
        loop = nil
        if let socket { _ = await socket.close() }
        socket = nil
    }

    /// `restart`: stop and start again with the same state directory.
    public func apply(_ stimulus: Stimulus) async throws -> StimulusReply {
        guard stimulus.kind == .restart, let configuration else { throw ScenarioUnsupported("AcmeNode cannot act on \(stimulus.kind)") }
        await stop()
        try await start(configuration)
        return .ok
    }

    /// What the node decided, in its own words.
    public nonisolated func logLines() -> [String] { journal.lines }

    // MARK: - Connecting

    private func launch() {
        loop = spawnTask { await self.connectLoop() }
    }

    /// Connects, and after every refused or lost connection waits (500 ms doubling to 8 s, or
    /// the Gateway's `retryAfterMs`) and connects again; stops for good on `PROTOCOL_MISMATCH`.
    private func connectLoop() async {
        guard let configuration else { return }
        var failures = 0
        while !Task.isCancelled {
            let outcome = await session(configuration)
            let delayMs: Int64
            switch outcome {
            case .protocolMismatch:
                journal.append("no common protocol version: not reconnecting")
                return
            case .ended(let hadSession, let retryAfterMs):
                failures = hadSession ? 0 : failures + 1
                delayMs = retryAfterMs ?? min(8_000, 500 << min(failures, 4))
            }
            journal.append("reconnecting in \(delayMs) ms")
            if await configuration.timeline.sleep(for: .milliseconds(delayMs)) == .cancelled { return }
        }
    }

    private enum SessionOutcome {
        case ended(hadSession: Bool, retryAfterMs: Int64?)
        case protocolMismatch
    }

    /// One connection: challenge, connect, then invokes until the socket ends.
    private func session(_ configuration: NodeConfiguration) async -> SessionOutcome {
        let socket: WebSocketConnection
        do {
            socket = try await configuration.connector.connect(to: configuration.gatewayURL)
        } catch {
            journal.append("connect failed: \(error)")
            return .ended(hadSession: false, retryAfterMs: nil)
        }
        self.socket = socket
        defer { socket.abort() }
        var connectId: String?
        var hadSession = false
        for await message in socket.messages {
            guard let frame = try? Frame(decoding: Data(message.payload)) else { continue }
            switch frame {
            case .event(let event) where event.event == "connect.challenge":
                guard connectId == nil, let challenge = try? event.payload?.decode(as: ConnectChallenge.self) else { continue }
                let id = nextRequestId()
                connectId = id
                await send(.request(RequestFrame(id: id, method: "connect", params: connectParams(challenge))), on: socket)
            case .response(let response) where response.id == connectId:
                if response.ok {
                    hadSession = true
                    admitted(response.payload)
                } else {
                    let error = response.error ?? ErrorShape(code: "UNKNOWN", message: "")
                    journal.append("connect refused: \(error.code) \(error.detailCode ?? "")")
                    if error.detailCode == ConnectErrorDetailCode.protocolMismatch.rawValue { return .protocolMismatch }
                    if error.detailCode?.hasPrefix("AUTH_") == true, deviceToken != nil { forgetToken() }
                    return .ended(hadSession: false, retryAfterMs: error.retryAfterMs.map(Int64.init))
                }
            case .event(let event) where event.event == "node.invoke.request" && hadSession:
                guard let request = try? event.payload?.decode(as: NodeInvokeRequest.self) else { continue }
                spawnTask { await self.answer(request, on: socket) }
            default:
                continue  // other events (tick, presence, ...) and unknown frames are ignored
            }
        }
        journal.append("connection ended")
        return .ended(hadSession: hadSession, retryAfterMs: nil)
    }

    private func connectParams(_ challenge: ConnectChallenge) -> JSONValue? {
        guard let identity else { return nil }
        let client = ClientInfo(id: .nodeHost, displayName: "Acme node", version: "1.0.0", platform: "linux",
                                deviceFamily: "server", mode: .node, instanceId: String(identity.deviceId.prefix(16)))
        let auth = deviceToken.map { ConnectAuth(token: $0) }
        var params = ConnectParams(minProtocol: 3, maxProtocol: 4, client: client, role: .node, scopes: [],
                                   caps: ["device"], commands: Self.commands, auth: auth)
        // The signed payload (v3, docs/protocol.md §3.9): signedAt is the challenge's ts, so the
        // device's own clock cannot make the proof stale (§3.11).
        let payload = DeviceAuthPayload.v3(
            deviceId: identity.deviceId, clientId: client.id.rawValue, clientMode: client.mode.rawValue,
            role: "node", scopes: [], signedAtMs: challenge.ts, token: params.signatureToken, nonce: challenge.nonce,
            platform: client.platform, deviceFamily: client.deviceFamily)
        params.device = identity.proof(payload: payload, signedAtMs: challenge.ts, nonce: challenge.nonce)
        return try? JSONValue(encoding: params)
    }

    private func admitted(_ hello: JSONValue?) {
        guard let token = hello?["auth"]?["deviceToken"]?.stringValue, let configuration else {
            journal.append("admitted")
            return
        }
        journal.append("admitted; device token stored")
        deviceToken = token
        try? token.write(to: configuration.stateDirectory.appendingPathComponent("device-token"), atomically: true, encoding: .utf8)
    }

    private func forgetToken() {
        journal.append("the stored device token was refused: forgetting it")
        deviceToken = nil
        if let configuration {
            try? FileManager.default.removeItem(at: configuration.stateDirectory.appendingPathComponent("device-token"))
        }
    }

    // MARK: - Commands

    private func answer(_ request: NodeInvokeRequest, on socket: WebSocketConnection) async {
        let result: NodeInvokeResult
        switch request.command {
        case "device.info":
            result = NodeInvokeResult(id: request.id, nodeId: request.nodeId, ok: true,
                                      payload: ["name": "Acme node", "model": "acme-1", "platform": "linux"])
        case "acme.weather":
            result = weather(request)
        default:
            result = NodeInvokeResult(id: request.id, nodeId: request.nodeId, ok: false,
                                      error: NodeInvokeError(code: "INVALID_REQUEST", message: "unknown command \(request.command)"))
        }
        journal.append("answered \(request.command) (\(result.ok ? "ok" : result.error?.code ?? "error"))")
        guard let params = try? JSONValue(encoding: result) else { return }
        await send(.request(RequestFrame(id: nextRequestId(), method: "node.invoke.result", params: params)), on: socket)
    }

    /// `acme.weather {"city": "Lisbon"}` answers `{"city": "Lisbon", "temperatureC": 21.5,
    /// "condition": "sunny"}`; without a city it fails with `INVALID_REQUEST`.
    private func weather(_ request: NodeInvokeRequest) -> NodeInvokeResult {
        let params = request.paramsJSON.flatMap { try? JSONValue(parsing: $0) }
        guard let city = params?["city"]?.stringValue, !city.isEmpty else {
            return NodeInvokeResult(id: request.id, nodeId: request.nodeId, ok: false,
                                    error: NodeInvokeError(code: "INVALID_REQUEST", message: "acme.weather needs a city"))
        }
        let answered = bug == .weatherIgnoresCity ? "Springfield" : city
        return NodeInvokeResult(id: request.id, nodeId: request.nodeId, ok: true,
                                payload: ["city": .string(answered), "temperatureC": 21.5, "condition": "sunny"])
    }

    // MARK: - Plumbing

    private func nextRequestId() -> String {
        requestNumber += 1
        return "acme-\(requestNumber)"
    }

    private func send(_ frame: Frame, on socket: WebSocketConnection) async {
        do {
            try await socket.send(text: String(decoding: frame.encoded(), as: UTF8.self))
        } catch {
            journal.append("send failed: \(error)")
        }
    }

    /// The identity stored in `directory`, or a new one made from `seed` (a fixed seed gives the
    /// same keys, so a run replays exactly) and stored there.
    private static func loadIdentity(in directory: URL, seed: UInt64) throws -> DeviceIdentity {
        let file = directory.appendingPathComponent("identity-seed")
        if let stored = try? Data(contentsOf: file), stored.count == 32 {
            return try DeviceIdentity(seed: stored)
        }
        var random = SeededRandom(seed: seed ^ 0xACE)
        let bytes = Data(random.bytes(32))
        try bytes.write(to: file, options: .atomic)
        return try DeviceIdentity(seed: bytes)
    }
}

/// The node's log, readable from any thread (``NodeUnderTest/logLines()`` is synchronous).
final class Journal: @unchecked Sendable {
    // Safe to share: `entries` is only touched while `lock` is held.
    private let lock = NSLock()
    private var entries: [String] = []

    func append(_ line: String) {
        lock.lock()
        entries.append(line)
        lock.unlock()
    }

    var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return entries
    }
}
