import GatewayProtocol

/// The params of a `node.event` request: the event name and its payload.
struct NodeEventRequest: Sendable, Hashable {
    /// The event name (never empty).
    var event: String
    /// The payload as the node sent it: `payloadJSON`, or `payload` written as JSON; `nil` when
    /// there is none. `payloadJSON` must be a string by schema, but `null` is accepted: Swift's
    /// generic sender can produce it (docs/protocol.md §6.5).
    var payloadJSON: String?
    /// The payload parsed, when it is JSON.
    var payload: JSONValue?

    /// Reads the params; `nil` when `event` is not a non-empty string.
    init?(params: JSONValue?) {
        guard let params = params?.objectValue, let event = params["event"]?.stringValue, !event.isEmpty else { return nil }
        self.event = event
        if let text = params["payloadJSON"]?.stringValue {
            payloadJSON = text
        } else if let payload = params["payload"], !payload.isNull {
            payloadJSON = payload.jsonString
        } else {
            payloadJSON = nil
        }
        payload = payloadJSON.flatMap { try? JSONValue(parsing: $0) }
    }
}
