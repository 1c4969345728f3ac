import Conformance
import GatewayProtocol
import MockGateway

let pres004 = Scenario(
    "PRES-004", .must,
    title: "a handled:false beacon reply is not durable: the next wake sends again",
    requirement: "A node.presence.alive reply with handled:false (pairing_changed, persist_failed, ...) does not count as recorded: on the next background wake the client sends the beacon again.",
    source: "docs/protocol.md §6.6",
    discussion: """
        Current profile. Pairs the client automatically; the Gateway is set to answer the next \
        beacon with handled:false, pairing_changed, and the client is woken (silent_push). Two \
        minutes later the Gateway is set to answer handled:false, persist_failed, and the client \
        is woken again: a beacon must follow. Two minutes later a third wake must send the beacon \
        once more (this one is persisted). With a real clock the gaps are a few seconds.
        """,
    tags: ["presence", "background"],
    needs: [.backgroundWake],
    profiles: .current,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.nodeSession()
    let refusals: [NodeEventReason?] = [.pairingChanged, .persistFailed, nil]
    for (index, refusal) in refusals.enumerated() {
        let wake = index + 1
        if let refusal { await run.gateway.forceNextPresenceReply(handled: false, reason: refusal.rawValue) }
        let (handled, reason) = try await run.reply(to: .backgroundWake(trigger: "silent_push"), until: .presenceAnswered.named(
            wake == 1 ? "node.presence.alive after the first wake"
                : "node.presence.alive after wake \(wake), the previous beacon having been answered handled:false")).fields
        if let refusal {
            try run.expect(!handled && reason == refusal, "the Gateway answered beacon \(wake) as scripted (precondition)",
                           expected: "handled:false \(refusal)", actual: "handled:\(handled) \(reason)")
            await run.elapse(run.wakeGap)
        }
    }
}
