import Foundation
import GatewayProtocol
import WebSocketTransport

/// How the reference client presents itself in `connect.params.client` (docs/protocol.md §3.3).
public struct ClientPersona: Sendable, Hashable {
    /// `client.id`; `openclaw-ios` by default.
    public var clientId: ClientID
    /// `client.displayName`.
    public var displayName: String
    /// `client.version`.
    public var version: String
    /// `client.platform`; signed (normalised) in v3.
    public var platform: String
    /// `client.deviceFamily`; signed (normalised) in v3.
    public var deviceFamily: String?
    /// `client.modelIdentifier`.
    public var modelIdentifier: String?
    /// `locale`.
    public var locale: String
    /// `userAgent`.
    public var userAgent: String

    /// Creates a persona.
    public init(clientId: ClientID = .iOS, displayName: String = "Reference iPhone", version: String = "2026.8.1",
                platform: String = "iOS 18.4.0", deviceFamily: String? = "iPhone", modelIdentifier: String? = "iPhone17,1",
                locale: String = "en-US", userAgent: String = "Version 18.4 (Build 22E240)") {
        self.clientId = clientId
        self.displayName = displayName
        self.version = version
        self.platform = platform
        self.deviceFamily = deviceFamily
        self.modelIdentifier = modelIdentifier
        self.locale = locale
        self.userAgent = userAgent
    }

    /// The iOS app (`openclaw-ios`, `iOS 18.4.0`, `iPhone`), the default.
    public static let iPhone = ClientPersona()

    /// The Apple Watch app in direct mode (`openclaw-watchos`, `watchOS 11.2`, `Apple Watch`).
    public static let appleWatch = ClientPersona(
        clientId: .watchOS, displayName: "Reference Watch", version: "2026.8.1", platform: "watchOS 11.2",
        deviceFamily: "Apple Watch", modelIdentifier: "Watch7,1", userAgent: "watchOS 11.2")

    /// The TypeScript node host (`node-host`, platform `linux`, no family).
    public static let nodeHost = ClientPersona(
        clientId: "node-host", displayName: "Reference node host", version: "2026.8.1", platform: "linux",
        deviceFamily: nil, modelIdentifier: nil, userAgent: "node-host")
}

/// When the operator session of the reference client runs.
public enum OperatorSessionPolicy: String, Sendable, Hashable {
    /// Never: a node-only client. Operator stimuli are unsupported.
    case disabled
    /// Next to the node session, as the iOS app does. Its first connect waits until the node
    /// session's first connect was answered, so that on a fresh device the node request comes
    /// first and the operator request supersedes it with one merged request.
    case enabled
}

/// How the reference client reaches the Gateway.
public enum ReferenceTransport: String, Sendable, Hashable {
    /// A node session (and optionally an operator session) over WebSocket: the phone apps and
    /// node hosts (docs/protocol.md §3).
    case webSocket
    /// The Apple Watch direct mode: HTTP requests to `/api/nodes/watch/*`, a node only, paired
    /// through a `node` setup code (docs/protocol.md §13). ``ReferenceConfiguration/persona``
    /// should be ``ClientPersona/appleWatch`` (any other persona is replaced by it); operator
    /// sessions and WebSocket stimuli do not apply.
    case watchDirect
}

/// Everything the reference client needs to run.
public struct ReferenceConfiguration: Sendable {
    /// The Gateway (`ws://host:port`).
    public var gatewayURL: String
    /// The shared Gateway token, when the Gateway uses token auth.
    public var sharedToken: String?
    /// Where the identity (`identity.json`) and device tokens (`device-auth.json`) live.
    /// Deleting the directory's contents is a reinstall.
    public var stateDirectory: URL
    /// Seed for backoff jitter.
    public var seed: UInt64
    /// The time source of every protocol timer.
    public var clock: any ClientClock
    /// The switched-on bugs (empty for the correct client).
    public var mutants: Set<Mutant>
    /// The signature payload layout: v3 (default, as the TypeScript client) or v2 (as Swift).
    public var signatureVersion: DeviceAuthPayload.Version
    /// `client` fields.
    public var persona: ClientPersona
    /// Whether an operator session runs next to the node session.
    public var operatorSession: OperatorSessionPolicy
    /// Scopes the operator session asks for when it has no stored token scopes to reuse.
    public var operatorScopes: [String]
    /// How long a stimulus may wait for the client to reach the state it asks for (real time).
    public var stimulusTimeout: Duration
    /// Whether frames are sent as binary WebSocket messages (Swift does) or as text.
    public var sendsBinaryFrames: Bool
    /// A setup code to pair with on the first connect (base64url JSON `{url, bootstrapToken}`,
    /// optionally as an `oc-pair://` link). Ignored when the device already holds a token for
    /// that Gateway, so a relaunch never presents the bootstrap token again.
    public var setupCode: String?
    /// How sockets are opened: real TCP by default, an `InMemoryNetwork` in a simulated run.
    public var connector: any WebSocketConnector
    /// Derive device keys and request ids from ``seed`` instead of the system's random source,
    /// so that a run with the same seed produces the same frames (conformance runs). On Apple
    /// platforms `device.signature` still differs from run to run: CryptoKit randomizes Ed25519
    /// signatures (each verifies).
    public var reproducible: Bool
    /// Flush the identity file to the disk on every write (the default). A throwaway state
    /// directory (a conformance run's) can skip the flushes, which cost the disk's latency.
    public var durableState: Bool
    /// Keep the state files (identity, device tokens, chat book) here instead of in
    /// ``stateDirectory``: what a simulated conformance run does, so that its client's disk is
    /// part of the simulation. A client started again on the same files (a restart, a cold
    /// start) reads what the previous one wrote. `nil` (the default): the state directory.
    public var memoryState: InMemoryStateFiles?
    /// The commands the node declares in `connect.commands`; `nil` declares every command the
    /// reference client implements. A client that declares fewer imitates a third-party node
    /// with its own command set: scenarios that need an undeclared command are `unsupported`
    /// for it. The client still answers an invoke of an undeclared command (with an error).
    public var declaredCommands: [String]?
    /// Where the client stops reconnecting by itself and waits for the user (an explicit
    /// `connect`) instead of retrying: legal variants that upstream's own clients show, which the
    /// scenarios give the `connect` stimulus. None by default.
    public var waitsForUser: UserWaits = []
    /// WebSocket sessions (the default) or the Apple Watch direct mode over HTTP.
    public var transport: ReferenceTransport = .webSocket

    /// Creates a configuration.
    public init(
        gatewayURL: String, sharedToken: String? = nil, stateDirectory: URL, seed: UInt64 = 0,
        clock: any ClientClock = SystemClientClock(), mutants: Set<Mutant> = [],
        signatureVersion: DeviceAuthPayload.Version = .v3, persona: ClientPersona = .iPhone,
        operatorSession: OperatorSessionPolicy = .enabled,
        operatorScopes: [String] = ReferenceConfiguration.defaultOperatorScopes,
        stimulusTimeout: Duration = .seconds(10), sendsBinaryFrames: Bool = true, setupCode: String? = nil,
        connector: any WebSocketConnector = SocketConnector(), reproducible: Bool = false, durableState: Bool = true,
        declaredCommands: [String]? = nil, memoryState: InMemoryStateFiles? = nil
    ) {
        self.gatewayURL = gatewayURL
        self.sharedToken = sharedToken
        self.stateDirectory = stateDirectory
        self.seed = seed
        self.clock = clock
        self.mutants = mutants
        self.signatureVersion = signatureVersion
        self.persona = persona
        self.operatorSession = operatorSession
        self.operatorScopes = operatorScopes
        self.stimulusTimeout = stimulusTimeout
        self.sendsBinaryFrames = sendsBinaryFrames
        self.setupCode = setupCode
        self.connector = connector
        self.reproducible = reproducible
        self.durableState = durableState
        self.declaredCommands = declaredCommands
        self.memoryState = memoryState
    }

    /// `operator.read, operator.write, operator.approvals, operator.questions`.
    public static let defaultOperatorScopes = ["operator.read", "operator.write", "operator.approvals", "operator.questions"]

    /// Whether `mutant` is switched on.
    public func has(_ mutant: Mutant) -> Bool { mutants.contains(mutant) }
}

/// Protocol timer values of the reference client, in one place (docs/protocol.md §3.2, §11.2,
/// docs/protocol.md §11.3, §6.3, §6.6).
public enum ClientTimers {
    /// How long to wait for `connect.challenge` (Swift: 6 s).
    public static let challengeTimeoutMs: Int64 = 6_000
    /// How long the whole connect may take (Swift: 30 s).
    public static let connectTimeoutMs: Int64 = 30_000
    /// Default request timeout (Swift: 15 s).
    public static let requestTimeoutMs: Int64 = 15_000
    /// The request timeout of the `give-up-slow-response` mutant.
    public static let impatientRequestTimeoutMs: Int64 = 1_000
    /// First reconnect delay.
    public static let backoffInitialMs: Int64 = 500
    /// Reconnect delay cap.
    public static let backoffMaximumMs: Int64 = 30_000
    /// First retry while pairing is pending; never below 500 ms (at most 2 attempts per second).
    public static let pairingRetryInitialMs: Int64 = 1_000
    /// Cap of the pairing retry delay (the iOS app loop's 8 s).
    public static let pairingRetryMaximumMs: Int64 = 8_000
    /// Delay of the one-shot retry after a device-token refusal.
    public static let fastRetryMs: Int64 = 250
    /// The reconnect delay of the `tight-reconnect-loop` mutant.
    public static let tightLoopMs: Int64 = 100
    /// Default `node.invoke` timeout when the request has none.
    public static let defaultInvokeTimeoutMs: Int64 = 30_000
    /// Minimum interval between durable presence beacons (10 minutes).
    public static let beaconMinimumIntervalMs: Int64 = 600_000
}

/// Situations in which a client may wait for the user instead of reconnecting by itself.
public struct UserWaits: OptionSet, Sendable, Hashable {
    /// The bits.
    public let rawValue: Int
    /// Wraps bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// After `PAIRING_REQUIRED`, while the request is pending: upstream's TypeScript Gateway
    /// client and OpenClawKit do this.
    public static let afterPairingRequired = UserWaits(rawValue: 1 << 0)
    /// After a `connect.challenge` without an integer `ts`, which is never signed: upstream's
    /// TypeScript Gateway client ends the attempt and pauses.
    public static let afterInvalidChallenge = UserWaits(rawValue: 1 << 1)
}
