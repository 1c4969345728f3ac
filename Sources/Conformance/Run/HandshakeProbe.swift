import Foundation
import GatewayProtocol
import MockGateway

/// What the handshake probe of one profile found.
public struct ProbeResult: Sendable, Hashable {
    /// The profile probed.
    public var profile: String
    /// Whether the client got a session (any role) from a Gateway that approves every device.
    public var admitted: Bool
    /// Why it did not, as a stable key (`refused:DEVICE_AUTH_NONCE_REQUIRED`, `no-connection`).
    public var causeKey: String?
    /// Why it did not, in a sentence ("the client's connects were refused with ...").
    public var cause: String?
    /// The handshake scenario that judges that cause in detail (`HS-004`), if one does.
    public var seeAlso: String?
    /// Wall time of the probe in milliseconds.
    public var durationMs: Int64

    /// Creates a result.
    public init(profile: String, admitted: Bool, causeKey: String? = nil, cause: String? = nil, seeAlso: String? = nil,
                durationMs: Int64 = 0) {
        self.profile = profile
        self.admitted = admitted
        self.causeKey = causeKey
        self.cause = cause
        self.seeAlso = seeAlso
        self.durationMs = durationMs
    }
}

/// A short handshake run before the catalogue, once per profile: can the client get a session at
/// all? When it cannot, every scenario that needs a session fails at once with the cause found
/// here, instead of each waiting out its own deadline for the same reason.
public enum HandshakeProbe {
    /// How long the probe waits for a session, before `--slowness` scaling (virtual time in a
    /// simulated run, where a client that cannot get in is judged at once anyway).
    public static let timeoutMs = 10_000

    /// The probe as a scenario: a Gateway that approves every device, the client started, any
    /// session within ``timeoutMs``.
    /// - Parameter announced: receives the stimuli the client announced when it started.
    static func scenario(announced: @escaping @Sendable (Set<StimulusKind>) -> Void) -> Scenario { Scenario(
        "PROBE-000", .must, title: "the client gets a session from a Gateway that approves every device",
        requirement: "The client completes the handshake (hello-ok) with a Gateway that approves every device.",
        source: "docs/protocol.md §3", profiles: .all,
        options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
    ) { run in
        announced(run.client.supportedStimuli)
        let outcome = await run.gateway.events.wait(
            from: 0, timeout: run.deadline(ms: timeoutMs), on: run.timeline
        ) { event in
            if case .sessionOpened = event { return true }
            return false
        }
        if outcome.match != nil { return }
        let diagnosis = diagnose(run.events())
        throw ScenarioFailure(diagnosis.sentence, expected: "a session (hello-ok)", actual: diagnosis.key)
    } }

    /// A cause found in a Gateway's event log.
    public struct Diagnosis: Sendable, Hashable {
        /// The stable key.
        public var key: String
        /// The sentence.
        public var sentence: String
        /// The handshake scenario that judges it.
        public var seeAlso: String?
    }

    /// Why a client got no session, from everything the Gateway saw: no connection at all,
    /// connections that never sent `connect`, or the codes its connects were refused with.
    public static func diagnose(_ events: [GatewayEvent]) -> Diagnosis {
        var opened = 0
        var connects = 0
        var refusals: [String] = []
        var closes: [Int] = []
        for event in events {
            switch event {
            case .connectionOpened: opened += 1
            case .frameIn(_, .request(let request)?, _) where request.method == GatewayMethod.connect.rawValue: connects += 1
            case .handshakeRejected(_, let error, _): refusals.append(error.detailCode ?? error.code)
            case .connectionClosed(_, let code, _): closes.append(code)
            default: break
            }
        }
        if opened == 0 {
            return Diagnosis(key: "no-connection", sentence: "the client never opened a connection to the Gateway", seeAlso: nil)
        }
        if let first = refusals.first {
            let distinct = refusals.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
            let codes = distinct.joined(separator: ", ")
            let count = refusals.count == 1 ? "its connect was" : "its \(refusals.count) connects were"
            return Diagnosis(key: "refused:\(distinct.joined(separator: ","))",
                             sentence: "the client never got a session: \(count) refused with \(codes)",
                             seeAlso: seeAlso(for: first))
        }
        if connects == 0 {
            let how = closes.isEmpty ? "" : " (closed with \(Set(closes).sorted().map(String.init).joined(separator: ", ")))"
            return Diagnosis(key: "no-connect",
                             sentence: "the client never got a session: its \(opened) connection\(opened == 1 ? "" : "s") never sent connect\(how)",
                             seeAlso: "HS-001")
        }
        return Diagnosis(key: "no-answer", sentence: "the client never got a session: its connects got no decision in time",
                         seeAlso: nil)
    }

    /// The handshake scenario that judges the first code of a cause key, if any.
    static func seeAlso(forKey key: String) -> String? {
        if key == "no-connect" { return "HS-001" }
        guard key.hasPrefix("refused:") else { return nil }
        return seeAlso(for: String(key.dropFirst("refused:".count).prefix { $0 != "," }))
    }

    /// The handshake scenario that judges a refusal code in detail.
    static func seeAlso(for code: String) -> String? {
        typealias Detail = ConnectErrorDetailCode
        switch code {
        case Detail.deviceAuthNonceRequired.rawValue, Detail.deviceAuthNonceMismatch.rawValue,
             Detail.deviceAuthSignatureInvalid.rawValue: return "HS-004"
        case Detail.deviceAuthSignatureExpired.rawValue: return "HS-005"
        case Detail.deviceAuthDeviceIdMismatch.rawValue, Detail.deviceAuthPublicKeyInvalid.rawValue,
             Detail.deviceIdentityRequired.rawValue: return "HS-003"
        case Detail.protocolMismatch.rawValue: return "HS-002"
        case ErrorCode.invalidRequest.rawValue: return "HS-001"
        case ErrorCode.unavailable.rawValue: return "HS-010"
        default: return nil
        }
    }
}
