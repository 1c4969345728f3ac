import Foundation
import GatewayProtocol

extension ConnectAdmission {
    /// The Gateway settings the admission depends on.
    public struct Configuration: Sendable, Hashable {
        /// The shared-secret mode.
        public var auth: GatewayAuthMode
        /// The Gateway generation: protocol version and accepted windows.
        public var profile: GatewayProfile
        /// Whether the Gateway still starts up (every connect gets `UNAVAILABLE`, close 1013).
        public var isStartingUp: Bool
        /// The `retryAfterMs` of the `UNAVAILABLE` answer while starting up (upstream's is 500).
        public var startingUpRetryAfterMs: Int = ConnectAdmission.defaultStartingUpRetryAfterMs
        /// The largest first frame (64 KiB; close 1009 beyond it).
        public var maxPreauthPayloadBytes: Int
        /// The device-proof checks (holds the off-by-default legacy v1 switch).
        public var deviceProof: DeviceProofVerifier
        /// The socket this connect came on (loopback, `Host`, proxy headers, `Origin`), for the
        /// rules of a connect without a device identity. Default: a remote peer.
        public var connection: ConnectionFacts = ConnectionFacts()

        /// The real Gateway's pre-auth frame limit, `MAX_PREAUTH_PAYLOAD_BYTES`.
        public static let defaultMaxPreauthPayloadBytes = 64 * 1024

        /// Creates a configuration.
        public init(
            auth: GatewayAuthMode = .none, profile: GatewayProfile = .current, isStartingUp: Bool = false,
            maxPreauthPayloadBytes: Int = Configuration.defaultMaxPreauthPayloadBytes,
            deviceProof: DeviceProofVerifier = DeviceProofVerifier()
        ) {
            self.auth = auth
            self.profile = profile
            self.isStartingUp = isStartingUp
            self.maxPreauthPayloadBytes = maxPreauthPayloadBytes
            self.deviceProof = deviceProof
        }

        /// The admission-relevant part of a Gateway configuration.
        public init(_ configuration: GatewayConfiguration) {
            self.init(
                auth: configuration.auth, profile: configuration.profile, isStartingUp: configuration.startingUp,
                maxPreauthPayloadBytes: configuration.maxPreauthPayloadBytes)
            self.startingUpRetryAfterMs = configuration.startingUpRetryAfterMs
        }
    }

    /// The rule that decided a rejection, in the order the rules run (see ``ConnectAdmission``).
    public enum Stage: String, Sendable, Hashable, CaseIterable {
        /// The first frame exceeded the pre-auth size limit (close 1009, no response).
        case frameSize
        /// The first frame was not a request frame (no response), not `connect`, or its params
        /// failed the schema (close 1008).
        case firstFrame
        /// The Gateway is starting (close 1013); decided before the protocol.
        case startup
        /// No common protocol version (close 1002).
        case protocolNegotiation
        /// Unknown role (close 1008).
        case role
        /// A connect without a device block that may not go without one (close 1008).
        case deviceIdentity
        /// The device block failed verification (close 1008).
        case deviceProof
        /// Shared secret, bootstrap token and device token all failed, or the address is rate
        /// limited (close 1008).
        case authentication
    }

    /// How an admitted connect authenticated (docs/protocol.md §5.3).
    public enum AuthMethod: Sendable, Hashable {
        /// Auth mode `none`: nothing to check.
        case none
        /// The shared token matched.
        case sharedToken
        /// The shared password matched.
        case password
        /// A bootstrap (setup-code) token verified; it wins over every other method. Consume it
        /// after `hello-ok`.
        case bootstrapToken(String)
        /// The paired device's token for the role verified.
        case deviceToken(DeviceTokenCandidate)
    }

    /// A connect that passed every admission rule; pairing and token issuance come next.
    public struct Admitted: Sendable, Hashable {
        /// The `connect` request id, for the `hello-ok` response.
        public var requestID: String
        /// The schema-valid params.
        public var params: ConnectParams
        /// The effective role (`operator` when absent).
        public var role: GatewayRole
        /// The highest version both sides offer inside the profile's window. `hello-ok.protocol`
        /// is this only with a profile that does not ``GatewayProfile/announcesCurrentProtocol``.
        public var negotiatedProtocol: Int
        /// Whether the client came in below the profile's protocol version (the legacy N-1
        /// window): upstream withholds plugin-owned caps and commands from such a node.
        public var isLegacyProtocol: Bool
        /// How the connect authenticated.
        public var authMethod: AuthMethod
        /// The verified device; `nil` only for a non-node connect without a device block.
        public var device: VerifiedDevice?
        /// Whether the requested scopes stand. `false` for a connect without a device identity
        /// admitted by its shared secret: upstream clears such self-declared scopes.
        public var keepsUnboundScopes: Bool

        /// Creates an admitted connect.
        public init(
            requestID: String, params: ConnectParams, role: GatewayRole, negotiatedProtocol: Int, isLegacyProtocol: Bool,
            authMethod: AuthMethod, device: VerifiedDevice?, keepsUnboundScopes: Bool = true
        ) {
            self.keepsUnboundScopes = keepsUnboundScopes
            self.requestID = requestID
            self.params = params
            self.role = role
            self.negotiatedProtocol = negotiatedProtocol
            self.isLegacyProtocol = isLegacyProtocol
            self.authMethod = authMethod
            self.device = device
        }
    }

    /// A refused handshake: send `response` (when there is one), then close with `closeCode` and
    /// `closeReason` (docs/protocol.md §10.4: response first, then close).
    public struct Rejection: Error, Sendable, Hashable, CustomStringConvertible {
        /// The rule that refused.
        public var stage: Stage
        /// The id to echo in the `res` frame, as received (a string, or a number from
        /// non-conforming clients); `nil` when the first message had no id: then no response is sent.
        public var requestID: JSONValue?
        /// The error object.
        public var error: ErrorShape
        /// The close code.
        public var closeCode: GatewayCloseCode
        /// The close reason, at most 120 UTF-8 bytes.
        public var closeReason: String

        /// Creates a rejection; `closeReason` is truncated to 120 bytes.
        public init(stage: Stage, requestID: JSONValue?, error: ErrorShape, closeCode: GatewayCloseCode, closeReason: String) {
            self.stage = stage
            self.requestID = requestID
            self.error = error
            self.closeCode = closeCode
            self.closeReason = CloseReason.truncate(closeReason)
        }

        /// The `res` frame to send before closing, as JSON (so that a non-string id is echoed
        /// verbatim), or `nil` when no response is due.
        public var response: JSONValue? {
            guard let requestID else { return nil }
            var object: [String: JSONValue] = ["type": "res", "id": requestID, "ok": false]
            if let encoded = try? error.json() { object["error"] = encoded }
            return .object(object)
        }

        /// The response as a typed frame, when the request id is a string.
        public var responseFrame: ResponseFrame? {
            guard let id = requestID?.stringValue else { return nil }
            return .failure(id: id, error: error)
        }

        /// `details.code`, if any.
        public var detailCode: String? { error.detailCode }

        /// A one-line summary for logs.
        public var description: String {
            "\(stage.rawValue): \(error.code) \(error.message) → close \(closeCode) \"\(closeReason)\""
        }
    }

    /// The outcome of the first frame.
    public enum Decision: Sendable, Hashable {
        /// Proceed to pairing, token issuance and `hello-ok`.
        case admitted(Admitted)
        /// Answer and close.
        case rejected(Rejection)

        /// The admitted connect, if any.
        public var admitted: Admitted? {
            if case .admitted(let value) = self { value } else { nil }
        }

        /// The rejection, if any.
        public var rejection: Rejection? {
            if case .rejected(let value) = self { value } else { nil }
        }
    }
}
