#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GatewayProtocol
import Testing

/// `harness serve` against a hostile client (`Tests/Interop/hostile_peer.py`): secrets planted in
/// a cut-off frame, in the upgrade request's query and headers, and the shared secret given
/// outside `argv`, are absent from the transcript, the `--json` output and the `--verbose`
/// frames unless `--show-secrets`; cut-off and over-deep JSON get an answer before and after
/// authentication.
@Suite("harness serve: hostile client", .enabled(if: InteropPython.shouldRun, "Python with websockets not found (.venv or OPENCLAW_PYTHON)"))
struct ServeSecurityTests {
    enum SecretSource: String, CaseIterable, Sendable { case file, environment }

    struct Case: Sendable, CustomTestStringConvertible {
        var source: SecretSource
        var showSecrets: Bool
        var testDescription: String { "\(source.rawValue)\(showSecrets ? ", --show-secrets" : "")" }
    }

    @Test(arguments: [Case(source: .file, showSecrets: false), Case(source: .environment, showSecrets: false),
                      Case(source: .file, showSecrets: true)])
    func plantedSecretsNeverReachTheOutputOrTheTranscript(_ testCase: Case) async throws {
        let tag = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let token = "SHAREDTOKEN-\(tag)"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("openclaw-hostile-\(tag)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let transcript = directory.appendingPathComponent("transcript.jsonl")
        var arguments = ["--port", "0", "--json", "--verbose", "--transcript", transcript.path]
        var environment: [String: String] = [:]
        switch testCase.source {
        case .file:
            let file = directory.appendingPathComponent("auth")
            try Data("token:\(token)\n".utf8).write(to: file)
            _ = chmod(file.path, 0o600)
            arguments += ["--auth-file", file.path]
        case .environment:
            environment["OPENCLAW_HARNESS_AUTH"] = "token:\(token)"
        }
        if testCase.showSecrets { arguments.append("--show-secrets") }

        let serve = try ServeProcess.start(arguments, environment: environment)
        defer { serve.sendSignal(SIGKILL) }
        let listening = try #require(await serve.object("event", "listening"), "\(serve.transcript)")
        let url = try #require(listening["url"]?.stringValue)
        let commandLine = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(serve.process.pid)/cmdline")))
            .map { String(decoding: $0, as: UTF8.self) } ?? ""

        let peer = try InteropPython.start("hostile_peer.py", [url, "--token", token, "--tag", tag])
        defer { peer.sendSignal(SIGKILL) }
        func context() -> Comment { Comment(rawValue: serve.transcript.suffix(4_000) + "\n" + peer.transcript) }
        _ = try #require(await peer.object("step", "done"), context())

        // Every bad frame got an answer.
        let truncated = try #require(await peer.object("step", "preauth_truncated"), context())
        #expect(truncated["closeCode"] == 1008)
        #expect(truncated["closeReason"]?.stringValue?.isEmpty == false, "a close with a reason")
        #expect(truncated["responses"] == [], "before authentication: no response, only the close")
        let deepBefore = try #require(await peer.object("step", "preauth_deep"), context())
        #expect(deepBefore["closeCode"] == 1008)
        #expect(deepBefore["closeReason"]?.stringValue?.contains("nested deeper than 512") == true)
        let truncatedAfter = try #require(await peer.object("step", "postauth_truncated")?["response"], context())
        #expect(truncatedAfter["id"] == "trunc-2")
        #expect(truncatedAfter["error"]?["code"] == "INVALID_REQUEST")
        let deepAfter = try #require(await peer.object("step", "postauth_deep")?["response"], context())
        #expect(deepAfter["id"] == "deep-2")
        #expect(deepAfter["error"]?["code"] == "INVALID_REQUEST")
        #expect(deepAfter["error"]?["message"]?.stringValue?.contains("nested deeper than 512") == true)
        #expect(await peer.waitForExit(timeout: .seconds(30)) == 0, context())

        try serve.send("quit")
        #expect(await serve.waitForExit(timeout: .seconds(30)) == 0, context())
        let output = serve.lines.all.joined(separator: "\n") + "\n" + serve.errors.all.joined(separator: "\n")
        let recorded = try String(contentsOf: transcript, encoding: .utf8)
        #expect(recorded.contains("\"frame\""), "the transcript was written")

        let planted = [token, "QUERYSECRET-\(tag)", "HEADERSECRET-\(tag)", "COOKIESECRET-\(tag)", "RAWSECRET-\(tag)",
                       "RAWPASSWORD-\(tag)"]
        #expect(!commandLine.contains(token), "the shared secret is not in argv: \(commandLine)")
        if testCase.showSecrets {
            for secret in ["RAWSECRET-\(tag)", "QUERYSECRET-\(tag)", token] {
                #expect(recorded.contains(secret), "--show-secrets keeps \(secret) in the transcript")
            }
            #expect(output.contains("RAWSECRET-\(tag)"), "--show-secrets keeps it in the verbose output")
        } else {
            for secret in planted {
                #expect(!recorded.contains(secret), "\(secret) in the transcript")
                #expect(!output.contains(secret), "\(secret) in the output")
            }
            #expect(recorded.contains("<redacted>"))
            // The upgrade request is recorded, redacted: path and headers.
            #expect(recorded.contains("/?token=<redacted>&client=hostile"), "\(recorded.prefix(2_000))")
            #expect(recorded.contains(#""Authorization":"<redacted>""#))
        }
    }
}
