import Foundation
import GatewayProtocol
@testable import MockGateway
import Testing
import WebSocketTransport

/// What a setup code's URL allows, as upstream decides it: `full` on `wss://` and loopback,
/// lowered to `limited` on plain `ws://` to a private network, nothing for plain `ws://`
/// elsewhere; and the TLS fingerprint in upstream's form, only on the Gateway's own URL.
@Suite("Setup codes by URL exposure")
struct SetupCodeExposureTests {
    @Test(arguments: [
        ("wss://gateway.example:8443", SetupURLExposure.encrypted),
        ("https://gateway.example", .encrypted),
        ("ws://127.0.0.1:18789", .loopback),
        ("ws://localhost:18789", .loopback),
        ("ws://[::1]:18789", .loopback),
        ("ws://192.168.1.20:18789", .privatePlaintext),
        ("ws://10.0.2.2:18789", .privatePlaintext),
        ("ws://172.20.0.5:18789", .privatePlaintext),
        ("ws://169.254.10.1:18789", .privatePlaintext),
        ("ws://gateway.local:18789", .privatePlaintext),
        ("ws://Gateway.Local.:18789", .privatePlaintext),
        ("ws://[fd12:3456::1]:18789", .privatePlaintext),
        ("ws://[fe80::1]:18789", .privatePlaintext),
        ("http://192.168.1.20:18789", .privatePlaintext),
        ("ws://172.32.0.1:18789", .publicPlaintext),
        ("ws://100.64.0.9:18789", .publicPlaintext),
        ("ws://203.0.113.5:18789", .publicPlaintext),
        ("ws://gateway.example:18789", .publicPlaintext),
        ("ws://[2001:db8::1]:18789", .publicPlaintext),
        ("not a url", .unrecognized),
        ("ftp://192.168.1.20", .unrecognized),
    ])
    func urlsAreClassifiedAsUpstreamDoes(url: String, exposure: SetupURLExposure) {
        #expect(SetupURLExposure(url: url) == exposure, "\(url)")
    }

    @Test func fullAccessIsLoweredOnAPrivateNetworkAskedForOrNot() {
        for profile in [nil, BootstrapProfile.full] {
            let plan = SetupCodePlan.planned(profile: profile, url: "ws://192.168.1.20:18789", urlSource: "gateway.bind=custom",
                                             authLabel: "token")
            #expect(plan.profile == .limited)
            #expect(plan.accessDowngraded)
        }
        let node = SetupCodePlan.planned(profile: .nodeOnly, url: "ws://192.168.1.20:18789", urlSource: "x", authLabel: "token")
        #expect(node.profile == .nodeOnly && !node.accessDowngraded, "only full is lowered")
        for url in ["ws://127.0.0.1:18789", "wss://192.168.1.20:18789"] {
            let plan = SetupCodePlan.planned(profile: .full, url: url, urlSource: "x", authLabel: "token")
            #expect(plan.profile == .full && !plan.accessDowngraded, "\(url)")
        }
    }

    @Test func theWireMethodLowersOnALANAndRefusesAPublicPlaintextURL() async throws {
        try await Gateway.withGateway(GatewayConfiguration(auth: .token("shared-secret-1"))) { gateway in
            let session = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x71),
                                                               scopes: ["operator.admin"], token: "shared-secret-1")
            let lan = try await session.client.request("device.pair.setupCode", params: ["publicUrl": "ws://192.168.1.20:18789"])
            #expect(lan.payload?["access"] == "limited", "\(lan)")
            #expect(lan.payload?["accessDowngraded"] == true)
            let code = try SetupCode(decoding: try #require(lan.payload?["setupCode"]?.stringValue))
            #expect(code.url == "ws://192.168.1.20:18789")
            let node = try await session.client.request("device.pair.setupCode",
                                                        params: ["publicUrl": "ws://192.168.1.20:18789", "bootstrapProfile": "node"])
            #expect(node.payload?["access"] == "node" && node.payload?["accessDowngraded"] == nil, "\(node)")

            let before = await gateway.bootstrapTokenCount()
            let refused = try await session.client.request("device.pair.setupCode", params: ["publicUrl": "ws://203.0.113.5:18789"])
            #expect(refused.error?.code == "INVALID_REQUEST", "\(refused)")
            #expect(refused.error?.message == SetupURLExposure.publicPlaintextRefusal)
            #expect(await gateway.bootstrapTokenCount() == before, "refused before a token is issued")
            await session.client.close()
        }
    }

    @Test func theScriptingAPIAndTheConsoleLowerFullAccessOnALAN() async throws {
        try await Gateway.withGateway(GatewayConfiguration(advertisedURL: "ws://192.168.1.20:18789")) { gateway in
            let issued = await gateway.issueSetupCode(profile: .full)
            #expect(issued.access == .limited && issued.accessDowngraded)
            #expect(issued.code.url == "ws://192.168.1.20:18789")

            let console = GatewayConsole(gateway: gateway)
            for line in ["setup-code", "setup-code --profile full", "setup-code --full-access"] {
                let reply = try #require(await console.handle(line))
                guard case .setupCode(let code, let profile, _)? = reply.result else {
                    Issue.record("\(line): \(reply.errorMessage ?? "no setup code")")
                    continue
                }
                #expect(profile == "limited" && code.access == .limited && code.accessDowngraded, "\(line)")
                #expect(try JSONValue(parsing: reply.rendered(.json))["result"]?["accessDowngraded"] == true)
                #expect(reply.rendered(.text).contains("access lowered from full to limited"), "\(reply.rendered(.text))")
            }
            let node = try #require(await console.handle("setup-code --profile node")?.result)
            guard case .setupCode(let code, let profile, _) = node else { Issue.record("no node code"); return }
            #expect(profile == "node" && !code.accessDowngraded)
            #expect(!ConsoleReply(command: "setup-code", outcome: .success(node)).rendered(.text).contains("lowered"))
        }
    }

    @Test func theConsoleIssuesNoCodeForPlainWSOffThePrivateNetworks() async throws {
        try await Gateway.withGateway(GatewayConfiguration(advertisedURL: "ws://203.0.113.5:18789")) { gateway in
            let reply = try #require(await GatewayConsole(gateway: gateway).handle("setup-code --profile node"))
            let message = try #require(reply.errorMessage)
            #expect(message.hasPrefix("setup-code: ws://203.0.113.5:18789 is plain ws:// to an address that is neither loopback nor on a private network"))
            #expect(message.contains("--tls") && message.contains("--url"))
            #expect(await gateway.bootstrapTokenCount() == 0)
        }
    }

    @Test(.enabled(if: WebSocketTLS.isAvailable, "TLS needs OpenSSL"))
    func theFingerprintIsLowerCaseHexAndPinsOnlyTheGatewaysOwnURL() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("setup-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let made = try WebSocketTLS.makeSelfSignedCertificate(commonName: "setup test", subjectAlternativeNames: ["IP:127.0.0.1"])
        let certificate = directory.appendingPathComponent("cert.pem"), key = directory.appendingPathComponent("key.pem")
        try Data(made.certificatePEM.utf8).write(to: certificate)
        try Data(made.privateKeyPEM.utf8).write(to: key)
        let formatted = try WebSocketTLS.sha256Fingerprint(certificatePEM: made.certificatePEM)
        let tls = WebSocketTLSServerConfiguration(certificateFile: certificate.path, privateKeyFile: key.path)

        try await Gateway.withGateway(GatewayConfiguration(auth: .token("shared-secret-2"), tls: tls)) { gateway in
            let fingerprint = try #require(gateway.tlsFingerprint)
            #expect(fingerprint.count == 64 && fingerprint.allSatisfy { $0.isHexDigit && !$0.isUppercase }, "\(fingerprint)")
            #expect(fingerprint == formatted.replacingOccurrences(of: ":", with: "").lowercased())
            #expect(await gateway.makeSetupCode().tlsFingerprint == fingerprint)

            // Our client pins the Gateway with that form, and would with Node's `AB:CD:…` too.
            let pinned = WebSocketConfiguration(tls: WebSocketTLSClientConfiguration(pinnedCertificateSHA256: fingerprint))
            let identity = try TestIdentities.make(0x72)
            let first = try await TestClient.open(gateway.url, identity: identity, configuration: pinned)
            let response = try await first.connect(first.operatorParams(scopes: ["operator.admin"], token: "shared-secret-2"))
            if response.ok {
                await first.close()
            } else {
                try await gateway.approve(requestId: try #require(response.error?.details?["requestId"]?.stringValue, "\(response)"))
                _ = try await first.closed()
            }
            let colonPinned = WebSocketConfiguration(tls: WebSocketTLSClientConfiguration(pinnedCertificateSHA256: formatted))
            let client = try await TestClient.open(gateway.url, identity: identity, configuration: colonPinned)
            #expect(try await client.connect(client.operatorParams(scopes: ["operator.admin"], token: "shared-secret-2")).ok)

            let own = try await client.request("device.pair.setupCode", params: [:])
            let ownCode = try SetupCode(decoding: try #require(own.payload?["setupCode"]?.stringValue, "\(own)"))
            #expect(ownCode.url == gateway.url && ownCode.tlsFingerprint == fingerprint)
            // A proxy in front presents its own certificate: no pin for it.
            let proxied = try await client.request("device.pair.setupCode", params: ["publicUrl": "wss://proxy.example:8443"])
            let proxiedCode = try SetupCode(decoding: try #require(proxied.payload?["setupCode"]?.stringValue, "\(proxied)"))
            #expect(proxiedCode.url == "wss://proxy.example:8443" && proxiedCode.tlsFingerprint == nil)
            await client.close()
        }
    }
}

extension Gateway {
    /// How many bootstrap tokens were issued and not revoked.
    fileprivate func bootstrapTokenCount() async -> Int {
        await core.bootstrapTokens.records.count
    }
}
