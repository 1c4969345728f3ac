import Foundation
import GatewayProtocol
import WebSocketTransport

/// A minimal, hand-driven protocol client over real sockets for end-to-end tests of the fake
/// Gateway and of `harness serve`: every step is explicit so a test can check each frame. It is
/// built on the project's own transport and protocol model; the independent peers in
/// `Tests/Interop` check the same wire from someone else's code.
public struct WireClient: Sendable {
    /// Why a wait ended without what it waited for.
    public enum Failure: Error, CustomStringConvertible {
        /// The deadline passed while waiting for the named thing.
        case timeout(String)
        /// The connection ended while waiting for the named thing.
        case closed(String)
        /// A send found the connection already closed; how it ended (code, reason, which side
        /// began the close), when known.
        case sendAfterClose(String)
        /// A readable account of the failure.
        public var description: String {
            switch self {
            case .timeout(let what): "timed out waiting for \(what)"
            case .closed(let what): "connection closed while waiting for \(what)"
            case .sendAfterClose(let how): "the connection was already closed when a frame was sent: \(how)"
            }
        }
    }

    /// The connection to the Gateway.
    public let connection: WebSocketConnection
    /// The device identity that signs `connect`.
    public let identity: DeviceIdentity
    /// The `connect.challenge` read by `open`.
    public var challenge: ConnectChallenge?

    /// Wraps an open connection (no challenge read yet).
    public init(connection: WebSocketConnection, identity: DeviceIdentity) {
        self.connection = connection
        self.identity = identity
    }

    /// Opens a connection to `url` and reads `connect.challenge`.
    /// - Parameter configuration: the client's limits and, for `wss://`, its trust (a pinned
    ///   certificate fingerprint).
    public static func open(_ url: String, identity: DeviceIdentity,
                            configuration: WebSocketConfiguration = .init()) async throws -> WireClient {
        let connection = try await WebSocketClient.connect(to: url, configuration: configuration)
        var client = WireClient(connection: connection, identity: identity)
        guard case .event(let event) = try await client.nextFrame(timeout: .seconds(10)), event.event == "connect.challenge",
              let payload = event.payload else { throw Failure.timeout("connect.challenge") }
        client.challenge = try payload.decode(as: ConnectChallenge.self)
        return client
    }

    /// The next frame, or `nil` when the connection ended.
    public func nextFrame(timeout: Duration = .seconds(10)) async throws -> Frame? {
        let connection = self.connection
        return try await withThrowingTaskGroup(of: Frame?.self) { group in
            group.addTask {
                for await message in connection.messages {
                    return try Frame(decoding: Data(message.payload))
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw Failure.timeout("a frame")
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// The next response with `id`, skipping events.
    public func response(to id: String, timeout: Duration = .seconds(10)) async throws -> ResponseFrame {
        while true {
            guard let frame = try await nextFrame(timeout: timeout) else { throw Failure.closed("response \(id)") }
            if case .response(let response) = frame, response.id == id { return response }
        }
    }

    /// The next event named `name`, skipping other frames.
    public func event(_ name: String, timeout: Duration = .seconds(10)) async throws -> EventFrame {
        while true {
            guard let frame = try await nextFrame(timeout: timeout) else { throw Failure.closed("event \(name)") }
            if case .event(let event) = frame, event.event == name { return event }
        }
    }

    /// `connect` params of an iOS node (or, with `role`/`mode`, another client), signed with v3
    /// over the challenge (or over `signedAt`/`nonce` when given).
    public func connectParams(role: String = "node", scopes: [String] = [], token: String? = nil,
                       bootstrapToken: String? = nil, clientId: String = "openclaw-ios", mode: String = "node",
                       minProtocol: Int = 3, maxProtocol: Int = 4, signedAt: Int? = nil, nonce: String? = nil,
                       deviceToken: String? = nil, password: String? = nil) -> ConnectParams {
        let challenge = self.challenge ?? ConnectChallenge(nonce: "", ts: 0)
        let signedAtMs = signedAt ?? challenge.ts
        let usedNonce = nonce ?? challenge.nonce
        let hasCredential = token != nil || bootstrapToken != nil || deviceToken != nil || password != nil
        let auth = hasCredential
            ? ConnectAuth(token: token, bootstrapToken: bootstrapToken, deviceToken: deviceToken, password: password) : nil
        let payload = DeviceAuthPayload.v3(
            deviceId: identity.deviceId, clientId: clientId, clientMode: mode, role: role, scopes: scopes,
            signedAtMs: signedAtMs, token: auth?.signatureToken ?? "", nonce: usedNonce,
            platform: "iOS 18.4.0", deviceFamily: "iPhone")
        return ConnectParams(
            minProtocol: minProtocol, maxProtocol: maxProtocol,
            client: ClientInfo(id: ClientID(rawValue: clientId), displayName: "Test iPhone", version: "2026.8.1",
                               platform: "iOS 18.4.0", deviceFamily: "iPhone", mode: ClientMode(rawValue: mode)),
            role: GatewayRole(rawValue: role), scopes: scopes, caps: role == "node" ? ["device", "location"] : [],
            commands: role == "node" ? ["device.info", "location.get"] : [], auth: auth,
            device: identity.proof(payload: payload, signedAtMs: signedAtMs, nonce: usedNonce))
    }

    /// Sends `connect` and returns its response.
    public func connect(_ params: ConnectParams, binary: Bool = false) async throws -> ResponseFrame {
        try await request("connect", params: try JSONValue(encoding: params), id: "connect-1", binary: binary)
    }

    /// Sends a request and returns its response.
    public func request(_ method: String, params: JSONValue?, id: String = UUID().uuidString, binary: Bool = false) async throws -> ResponseFrame {
        try await send(.request(RequestFrame(id: id, method: method, params: params)), binary: binary)
        return try await response(to: id)
    }

    /// Sends one frame as a text (or binary) message.
    public func send(_ frame: Frame, binary: Bool = false) async throws {
        let data = frame.encoded()
        do {
            try await connection.send(binary ? .binary(Array(data)) : .text(String(decoding: data, as: UTF8.self)))
        } catch let error as WebSocketError where error == .connectionClosed {
            // Say how it ended: a bare `connectionClosed` does not tell a server's close from a
            // reset or a close this side began.
            throw Failure.sendAfterClose(connection.closeInfo.map { "\($0)" } ?? "closing, not yet closed")
        }
    }

    /// Closes the connection (close handshake) and returns when it has ended.
    public func close() async { _ = await connection.close() }
}

/// Fixed identities for tests.
public enum TestIdentities {
    /// The identity whose Ed25519 seed is 32 bytes of `byte`.
    public static func make(_ byte: UInt8) throws -> DeviceIdentity {
        try DeviceIdentity(seed: Data(repeating: byte, count: 32))
    }
}

// MARK: - Frame-level helpers for end-to-end tests

extension WireClient {
    /// The next WebSocket message exactly as received (text or binary), or `nil` when the
    /// connection ended.
    public func nextMessage(timeout: Duration = .seconds(10)) async throws -> WebSocketMessage? {
        let connection = self.connection
        return try await withThrowingTaskGroup(of: WebSocketMessage?.self) { group in
            group.addTask {
                for await message in connection.messages { return message }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw Failure.timeout("a message")
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Sends a request without waiting for its response.
    public func sendRequest(_ method: String, params: JSONValue?, id: String = UUID().uuidString, binary: Bool = false) async throws {
        try await send(.request(RequestFrame(id: id, method: method, params: params)), binary: binary)
    }

    /// Reads frames until the response to `id` and returns it with every frame read before it.
    public func collect(untilResponseTo id: String, timeout: Duration = .seconds(10)) async throws -> (response: ResponseFrame, before: [Frame]) {
        var before: [Frame] = []
        while true {
            guard let frame = try await nextFrame(timeout: timeout) else { throw Failure.closed("response \(id)") }
            if case .response(let response) = frame, response.id == id { return (response, before) }
            before.append(frame)
        }
    }

    /// Sends a request and returns its response with every frame that arrived before it.
    public func requestCollecting(_ method: String, params: JSONValue?, id: String = UUID().uuidString) async throws
        -> (response: ResponseFrame, before: [Frame]) {
        try await sendRequest(method, params: params, id: id)
        return try await collect(untilResponseTo: id)
    }

    /// Every frame the Gateway queued on this connection before now.
    ///
    /// The Gateway answers requests of one connection in order and writes each connection's frames
    /// in order, so once the answer to a probe request arrives, every event caused by an earlier
    /// action has arrived too: a deterministic way to check that an event was *not* sent.
    public func barrier() async throws -> [Frame] {
        try await requestCollecting("test.barrier", params: nil).before
    }

    /// The names of the events among `frames`.
    public static func eventNames(_ frames: [Frame]) -> [String] {
        frames.compactMap { if case .event(let event) = $0 { event.event } else { nil } }
    }

    /// The events named `name` among `frames`.
    public static func events(_ name: String, in frames: [Frame]) -> [EventFrame] {
        frames.compactMap { if case .event(let event) = $0, event.event == name { event } else { nil } }
    }

    /// Waits (with a deadline) until the connection has ended, discarding whatever still arrives.
    public func closed(timeout: Duration = .seconds(10)) async throws -> WebSocketCloseInfo {
        let connection = self.connection
        return try await withThrowingTaskGroup(of: WebSocketCloseInfo.self) { group in
            group.addTask {
                for await _ in connection.messages {}
                return await connection.waitUntilClosed()
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw Failure.timeout("the connection to close")
            }
            let first = try await group.next()
            group.cancelAll()
            guard let first else { throw Failure.timeout("the connection to close") }
            return first
        }
    }

    /// Reads every frame until the connection ends; returns them with how it ended.
    public func framesUntilClosed(timeout: Duration = .seconds(10)) async throws -> (frames: [Frame], info: WebSocketCloseInfo) {
        var frames: [Frame] = []
        while let frame = try await nextFrame(timeout: timeout) { frames.append(frame) }
        return (frames, try await closed(timeout: timeout))
    }

    /// Connect params of an iOS operator connection (`client.mode:"ui"`).
    public func operatorParams(scopes: [String], token: String? = nil, deviceToken: String? = nil,
                        minProtocol: Int = 3) -> ConnectParams {
        connectParams(role: "operator", scopes: scopes, token: token, mode: "ui", minProtocol: minProtocol,
                      deviceToken: deviceToken)
    }
}


extension WireClient {
    /// Sends a node `connect` as the iOS app would (`openclaw-ios`, declaring `device.info` and
    /// `location.get`), optionally with a shared token, and returns its response.
    public func connect(token: String? = nil) async throws -> ResponseFrame {
        try await connect(connectParams(token: token))
    }
}
