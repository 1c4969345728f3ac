import GatewayProtocol
import MockGateway

/// One `chat.send` request as it arrived at the Gateway.
public struct ChatSendRequest: Sendable, Hashable, CustomStringConvertible {
    /// The connection it came on.
    public var connectionId: String
    /// The request id.
    public var requestId: String
    /// `params.sessionKey`.
    public var sessionKey: String?
    /// `params.message`.
    public var text: String?
    /// `params.idempotencyKey`.
    public var idempotencyKey: String?

    /// `"text" key K on C`.
    public var description: String {
        "\(JSONValue.string(text ?? "?").jsonString) key \(idempotencyKey ?? "none") on \(connectionId)"
    }
}

/// Steps of the chat outbox and transcript cache scenarios.
extension ScenarioRun {
    /// The `chat.send` requests the Gateway received after `cursor`, in arrival order.
    public func chatSends(from cursor: EventCursor = .start, on gateway: Gateway? = nil) -> [ChatSendRequest] {
        events(from: cursor, on: gateway).compactMap { event in
            guard case .frameIn(let connectionId, .request(let request)?, _) = event, request.method == GatewayMethod.chatSend.rawValue else { return nil }
            return ChatSendRequest(connectionId: connectionId, requestId: request.id,
                                   sessionKey: request.params?["sessionKey"]?.stringValue,
                                   text: request.params?["message"]?.stringValue,
                                   idempotencyKey: request.params?["idempotencyKey"]?.stringValue)
        }
    }

    /// Whether `event` is a `chat.history` request.
    public static func isHistoryRead(_ event: MockGateway.GatewayEvent) -> Bool {
        guard case .frameIn(_, .request(let request)?, _) = event else { return false }
        return request.method == GatewayMethod.chatHistory.rawValue
    }

    /// The user rows the Gateway stored for `texts` (in the default session), in transcript order.
    public func storedUserTexts(on gateway: Gateway? = nil) async -> [String] {
        await (gateway ?? self.gateway).chatMessages().filter { $0.role == .user }.map(\.text)
    }

    /// Waits until the Gateway stored a user row with `text` after `cursor` (whether or not any
    /// connection is subscribed to its `session.message`).
    public func waitForStoredUserText(_ text: String, from cursor: EventCursor) async throws {
        try await waitForEvent("the Gateway storing \(JSONValue.string(text).jsonString)", from: cursor, where: { event in
            guard case .chatMessageStored(let message) = event else { return false }
            return message.role == .user && message.text == text
        })
    }

    /// Asks the client whether its chat view shows `stimulus`'s expectation (`expect-transcript`
    /// or `expect-outbox`); an `error` answer fails the run with what the client shows (see
    /// ``expectClientShows(_:_:)``).
    public func expectChatView(_ stimulus: Stimulus, _ message: String) async throws {
        try await expectClientShows(stimulus, message)
    }

    /// Sends `stimuli` in order (each one must be answered `ok`: `.goOffline, .goOnline`), then
    /// asks the client whether its chat view shows `expectation` (``expectChatView(_:_:)``).
    public func expectChatView(_ expectation: Stimulus, after stimuli: [Stimulus], _ message: String) async throws {
        for stimulus in stimuli { try await client.stimulate(stimulus) }
        try await expectChatView(expectation, message)
    }

    /// Asks the client to send `text` (the `send-message` stimulus) and requires its chat view to
    /// show the conversation: the message and the Gateway's `echo:` reply (failure: `the chat
    /// view does not show the conversation while online`).
    /// - Returns: the transcript it shows, `[text, "echo: text"]`.
    @discardableResult
    public func expectConversationShown(afterSending text: String) async throws -> [String] {
        try await client.stimulate(.sendMessage(text))
        let transcript = [text, "echo: \(text)"]
        try await expectChatView(.expectTranscript(transcript), "the chat view does not show the conversation while online")
        return transcript
    }

    /// Pairs the client (auto-approval must be on), waits for its operator session and takes the
    /// chat view online: the starting point of every chat scenario.
    @discardableResult
    public func chatReady() async throws -> SessionInfo {
        let session = try await operatorSession()
        try await client.stimulate(.goOnline)
        return session
    }
}
