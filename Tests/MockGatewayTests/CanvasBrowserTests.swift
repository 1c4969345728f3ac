import Foundation
import GatewayProtocol
import MockGateway
import TestSupport
import Testing

/// The canvas page through its capability URL in headless Chromium (on 127.0.0.1): the page
/// loads, its script (a second request with the same capability, by relative URL) runs; an
/// expired capability shows the 401 instead. Skipped without Chromium unless
/// `OPENCLAW_REQUIRE_BROWSER=1`. Break tried: serving the page without `page.js` leaves
/// `data-canvas-ready` unset and fails the first check.
@Suite("Canvas page in a browser")
struct CanvasBrowserTests {
    static let chromium = ChromiumBrowser.path
    static let required = ChromiumBrowser.required

    /// The DOM after the page's scripts ran.
    private static func dumpDOM(_ url: String) async throws -> String {
        let executable = try #require(chromium, "OPENCLAW_REQUIRE_BROWSER=1 but no chromium was found on the PATH")
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("canvas-browser-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: profile) }
        let output = try await AsyncProcess.run(URL(fileURLWithPath: executable), [
            "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
            "--user-data-dir=\(profile.path)", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-default-browser-check",
            // Nothing but the Gateway on 127.0.0.1 resolves.
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--dump-dom", url,
        ], timeout: .seconds(120))
        #expect(output.status == 0, "chromium exited with \(output.status)")
        return output.stdoutText
    }

    @Test(.enabled(if: chromium != nil || required,
                   "Chromium is not installed (apt-get install chromium); set OPENCLAW_REQUIRE_BROWSER=1 to fail instead of skipping"))
    func theCanvasPageLoadsThroughItsCapabilityURL() async throws {
        var configuration = GatewayConfiguration(profile: .current)
        configuration.autoApproval = .auto
        try await Gateway.withGateway(configuration) { gateway in
            let session = try await TestSessions.connect(gateway, identity: try TestIdentities.make(0xB1)) { $0.connectParams() }
            let base = try #require(session.hello.pluginSurfaceUrls?["canvas"])
            let dom = try await Self.dumpDOM(base + "/__openclaw__/canvas/")
            #expect(dom.contains("<title>OpenClaw Canvas</title>"), "\(dom.prefix(600))")
            #expect(dom.contains(#"data-canvas-ready="1""#), "the page's script ran: \(dom.prefix(600))")
            #expect(dom.contains("canvas script ran"))
            await gateway.expireCanvasCapabilities()
            let refused = try await Self.dumpDOM(base + "/__openclaw__/canvas/")
            #expect(refused.contains("Unauthorized") && !refused.contains("canvas script ran"), "\(refused.prefix(600))")
            await session.client.close()
        }
    }
}
