import Foundation
import GatewayProtocol

/// A `chat.send` request that passed validation: what the chat store applies. Pure, so that the
/// handler and the fault layer (which loses only requests the Gateway would apply) read the same
/// rule.
struct ChatSendRequest: Sendable, Hashable {
    /// The session the message goes to.
    var sessionKey: String
    /// The message text.
    var text: String
    /// The client's idempotency key.
    var idempotencyKey: String
    /// The queue mode, when the client named a known one.
    var mode: ChatQueueMode?

    /// Validates `chat.send` params `{sessionKey, message, idempotencyKey, queueMode?,
    /// attachments?, …}` against the closed schema of the generation; the error (its `shape`) is the answer.
    /// Upstream refuses NUL bytes and an empty message without attachments (chat.ts
    /// `sanitizeChatSendMessageInput`, openclaw/openclaw@00d420411002f771adc6ec05e834a383e0600f4b).
    static func parse(_ params: JSONValue?, generation: ChatGeneration) -> Result<ChatSendRequest, GatewayError> {
        func invalid(_ detail: String) -> Result<ChatSendRequest, GatewayError> {
            .failure(GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue,
                                message: "invalid \(GatewayMethod.chatSend.rawValue) params: \(detail)")))
        }
        if case .failure(let error) = ChatStore.sendSchema(generation).validate(params) {
            return .failure(GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: error.message)))
        }
        let mode = params?["queueMode"]?.stringValue.flatMap(ChatQueueMode.init(rawValue:))
        guard let sessionKey = params?["sessionKey"]?.stringValue, !sessionKey.isEmpty else { return invalid("sessionKey required") }
        guard let text = params?["message"]?.stringValue else { return invalid("message must be a string") }
        guard let key = params?["idempotencyKey"]?.stringValue, !key.isEmpty else { return invalid("idempotencyKey required") }
        if text.contains("\u{0}") {
            return .failure(GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "message must not contain null bytes")))
        }
        if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, params?["attachments"]?.arrayValue?.isEmpty ?? true {
            return .failure(GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "message or attachment required")))
        }
        return .success(ChatSendRequest(sessionKey: sessionKey, text: text, idempotencyKey: key, mode: mode))
    }
}
