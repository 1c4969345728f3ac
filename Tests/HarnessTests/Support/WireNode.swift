import Foundation
import GatewayProtocol
import WebSocketTransport

/// A minimal, hand-driven node client over real sockets (the harness's own transport and
/// protocol model), for driving `harness serve` from Swift.
struct WireNode {
    enum Failure: Error, CustomStringConvertible {
        case timeout(String)
        case closed(String)
        var description: String {
            switch self {
            case .timeout(let what): "timed out waiting for \(what)"
            case .closed(let what): "connection closed while waiting for \(what)"
            }
        }
    }

    let connection: WebSocketConnection
    let identity: DeviceIdentity
    var challenge = ConnectChallenge(nonce: "", ts: 0)

    /// Opens a connection and reads `connect.challenge`.
    static func open(_ url: String, identity: DeviceIdentity) async throws -> WireNode {
        var node = WireNode(connection: try await WebSocketClient.connect(to: url), identity: identity)
        guard case .event(let event) = try await node.nextFrame(), event.event == "connect.challenge",
              let payload = event.payload else { throw Failure.timeout("connect.challenge") }
        node.challenge = try payload.decode(as: ConnectChallenge.self)
        return node
    }

    /// The next frame, or `nil` when the connection ended.
    func nextFrame(timeout: Duration = .seconds(15)) async throws -> Frame? {
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

    /// The next event named `name`, skipping other frames.
    func event(_ name: String) async throws -> EventFrame {
        while true {
            guard let frame = try await nextFrame() else { throw Failure.closed("event \(name)") }
            if case .event(let event) = frame, event.event == name { return event }
        }
    }

    /// Sends a request and returns its response, skipping events.
    func request(_ method: String, params: JSONValue?) async throws -> ResponseFrame {
        let id = UUID().uuidString
        let frame = Frame.request(RequestFrame(id: id, method: method, params: params))
        try await connection.send(.text(String(decoding: frame.encoded(), as: UTF8.self)))
        while true {
            guard let frame = try await nextFrame() else { throw Failure.closed("response to \(method)") }
            if case .response(let response) = frame, response.id == id { return response }
        }
    }

    /// Sends a node `connect` signed with v3 over this connection's challenge.
    func connect(token: String? = nil) async throws -> ResponseFrame {
        let payload = DeviceAuthPayload.v3(
            deviceId: identity.deviceId, clientId: "openclaw-ios", clientMode: "node", role: "node", scopes: [],
            signedAtMs: challenge.ts, token: token ?? "", nonce: challenge.nonce,
            platform: "iOS 18.4.0", deviceFamily: "iPhone")
        let params = ConnectParams(
            minProtocol: 3, maxProtocol: 4,
            client: ClientInfo(id: ClientID(rawValue: "openclaw-ios"), displayName: "Serve test iPhone", version: "2026.8.1",
                               platform: "iOS 18.4.0", deviceFamily: "iPhone", mode: ClientMode(rawValue: "node")),
            role: GatewayRole(rawValue: "node"), scopes: [], caps: ["device"], commands: ["device.info"],
            auth: token.map { ConnectAuth(token: $0) },
            device: identity.proof(payload: payload, signedAtMs: challenge.ts, nonce: challenge.nonce))
        return try await request("connect", params: try JSONValue(encoding: params))
    }

    func close() async { _ = await connection.close() }
}
