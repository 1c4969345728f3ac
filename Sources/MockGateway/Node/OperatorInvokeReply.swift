import GatewayProtocol

/// What an operator's `node.invoke` is answered with, for each way the invoke can end.
///
/// Upstream (read for facts, not copied):
/// * success `{ok:true, nodeId, command, payload, payloadJSON|null}`: `payload` is the parsed
///   `payloadJSON` when the node sent one, else the node's `payload`; `payloadJSON` is the node's
///   string or `null` (`src/gateway/server-methods/nodes.ts@009f87da`, "node.invoke";
///   `respondNodeInvokeSuccess`, `src/gateway/server-methods/nodes.helpers.ts`);
/// * a node failure is a top-level `UNAVAILABLE` whose message is `CODE: message` (or the
///   message alone when the node sent no code, "node invoke failed" when it sent neither) and
///   whose `details` carry `nodeError` (the node's error object, or `null`) and
///   `nodeCommandDispatched` (`respondUnavailableOnNodeInvokeErrorWithProvenance`, a newer
///   `src/gateway/server-methods/nodes.helpers.ts`; the older `nodes.helpers.ts@55400bbd` had the bare message and `nodeError` only);
/// * a timeout is the registry's `{code:"TIMEOUT", message:"node invoke timed out"}` node error
///   (src/gateway/node-registry.ts), reported like any node failure;
/// * a node that is not connected gets `UNAVAILABLE "node not connected"` with
///   `details {code:"NOT_CONNECTED", nodeError:{code, message}, nodeCommandDispatched:false}`
///   (the `node.invoke` handler, `src/gateway/server-methods`).
///
/// Unconfirmed, so chosen to be tolerant: whether a disconnect during the invoke is reported as
/// `DISCONNECTED` (upstream test fixtures use `{code:"DISCONNECTED", message:"node disconnected"}`
/// with `nodeCommandDispatched:true`), and whether timeouts and disconnects
/// are `retryable`: this Gateway keeps `retryable:true` on both, which a client may ignore.
enum OperatorInvokeReply: Sendable, Hashable {
    /// `ok:true` with this payload.
    case success(JSONValue)
    /// `ok:false` with this error.
    case failure(ErrorShape)

    /// The reply to an invoke that reached the node and ended with `outcome`.
    static func reply(nodeId: String, command: String, outcome: InvokeOutcome) -> OperatorInvokeReply {
        switch outcome {
        case .result(let result) where result.ok:
            return .success(success(nodeId: nodeId, command: command, result: result))
        case .result(let result):
            let error: JSONValue = result.error.map { error in
                var object: [String: JSONValue] = [:]
                if let code = error.code { object["code"] = .string(code) }
                if let message = error.message { object["message"] = .string(message) }
                return .object(object)
            } ?? .null
            return .failure(nodeFailure(code: result.error?.code, message: result.error?.message, nodeError: error))
        case .timedOut:
            var shape = nodeFailure(code: "TIMEOUT", message: "node invoke timed out",
                                    nodeError: ["code": "TIMEOUT", "message": "node invoke timed out"])
            shape.retryable = true
            return .failure(shape)
        case .nodeDisconnected:
            var shape = nodeFailure(code: "DISCONNECTED", message: "node disconnected",
                                    nodeError: ["code": "DISCONNECTED", "message": "node disconnected"])
            shape.retryable = true
            return .failure(shape)
        }
    }

    /// The success payload.
    static func success(nodeId: String, command: String, result: NodeInvokeResult) -> JSONValue {
        let payload: JSONValue
        if let text = result.payloadJSON {
            // Upstream's `parseGatewayPayload`: text that is not JSON becomes `{payloadJSON: text}`.
            payload = (try? JSONValue(parsing: text)) ?? ["payloadJSON": .string(text)]
        } else {
            payload = result.payload ?? .null
        }
        return [
            "ok": true, "nodeId": .string(nodeId), "command": .string(command),
            "payload": payload, "payloadJSON": result.payloadJSON.map(JSONValue.string) ?? .null,
        ]
    }

    /// A node-reported failure: `UNAVAILABLE` with the node's error in `details.nodeError`.
    static func nodeFailure(code: String?, message: String?, nodeError: JSONValue) -> ErrorShape {
        let code = code.flatMap { $0.isEmpty ? nil : $0 }
        let text = message.flatMap { $0.isEmpty ? nil : $0 } ?? "node invoke failed"
        return ErrorShape(code: ErrorCode.unavailable.rawValue, message: code.map { "\($0): \(text)" } ?? text,
                          details: ["nodeError": nodeError, "nodeCommandDispatched": true])
    }

    /// The answer when the node's background refusal was queued as a foreground action
    /// (`PendingActionQueue`): `UNAVAILABLE "node command queued until iOS returns to foreground"`,
    /// `retryable:true`, `details {code:"QUEUED_UNTIL_FOREGROUND", queuedActionId, nodeId, command,
    /// wake, nodeError}` (`src/gateway/server-methods/nodes.invoke.ts@296f520b`); `wake` is the
    /// silent push sent on queueing (``NodeWakeAttempt/detailsJSON``).
    static func queued(_ action: PendingNodeAction, nodeError: NodeInvokeError?, wake: NodeWakeAttempt) -> ErrorShape {
        var error: JSONValue = .null
        if let nodeError {
            var object: [String: JSONValue] = [:]
            if let code = nodeError.code { object["code"] = .string(code) }
            if let message = nodeError.message { object["message"] = .string(message) }
            error = .object(object)
        }
        return ErrorShape(code: ErrorCode.unavailable.rawValue, message: "node command queued until iOS returns to foreground",
                          details: [
                              "code": "QUEUED_UNTIL_FOREGROUND", "queuedActionId": .string(action.id), "nodeId": .string(action.nodeId),
                              "command": .string(action.command),
                              "wake": wake.detailsJSON, "nodeError": error,
                          ], retryable: true)
    }

    /// The answer for a node that is not connected: nothing was dispatched.
    static func notConnected(nodeId: String) -> ErrorShape {
        ErrorShape(code: ErrorCode.unavailable.rawValue, message: "node not connected", details: [
            "code": "NOT_CONNECTED", "nodeId": .string(nodeId),
            "nodeError": ["code": "NOT_CONNECTED", "message": "node not connected"], "nodeCommandDispatched": false,
        ])
    }

    /// The caller's `timeoutMs` ran out during the wake sequence: the timeout node error with
    /// `nodeCommandDispatched:false` (upstream `respondIfInvokeExpired`, nodes.invoke.ts@296f520b).
    static func timedOutBeforeDispatch() -> ErrorShape {
        var shape = nodeFailure(code: "TIMEOUT", message: "node invoke timed out",
                                nodeError: ["code": "TIMEOUT", "message": "node invoke timed out"])
        shape.details = ["nodeError": ["code": "TIMEOUT", "message": "node invoke timed out"], "nodeCommandDispatched": false]
        shape.retryable = true
        return shape
    }

    /// The node's connection changed between the check and the dispatch:
    /// `UNAVAILABLE "node connection changed before dispatch"`, `retryable:true`,
    /// `details {code:"ROUTE_CHANGED"}` (nodes.invoke.ts@296f520b).
    static func routeChanged() -> ErrorShape {
        ErrorShape(code: ErrorCode.unavailable.rawValue, message: "node connection changed before dispatch",
                   details: ["code": "ROUTE_CHANGED"], retryable: true)
    }
}
