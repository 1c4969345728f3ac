import GatewayProtocol

/// `talk.mode`: a client turns talk mode on or off; the Gateway echoes the change to every
/// operator as the `talk.mode` event.
///
/// Upstream: the handler `src/gateway/server-methods/talk.ts@10d9d44c3c453ced500bde29237f830bcf1d4119`
/// and `TalkModeParamsSchema` (`packages/gateway-protocol/src/schema/channels.ts@836cdead12eac0cbed2255fb6d70169ae9762f89`):
/// params closed `{enabled: boolean, phase?: string}`; the answer and the broadcast payload are
/// `{enabled, phase: <phase> | null, ts}`. The Gateway keeps no talk state: each call is echoed.
enum TalkModeSwitch {
    /// The payload of a switch to `enabled` at `nowMs`.
    static func payload(enabled: Bool, phase: String?, nowMs: Int64) -> JSONValue {
        ["enabled": .bool(enabled), "phase": phase.map(JSONValue.string) ?? .null, "ts": .int(nowMs)]
    }

    /// The answer to `params` (which is also the event payload), or the `INVALID_REQUEST` refusal.
    static func handle(_ params: JSONValue?, nowMs: Int64) -> Result<JSONValue, GatewayError> {
        do throws(GatewayError) {
            let reader = try MethodParams(params, method: .talkMode, members: ["enabled", "phase"], required: ["enabled"])
            let enabled = try reader.bool("enabled") ?? false
            let phase = try reader.string("phase")
            return .success(payload(enabled: enabled, phase: phase, nowMs: nowMs))
        } catch {
            return .failure(error)
        }
    }
}
