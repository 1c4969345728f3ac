/// The unicast ("wide-area") DNS-SD records of a Gateway: PTR, SRV and TXT of
/// `_openclaw-gw._tcp` under a discovery domain such as `openclaw.internal.`, with the A/AAAA
/// records of the host and the zone's SOA/NS, as upstream's wide-area zone writer renders them
/// (docs/protocol.md §14.2). Rendered as an RFC 1035 master file (BIND, CoreDNS, NSD, Knot load
/// it) or as a dnsmasq configuration. A pure value: no file, no socket.
public struct DNSSDZone: Sendable, Hashable {
    /// Why a zone cannot be built.
    public struct Invalid: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong.
        public var description: String
    }

    /// The file formats a zone is written in.
    public enum Format: String, Sendable, Hashable, CaseIterable {
        /// An RFC 1035 master file (`$ORIGIN`, `SOA`, `PTR`, `SRV`, `TXT`).
        case zone
        /// dnsmasq options (`ptr-record=`, `srv-host=`, `txt-record=`, `host-record=`).
        case dnsmasq
    }

    /// What the zone is built from.
    public struct Facts: Sendable, Hashable {
        /// The discovery domain (`openclaw.internal.`); a trailing dot is optional.
        public var domain: String
        /// The TXT `displayName` (upstream passes the Bonjour instance name).
        public var displayName: String
        /// The machine's host name: the host label and the instance label (`HOST-gateway`) derive
        /// from its first label.
        public var hostname: String
        /// The Gateway's port.
        public var gatewayPort: Int
        /// The host's IPv4 address (the A record, also the name server's).
        public var ipv4: String
        /// The host's IPv6 address, if any (an AAAA record).
        public var ipv6: String?
        /// Whether the Gateway serves TLS.
        public var tlsEnabled: Bool
        /// The TLS certificate's SHA-256 fingerprint.
        public var tlsFingerprintSha256: String?
        /// Whether the Gateway is directly reachable.
        public var directReachable: Bool
        /// The MagicDNS hint, if any.
        public var tailnetDns: String?
        /// The SSH port, if advertised.
        public var sshPort: Int?
        /// The CLI path, if advertised.
        public var cliPath: String?
        /// The SOA serial (upstream: `YYYYMMDDnn`).
        public var serial: Int

        /// Facts for a zone; everything optional is left out by default.
        public init(domain: String, displayName: String, hostname: String, gatewayPort: Int, ipv4: String, ipv6: String? = nil,
                    tlsEnabled: Bool = false, tlsFingerprintSha256: String? = nil, directReachable: Bool = false,
                    tailnetDns: String? = nil, sshPort: Int? = nil, cliPath: String? = nil, serial: Int) {
            self.domain = domain
            self.displayName = displayName
            self.hostname = hostname
            self.gatewayPort = gatewayPort
            self.ipv4 = ipv4
            self.ipv6 = ipv6
            self.tlsEnabled = tlsEnabled
            self.tlsFingerprintSha256 = tlsFingerprintSha256
            self.directReachable = directReachable
            self.tailnetDns = tailnetDns
            self.sshPort = sshPort
            self.cliPath = cliPath
            self.serial = serial
        }
    }

    /// The domain with its trailing dot, lower-case as given (`openclaw.internal.`).
    public let domain: String
    /// The host's label in the domain.
    public let hostLabel: String
    /// The service instance's label (`HOST-gateway`).
    public let instanceLabel: String
    /// The TXT record's strings, in upstream's order.
    public let txt: [String]
    /// The SRV port.
    public let port: Int
    /// The A record's address.
    public let ipv4: String
    /// The AAAA record's address.
    public let ipv6: String?
    /// The SOA serial.
    public let serial: Int

    /// Builds the zone.
    /// - Throws: ``Invalid`` for a domain that is not a DNS name or an address that is not one.
    public init(_ facts: Facts) throws(Invalid) {
        domain = try Self.normalizedDomain(facts.domain)
        guard let v4 = try? IPAddress(parsing: facts.ipv4), v4.isIPv4 else {
            throw Invalid(description: "\"\(facts.ipv4)\" is not an IPv4 address")
        }
        ipv4 = v4.description
        if let text = facts.ipv6 {
            guard let v6 = try? IPAddress(parsing: text), !v6.isIPv4 else { throw Invalid(description: "\"\(text)\" is not an IPv6 address") }
            ipv6 = v6.description
        } else {
            ipv6 = nil
        }
        let host = facts.hostname.split(separator: ".", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        hostLabel = Self.label(host, fallback: "openclaw")
        instanceLabel = Self.label("\(host)-gateway", fallback: "openclaw-gw")
        port = facts.gatewayPort
        serial = facts.serial
        let display = facts.displayName.trimmingASCIIWhitespace()
        var strings = ["displayName=\(display.isEmpty ? host : display)", "role=gateway", "transport=gateway",
                       "gatewayPort=\(facts.gatewayPort)"]
        if facts.tlsEnabled {
            strings.append("gatewayTls=1")
            if let fingerprint = facts.tlsFingerprintSha256, !fingerprint.isEmpty { strings.append("gatewayTlsSha256=\(fingerprint)") }
        }
        if facts.directReachable { strings.append("gatewayDirectReachable=1") }
        if let dns = facts.tailnetDns?.trimmingASCIIWhitespace(), !dns.isEmpty { strings.append("tailnetDns=\(dns)") }
        if let ssh = facts.sshPort, ssh > 0 { strings.append("sshPort=\(ssh)") }
        if let cli = facts.cliPath?.trimmingASCIIWhitespace(), !cli.isEmpty { strings.append("cliPath=\(cli)") }
        txt = strings
    }

    /// The service type's name in the domain (`_openclaw-gw._tcp.openclaw.internal.`).
    public var serviceName: String { "\(GatewayDiscoveryRecords.serviceType).\(domain)" }
    /// The instance's name in the domain.
    public var instanceName: String { "\(instanceLabel).\(GatewayDiscoveryRecords.serviceType).\(domain)" }
    /// The host's name in the domain.
    public var hostName: String { "\(hostLabel).\(domain)" }

    /// The zone in `format`.
    public func rendered(_ format: Format) -> String {
        switch format {
        case .zone: masterFile
        case .dnsmasq: dnsmasqConfiguration
        }
    }

    /// The RFC 1035 master file, line for line as upstream writes it, headed by its content hash
    /// (`; openclaw-content-hash:`, computed with the serial left out, so that a rewrite with
    /// unchanged records can keep the file).
    public var masterFile: String {
        let service = GatewayDiscoveryRecords.serviceType
        let soa = "@ IN SOA ns1 hostmaster \(serial) 7200 3600 1209600 60"
        var records = ["$ORIGIN \(domain)", "$TTL 60", soa, "@ IN NS ns1", "ns1 IN A \(ipv4)", "\(hostLabel) IN A \(ipv4)"]
        if let ipv6 { records.append("\(hostLabel) IN AAAA \(ipv6)") }
        records.append("\(service) IN PTR \(instanceLabel).\(service)")
        records.append("\(instanceLabel).\(service) IN SRV 0 0 \(port) \(hostLabel)")
        records.append("\(instanceLabel).\(service) IN TXT \(txt.map(Self.masterFileQuoted).joined(separator: " "))")
        let hashed = records.map { $0 == soa ? "@ IN SOA ns1 hostmaster SERIAL 7200 3600 1209600 60" : $0 }.joined(separator: "\n") + "\n"
        return "; openclaw-content-hash: \(Self.contentHash(hashed))\n" + records.joined(separator: "\n") + "\n"
    }

    /// The same PTR, SRV, TXT and A/AAAA records as dnsmasq options (`dnsmasq --conf-file=FILE`);
    /// `local=` keeps queries for the domain from being forwarded.
    public var dnsmasqConfiguration: String {
        func name(_ full: String) -> String { String(full.dropLast()) }
        var lines = ["# \(GatewayDiscoveryRecords.serviceType) in \(domain) (serial \(serial))",
                     "local=/\(name(domain))/",
                     "host-record=\(name(hostName)),\(ipv4)\(ipv6.map { ",\($0)" } ?? "")",
                     "ptr-record=\(name(serviceName)),\(name(instanceName))",
                     "srv-host=\(name(instanceName)),\(name(hostName)),\(port),0,0"]
        lines.append("txt-record=\(name(instanceName)),\(txt.map(Self.dnsmasqQuoted).joined(separator: ","))")
        return lines.joined(separator: "\n") + "\n"
    }

    /// `raw` lower-cased with every run outside `[a-z0-9-]` replaced by `-`, no leading or
    /// trailing hyphen, at most 63 characters; `fallback` when nothing is left.
    static func label(_ raw: String, fallback: String) -> String {
        var out = ""
        var lastWasHyphen = false
        for scalar in raw.trimmingASCIIWhitespace().lowercased().unicodeScalars {
            let allowed = ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "-"
            if allowed {
                out.unicodeScalars.append(scalar)
                lastWasHyphen = false
            } else if !lastWasHyphen {
                out.append("-")
                lastWasHyphen = true
            }
        }
        while out.hasPrefix("-") { out.removeFirst() }
        while out.hasSuffix("-") { out.removeLast() }
        if out.isEmpty { out = fallback }
        return String(out.prefix(63))
    }

    /// The domain as labels of letters, digits and hyphens, with one trailing dot.
    /// - Throws: ``Invalid`` for anything else.
    public static func normalizedDomain(_ raw: String) throws(Invalid) -> String {
        var text = raw.trimmingASCIIWhitespace()
        if text.hasSuffix(".") { text.removeLast() }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !text.isEmpty, text.utf8.count <= 253, labels.allSatisfy(GatewayDiscoveryRecords.isValidHostLabel) else {
            throw Invalid(description: "\"\(raw)\" is not a valid DNS domain")
        }
        return labels.joined(separator: ".") + "."
    }

    /// A master-file character string: quoted, with `\`, `"` and newlines escaped.
    static func masterFileQuoted(_ value: String) -> String {
        "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n") + "\""
    }

    /// A dnsmasq quoted string (commas inside stay part of the value).
    static func dnsmasqQuoted(_ value: String) -> String {
        "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n") + "\""
    }

    /// Upstream's content hash: 32-bit FNV-1a over the UTF-16 code units, as 8 hex digits.
    static func contentHash(_ body: String) -> String {
        var hash: UInt32 = 2_166_136_261
        for unit in body.utf16 {
            hash ^= UInt32(unit)
            hash = hash &* 16_777_619
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }

    /// Upstream's serial for a zone written on `date` (`YYYYMMDD01`), or the next one after an
    /// `existing` serial of the same day.
    public static func serial(year: Int, month: Int, day: Int, existing: Int?) -> Int {
        let base = (year * 10_000 + month * 100 + day) * 100 + 1
        if let existing, existing / 100 == base / 100 { return existing + 1 }
        return base
    }

    /// The SOA serial of an existing master file, if it has one.
    public static func serial(inMasterFile text: String) -> Int? {
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if fields.count >= 6, fields[0] == "@", fields[1] == "IN", fields[2] == "SOA" { return Int(fields[5]) }
        }
        return nil
    }

    /// The content hash recorded in an existing master file, if any.
    public static func contentHash(inMasterFile text: String) -> String? {
        for line in text.split(separator: "\n") where line.hasPrefix("; openclaw-content-hash:") {
            return String(line.dropFirst("; openclaw-content-hash:".count)).trimmingASCIIWhitespace()
        }
        return nil
    }
}
