import GatewayProtocol


/// What the Gateway core records to and signs with, fixed for its life.
struct GatewayEnvironment: Sendable {
    /// The Gateway event log.
    let events: EventLog<GatewayEvent>
    /// The wire transcript.
    let transcript: Transcript
    /// The Gateway's own device identity (push relay signatures, `gateway.identity.get`).
    let identity: DeviceIdentity
    /// When the Gateway started, on its clock (`hello-ok.snapshot.uptimeMs`).
    let startedAtMs: Int64
    /// The generation of the state directory this Gateway started from (0 without one).
    let generation: Int
    /// The SHA-256 fingerprint of the TLS certificate when serving `wss://`, for setup codes.
    let tlsFingerprint: String?
}
