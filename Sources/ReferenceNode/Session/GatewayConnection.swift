import Foundation
import GatewayProtocol
import Simulation
import Locking
import WebSocketTransport

/// Why a request did not get a usable response.
public enum RequestFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// There is no open session of that role.
    case notConnected
    /// The socket ended before the response arrived: the request may or may not have taken
    /// effect (an ambiguous outcome).
    case connectionLost
    /// No response within the request timeout; as ambiguous as ``connectionLost``.
    case timedOut
    /// The Gateway answered `ok:false`.
    case gateway(ErrorShape)
    /// The waiting task was cancelled; the request may have been sent.
    case cancelled

    /// Whether the outcome is unknown (the request may have been applied).
    public var isAmbiguous: Bool {
        switch self {
        case .connectionLost, .timedOut, .cancelled: true
        case .notConnected, .gateway: false
        }
    }

    /// A short description.
    public var description: String {
        switch self {
        case .notConnected: "not connected"
        case .connectionLost: "connection lost before the reply"
        case .timedOut: "no reply in time"
        case .cancelled: "cancelled before the reply"
        case .gateway(let error): "\(error.code): \(error.message)"
        }
    }
}

/// One WebSocket connection to the Gateway: sending frames and matching responses to requests.
///
/// The owning session reads the socket and hands responses to ``deliver(_:)``; everything else
/// may call ``request(_:params:timeoutMs:)`` from any task.
public final class GatewayConnection: Sendable {
    private struct Pending {
        var continuation: CheckedContinuation<ResponseFrame, any Error>
        var timer: Task<Void, Never>?
    }

    private struct State {
        var pending: [String: Pending] = [:]
        var ended = false
        var lastTickMs: Int64 = 0
        var helloMethods: Set<String> = []
        var dropReason: String?
        var serverOffsetMs: Int64 = 0
    }

    /// Connection number within its session; a new socket has a higher one.
    public let generation: Int
    /// `node` or `operator`.
    public let role: GatewayRole
    let socket: WebSocketConnection
    private let clock: any ClientClock
    private let binary: Bool
    private let defaultTimeoutMs: Int64
    private let identifiers: IdentifierSource
    // Pending requests and liveness data, guarded by this lock.
    private let state = Locked(State())

    init(socket: WebSocketConnection, generation: Int, role: GatewayRole, clock: any ClientClock, binary: Bool,
         defaultTimeoutMs: Int64, identifiers: IdentifierSource) {
        self.identifiers = identifiers
        self.socket = socket
        self.generation = generation
        self.role = role
        self.clock = clock
        self.binary = binary
        self.defaultTimeoutMs = defaultTimeoutMs
    }

    /// Whether the socket has ended.
    public var isEnded: Bool { state.withLock { $0.ended } }

    /// The methods advertised in this connection's `hello-ok.features.methods`.
    public var advertisedMethods: Set<String> { state.withLock { $0.helloMethods } }

    func setAdvertisedMethods(_ methods: Set<String>) { state.withLock { $0.helloMethods = methods } }

    /// When the last `tick` (or the hello) arrived, on the client clock.
    var lastTickMs: Int64 {
        get { state.withLock { $0.lastTickMs } }
        set { state.withLock { $0.lastTickMs = newValue } }
    }

    /// Gateway clock minus client clock, from the challenge `ts` and tick `ts` values.
    public var serverOffsetMs: Int64 {
        get { state.withLock { $0.serverOffsetMs } }
        set { state.withLock { $0.serverOffsetMs = newValue } }
    }

    /// The Gateway's clock as this client estimates it.
    public var gatewayNowMs: Int64 { clock.nowMs + serverOffsetMs }

    /// Sends a frame (binary or text, as configured).
    /// - Throws: `RequestFailure.connectionLost` when the socket cannot send.
    public func send(_ frame: Frame) async throws {
        let data = frame.encoded()
        do {
            if binary {
                try await socket.send(binary: [UInt8](data))
            } else {
                try await socket.send(text: String(decoding: data, as: UTF8.self))
            }
        } catch {
            throw RequestFailure.connectionLost
        }
    }

    /// Sends a request and waits for its response.
    /// - Parameters:
    ///   - method: the method name.
    ///   - params: its params.
    ///   - timeoutMs: client-clock timeout; `nil` uses the session default (15 s).
    /// - Returns: the response (`ok` true or false).
    /// - Throws: ``RequestFailure/connectionLost``, ``RequestFailure/timedOut`` or, when the
    ///   waiting task is cancelled, ``RequestFailure/cancelled``.
    public func request(_ method: String, params: JSONValue?, timeoutMs: Int64? = nil) async throws -> ResponseFrame {
        let id = identifiers.requestId()
        let frame = Frame.request(RequestFrame(id: id, method: method, params: params))
        let timeout = timeoutMs ?? defaultTimeoutMs
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ResponseFrame, any Error>) in
                let refusal = state.withLock { state -> RequestFailure? in
                    guard !state.ended else { return .connectionLost }
                    // Registered under the lock that the cancellation handler takes too: a
                    // cancellation either finds the request or is seen here.
                    if Task.isCancelled { return .cancelled }
                    state.pending[id] = Pending(continuation: continuation, timer: nil)
                    return nil
                }
                if let refusal { continuation.resume(throwing: refusal); return }
                let clock = clock
                // The deadline is fixed now, not when the timer task first runs.
                let deadline = clock.nowMs + timeout
                let timer = spawnTask { [weak self] in
                    do { try await clock.sleep(untilMs: deadline) } catch { return }
                    self?.fail(id, with: .timedOut)
                }
                let stillPending = state.withLock { state -> Bool in
                    guard state.pending[id] != nil else { return false }
                    state.pending[id]?.timer = timer
                    return true
                }
                if !stillPending { timer.cancel() }
                spawnTask { [weak self] in
                    guard let self else { return }
                    do { try await self.send(frame) } catch { self.fail(id, with: .connectionLost) }
                }
            }
        } onCancel: {
            fail(id, with: .cancelled)
        }
    }

    /// Completes the request the response answers; `false` for an unknown id (dropped, as Swift does).
    @discardableResult
    func deliver(_ response: ResponseFrame) -> Bool {
        let pending = state.withLock { $0.pending.removeValue(forKey: response.id) }
        guard let pending else { return false }
        pending.timer?.cancel()
        pending.continuation.resume(returning: response)
        return true
    }

    private func fail(_ id: String, with failure: RequestFailure) {
        let pending = state.withLock { $0.pending.removeValue(forKey: id) }
        pending?.timer?.cancel()
        pending?.continuation.resume(throwing: failure)
    }

    /// Marks the connection ended and fails every waiting request with `connectionLost`.
    func markEnded() {
        let pending = state.withLock { state -> [Pending] in
            state.ended = true
            defer { state.pending = [:] }
            // In the order of the requests' ids, not the dictionary's: a simulated run must wake
            // the waiters in the same order every time.
            return state.pending.sorted { $0.key < $1.key }.map(\.value)
        }
        for entry in pending {
            entry.timer?.cancel()
            entry.continuation.resume(throwing: RequestFailure.connectionLost)
        }
    }

    /// Closes the socket with a close frame and waits until it has ended.
    func close(code: UInt16 = 1000, reason: String = "") async {
        _ = await socket.close(code: WebSocketCloseCode(code), reason: reason)
    }

    /// Drops the socket at once.
    func abort() { socket.abort() }

    /// Why the client dropped this connection itself, if it did.
    var dropReason: String? { state.withLock { $0.dropReason } }

    /// Ends the connection on the client's initiative and remembers why (the first reason wins):
    /// with a close frame when `closeCode` is given, else with a TCP reset.
    func drop(reason: String, closeCode: UInt16?) {
        let first = state.withLock { state -> Bool in
            guard state.dropReason == nil else { return false }
            state.dropReason = reason
            return true
        }
        guard first else { return }
        if let closeCode {
            let socket = socket
            spawnTask { _ = await socket.close(code: WebSocketCloseCode(closeCode), reason: reason) }
        } else {
            socket.abort()
        }
    }
}

extension ResponseFrame {
    /// The payload of a successful response.
    /// - Throws: ``RequestFailure/gateway(_:)`` for `ok:false`.
    func successPayload() throws -> JSONValue {
        guard ok else {
            throw RequestFailure.gateway(error ?? ErrorShape(code: "UNKNOWN", message: "request failed"))
        }
        return payload ?? .null
    }
}
