import Foundation
import GatewayProtocol
import Testing

/// A Python peer against `harness serve` that reports checks in a fixed order and, between
/// them, asks for console commands (`{"step":"console","command":…}`): each command is typed on
/// the serve console, its `command.ok` awaited, and the peer told to go on.
enum ConsoleDrivenPeer {
    /// Runs `script` against `harness serve --pairing auto` and expects `checks` in order, each
    /// `ok`, with exactly `consoleSteps` console commands on the way.
    /// - Parameters:
    ///   - peerTimeout: the peer's own `--timeout` in seconds.
    ///   - lineTimeout: how long to wait for each line of the peer.
    static func run(_ script: String, checks: [String], consoleSteps expectedConsoleSteps: Int, peerTimeout: Int,
                    lineTimeout: Duration) async throws {
        try await ServeProcess.withServe(["--pairing", "auto"]) { serve, url in
            let peer = try InteropPython.start(script, [url, "--timeout", "\(peerTimeout)"])
            defer { Task { await peer.kill() } }
            func context() -> Comment { Comment(rawValue: serve.transcript + "\n" + peer.transcript) }
            var consoleSteps = 0
            var seen = 0
            for check in checks {
                // Console steps come before the check that needs them, in order.
                while true {
                    let found = try #require(await peer.objects.first(from: seen, timeout: lineTimeout) { object in
                        object["check"] != nil || object["step"] == "console" || object["step"] == "error"
                    }, context())
                    let line = found.element
                    seen = found.position + 1
                    if line["step"] == "console", let command = line["command"]?.stringValue {
                        let cursor = serve.objects.count
                        try serve.send(command)
                        let name = String(command.split(separator: " ").first ?? "")
                        _ = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"]?.stringValue == name },
                                         context())
                        try peer.send("go")
                        consoleSteps += 1
                        continue
                    }
                    #expect(line["check"]?.stringValue == check, context())
                    #expect(line["ok"] == true, "\(check): \(line["detail"]?.jsonString ?? "")")
                    break
                }
            }
            #expect(consoleSteps == expectedConsoleSteps)
            _ = try #require(await peer.object("step", "done"), context())
            #expect(await peer.waitForExit(timeout: .seconds(30)) == 0, context())
        }
    }
}
