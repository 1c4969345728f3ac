import Foundation
import GatewayProtocol

/// What an operator may conclude from a failed `node.invoke` (docs/protocol.md §6.9.2).
///
/// Upstream's operator-side code classifies the failure by its dispatch provenance and never
/// sends the invoke again by itself: the agent runtime's node exec
/// (`src/agents/bash-tools.exec-host-node-failure.ts`, `classifyNodeInvokeFailure`) calls only
/// `NOT_CONNECTED` with `details.nodeCommandDispatched: false` retry-safe ("can be retried after
/// the node reconnects"), a `nodeCommandDispatched: false` refusal with another code
/// pre-dispatch-rejected, and everything else (`ROUTE_CHANGED`, `TIMEOUT`, `DISCONNECTED`, a
/// lost reply) outcome-unknown ("Do not rerun it automatically"); the TypeScript Gateway
/// client hands the refusal, `retryable` included, to its caller without resending
/// (`packages/gateway-client/src/pending-request.ts`). docs/fidelity.md cites the revisions.
public enum NodeInvokeFailureRule {
    /// The classes of a failed invoke.
    public enum Kind: String, Sendable, Hashable {
        /// `NOT_CONNECTED` before any dispatch: safe to send again once the node is back.
        case notDispatched = "not-dispatched"
        /// Refused before dispatch for another reason: not sent again until that is resolved.
        case preDispatchRejected = "pre-dispatch-rejected"
        /// The command may have run: never sent again automatically.
        case outcomeUnknown = "outcome-unknown"
    }

    /// The class of `failure`. The code is `details.nodeError.code`, else `details.code`.
    public static func classify(_ failure: RequestFailure) -> Kind {
        guard case .gateway(let error) = failure else { return .outcomeUnknown }
        let details = error.details
        let code = nonEmpty(details?["nodeError"]?["code"]?.stringValue) ?? nonEmpty(details?["code"]?.stringValue)
        let dispatched = details?["nodeCommandDispatched"]?.boolValue
        if code == "NOT_CONNECTED", dispatched == false { return .notDispatched }
        if dispatched == false { return .preDispatchRejected }
        return .outcomeUnknown
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        return text
    }
}

extension ReferenceClient {
    /// `invoke-node`: one `node.invoke` on the operator session, never sent again by itself
    /// (``NodeInvokeFailureRule``); the `resend-retryable-invoke` mutant sends it once more after
    /// any `retryable: true` refusal, `ROUTE_CHANGED` included.
    func invokeNode(nodeId: String, command: String, params: JSONValue?, timeoutMs: Int?) async -> StimulusOutcome {
        guard let connection = await connection(for: .operator) else { return .error("operator session not connected") }
        operatorInvokeCount += 1
        var request: [String: JSONValue] = ["nodeId": .string(nodeId), "command": .string(command),
                                            "idempotencyKey": .string("operator-invoke-\(operatorInvokeCount)")]
        if let params { request["params"] = params }
        if let timeoutMs { request["timeoutMs"] = .int(Int64(timeoutMs)) }
        // The request's own wait outlasts the Gateway's deadline, so the Gateway's answer wins.
        let waitMs = Int64(max(timeoutMs ?? 30_000, 0)) + 20_000
        var outcome = await Self.invokeOutcome(of: connection, .object(request), waitMs: waitMs)
        if case .failure(.gateway(let error)) = outcome, error.retryable == true, configuration.has(.resendRetryableInvoke) {
            outcome = await Self.invokeOutcome(of: connection, .object(request), waitMs: waitMs)
        }
        switch outcome {
        case .success:
            return .ok
        case .failure(let failure):
            let kind = NodeInvokeFailureRule.classify(failure)
            let advice = switch kind {
            case .notDispatched: "not dispatched; it can be run again once the node is connected"
            case .preDispatchRejected: "rejected before dispatch; not run again until the refusal is resolved"
            case .outcomeUnknown: "outcome unknown; the command may have run, so it is not run again automatically"
            }
            return .error("\(kind.rawValue): \(failure) (\(advice))")
        }
    }

    private static func invokeOutcome(of connection: GatewayConnection, _ params: JSONValue, waitMs: Int64) async -> Result<JSONValue, RequestFailure> {
        do {
            let response = try await connection.request(GatewayMethod.nodeInvoke.rawValue, params: params, timeoutMs: waitMs)
            return .success(try response.successPayload())
        } catch let failure as RequestFailure {
            return .failure(failure)
        } catch {
            return .failure(.connectionLost)
        }
    }
}
