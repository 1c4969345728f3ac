import Conformance
import GatewayProtocol
import MockGateway

let outbox002 = Scenario(
    "OUTBOX-002", .must,
    title: "an ambiguous send is resolved by reading history, never resent under a new key",
    requirement: "When a chat.send went out and its acknowledgement never came, the outcome is unknown: the client reads chat.history before it sends that message again, and any resend carries the same idempotencyKey, so the Gateway stores the message once.",
    source: "docs/platforms/ios.md, docs/platforms/android.md (offline outbox: never replay an ambiguous send blindly); gateway protocol.md (side-effecting methods take idempotency keys); docs/protocol.md §8.1, §8.4",
    discussion: """
        Pairs the client, then arms the Gateway to store the next chat.send but drop its ack and \
        cut the connection. The user writes one message. After the client reconnects, requires a \
        chat.history read on the new operator session, then takes the client online once more so \
        that its outbox settles. Every chat.send of the message must carry the first key, every \
        resend must follow a history read, and the Gateway must hold the message once.
        """,
    tags: ["chat", "outbox", "operator", "faults"],
    needs: [.sendMessage, .goOnline],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let first = try await run.chatReady()
    let text = "deploy the release branch"
    let cursor = try await run.sendWithLostAck(text, after: first)

    let log = run.events(from: cursor)
    let sendIndices = log.indices.filter { index in
        guard case .frameIn(_, .request(let request)?, _) = log[index], request.method == "chat.send" else { return false }
        return request.params?["message"]?.stringValue == text
    }
    let sends = run.chatSends(from: cursor).filter { $0.text == text }
    try run.expect(!sends.isEmpty, "the client never sent the message", expected: "a chat.send of it", actual: "none")
    let firstKey = sends[0].idempotencyKey
    try run.expectNone(sends.dropFirst().filter { $0.idempotencyKey != firstKey }, "the client resent the ambiguous message under a new idempotency key",
                       expected: "every chat.send with key \(firstKey ?? "?")")
    for (position, index) in sendIndices.enumerated().dropFirst() {
        let readBefore = log[sendIndices[position - 1]..<index].contains(where: ScenarioRun.isHistoryRead)
        try run.expect(readBefore, "the client resent the message without reading chat.history first",
                       expected: "chat.history between the lost send and the resend", actual: "\(sends[position]) right after the lost one")
    }
    try await run.expectEqual(run.storedUserTexts().filter { $0 == text }.count, 1, "how many times the Gateway stored the message")
}
