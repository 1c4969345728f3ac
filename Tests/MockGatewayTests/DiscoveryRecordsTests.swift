#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GatewayProtocol
@testable import MockGateway
import TestSupport
import Testing

/// The `_openclaw-gw._tcp` records as upstream's Bonjour advertiser and wide-area zone writer
/// build them (docs/protocol.md §14). Nothing here sends multicast: the record set is checked as
/// values, and the unicast zone is served by dnsmasq on 127.0.0.1 and read back with an
/// independent DNS client (`Tests/Interop/dns_query.py`).
@Suite("Discovery records")
struct DiscoveryRecordsTests {
    static let fingerprint = String(repeating: "ab", count: 32)

    @Test func minimalRecordHasUpstreamKeysInOrder() {
        let records = GatewayDiscoveryRecords(.init(machineDisplayName: "Studio", hostname: "studio.lan", gatewayPort: 18789))
        #expect(records.instanceName == "Studio (OpenClaw)")
        #expect(records.hostLabel == "studio")
        #expect(records.txt.map(\.description) == [
            "role=gateway", "gatewayPort=18789", "lanHost=studio.local", "displayName=Studio", "transport=gateway",
        ])
    }

    @Test func tlsDirectReachabilityAndFullModeKeys() {
        let records = GatewayDiscoveryRecords(.init(
            machineDisplayName: "My  OpenClaw box", hostname: "box.local", gatewayPort: 443, tlsEnabled: true,
            tlsFingerprintSha256: Self.fingerprint, directReachable: true, canvasPort: 443, sshPort: 2222,
            tailnetDns: " box.tail.ts.net ", cliPath: "/usr/local/bin/openclaw", mode: .full))
        // A name that already says OpenClaw is kept as it is.
        #expect(records.instanceName == "My  OpenClaw box")
        #expect(records.txt.map(\.description) == [
            "role=gateway", "gatewayPort=443", "lanHost=box.local", "displayName=My OpenClaw box", "gatewayTls=1",
            "gatewayTlsSha256=\(Self.fingerprint)", "gatewayDirectReachable=1", "canvasPort=443", "tailnetDns=box.tail.ts.net",
            "cliPath=/usr/local/bin/openclaw", "transport=gateway", "sshPort=2222",
        ])
        // Minimal mode leaves the full-mode keys out; TLS without a fingerprint has no sha256 key.
        let minimal = GatewayDiscoveryRecords(.init(machineDisplayName: "box", hostname: "box", gatewayPort: 1, tlsEnabled: true,
                                                    sshPort: 2222, tailnetDns: "x", cliPath: "/y", mode: .minimal))
        #expect(minimal.txt.map(\.key) == ["role", "gatewayPort", "lanHost", "displayName", "gatewayTls", "transport"])
        #expect(GatewayDiscoveryRecords(.init(machineDisplayName: "b", hostname: "b", gatewayPort: 1, mode: .full))["sshPort"] == "22")
    }

    @Test func namesAreBoundedLikeUpstream() {
        #expect(GatewayDiscoveryRecords.instanceName(machineDisplayName: "  ") == "OpenClaw")
        #expect(GatewayDiscoveryRecords.displayName("Studio (OpenClaw)") == "Studio")
        #expect(GatewayDiscoveryRecords.hostLabel("") == "openclaw")
        let long = GatewayDiscoveryRecords(.init(machineDisplayName: String(repeating: "é", count: 40), hostname: "h", gatewayPort: 1))
        #expect(long.instanceName.utf8.count <= 63)
        #expect(GatewayDiscoveryRecords.mdnsHostname(environment: ["OPENCLAW_MDNS_HOSTNAME": "pinned"], systemHostname: "x") == "pinned")
        #expect(GatewayDiscoveryRecords.mdnsHostname(environment: [:], systemHostname: "mac-mini.local") == "mac-mini")
        #expect(GatewayDiscoveryRecords.mdnsHostname(environment: [:], systemHostname: "bad_name") == "openclaw")
        #expect(!GatewayDiscoveryRecords.Facts.isDirectlyReachable(listeningOn: "127.0.0.1"))
        #expect(!GatewayDiscoveryRecords.Facts.isDirectlyReachable(listeningOn: "::1"))
        #expect(!GatewayDiscoveryRecords.Facts.isDirectlyReachable(listeningOn: "localhost"))
        #expect(GatewayDiscoveryRecords.Facts.isDirectlyReachable(listeningOn: "0.0.0.0"))
    }

    static func zone(tls: Bool = true) throws -> DNSSDZone {
        try DNSSDZone(.init(domain: "openclaw.internal", displayName: "Studio (OpenClaw)", hostname: "Studio.lan", gatewayPort: 18789,
                            ipv4: "127.0.0.1", ipv6: "fd00::7", tlsEnabled: tls, tlsFingerprintSha256: Self.fingerprint,
                            directReachable: true, sshPort: 22, serial: 2026120201))
    }

    @Test func masterFileIsUpstreamsZone() throws {
        let text = try Self.zone().masterFile
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("; openclaw-content-hash: ") == true)
        #expect(Array(lines.dropFirst()) == [
            "$ORIGIN openclaw.internal.", "$TTL 60", "@ IN SOA ns1 hostmaster 2026120201 7200 3600 1209600 60", "@ IN NS ns1",
            "ns1 IN A 127.0.0.1", "studio IN A 127.0.0.1", "studio IN AAAA fd00::7",
            "_openclaw-gw._tcp IN PTR studio-gateway._openclaw-gw._tcp",
            "studio-gateway._openclaw-gw._tcp IN SRV 0 0 18789 studio",
            "studio-gateway._openclaw-gw._tcp IN TXT \"displayName=Studio (OpenClaw)\" \"role=gateway\" \"transport=gateway\" "
                + "\"gatewayPort=18789\" \"gatewayTls=1\" \"gatewayTlsSha256=\(Self.fingerprint)\" \"gatewayDirectReachable=1\" \"sshPort=22\"",
        ])
        // The hash leaves the serial out: the same records on another day hash the same.
        var other = try DNSSDZone(.init(domain: "openclaw.internal.", displayName: "Studio (OpenClaw)", hostname: "studio", gatewayPort: 18789,
                                        ipv4: "127.0.0.1", ipv6: "fd00::7", tlsEnabled: true, tlsFingerprintSha256: Self.fingerprint,
                                        directReachable: true, sshPort: 22, serial: 2026120301)).masterFile
        #expect(DNSSDZone.contentHash(inMasterFile: other) == DNSSDZone.contentHash(inMasterFile: text))
        #expect(DNSSDZone.serial(inMasterFile: other) == 2026120301)
        other = try Self.zone(tls: false).masterFile
        #expect(DNSSDZone.contentHash(inMasterFile: other) != DNSSDZone.contentHash(inMasterFile: text))
        #expect(DNSSDZone.serial(year: 2026, month: 12, day: 2, existing: 2026120201) == 2026120202)
        #expect(DNSSDZone.serial(year: 2026, month: 12, day: 3, existing: 2026120207) == 2026120301)
        #expect(DNSSDZone.contentHash("") == "811c9dc5")
    }

    @Test func badDomainsAndAddressesAreRefused() {
        #expect(throws: DNSSDZone.Invalid.self) {
            try DNSSDZone(.init(domain: "bad..domain", displayName: "x", hostname: "h", gatewayPort: 1, ipv4: "127.0.0.1", serial: 1))
        }
        #expect(throws: DNSSDZone.Invalid.self) {
            try DNSSDZone(.init(domain: "ok.internal", displayName: "x", hostname: "h", gatewayPort: 1, ipv4: "fd00::1", serial: 1))
        }
    }

    // MARK: Served by dnsmasq, read by an independent client

    static let dnsmasq = ["/usr/sbin/dnsmasq", "/usr/local/sbin/dnsmasq", "/opt/homebrew/sbin/dnsmasq"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
    static let requireDnsmasq = ProcessInfo.processInfo.environment["OPENCLAW_REQUIRE_DNSMASQ"] == "1"
    static let python = InteropInterpreter.find(importing: ["json"])

    /// A UDP port on 127.0.0.1 that was free a moment ago.
    static func freeUDPPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw EnvironmentProblemError(description: "no free UDP port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    struct EnvironmentProblemError: Error, CustomStringConvertible { var description: String }

    /// Serves `configuration` with dnsmasq on 127.0.0.1 and asks the independent client `queries`.
    static func served(_ configuration: String, _ queries: [String]) async throws -> JSONValue {
        guard let dnsmasq else { throw EnvironmentProblemError(description: "dnsmasq not found (apt-get install dnsmasq)") }
        let python = try Self.python.get()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dnssd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("openclaw.conf")
        try Data(configuration.utf8).write(to: file)
        // dnsmasq logs "started" once its socket is bound: that line, not a pause, says it is
        // ready. A port taken between `freeUDPPort()` and the bind makes it exit instead; then
        // another port is tried. Its log goes into the failure message.
        var port = 0
        var server: TestProcess?
        var log: [String] = []
        for _ in 1...3 where server == nil {
            port = try freeUDPPort()
            let (lines, continuation) = AsyncStream<String>.makeStream()
            let cutter = LineCutter { continuation.yield($0) }
            let process = try TestProcess(executable: dnsmasq, arguments: [
                "--keep-in-foreground", "--conf-file=\(file.path)", "--port=\(port)", "--listen-address=127.0.0.1", "--bind-interfaces",
                "--no-resolv", "--no-hosts", "--pid-file=", "--log-facility=-",
            ], input: .null, stdout: { _ in }, stderr: { chunk in
                cutter.take(chunk)
                if chunk.isEmpty { continuation.finish() }
            })
            for await line in lines {
                log.append(line)
                if line.contains("started, version") { server = process; break }
            }
            if server == nil { process.sendSignal(SIGTERM) }
        }
        guard let server else { throw EnvironmentProblemError(description: "dnsmasq did not start: \(log.joined(separator: "\n"))") }
        defer { server.sendSignal(SIGTERM) }
        let client = InteropInterpreter.packageRoot.appendingPathComponent("Tests/Interop/dns_query.py").path
        let output = try await AsyncProcess.run(URL(fileURLWithPath: python), [client, String(port)] + queries, timeout: .seconds(60))
        #expect(output.status == 0, "\(output.stderrText)\ndnsmasq: \(log.joined(separator: "\n"))")
        return try JSONValue(parsing: output.stdoutText)
    }

    @Test func dnsmasqServesTheRecordsAClientBrowses() async throws {
        guard Self.dnsmasq != nil, (try? Self.python.get()) != nil else {
            #expect(!Self.requireDnsmasq && !InteropInterpreter.isRequired, "dnsmasq or the Python client is missing")
            return
        }
        let zone = try Self.zone()
        let service = "_openclaw-gw._tcp.openclaw.internal"
        let instance = "studio-gateway.\(service)"
        let answers = try await Self.served(zone.rendered(.dnsmasq), [
            "\(service):PTR", "\(instance):SRV", "\(instance):TXT", "studio.openclaw.internal:A", "studio.openclaw.internal:AAAA",
        ])
        // Browse (PTR) → resolve (SRV + TXT) → address (A/AAAA), as a DNS-SD client does.
        #expect(answers["\(service):PTR"] == [.string("\(instance).")])
        #expect(answers["\(instance):SRV"] == [[0, 0, 18789, "studio.openclaw.internal."]])
        #expect(answers["\(instance):TXT"] == .array([.array(zone.txt.map { .string($0) })]))
        #expect(answers["\(instance):TXT"]?.arrayValue?.first?.arrayValue?.contains(.string("gatewayTlsSha256=\(Self.fingerprint)")) == true)
        #expect(answers["studio.openclaw.internal:A"] == ["127.0.0.1"])
        #expect(answers["studio.openclaw.internal:AAAA"] == ["fd00::7"])
    }

    @Test func dnsmasqKeepsQuotesCommasAndBackslashesInTXT() async throws {
        guard Self.dnsmasq != nil, (try? Self.python.get()) != nil else {
            #expect(!Self.requireDnsmasq && !InteropInterpreter.isRequired, "dnsmasq or the Python client is missing")
            return
        }
        let zone = try DNSSDZone(.init(domain: "openclaw.internal.", displayName: #"A "quoted", back\slash"#, hostname: "h",
                                       gatewayPort: 1, ipv4: "127.0.0.1", serial: 1))
        let instance = "h-gateway._openclaw-gw._tcp.openclaw.internal"
        let answers = try await Self.served(zone.rendered(.dnsmasq), ["\(instance):TXT"])
        #expect(answers["\(instance):TXT"]?.arrayValue?.first?.arrayValue?.first == .string(#"displayName=A "quoted", back\slash"#))
    }
}

/// Publishing through Avahi sends multicast, so it runs only when `OPENCLAW_TEST_AVAHI=1` asks for
/// it (never in CI): the service is published and withdrawn once.
@Suite("Discovery records published through Avahi",
       .enabled(if: ProcessInfo.processInfo.environment["OPENCLAW_TEST_AVAHI"] == "1", "publishes on the network: set OPENCLAW_TEST_AVAHI=1"))
struct AvahiPublisherTests {
    @Test func publishesAndWithdraws() throws {
        let records = GatewayDiscoveryRecords(.init(machineDisplayName: "Harness Avahi test", hostname: "harness-test", gatewayPort: 18789))
        let publisher = try AvahiPublisher(records)
        publisher.stop()
        publisher.stop()
    }
}
