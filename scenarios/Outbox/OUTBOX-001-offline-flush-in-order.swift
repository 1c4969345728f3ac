import Conformance
import GatewayProtocol
import MockGateway

let outbox001 = Scenario(
    "OUTBOX-001", .must,
    title: "messages written offline are sent in order, once each, with stable keys",
    requirement: "Messages written while disconnected wait in the outbox and are sent on reconnect in the order they were written, each under one idempotency key that never changes; a connection cut in the middle of the flush neither reorders nor duplicates them.",
    source: "docs/platforms/ios.md, docs/platforms/android.md (offline outbox); docs/protocol.md §8.1, §8.4",
    discussion: """
        Pairs the client, takes it offline and has the user write three messages; none may reach \
        the Gateway while offline. Arms the Gateway to cut the connection right after the first \
        acknowledged chat.send, then brings the client online. Once the third message is stored, \
        requires that the Gateway stored the three messages once each in the order written, that \
        every chat.send of one message carried the same idempotencyKey, and that the first sends \
        came in the order written.
        """,
    tags: ["chat", "outbox", "operator", "reconnect"],
    needs: [.goOffline, .goOnline, .sendMessage],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.chatReady()
    let offline = try await run.mark { try await run.client.stimulate(.goOffline) }
    let texts = ["first offline note", "second offline note", "third offline note"]
    for text in texts { try await run.client.stimulate(.sendMessage(text)) }
    try run.expectNone(run.chatSends(from: offline), "the client sent while offline", expected: "no chat.send before go-online")

    await run.gateway.cutConnectionAfterChatSends(1)
    try await run.client.stimulate(.goOnline)
    for text in texts { try await run.waitForStoredUserText(text, from: offline) }

    try await run.expectStoredUserTexts(texts, "the messages the Gateway stored, in order")
    let sends = run.chatSends(from: offline)
    for text in texts {
        let keys = Set(sends.filter { $0.text == text }.compactMap(\.idempotencyKey))
        try run.expect(keys.count == 1, "the idempotency key of \(JSONValue.string(text).jsonString) changed between sends",
                       expected: "one key for every chat.send of the message", actual: keys.sorted().joined(separator: ", "))
    }
    var firstSends: [String] = []
    for send in sends { if let text = send.text, !firstSends.contains(text) { firstSends.append(text) } }
    try run.expectEqual(firstSends, texts, "the order in which the messages were first sent")
}
