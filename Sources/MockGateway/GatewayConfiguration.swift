import Foundation
import WebSocketTransport

/// Everything a fake Gateway is started with. Every field has a default that matches a real
/// Gateway in its default configuration, except the port (0: any free port) and the clock
/// (manual, so tests control time).
public struct GatewayConfiguration: Sendable {
    /// The address to listen on. Default loopback.
    public var host: String
    /// The port; 0 picks a free one (read it back from `Gateway.port`).
    public var port: Int
    /// The Gateway generation to imitate.
    public var profile: GatewayProfile
    /// The shared-secret mode (`gateway.auth.mode`).
    public var auth: GatewayAuthMode
    /// Which pairing requests are approved without an operator.
    public var autoApproval: AutoApprovalPolicy
    /// The authentication rate limits (shared secret, device token, bootstrap token, node
    /// pairing): upstream's defaults, loopback exempt. Turn `exemptLoopback` off (and lower the
    /// limits) to exercise them against a client on the same machine.
    public var authRateLimit: AuthRateLimitConfiguration
    /// `hello-ok.policy.tickIntervalMs`, and how often `tick` is sent.
    public var tickIntervalMs: Int
    /// How long a socket may take to complete `connect` (docs/protocol.md §1.2: 15 s).
    public var handshakeTimeoutMs: Int
    /// The largest frame before `hello-ok` (64 KiB; close 1009 beyond it).
    public var maxPreauthPayloadBytes: Int
    /// The largest frame after `hello-ok` (`policy.maxPayload`, 25 MiB).
    public var maxPayloadBytes: Int
    /// The outbound buffer per socket (`policy.maxBufferedBytes`, 50 MiB).
    public var maxBufferedBytes: Int
    /// The clock every rule reads.
    public var clock: GatewayClock
    /// The seed of every random choice (request ids, nonces, tokens, race interleavings).
    public var seed: UInt64
    /// Draw bearer secrets (device tokens, bootstrap tokens) from the system's cryptographically
    /// secure generator instead of the seeded sequence, so that knowing the seed (or one token)
    /// predicts none of them. `harness serve` sets it unless `--seed` is given; request ids,
    /// nonces and race interleavings still follow ``seed``.
    public var secretsFromSystemRandom: Bool
    /// The 32-byte seed of the Gateway's own Ed25519 identity (`gateway.identity.get`). Two
    /// Gateways with different seeds have different identities.
    public var identitySeed: [UInt8]
    /// Replace secrets with `"<redacted>"` in the transcript and everything the console prints
    /// (``SecretRedactor``).
    public var redactSecrets: Bool
    /// Also write the transcript to this JSON Lines file as it happens (every entry whole,
    /// whatever `memoryBudget` keeps in memory).
    public var transcriptFile: URL?
    /// How much the Gateway keeps in memory about the traffic (transcript, event log).
    public var memoryBudget: GatewayMemoryBudget
    /// The wake words sent in `voicewake.changed` after a node connects.
    public var voiceWakeTriggers: [String]
    /// `gateway.nodes.commands.allow` / `deny`: the node command policy's configuration
    /// (docs/protocol.md §6.7; default: the platform allowlists only).
    public var nodeCommands = NodeCommandPolicy()
    /// The agents the Gateway knows, each with its workspace directory (`agents.workspace.*`);
    /// by default the one agent `main` without a workspace.
    public var agents: AgentRoster = .standard
    /// The apps' fixtures a Gateway starts with (`commands.list`), from `harness serve --fixtures`
    /// or a test; empty by default.
    public var fixtures = GatewayFixtures()
    /// Answer every connect with `UNAVAILABLE` / close 1013 ("gateway starting") until cleared
    /// with `Gateway.setStartingUp(false)`.
    public var startingUp: Bool
    /// The `retryAfterMs` of the `UNAVAILABLE` answers while ``startingUp`` (default: the real
    /// Gateway's 500 ms).
    public var startingUpRetryAfterMs: Int = ConnectAdmission.defaultStartingUpRetryAfterMs
    /// Serve `wss://` with this certificate and key (TLS through OpenSSL; Linux only for now).
    /// Ignored on an in-memory ``network``.
    public var tls: WebSocketTLSServerConfiguration?
    /// The URL setup codes carry, when clients must use another address than the one the
    /// Gateway listens on; `nil` uses `Gateway.url` with ``advertisedHost``.
    public var advertisedURL: String?
    /// The host setup codes name when ``advertisedURL`` is not set: a LAN address for a Gateway
    /// bound to `0.0.0.0`; `nil` is ``host``.
    public var advertisedHost: String?
    /// Keep the identity, paired devices, tokens, pending requests and bootstrap tokens in this
    /// state directory, so that they survive a restart of the process; `nil` keeps them in
    /// memory only. A loaded identity replaces ``identitySeed``.
    public var stateStore: GatewayStateStore?
    /// Listen on this in-memory network instead of a real socket (simulated conformance runs);
    /// `nil` binds ``host``:``port``.
    public var network: InMemoryNetwork?

    /// Creates a configuration; every parameter has its default.
    public init(
        host: String = "127.0.0.1",
        port: Int = 0,
        profile: GatewayProfile = .current,
        auth: GatewayAuthMode = .none,
        autoApproval: AutoApprovalPolicy = .manual,
        authRateLimit: AuthRateLimitConfiguration = .upstreamDefault,
        tickIntervalMs: Int = 30_000,
        handshakeTimeoutMs: Int = 15_000,
        maxPreauthPayloadBytes: Int = 64 * 1024,
        maxPayloadBytes: Int = 26_214_400,
        maxBufferedBytes: Int = 52_428_800,
        clock: GatewayClock = .manual(),
        seed: UInt64 = 0x0C1A_55EED,
        secretsFromSystemRandom: Bool = false,
        identitySeed: [UInt8] = Array(repeating: 0x47, count: 32),
        redactSecrets: Bool = true,
        transcriptFile: URL? = nil,
        voiceWakeTriggers: [String] = ["openclaw", "claude"],
        startingUp: Bool = false,
        tls: WebSocketTLSServerConfiguration? = nil,
        advertisedURL: String? = nil,
        stateStore: GatewayStateStore? = nil,
        network: InMemoryNetwork? = nil,
        memoryBudget: GatewayMemoryBudget = .standard
    ) {
        self.host = host
        self.port = port
        self.profile = profile
        self.auth = auth
        self.autoApproval = autoApproval
        self.authRateLimit = authRateLimit
        self.tickIntervalMs = tickIntervalMs
        self.handshakeTimeoutMs = handshakeTimeoutMs
        self.maxPreauthPayloadBytes = maxPreauthPayloadBytes
        self.maxPayloadBytes = maxPayloadBytes
        self.maxBufferedBytes = maxBufferedBytes
        self.clock = clock
        self.seed = seed
        self.secretsFromSystemRandom = secretsFromSystemRandom
        self.identitySeed = identitySeed
        self.redactSecrets = redactSecrets
        self.transcriptFile = transcriptFile
        self.voiceWakeTriggers = voiceWakeTriggers
        self.startingUp = startingUp
        self.tls = tls
        self.advertisedURL = advertisedURL
        self.advertisedHost = nil
        self.stateStore = stateStore
        self.network = network
        self.memoryBudget = memoryBudget
    }
}
