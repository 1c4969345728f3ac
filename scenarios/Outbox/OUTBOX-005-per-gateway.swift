import Conformance
import GatewayProtocol
import MockGateway

let outbox005 = Scenario(
    "OUTBOX-005", .must,
    title: "the outbox is per Gateway: a switch never flushes one Gateway's messages into another",
    requirement: "Messages queued for one Gateway belong to it: after switching to another Gateway the client sends them nowhere, and sends them to their own Gateway once it is back there.",
    source: "docs/platforms/ios.md, docs/platforms/android.md (a persistent outbox per paired Gateway; multiple Gateways); docs/protocol.md §8.4",
    discussion: """
        Pairs the client with the run's Gateway, takes it offline and has the user write a message \
        there. Starts a second Gateway and switches the client to it; the user writes a message \
        there. The second Gateway must store only its own message. Then the client switches back; \
        the first Gateway must store only its own message.
        """,
    tags: ["chat", "outbox", "operator", "switch-gateway"],
    needs: [.sendMessage, .goOffline, .goOnline, .switchGateway],
    profiles: .current,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.chatReady()
    let forFirst = "meant for the first Gateway"
    try await run.stimulate(.goOffline, .sendMessage(forFirst))

    let second = try await run.switchToOtherGateway(.operator, "the client's operator session on the second Gateway").gateway
    let forSecond = "meant for the second Gateway"
    try await run.stimulate(.sendMessage(forSecond), .goOnline)
    try run.expectNone(run.chatSends(on: second).filter { $0.text == forFirst }, "the client flushed the first Gateway's message into the second one",
                       expected: "no chat.send of it on the second Gateway")
    try await run.expectStoredUserTexts([forSecond], "the messages the second Gateway stored", on: second)

    let back = try await run.mark { try await run.client.stimulate(.switchGateway(url: run.gateway.url)) }
    try await run.operatorSession("the client's operator session back on the first Gateway", from: back)
    try await run.client.stimulate(.goOnline)
    try await run.expectStoredUserTexts([forFirst], "the messages the first Gateway stored")
}
