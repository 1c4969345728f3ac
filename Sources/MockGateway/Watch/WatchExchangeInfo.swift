import Foundation
import GatewayProtocol

/// One answered request of the Apple Watch direct mode (docs/protocol.md §13), as the event log
/// records it: what the client sent that the protocol's client rules judge (which credential a
/// connect presented, which commands it declared) and what the Gateway answered.
public struct WatchExchangeInfo: Sendable, Hashable {
    /// The Gateway's id of the request (in arrival order).
    public var requestId: Int
    /// The method, as sent.
    public var method: String
    /// The path (`/api/nodes/watch/poll`).
    public var path: String
    /// The status answered; 499 when the client went away before a held poll was answered.
    public var status: Int
    /// For a connect: the credential member `auth` presented (`bootstrapToken` or
    /// `deviceToken`; `nil` without one), read from the body as sent.
    public var credential: String?
    /// For a connect: the `commands` the body declared, as sent (`nil` without any).
    public var commands: [String]?
    /// For a connect answered 200: the node id.
    public var nodeId: String?
    /// `reason` of the answer's body (`superseded poll`, `session expired`), if any.
    public var reason: String?
    /// For a poll answered 200: the event delivered (`node.invoke.request`); `nil` for
    /// `event: null`.
    public var event: String?

    /// The status a held poll is recorded with when its client went away before the answer
    /// (the status nginx logs for a client that closed the connection).
    public static let clientGoneStatus = 499

    /// A record.
    public init(requestId: Int, method: String, path: String, status: Int, credential: String? = nil, commands: [String]? = nil,
                nodeId: String? = nil, reason: String? = nil, event: String? = nil) {
        self.requestId = requestId
        self.method = method
        self.path = path
        self.status = status
        self.credential = credential
        self.commands = commands
        self.nodeId = nodeId
        self.reason = reason
        self.event = event
    }

    /// The record of `request` answered with `response` (`nil`: the client went away first).
    init(requestId: Int, request: WatchHTTPRequest, response: WatchHTTPResponse?) {
        self.init(requestId: requestId, method: request.method, path: request.path,
                  status: response?.status ?? Self.clientGoneStatus)
        let answer = response?.json
        reason = answer?["reason"]?.stringValue
        if request.path == WatchDirectRules.connectPath, let body = try? JSONValue(parsing: Data(request.body)) {
            let auth = body["auth"]?.objectValue ?? [:]
            credential = ["bootstrapToken", "deviceToken"].first { key in
                auth[key]?.stringValue.map { !$0.trimmingASCIIWhitespace().isEmpty } ?? false
            }
            commands = body["commands"]?.arrayValue.map { $0.compactMap(\.stringValue) }
            if status == 200 { nodeId = answer?["nodeId"]?.stringValue }
        }
        if request.path == WatchDirectRules.pollPath, status == 200 {
            event = answer?["event"]?["event"]?.stringValue
        }
    }

    /// `POST /api/nodes/watch/connect → 200 (deviceToken)`.
    public var summary: String {
        var text = "\(method) \(path) → \(status)"
        var details: [String] = []
        if let credential { details.append(credential) }
        if let reason { details.append(reason) }
        if let event { details.append(event) }
        if !details.isEmpty { text += " (\(details.joined(separator: ", ")))" }
        return text
    }
}
