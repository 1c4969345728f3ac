import Conformance
import GatewayProtocol
import MockGateway

let outbox004 = Scenario(
    "OUTBOX-004", .must,
    title: "the outbox limit of 50 messages is enforced visibly",
    requirement: "The outbox holds at most 50 messages per Gateway: the 51st written while offline is refused where the user sees it (the send-message stimulus answers error), never accepted and silently lost; the 50 queued ones are all sent on reconnect.",
    source: "docs/platforms/ios.md, docs/platforms/android.md (50 messages / 48 MB / 48 h per Gateway); docs/protocol.md §8.4",
    discussion: """
        Pairs the client, takes it offline and has the user write 50 messages, each of which must \
        be accepted, then a 51st, which must be refused with an error. Brings the client online, \
        waits until the 50th message is stored, and requires that the Gateway stored the 50 in \
        order and never received the 51st.
        """,
    tags: ["chat", "outbox", "operator"],
    needs: [.sendMessage, .goOffline, .goOnline],
    profiles: .current,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.chatReady()
    let texts = (1...50).map { "queued note \($0)" }
    try await run.stimulate([.goOffline] + texts.map { Stimulus.sendMessage($0) })
    let overflow = "queued note 51"
    try await run.expectClientRefuses(.sendMessage(overflow), "the client accepted a 51st queued message without a word",
                                      expected: "an error answer to send-message (outbox full)")

    let cursor = try await run.mark { try await run.client.stimulate(.goOnline) }
    try await run.waitForStoredUserText(texts[texts.count - 1], from: cursor)
    try await run.expectStoredUserTexts(texts, "the messages the Gateway stored")
    try run.expectNone(run.chatSends(from: .start).filter { $0.text == overflow }, "the refused 51st message was sent after all",
                       expected: "no chat.send of \(overflow)")
}
