/// What a LAN discovery advertisement of this Gateway would carry: the extension point for
/// Bonjour/mDNS (`_openclaw-gw._tcp`), which the fake Gateway does not implement. The harness's
/// own machines must not send multicast, so an advertiser could not be tested here; a project
/// that wants one implements ``GatewayAdvertiser`` with its platform's DNS-SD API and starts it
/// with ``Gateway/advertisement``.
public struct GatewayAdvertisement: Sendable, Hashable {
    /// The URL a phone should connect to (the setup codes' URL).
    public var url: String
    /// The port.
    public var port: Int
    /// Whether the Gateway serves `wss://`.
    public var tls: Bool
    /// The TLS certificate's SHA-256 fingerprint, for TXT records that pin it.
    public var tlsFingerprint: String?
    /// The Gateway's device id (`gateway.identity.get`).
    public var gatewayDeviceId: String
}

/// Publishes a ``GatewayAdvertisement`` on the local network and withdraws it (Bonjour/mDNS).
/// Not implemented by this package: see ``GatewayAdvertisement``.
public protocol GatewayAdvertiser: Sendable {
    /// Starts (or replaces) the advertisement.
    /// - Throws: when the platform refuses it.
    func advertise(_ advertisement: GatewayAdvertisement) async throws
    /// Stops advertising.
    func withdraw() async
}

extension Gateway {
    /// What a discovery advertisement of this Gateway would say.
    public var advertisement: GatewayAdvertisement {
        GatewayAdvertisement(url: advertisedURL, port: port, tls: tlsFingerprint != nil, tlsFingerprint: tlsFingerprint,
                             gatewayDeviceId: identity.deviceId)
    }
}
