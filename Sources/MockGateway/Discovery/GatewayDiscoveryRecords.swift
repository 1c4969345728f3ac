/// The DNS-SD service of a Gateway (`_openclaw-gw._tcp`): its instance name, host label, port and
/// TXT record, built from facts the way upstream's Bonjour advertiser builds them
/// (docs/protocol.md §14). A pure value: publishing it (``DNSSDPublisher``) and writing it as
/// unicast DNS-SD records (``DNSSDZone``) are separate steps.
public struct GatewayDiscoveryRecords: Sendable, Hashable {
    /// The service type, without a domain.
    public static let serviceType = "_openclaw-gw._tcp"

    /// Which TXT keys are published (`discovery.mdns.mode`).
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// The default: no `sshPort`, `cliPath` or `tailnetDns`.
        case minimal
        /// Also `sshPort` (default 22) and, when known, `cliPath` and `tailnetDns`.
        case full
    }

    /// What the records are built from.
    public struct Facts: Sendable, Hashable {
        /// The machine's display name (upstream: the machine display name); the instance name
        /// is this with ` (OpenClaw)` appended unless it already names OpenClaw.
        public var machineDisplayName: String
        /// The host name the records name (`lanHost` is this `.local`); only its first DNS label
        /// is used.
        public var hostname: String
        /// The Gateway's port (WebSocket and HTTP).
        public var gatewayPort: Int
        /// Whether the Gateway serves TLS.
        public var tlsEnabled: Bool
        /// The TLS certificate's SHA-256 fingerprint (64 lower-case hex digits).
        public var tlsFingerprintSha256: String?
        /// Whether the Gateway is reachable directly (it listens on a non-loopback address).
        public var directReachable: Bool
        /// The canvas host's port, when one runs.
        public var canvasPort: Int?
        /// `full` mode: the SSH port (default 22).
        public var sshPort: Int?
        /// `full` mode: the MagicDNS name of the machine.
        public var tailnetDns: String?
        /// `full` mode: the path of a runnable CLI.
        public var cliPath: String?
        /// Which keys are published.
        public var mode: Mode

        /// Facts with the defaults of a plain Gateway (no canvas host, minimal mode).
        public init(machineDisplayName: String, hostname: String, gatewayPort: Int, tlsEnabled: Bool = false,
                    tlsFingerprintSha256: String? = nil, directReachable: Bool = false, canvasPort: Int? = nil,
                    sshPort: Int? = nil, tailnetDns: String? = nil, cliPath: String? = nil, mode: Mode = .minimal) {
            self.machineDisplayName = machineDisplayName
            self.hostname = hostname
            self.gatewayPort = gatewayPort
            self.tlsEnabled = tlsEnabled
            self.tlsFingerprintSha256 = tlsFingerprintSha256
            self.directReachable = directReachable
            self.canvasPort = canvasPort
            self.sshPort = sshPort
            self.tailnetDns = tailnetDns
            self.cliPath = cliPath
            self.mode = mode
        }
    }

    /// One `key=value` string of the TXT record.
    public struct TXTEntry: Sendable, Hashable, CustomStringConvertible {
        /// The key.
        public var key: String
        /// The value.
        public var value: String
        /// `key=value`, as it goes on the wire.
        public var description: String { "\(key)=\(value)" }
    }

    /// The service instance name (one DNS label of at most 63 bytes).
    public let instanceName: String
    /// The host label the SRV record points at (`lanHost` without `.local`).
    public let hostLabel: String
    /// The port of the SRV record.
    public let port: Int
    /// The TXT record, in upstream's order.
    public let txt: [TXTEntry]

    /// Builds the records from `facts`.
    public init(_ facts: Facts) {
        let host = Self.hostLabel(facts.hostname)
        let instance = Self.instanceName(machineDisplayName: facts.machineDisplayName)
        hostLabel = host
        instanceName = Self.dnsLabelTruncated(instance.trimmingASCIIWhitespace(), fallback: "OpenClaw")
        port = facts.gatewayPort
        var entries: [TXTEntry] = [
            TXTEntry(key: "role", value: "gateway"),
            TXTEntry(key: "gatewayPort", value: String(facts.gatewayPort)),
            TXTEntry(key: "lanHost", value: "\(host).local"),
            TXTEntry(key: "displayName", value: Self.displayName(instance)),
        ]
        if facts.tlsEnabled {
            entries.append(TXTEntry(key: "gatewayTls", value: "1"))
            if let fingerprint = facts.tlsFingerprintSha256, !fingerprint.isEmpty {
                entries.append(TXTEntry(key: "gatewayTlsSha256", value: fingerprint))
            }
        }
        if facts.directReachable { entries.append(TXTEntry(key: "gatewayDirectReachable", value: "1")) }
        if let canvas = facts.canvasPort, canvas > 0 { entries.append(TXTEntry(key: "canvasPort", value: String(canvas))) }
        if facts.mode == .full {
            if let dns = facts.tailnetDns?.trimmingASCIIWhitespace(), !dns.isEmpty { entries.append(TXTEntry(key: "tailnetDns", value: dns)) }
            if let cli = facts.cliPath?.trimmingASCIIWhitespace(), !cli.isEmpty { entries.append(TXTEntry(key: "cliPath", value: cli)) }
        }
        entries.append(TXTEntry(key: "transport", value: "gateway"))
        if facts.mode == .full { entries.append(TXTEntry(key: "sshPort", value: String(facts.sshPort ?? 22))) }
        txt = entries
    }

    /// The value of `key` in the TXT record.
    public subscript(key: String) -> String? { txt.first { $0.key == key }?.value }

    /// Upstream's instance name: the display name, with ` (OpenClaw)` appended unless it
    /// already contains "openclaw" (any case); `OpenClaw` when blank.
    public static func instanceName(machineDisplayName: String) -> String {
        let trimmed = machineDisplayName.trimmingASCIIWhitespace()
        if trimmed.isEmpty { return "OpenClaw" }
        if trimmed.lowercased().contains("openclaw") { return trimmed }
        return "\(trimmed) (OpenClaw)"
    }

    /// The TXT `displayName`: the instance name with runs of white space collapsed and a trailing
    /// ` (OpenClaw)` removed.
    public static func displayName(_ instanceName: String) -> String {
        let normalized = instanceName.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        let suffix = " (openclaw)"
        if normalized.lowercased().hasSuffix(suffix) {
            let stripped = String(normalized.dropLast(suffix.count)).trimmingASCIIWhitespace()
            if !stripped.isEmpty { return stripped }
        }
        return normalized
    }

    /// The host label: the first label of `hostname` without `.local`, at most 63 bytes;
    /// `openclaw` when nothing is left.
    public static func hostLabel(_ hostname: String) -> String {
        var name = hostname.trimmingASCIIWhitespace()
        if name.lowercased().hasSuffix(".local") { name = String(name.dropLast(6)) }
        let first = name.split(separator: ".", omittingEmptySubsequences: false).first.map(String.init)?.trimmingASCIIWhitespace() ?? ""
        return dnsLabelTruncated(first.isEmpty ? "openclaw" : first, fallback: "openclaw")
    }

    /// The system host name as upstream picks it for mDNS: `OPENCLAW_MDNS_HOSTNAME` when set,
    /// else the first label of `systemHostname` when it is a valid DNS label, else `openclaw`.
    public static func mdnsHostname(environment: [String: String], systemHostname: String?) -> String {
        if let configured = environment["OPENCLAW_MDNS_HOSTNAME"]?.trimmingASCIIWhitespace(), !configured.isEmpty {
            return configured
        }
        var name = systemHostname?.trimmingASCIIWhitespace() ?? ""
        if name.lowercased().hasSuffix(".local") { name = String(name.dropLast(6)) }
        let first = name.split(separator: ".", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return isValidHostLabel(first) ? first : "openclaw"
    }

    /// A letter-digit-hyphen label of 1 to 63 characters that neither starts nor ends with a hyphen.
    static func isValidHostLabel(_ label: String) -> Bool {
        let bytes = Array(label.utf8)
        guard (1...63).contains(bytes.count), bytes.first != UInt8(ascii: "-"), bytes.last != UInt8(ascii: "-") else { return false }
        return bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
        }
    }

    /// `name` cut to at most 63 UTF-8 bytes on a character boundary, trailing hyphens and white
    /// space removed; `fallback` when nothing is left.
    static func dnsLabelTruncated(_ name: String, fallback: String) -> String {
        guard name.utf8.count > 63 else { return name }
        var result = ""
        var used = 0
        for scalar in name.unicodeScalars {
            let size = String(scalar).utf8.count
            if used + size > 63 { break }
            result.unicodeScalars.append(scalar)
            used += size
        }
        while result.hasSuffix("-") { result.removeLast() }
        result = result.trimmingASCIIWhitespace()
        return result.isEmpty ? fallback : result
    }
}

extension GatewayDiscoveryRecords.Facts {
    /// Whether a Gateway listening on `host` is directly reachable (upstream:
    /// `!isLoopbackHost(bindHost)`): not `localhost` and not a loopback address.
    public static func isDirectlyReachable(listeningOn host: String) -> Bool {
        let trimmed = host.trimmingASCIIWhitespace().lowercased()
        if trimmed == "localhost" || trimmed.hasSuffix(".localhost") { return false }
        if let address = try? IPAddress(parsing: trimmed) { return !address.isLoopback }
        return true
    }
}
