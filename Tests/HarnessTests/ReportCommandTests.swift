import Foundation
import GatewayProtocol
import Testing

/// `harness report` on what `harness serve --transcript` wrote: a bug reproduced by hand
/// becomes one HTML file.
@Suite("harness report")
struct ReportOfServeTranscriptTests {
    @Test func aServeTranscriptBecomesASequenceDiagram() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-report-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let transcript = directory.appendingPathComponent("serve.jsonl")
        try await ServeProcess.withServe(["--transcript", transcript.path, "--pairing", "auto"]) { _, url in
            let node = try await WireNode.open(url, identity: try DeviceIdentity(seed: Data(repeating: 7, count: 32)))
            let hello = try await node.connect()
            #expect(hello.ok, "\(hello)")
            await node.close()
            _ = await node.connection.waitUntilClosed()
        }
        let output = directory.appendingPathComponent("report.html")
        let report = try LineProcess(name: "harness report", executable: try ServeProcess.executable(),
                                     arguments: ["report", transcript.path, "--html", output.path])
        let status = await report.waitForExit(timeout: .seconds(60))
        #expect(status == 0, "\(report.transcript)")
        let html = try String(contentsOf: output, encoding: .utf8)
        #expect(html.contains("<b>#1 node</b>"), "the connection's lifeline is labelled by its role")
        #expect(html.contains("<span class=\"label\">connect.challenge</span>"))
        #expect(html.contains("<span class=\"label\">connect #"))
        #expect(html.contains("<span class=\"label\">res connect ok #"))
        #expect(html.contains("class=\"marker close\""))
        // The issued device token stays redacted, as the transcript has it.
        #expect(html.contains("\"deviceToken\":\"\\u003credacted\\u003e\""), "secrets stay redacted")

        let missing = try LineProcess(name: "harness report", executable: try ServeProcess.executable(),
                                      arguments: ["report", directory.appendingPathComponent("nope.jsonl").path, "--html", output.path])
        #expect(await missing.waitForExit(timeout: .seconds(60)) == 2)
        let error = await missing.errors.first(from: 0, timeout: .seconds(10)) { _ in true }?.element
        #expect(error == "error: \(directory.appendingPathComponent("nope.jsonl").path): no such file")
    }
}
