import Foundation
import GatewayProtocol
@testable import MockGateway
import Testing

/// Who receives `session.message`: the subscription rules (`SessionMessageSubscriptions`), then
/// the same rules over real sockets, next to `chat`, which every reader receives.
@Suite("Chat event subscriptions")
struct ChatSubscriptionTests {
    // MARK: - The rule

    @Test func aConnectionReceivesTheSessionsItSubscribedToOrEverySession() {
        var subscriptions = SessionMessageSubscriptions()
        #expect(!subscriptions.receives(connectionId: "a", sessionKey: "main"), "nobody receives anything by default")
        subscriptions.subscribe(connectionId: "a", key: "main")
        subscriptions.setEverySession(true, connectionId: "b")
        #expect(subscriptions.receives(connectionId: "a", sessionKey: "main"))
        #expect(!subscriptions.receives(connectionId: "a", sessionKey: "agent:main:main"), "keys match exactly")
        #expect(subscriptions.receives(connectionId: "b", sessionKey: "main"))
        #expect(subscriptions.receives(connectionId: "b", sessionKey: "anything"))

        subscriptions.subscribe(connectionId: "a", key: "main")
        subscriptions.unsubscribe(connectionId: "a", key: "main")
        #expect(!subscriptions.receives(connectionId: "a", sessionKey: "main"), "subscribing twice is one subscription")
        subscriptions.unsubscribe(connectionId: "a", key: "never")
        #expect(subscriptions.keysByConnection["a"] == nil, "an empty entry is not kept")

        subscriptions.subscribe(connectionId: "b", key: "main")
        subscriptions.setEverySession(false, connectionId: "b")
        #expect(subscriptions.receives(connectionId: "b", sessionKey: "main"), "sessions.unsubscribe leaves the per-key subscription")
        #expect(!subscriptions.receives(connectionId: "b", sessionKey: "other"))
        subscriptions.setEverySession(true, connectionId: "b")
        subscriptions.drop(connectionId: "b")
        #expect(!subscriptions.receives(connectionId: "b", sessionKey: "main"), "a closed connection loses everything")
        #expect(subscriptions == SessionMessageSubscriptions())
    }

    // MARK: - On the wire

    static let scopes = ["operator.read", "operator.write"]

    static func send(_ text: String, key: String, session: String = "main") -> JSONValue {
        ["sessionKey": .string(session), "message": .string(text), "idempotencyKey": .string(key)]
    }

    @Test func sessionMessageReachesSubscribersOnlyAndChatReachesEveryReader() async throws {
        try await Gateway.withGateway { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xC1), scopes: Self.scopes)
            let follower = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xC2), scopes: ["operator.read"])
            let everything = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xC3), scopes: ["operator.read"])
            let elsewhere = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xC4), scopes: ["operator.read"])
            let bystander = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xC5), scopes: ["operator.read"])
            for session in [writer, follower, everything, elsewhere] {
                #expect(session.hello.features.methods.contains("sessions.messages.subscribe"))
                #expect(session.hello.features.methods.contains("sessions.subscribe"))
            }
            let followed = try await follower.client.request("sessions.messages.subscribe", params: ["key": "main"])
            #expect(followed.payload?["subscribed"] == true && followed.payload?["key"] == "main")
            let all = try await everything.client.request("sessions.subscribe", params: [:])
            #expect(all.payload == ["subscribed": true])
            _ = try await elsewhere.client.request("sessions.messages.subscribe", params: ["key": "other"])

            let ack = try await writer.client.request("chat.send", params: Self.send("hello", key: "k-1"))
            #expect(ack.ok)
            let frames = (follower: try await follower.client.barrier(), everything: try await everything.client.barrier(),
                          elsewhere: try await elsewhere.client.barrier(), bystander: try await bystander.client.barrier(),
                          writer: try await writer.client.barrier())
            for (name, received) in [("sessions.messages.subscribe {main}", frames.follower), ("sessions.subscribe", frames.everything)] {
                let messages = TestClient.events("session.message", in: received)
                #expect(messages.map { $0.payload?["message"]?["role"]?.stringValue } == ["user", "assistant"], "\(name)")
                #expect(messages.first?.payload?["sessionKey"] == "main")
                #expect(messages.first?.payload?["messageSeq"] == 1 && messages.last?.payload?["messageSeq"] == 2)
                #expect(messages.first?.payload?["messageId"] == messages.first?.payload?["message"]?["__openclaw"]?["id"])
            }
            for (name, received) in [("another session's subscriber", frames.elsewhere), ("an unsubscribed reader", frames.bystander),
                                     ("the unsubscribed sender", frames.writer)] {
                #expect(TestClient.events("session.message", in: received).isEmpty, "\(name) gets no session.message")
            }
            for received in [frames.follower, frames.everything, frames.elsewhere, frames.bystander, frames.writer] {
                #expect(TestClient.events("chat", in: received).map { $0.payload?["state"]?.stringValue } == ["final"],
                        "chat is a broadcast to every reader")
            }
            let stored = gateway.events.all.compactMap { event -> String? in
                if case .chatMessageStored(let message) = event { message.text } else { nil }
            }
            #expect(stored == ["hello", "echo: hello"], "every stored row is logged, subscribed or not")
        }
    }

    @Test func unsubscribingEndsTheMessagesAndTheApprovalOptIn() async throws {
        try await Gateway.withGateway { gateway in
            let key = "agent:main:main"
            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xC6), scopes: ["operator.admin"])
            let subscribed = try await admin.client.request("sessions.messages.subscribe", params: ["key": .string(key), "includeApprovals": true])
            #expect(subscribed.payload?["includeApprovals"] == true)
            await gateway.postAssistantMessage("first", sessionKey: key)
            #expect(try await admin.client.event("session.message").payload?["sessionKey"]?.stringValue == key)

            let left = try await admin.client.request("sessions.messages.unsubscribe", params: ["key": .string(key)])
            #expect(left.payload == ["subscribed": false, "key": .string(key)], "upstream's unsubscribe reply")
            await gateway.postAssistantMessage("second", sessionKey: key)
            _ = try await gateway.createApproval(ApprovalDraft.exec("ls", sessionKey: key))
            let after = try await admin.client.barrier()
            #expect(TestClient.events("session.message", in: after).isEmpty)
            #expect(TestClient.events("session.approval", in: after).isEmpty)
            #expect(TestClient.events("chat", in: after).count == 1)

            _ = try await admin.client.request("sessions.subscribe", params: [:])
            #expect(try await admin.client.request("sessions.unsubscribe", params: [:]).payload == ["subscribed": false])
            await gateway.postAssistantMessage("third", sessionKey: key)
            #expect(TestClient.events("session.message", in: try await admin.client.barrier()).isEmpty)
            let missing = try await admin.client.request("sessions.messages.unsubscribe", params: [:])
            #expect(missing.error?.code == "INVALID_REQUEST")
        }
    }

    @Test func anOlderGatewayServesTheMessageSubscriptionWithoutApprovals() async throws {
        try await Gateway.withGateway(GatewayConfiguration(profile: .legacy)) { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xC7), scopes: ["operator.admin"])
            #expect(reader.hello.features.methods.contains("sessions.messages.subscribe"))
            await gateway.postAssistantMessage("before")
            #expect(TestClient.events("session.message", in: try await reader.client.barrier()).isEmpty)
            let reply = try await reader.client.request("sessions.messages.subscribe", params: ["key": "main", "includeApprovals": true])
            #expect(reply.payload?["subscribed"] == true && reply.payload?["includeApprovals"] == false)
            #expect(reply.payload?["approvalReplay"] == nil, "no unified approvals, no replay")
            await gateway.postAssistantMessage("after")
            let message = try await reader.client.event("session.message")
            #expect(message.payload?["message"]?["content"]?.arrayValue?.first?["text"] == "after")
        }
    }
}
