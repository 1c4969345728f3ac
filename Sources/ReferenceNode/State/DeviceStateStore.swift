import Foundation
import GatewayProtocol
import Locking

/// A device token the client holds for one (Gateway, role).
public struct StoredDeviceToken: Sendable, Hashable, Codable {
    /// The bearer token.
    public var token: String
    /// The scopes issued with it (`[]` for node tokens).
    public var scopes: [String]
    /// When it was issued (Gateway clock), if known.
    public var issuedAtMs: Int?

    /// Creates a stored token.
    public init(token: String, scopes: [String], issuedAtMs: Int? = nil) {
        self.token = token
        self.scopes = scopes
        self.issuedAtMs = issuedAtMs
    }
}

/// Why the state directory could not be used.
public struct DeviceStateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public var description: String
    init(_ description: String) { self.description = description }
}

/// The persistent state of the device: its identity (`identity.json`) and its device tokens per
/// Gateway and role, plus a not-yet-used setup-code bootstrap token (`device-auth.json`).
///
/// Tokens are keyed by Gateway URL (a device may be paired with several Gateways, docs/protocol.md §4.4:
/// "stored separately per (deviceId, role[, gateway])") and bound to the device id they were
/// issued to: on load, tokens of another device id are discarded, so a new key never presents
/// an old key's token.
final class DeviceStateStore: Sendable {
    static let identityFileName = "identity.json"
    static let tokensFileName = "device-auth.json"

    private struct TokenFile: Codable, Equatable {
        var version = 1
        var deviceId: String
        var gateways: [String: [String: StoredDeviceToken]] = [:]
        var bootstrapTokens: [String: String] = [:]
    }

    private struct State {
        var identity: DeviceIdentity
        var tokens: TokenFile
    }

    private let files: StateFiles
    private let identifiers: IdentifierSource
    // The protocol version of the last `hello-ok` (in memory only; read by the
    // `pin-negotiated-protocol` mutant).
    private let helloProtocol = Locked<Int?>(nil)
    // The identity and token file are read and written only under this lock.
    private let state: Locked<State>

    /// Opens (or creates) the state in `directory`, or in `memory` when given (a simulated run).
    /// - Throws: `DeviceStateError` when the directory cannot be created or a new key cannot be
    ///   generated. An unreadable identity file is replaced by a new identity (as a fresh install).
    init(directory: URL, nowMs: Int64, identifiers: IdentifierSource = IdentifierSource(seed: nil), durable: Bool = true,
         memory: InMemoryStateFiles? = nil) throws {
        let files = StateFiles(directory: directory, memory: memory, durable: durable)
        self.files = files
        self.identifiers = identifiers
        do {
            try files.prepare()
        } catch {
            throw DeviceStateError("cannot create state directory \(directory.path): \(error)")
        }
        let identity: DeviceIdentity
        if let data = files.read(Self.identityFileName),
           let loaded = try? DeviceIdentity.decode(fileContents: data, named: Self.identityFileName) {
            identity = loaded
        } else {
            identity = try Self.newIdentity(nowMs: nowMs, seed: identifiers.keySeed())
            Self.save(identity, in: files)
        }
        var tokens = TokenFile(deviceId: identity.deviceId)
        if let data = files.read(Self.tokensFileName), let file = try? JSONDecoder().decode(TokenFile.self, from: data),
           file.deviceId == identity.deviceId {
            tokens = file
        }
        state = Locked(State(identity: identity, tokens: tokens))
    }

    /// Writes the identity file (best effort, as before: a key that cannot be stored is used
    /// for this launch only).
    private static func save(_ identity: DeviceIdentity, in files: StateFiles) {
        guard let data = try? identity.fileContents() else { return }
        try? files.write(data, to: identityFileName)
    }

    private static func newIdentity(nowMs: Int64, seed: Data?) throws -> DeviceIdentity {
        do {
            if let seed { return try DeviceIdentity(seed: seed, createdAtMs: Int(nowMs)) }
            return try DeviceIdentity.generate(createdAtMs: Int(nowMs))
        } catch {
            throw DeviceStateError("cannot generate a device key: \(error)")
        }
    }

    /// A stable key for a Gateway URL.
    static func gatewayKey(_ url: String) -> String {
        // Foundation's trimming only when there is something to trim (this runs on every token
        // lookup).
        let padded = url.unicodeScalars.first?.properties.isWhitespace == true || url.unicodeScalars.last?.properties.isWhitespace == true
        var key = (padded ? url.trimmingCharacters(in: .whitespaces) : url).lowercased()
        while key.hasSuffix("/") { key.removeLast() }
        return key
    }

    /// The device identity.
    var identity: DeviceIdentity { state.withLock { $0.identity } }

    /// The protocol version the last `hello-ok` announced, on any Gateway.
    var lastHelloProtocol: Int? {
        get { helloProtocol.withLock { $0 } }
        set { helloProtocol.withLock { $0 = newValue } }
    }

    /// The stored token for `role` on `gateway`.
    func token(gateway: String, role: GatewayRole) -> StoredDeviceToken? {
        state.withLock { $0.tokens.gateways[Self.gatewayKey(gateway)]?[role.rawValue] }
    }

    /// Every stored token, by Gateway key and role (for inspection).
    var allTokens: [String: [String: StoredDeviceToken]] { state.withLock { $0.tokens.gateways } }

    /// Stores a token issued for `role` on `gateway`. When the token equals the stored one the
    /// stored scopes are kept (docs: "when the token equals the stored one, keep the stored scopes").
    func storeToken(_ token: StoredDeviceToken, gateway: String, role: GatewayRole) {
        mutate { file in
            let key = Self.gatewayKey(gateway)
            var roles = file.gateways[key] ?? [:]
            if let existing = roles[role.rawValue], existing.token == token.token, token.scopes.isEmpty {
                roles[role.rawValue] = StoredDeviceToken(token: token.token, scopes: existing.scopes,
                                                         issuedAtMs: token.issuedAtMs ?? existing.issuedAtMs)
            } else {
                roles[role.rawValue] = token
            }
            file.gateways[key] = roles
        }
    }

    /// Forgets the token for `role` on `gateway`.
    func clearToken(gateway: String, role: GatewayRole) {
        mutate { file in
            let key = Self.gatewayKey(gateway)
            file.gateways[key]?[role.rawValue] = nil
            if file.gateways[key]?.isEmpty == true { file.gateways[key] = nil }
        }
    }

    /// The setup-code bootstrap token waiting to be used on `gateway`.
    func bootstrapToken(gateway: String) -> String? {
        state.withLock { $0.tokens.bootstrapTokens[Self.gatewayKey(gateway)] }
    }

    /// Remembers a bootstrap token for `gateway` (from a setup code).
    func setBootstrapToken(_ token: String?, gateway: String) {
        mutate { $0.bootstrapTokens[Self.gatewayKey(gateway)] = token }
    }

    /// Replaces the identity with a new key pair (used by mutants only; a correct client never
    /// changes its key outside a reinstall).
    func regenerateIdentity(nowMs: Int64) throws -> DeviceIdentity {
        let identity = try Self.newIdentity(nowMs: nowMs, seed: identifiers.keySeed())
        state.withLock { state in
            state.identity = identity
            Self.save(identity, in: files)
        }
        return identity
    }

    /// A reinstall: a new identity, and (unless `keepTokensForNewKey`) no tokens at all.
    ///
    /// - Parameter keepTokensForNewKey: re-binds the old tokens to the new key instead of
    ///   deleting them (a bug: the `old-token-after-reinstall` mutant).
    func reinstall(nowMs: Int64, keepTokensForNewKey: Bool) throws {
        let identity = try Self.newIdentity(nowMs: nowMs, seed: identifiers.keySeed())
        state.withLock { state in
            state.identity = identity
            Self.save(identity, in: files)
            if keepTokensForNewKey {
                state.tokens.deviceId = identity.deviceId
            } else {
                state.tokens = TokenFile(deviceId: identity.deviceId)
            }
            write(state.tokens)
        }
    }

    /// Applies `body` and writes the file when it changed anything (a session re-stores the same
    /// token on every hello).
    private func mutate(_ body: (inout TokenFile) -> Void) {
        state.withLock { state in
            let before = state.tokens
            body(&state.tokens)
            if state.tokens != before { write(state.tokens) }
        }
    }

    /// Writes the token file atomically with permissions 0600 (it holds secrets), flushed to the
    /// disk only when the state is durable (a conformance run's throwaway directory is not).
    private func write(_ file: TokenFile) {
        try? files.write(Self.tokensFileName) { try? JSONValue(encoding: file).encoded() }
    }
}
