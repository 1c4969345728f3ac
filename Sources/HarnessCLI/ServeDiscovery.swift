#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Conformance
import Foundation
import MockGateway

/// `harness serve --dns-sd-zone` and `--advertise`: the Gateway's `_openclaw-gw._tcp` records
/// (docs/harness-serve.md "Discovery records").
enum ServeDiscovery {
    /// The flags of this part of `serve`.
    static let flags: [FlagSpec] = [
        .flag("--advertise", help: "Publish _openclaw-gw._tcp in local. through Avahi (libavahi-client, opened at run time, and a running avahi-daemon); Linux."),
        .option("--dns-sd-zone", "FILE", help: "Write the unicast DNS-SD records (PTR/SRV/TXT, A/AAAA) of --dns-sd-domain to FILE."),
        .option("--dns-sd-format", "FORMAT", help: "The --dns-sd-zone format: zone (an RFC 1035 master file, default) or dnsmasq (dnsmasq options).",
                validate: { DNSSDZone.Format(rawValue: $0) == nil ? "expected zone or dnsmasq" : nil }),
        .option("--dns-sd-domain", "DOMAIN", help: "The unicast discovery domain (default openclaw.internal.).",
                validate: { (try? DNSSDZone.normalizedDomain($0)) == nil ? "expected a DNS domain such as openclaw.internal." : nil }),
        .option("--dns-sd-address", "IP", help: "The address the A (IPv4) or AAAA (IPv6) record names; once per family (default: the listening or advertised IPv4 address).",
                repeatable: true, validate: { (try? IPAddress(parsing: $0)) == nil ? "expected an IP address" : nil }),
        .option("--dns-sd-name", "NAME", help: "The machine display name the records carry (default: the host name)."),
        .option("--dns-sd-mode", "MODE", help: "TXT keys: minimal (default) or full (adds sshPort, and cliPath / tailnetDns from OPENCLAW_CLI_PATH / OPENCLAW_TAILNET_DNS).",
                validate: { GatewayDiscoveryRecords.Mode(rawValue: $0) == nil ? "expected minimal or full" : nil }),
    ]

    /// Why the records cannot be written or published.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// This machine's host name (`gethostname`).
    static func systemHostname() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The multicast (Bonjour) records of `gateway` as `serve` publishes them.
    static func records(gateway: Gateway, arguments: ParsedArguments, environment: [String: String]) -> GatewayDiscoveryRecords {
        let hostname = GatewayDiscoveryRecords.mdnsHostname(environment: environment, systemHostname: systemHostname())
        let mode = arguments.value("--dns-sd-mode").flatMap(GatewayDiscoveryRecords.Mode.init) ?? .minimal
        return GatewayDiscoveryRecords(GatewayDiscoveryRecords.Facts(
            machineDisplayName: arguments.value("--dns-sd-name") ?? hostname, hostname: hostname, gatewayPort: gateway.port,
            tlsEnabled: gateway.tlsFingerprint != nil, tlsFingerprintSha256: gateway.tlsFingerprint,
            directReachable: GatewayDiscoveryRecords.Facts.isDirectlyReachable(listeningOn: gateway.host),
            sshPort: environment["OPENCLAW_SSH_PORT"].flatMap(Int.init), tailnetDns: environment["OPENCLAW_TAILNET_DNS"],
            cliPath: environment["OPENCLAW_CLI_PATH"], mode: mode))
    }

    /// The unicast zone of `gateway` as `serve --dns-sd-zone` writes it.
    static func zone(gateway: Gateway, arguments: ParsedArguments, environment: [String: String], existingSerial: Int?,
                     now: Date = Date()) throws -> DNSSDZone {
        let addresses = arguments.allValues("--dns-sd-address").compactMap { try? IPAddress(parsing: $0) }
        let fallback = [gateway.advertisedURL, gateway.url].compactMap { URL(string: $0)?.host }
            .compactMap { try? IPAddress(parsing: $0) }
            .first { $0.isIPv4 && !$0.bytes.allSatisfy { $0 == 0 } }
        guard let ipv4 = addresses.first(where: \.isIPv4) ?? fallback else {
            throw Failure(description: "--dns-sd-zone: no IPv4 address to publish; give one with --dns-sd-address")
        }
        let hostname = GatewayDiscoveryRecords.mdnsHostname(environment: environment, systemHostname: systemHostname())
        let mode = arguments.value("--dns-sd-mode").flatMap(GatewayDiscoveryRecords.Mode.init) ?? .minimal
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let day = calendar.dateComponents([.year, .month, .day], from: now)
        let serial = DNSSDZone.serial(year: day.year ?? 1970, month: day.month ?? 1, day: day.day ?? 1, existing: existingSerial)
        do {
            return try DNSSDZone(DNSSDZone.Facts(
                domain: arguments.value("--dns-sd-domain") ?? "openclaw.internal.",
                displayName: GatewayDiscoveryRecords.instanceName(machineDisplayName: arguments.value("--dns-sd-name") ?? hostname),
                hostname: hostname, gatewayPort: gateway.port, ipv4: ipv4.description,
                ipv6: addresses.first(where: { !$0.isIPv4 })?.description,
                tlsEnabled: gateway.tlsFingerprint != nil, tlsFingerprintSha256: gateway.tlsFingerprint,
                directReachable: GatewayDiscoveryRecords.Facts.isDirectlyReachable(listeningOn: gateway.host),
                tailnetDns: mode == .full ? environment["OPENCLAW_TAILNET_DNS"] : nil,
                sshPort: mode == .full ? (environment["OPENCLAW_SSH_PORT"].flatMap(Int.init) ?? 22) : nil,
                cliPath: mode == .full ? environment["OPENCLAW_CLI_PATH"] : nil,
                serial: serial))
        } catch {
            throw Failure(description: "--dns-sd-zone: \(error)")
        }
    }

    /// Publishes the records when `--advertise` asks for it.
    static func advertise(gateway: Gateway, arguments: ParsedArguments, environment: [String: String]) throws -> AvahiPublisher? {
        guard arguments.isSet("--advertise") else { return nil }
        do {
            return try AvahiPublisher(records(gateway: gateway, arguments: arguments, environment: environment))
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    /// Writes `--dns-sd-zone` (when given) and returns the banner field naming it.
    static func writeZone(gateway: Gateway, arguments: ParsedArguments, environment: [String: String]) throws -> [ConsoleEventLine.Field] {
        guard let path = arguments.value("--dns-sd-zone") else { return [] }
        let url = URL(fileURLWithPath: path)
        let format = arguments.value("--dns-sd-format").flatMap(DNSSDZone.Format.init) ?? .zone
        let existing = try? String(contentsOf: url, encoding: .utf8)
        let zone = try zone(gateway: gateway, arguments: arguments, environment: environment,
                            existingSerial: format == .zone ? existing.flatMap(DNSSDZone.serial(inMasterFile:)) : nil)
        let fields: [ConsoleEventLine.Field] = [.init("dnsSdZone", .string(path)), .init("dnsSdService", .string(zone.instanceName))]
        if format == .zone, let existing, let hash = DNSSDZone.contentHash(inMasterFile: existing),
           hash == DNSSDZone.contentHash(inMasterFile: zone.masterFile) {
            // Unchanged records keep the file and its serial, as upstream's writer does.
            return fields
        }
        do {
            try Data(zone.rendered(format).utf8).write(to: url)
        } catch {
            throw Failure(description: "--dns-sd-zone: cannot write \(path): \(error.localizedDescription)")
        }
        return fields
    }
}
