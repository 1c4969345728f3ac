#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GatewayProtocol
import Locking

/// Why a state directory cannot be used. The file is never changed or replaced when it cannot
/// be read: a corrupt or foreign file stops the Gateway instead of silently unpairing every
/// device.
public struct GatewayStateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong and what to do about it.
    public var description: String
}

/// Everything a Gateway keeps across restarts: its identity, paired devices, device tokens,
/// pending pairing requests, issued bootstrap tokens and the recorded outcomes of their setups.
public struct GatewayPersistentState: Sendable, Hashable {
    /// The 32-byte seed of the Gateway's Ed25519 identity.
    public var identitySeed: [UInt8]
    /// How many times a Gateway started from this state (mixed into its seed, so that a
    /// restart with the same `--seed` never issues request ids that are already pending).
    public var generation: Int
    /// Devices, pending requests and device tokens.
    public var pairing: PairingStoreState
    /// Setup-code bootstrap tokens.
    public var bootstrapTokens: [BootstrapTokenStore.Record]
    /// How each used setup code's hand-off went (`device.pair.setupStatus` answers from these,
    /// also after a restart).
    public var setupOutcomes: [SetupOutcome]

    /// Creates a state.
    public init(identitySeed: [UInt8], generation: Int = 0, pairing: PairingStoreState = PairingStoreState(devices: [], pendingRequests: [], tokens: []),
                bootstrapTokens: [BootstrapTokenStore.Record] = [], setupOutcomes: [SetupOutcome] = []) {
        self.identitySeed = identitySeed
        self.generation = generation
        self.pairing = pairing
        self.bootstrapTokens = bootstrapTokens
        self.setupOutcomes = setupOutcomes
    }

    /// The bearer secrets the state holds: every setup-code bootstrap token, then every device
    /// token (revoked ones too). A Gateway started from the state teaches them to its redactor
    /// before it serves, so that they never reach output or a transcript, whoever sends them.
    public var secretValues: [String] {
        bootstrapTokens.map(\.issued.token) + pairing.tokens.map(\.token.token)
    }
}

/// The versioned file format of a Gateway state (`gateway-state.json`): a JSON object with
/// `format: "openclaw-mock-gateway-state"` and `version: 2`. Every record is spelled out field
/// by field here, so that renaming a Swift property never changes the format.
///
/// Version 2 added `setupOutcomes`; a version-1 file (without them) still loads, and is
/// rewritten as version 2 by the first save.
public enum GatewayStateFile {
    /// The `format` member.
    public static let format = "openclaw-mock-gateway-state"
    /// The version this build writes.
    public static let version = 2
    /// The versions this build reads.
    public static let readableVersions: ClosedRange<Int> = 1...2
    /// The file name inside a state directory.
    public static let fileName = "gateway-state.json"

    /// The file's bytes: pretty-printed JSON with sorted keys and a final newline.
    public static func encode(_ state: GatewayPersistentState) -> Data {
        let file = FileRecord(
            format: format, version: version, generation: state.generation,
            identitySeed: Base64URL.encode(state.identitySeed),
            devices: state.pairing.devices.map(DeviceV1.init),
            pendingRequests: state.pairing.pendingRequests.map(RequestV1.init),
            deviceTokens: state.pairing.tokens.map { TokenV1(deviceId: $0.deviceId, $0.token) },
            bootstrapTokens: state.bootstrapTokens.map(BootstrapV1.init),
            setupOutcomes: state.setupOutcomes.map(OutcomeV2.init))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding plain value structs cannot fail.
        let data = (try? encoder.encode(file)) ?? Data()
        return data + Data("\n".utf8)
    }

    /// Reads a file's bytes.
    /// - Parameter source: the path, for error messages.
    /// - Throws: `GatewayStateError` for anything but a complete state file of a version in
    ///   ``readableVersions``.
    public static func decode(_ data: Data, source: String) throws(GatewayStateError) -> GatewayPersistentState {
        let fresh = "move it away (or use another --state-dir) to start with an empty state"
        guard let value = try? JSONValue(parsing: data), let object = value.objectValue else {
            throw GatewayStateError(description: "\(source) is truncated or not JSON (\(data.count) bytes); it was left as it is: \(fresh)")
        }
        guard object["format"]?.stringValue == format else {
            throw GatewayStateError(description: "\(source) is not a mock Gateway state file (no \"format\": \"\(format)\"); it was left as it is: \(fresh)")
        }
        let readable = "versions \(readableVersions.lowerBound) to \(readableVersions.upperBound)"
        guard let version = object["version"]?.int64Value, readableVersions.contains(where: { Int64($0) == version }) else {
            if let version = object["version"]?.int64Value, version > Int64(readableVersions.upperBound) {
                throw GatewayStateError(description: """
                    \(source) has state format version \(version), written by a newer harness; this one reads \(readable). \
                    It was left as it is: run the newer harness with this --state-dir, or \(fresh)
                    """)
            }
            throw GatewayStateError(description: "\(source) has state format version \(object["version"]?.jsonString ?? "none"); this harness reads \(readable). It was left as it is: \(fresh)")
        }
        let file: FileRecord
        do {
            file = try JSONDecoder().decode(FileRecord.self, from: data)
        } catch {
            throw GatewayStateError(description: "\(source) is damaged: \(Self.describe(error)); it was left as it is: \(fresh)")
        }
        guard let seed = Base64URL.decode(file.identitySeed), seed.count == 32 else {
            throw GatewayStateError(description: "\(source) is damaged: identitySeed is not 32 bytes of base64url")
        }
        // Version 1 predates setup outcomes; from version 2 on the list is required.
        if version >= 2, file.setupOutcomes == nil {
            throw GatewayStateError(description: "\(source) is damaged: a version \(version) state has no setupOutcomes; it was left as it is: \(fresh)")
        }
        var outcomes: [SetupOutcome] = []
        for (index, record) in (file.setupOutcomes ?? []).enumerated() {
            guard let outcome = record.outcome else {
                throw GatewayStateError(description: """
                    \(source) is damaged: setupOutcomes.\(index) has access "\(record.access)" (full, limited or node) \
                    and delivery "\(record.delivery)" (completed or deliveryUncertain); it was left as it is: \(fresh)
                    """)
            }
            outcomes.append(outcome)
        }
        return GatewayPersistentState(
            identitySeed: Array(seed), generation: file.generation,
            pairing: PairingStoreState(devices: file.devices.map(\.device), pendingRequests: file.pendingRequests.map(\.request),
                                       tokens: file.deviceTokens.map { ($0.deviceId, $0.token) }),
            bootstrapTokens: file.bootstrapTokens.map(\.record), setupOutcomes: outcomes)
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "\(context.codingPath.map(\.stringValue).joined(separator: ".")) has no \(key.stringValue)"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
             DecodingError.dataCorrupted(let context):
            return "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        default:
            return "\(error)"
        }
    }

    // MARK: - Records (version 1, and what version 2 added)

    private struct FileRecord: Codable {
        var format: String
        var version: Int
        var generation: Int
        var identitySeed: String
        var devices: [DeviceV1]
        var pendingRequests: [RequestV1]
        var deviceTokens: [TokenV1]
        var bootstrapTokens: [BootstrapV1]
        // Version 2; absent from version-1 files.
        var setupOutcomes: [OutcomeV2]?
    }

    private struct OutcomeV2: Codable {
        var setupId: String
        var deviceId: String
        var deviceName: String?
        var access: String
        var ts: Int64
        var delivery: String

        init(_ outcome: SetupOutcome) {
            setupId = outcome.setupId
            deviceId = outcome.deviceId
            deviceName = outcome.deviceName
            access = outcome.access.rawValue
            ts = outcome.ts
            delivery = outcome.delivery.rawValue
        }

        /// The outcome, or `nil` when `access` or `delivery` is not a known value.
        var outcome: SetupOutcome? {
            guard let access = SetupAccess(rawValue: access), let delivery = SetupDelivery(rawValue: delivery) else { return nil }
            return SetupOutcome(setupId: setupId, deviceId: deviceId, deviceName: deviceName, access: access, ts: ts, delivery: delivery)
        }
    }

    private struct DeviceV1: Codable {
        var deviceId: String
        var publicKey: String
        var displayName: String?
        var platform: String?
        var deviceFamily: String?
        var clientId: String?
        var clientMode: String?
        var roles: [String]
        var scopes: [String]
        var createdAtMs: Int64
        var approvedAtMs: Int64
        var approvedVia: String
        var remoteIp: String?
        var lastSeenAtMs: Int64?
        var lastSeenReason: String?
        var label: String?
        /// Absent in files written before the node pairing generation was kept.
        var nodeSurfaceCreatedAtMs: Int64?
        var nodeSurfaceApprovedAtMs: Int64?

        init(_ device: PairedDevice) {
            deviceId = device.deviceId
            publicKey = device.publicKey
            displayName = device.displayName
            platform = device.platform
            deviceFamily = device.deviceFamily
            clientId = device.clientId?.rawValue
            clientMode = device.clientMode?.rawValue
            roles = device.roles.map(\.rawValue)
            scopes = device.scopes
            createdAtMs = device.createdAtMs
            approvedAtMs = device.approvedAtMs
            approvedVia = device.approvedVia.rawValue
            remoteIp = device.remoteIp
            lastSeenAtMs = device.lastSeenAtMs
            lastSeenReason = device.lastSeenReason
            label = device.label
            nodeSurfaceCreatedAtMs = device.nodeSurface?.createdAtMs
            nodeSurfaceApprovedAtMs = device.nodeSurface?.approvedAtMs
        }

        var device: PairedDevice {
            PairedDevice(
                deviceId: deviceId, publicKey: publicKey, displayName: displayName, platform: platform,
                deviceFamily: deviceFamily, clientId: clientId.map { ClientID(rawValue: $0) },
                clientMode: clientMode.map { ClientMode(rawValue: $0) }, roles: roles.map { GatewayRole(rawValue: $0) },
                scopes: scopes, createdAtMs: createdAtMs, approvedAtMs: approvedAtMs,
                approvedVia: ApprovalMethod(rawValue: approvedVia) ?? .manual, remoteIp: remoteIp,
                lastSeenAtMs: lastSeenAtMs, lastSeenReason: lastSeenReason, label: label, nodeSurface: nodeSurface)
        }

        /// The saved node-surface times; an older file without them dates the surface of a node
        /// record from the record's own creation and latest approval.
        private var nodeSurface: NodeSurfaceApproval? {
            if let nodeSurfaceCreatedAtMs, let nodeSurfaceApprovedAtMs {
                return NodeSurfaceApproval(createdAtMs: nodeSurfaceCreatedAtMs, approvedAtMs: nodeSurfaceApprovedAtMs)
            }
            return roles.contains(GatewayRole.node.rawValue) ? NodeSurfaceApproval(createdAtMs: createdAtMs, approvedAtMs: approvedAtMs) : nil
        }
    }

    private struct RequestV1: Codable {
        var requestId: String
        var deviceId: String
        var publicKey: String
        var displayName: String?
        var platform: String?
        var deviceFamily: String?
        var clientId: String?
        var clientMode: String?
        var role: String
        var roles: [String]
        var scopes: [String]
        var remoteIp: String?
        var silent: Bool
        var isRepair: Bool
        var ts: Int64
        var refreshedAtMs: Int64?

        init(_ request: PairingRequest) {
            requestId = request.requestId
            deviceId = request.deviceId
            publicKey = request.publicKey
            displayName = request.displayName
            platform = request.platform
            deviceFamily = request.deviceFamily
            clientId = request.clientId?.rawValue
            clientMode = request.clientMode?.rawValue
            role = request.role.rawValue
            roles = request.roles.map(\.rawValue)
            scopes = request.scopes
            remoteIp = request.remoteIp
            silent = request.silent
            isRepair = request.isRepair
            ts = request.ts
            refreshedAtMs = request.refreshedAtMs
        }

        var request: PairingRequest {
            PairingRequest(
                requestId: requestId, deviceId: deviceId, publicKey: publicKey, displayName: displayName, platform: platform,
                deviceFamily: deviceFamily, clientId: clientId.map { ClientID(rawValue: $0) },
                clientMode: clientMode.map { ClientMode(rawValue: $0) }, role: GatewayRole(rawValue: role),
                roles: roles.map { GatewayRole(rawValue: $0) }, scopes: scopes, remoteIp: remoteIp, silent: silent,
                isRepair: isRepair, ts: ts, refreshedAtMs: refreshedAtMs)
        }
    }

    private struct TokenV1: Codable {
        var deviceId: String
        var role: String
        var value: String
        var scopes: [String]
        var createdAtMs: Int64
        var rotatedAtMs: Int64?
        var revokedAtMs: Int64?
        var lastUsedAtMs: Int64?

        private enum CodingKeys: String, CodingKey {
            case deviceId, role, value = "token", scopes, createdAtMs, rotatedAtMs, revokedAtMs, lastUsedAtMs
        }

        init(deviceId: String, _ token: DeviceToken) {
            self.deviceId = deviceId
            role = token.role.rawValue
            value = token.token
            scopes = token.scopes
            createdAtMs = token.createdAtMs
            rotatedAtMs = token.rotatedAtMs
            revokedAtMs = token.revokedAtMs
            lastUsedAtMs = token.lastUsedAtMs
        }

        var token: DeviceToken {
            DeviceToken(token: value, role: GatewayRole(rawValue: role), scopes: scopes, createdAtMs: createdAtMs,
                        rotatedAtMs: rotatedAtMs, revokedAtMs: revokedAtMs, lastUsedAtMs: lastUsedAtMs)
        }
    }

    private struct BootstrapV1: Codable {
        var token: String
        var roles: [String]
        var scopes: [String]
        var issuedAtMs: Int64
        // The profile's closed purpose and the setup id; optional, so files written before they
        // were saved still load (a missing id is replaced by one derived from the issue time).
        var purpose: String?
        var setupId: String?
        var boundDeviceId: String?
        var boundPublicKey: String?
        var consumedAtMs: Int64?

        init(_ record: BootstrapTokenStore.Record) {
            token = record.issued.token
            roles = record.issued.profile.roles.map(\.rawValue)
            scopes = record.issued.profile.scopes
            issuedAtMs = record.issued.issuedAtMs
            purpose = record.issued.profile.purpose?.rawValue
            setupId = record.issued.setupId
            boundDeviceId = record.boundDeviceId
            boundPublicKey = record.boundPublicKey
            consumedAtMs = record.consumedAtMs
        }

        var record: BootstrapTokenStore.Record {
            BootstrapTokenStore.Record(
                issued: IssuedBootstrapToken(
                    token: token,
                    profile: BootstrapProfile(roles: roles.map { GatewayRole(rawValue: $0) }, scopes: scopes,
                                              purpose: purpose.flatMap(BootstrapPurpose.init(rawValue:))),
                    issuedAtMs: issuedAtMs, setupId: setupId ?? "restored-\(issuedAtMs)"),
                boundDeviceId: boundDeviceId, boundPublicKey: boundPublicKey, consumedAtMs: consumedAtMs)
        }
    }
}

/// A state directory: loads `gateway-state.json` once when opened and writes it atomically (a
/// temporary file in the same directory, then a rename) whenever the Gateway's durable state
/// changed. TLS material kept next to it lives in ``tlsDirectory``.
public final class GatewayStateStore: Sendable {
    /// The directory.
    public let directory: URL
    /// The state file.
    public var fileURL: URL { directory.appendingPathComponent(GatewayStateFile.fileName) }
    /// Where `harness serve --tls` keeps its generated certificate and key.
    public var tlsDirectory: URL { directory.appendingPathComponent("tls") }
    /// The state found when the store was opened; `nil` for a new directory.
    public let loaded: GatewayPersistentState?
    // The bytes last written, to skip writes that would change nothing.
    private let lastSaved = Locked<Data?>(nil)

    /// Opens (and creates, when missing) a state directory.
    /// - Throws: `GatewayStateError` when the directory cannot be created or the state file is
    ///   unreadable, truncated, damaged, of another format or of another version.
    public init(directory: URL) throws(GatewayStateError) {
        self.directory = directory
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw GatewayStateError(description: "--state-dir \(directory.path) is a file, not a directory")
            }
        } else {
            do {
                try manager.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw GatewayStateError(description: "cannot create the state directory \(directory.path): \(error.localizedDescription)")
            }
        }
        let file = directory.appendingPathComponent(GatewayStateFile.fileName)
        guard manager.fileExists(atPath: file.path) else {
            loaded = nil
            return
        }
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw GatewayStateError(description: "cannot read \(file.path): \(error.localizedDescription)")
        }
        loaded = try GatewayStateFile.decode(data, source: file.path)
        lastSaved.withLock { $0 = data }
    }

    /// Writes `state` unless it is what the file already holds.
    /// - Returns: whether the file was written.
    /// - Throws: `GatewayStateError` when the file cannot be written.
    @discardableResult
    public func save(_ state: GatewayPersistentState) throws(GatewayStateError) -> Bool {
        let data = GatewayStateFile.encode(state)
        let unchanged = lastSaved.withLock { $0 == data }
        if unchanged { return false }
        try Self.writeOwnerOnly(data, to: fileURL)
        lastSaved.withLock { $0 = data }
        return true
    }

    /// Writes `data` to a temporary file that is created with mode 0600 (the state holds tokens,
    /// so it is never readable by others, not even for a moment), then renames it over `file`.
    private static func writeOwnerOnly(_ data: Data, to file: URL) throws(GatewayStateError) {
        let temporary = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).\(UUID().uuidString).tmp")
        func failure(_ what: String) -> GatewayStateError {
            let reason = String(cString: strerror(errno))
            unlink(temporary.path)
            return GatewayStateError(description: "cannot write \(file.path): \(what): \(reason)")
        }
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw failure("cannot create \(temporary.lastPathComponent)") }
        let written = data.withUnsafeBytes { bytes -> Bool in
            guard let base = bytes.baseAddress else { return bytes.isEmpty }
            var offset = 0
            while offset < bytes.count {
                let count = write(fd, base + offset, bytes.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        guard written, fsync(fd) == 0 else {
            close(fd)
            throw failure("write failed")
        }
        close(fd)
        guard rename(temporary.path, file.path) == 0 else { throw failure("cannot rename into place") }
    }
}
