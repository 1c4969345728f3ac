import Foundation
import GatewayProtocol
import MockGateway
import TestSupport
import Testing
import WebSocketTransport

/// The raw wire client of these tests (shared with the harness tests through `TestSupport`).
typealias TestClient = WireClient
/// Fixed identities for tests (from `TestSupport`).
typealias TestIdentities = TestSupport.TestIdentities

/// A session that completed the handshake.
struct ConnectedSession {
    let client: TestClient
    let hello: HelloOK

    /// The device token from `hello-ok.auth.deviceToken`.
    var deviceToken: String? { hello.auth.deviceToken }
    /// `hello-ok.server.connId`, the Gateway's connection id.
    var connectionId: String { hello.server.connId }
}

/// Building blocks of end-to-end tests: paired operators and nodes over real sockets.
enum TestSessions {
    enum Failure: Error, CustomStringConvertible {
        case rejected(ErrorShape?)
        var description: String {
            switch self {
            case .rejected(let error): "connect rejected: \(error.map { "\($0.code) \($0.message)" } ?? "no error")"
            }
        }
    }

    /// Opens a socket and connects with `params(client)`; throws unless `hello-ok` arrives.
    static func connect(_ gateway: Gateway, identity: DeviceIdentity,
                        _ params: (TestClient) -> ConnectParams) async throws -> ConnectedSession {
        let client = try await TestClient.open(gateway.url, identity: identity)
        let response = try await client.connect(params(client))
        guard response.ok, let hello = try response.payload?.decode(as: HelloOK.self) else {
            await client.close()
            throw Failure.rejected(response.error)
        }
        return ConnectedSession(client: client, hello: hello)
    }

    /// Connects as an operator with `scopes`, pairing the device first when it must be
    /// (`PAIRING_REQUIRED`, then approval through the scripting API), as a real client would.
    static func operatorSession(_ gateway: Gateway, identity: DeviceIdentity, scopes: [String],
                                token: String? = nil) async throws -> ConnectedSession {
        try await pairedSession(gateway, identity: identity) { $0.operatorParams(scopes: scopes, token: token) }
    }

    /// Connects as a node, pairing it first when it must be.
    static func nodeSession(_ gateway: Gateway, identity: DeviceIdentity, token: String? = nil) async throws -> ConnectedSession {
        try await pairedSession(gateway, identity: identity) { $0.connectParams(token: token) }
    }

    /// Connects with `params`; on `PAIRING_REQUIRED` approves the request through the scripting
    /// API and connects again.
    private static func pairedSession(_ gateway: Gateway, identity: DeviceIdentity,
                                      params: @Sendable (TestClient) -> ConnectParams) async throws -> ConnectedSession {
        let first = try await TestClient.open(gateway.url, identity: identity)
        let response = try await first.connect(params(first))
        if response.ok, let hello = try response.payload?.decode(as: HelloOK.self) {
            return ConnectedSession(client: first, hello: hello)
        }
        guard response.error?.detailCode == "PAIRING_REQUIRED",
              let requestId = response.error?.details?["requestId"]?.stringValue else {
            throw Failure.rejected(response.error)
        }
        _ = try await first.closed()
        try await gateway.approve(requestId: requestId)
        return try await connect(gateway, identity: identity, params)
    }

    /// Expects an operator-read method refused by role to a node (`unauthorized role: node`) and
    /// by scope to an operator holding only `operator.pairing` (`missing scope: operator.read`).
    /// `nodeByte` and `operatorByte` pick the two callers' identities.
    static func expectReadRefusals(_ gateway: Gateway, _ method: GatewayMethod, nodeByte: UInt8, operatorByte: UInt8,
                                   sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let node = try await nodeSession(gateway, identity: try TestIdentities.make(nodeByte))
        let byRole = try await node.client.request(method.rawValue, params: [:])
        #expect(byRole.error?.message == "unauthorized role: node", sourceLocation: sourceLocation)
        let pairing = try await operatorSession(gateway, identity: try TestIdentities.make(operatorByte),
                                                scopes: [OperatorScope.pairing.rawValue])
        let byScope = try await pairing.client.request(method.rawValue, params: [:])
        #expect(byScope.error?.message == "missing scope: operator.read", sourceLocation: sourceLocation)
    }
}

/// `INVALID_REQUEST` with `message`: the error most refusals of bad params answer.
func invalidRequest(_ message: String) -> ErrorShape {
    ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: message)
}

extension WireClient {
    /// Answers the next `node.invoke.request` this node receives with `ok` and `payloadJSON` or
    /// `error`; returns the request and the Gateway's answer to the result.
    @discardableResult
    func answerNextInvoke(nodeId: String, ok: Bool, payloadJSON: String? = nil, error: NodeInvokeError? = nil,
                          sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> (request: NodeInvokeRequest, ack: ResponseFrame) {
        let request = try #require(try await event("node.invoke.request").payload?.decode(as: NodeInvokeRequest.self),
                                   sourceLocation: sourceLocation)
        let ack = try await self.request("node.invoke.result", params: try JSONValue(encoding: NodeInvokeResult(
            id: request.id, nodeId: nodeId, ok: ok, payloadJSON: payloadJSON, error: error)))
        return (request, ack)
    }
}

extension GatewayConsole {
    /// Runs `body` with a started Gateway (default configuration) and a console on it.
    static func withConsole<Result: Sendable>(_ body: (Gateway, GatewayConsole) async throws -> Result) async throws -> Result {
        try await Gateway.withGateway { gateway in try await body(gateway, GatewayConsole(gateway: gateway)) }
    }
}
