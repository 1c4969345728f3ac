import Foundation
import GatewayProtocol
import Testing

/// `sessions.delete`, the session group methods, `sessions.branches.list` and `sessions.fork` of `harness serve` as an independent Python
/// client sees them on the wire (`Tests/Interop/sessions_peer.py`; docs/protocol.md §8.6), with a
/// deletion and a group catalog from another device typed on the console (`session-delete`,
/// `session-groups`).
///
/// Breaks tried (each failed a check here): the schema opened (unknown members accepted), the
/// dynamic scope left at `operator.write` for every deletion, the main session deletable, the
/// `archivedOnly` gate skipped, the stale `expectedSessionId` guard skipped, `sessions.changed`
/// sent with `reason: "patch"` for a deletion, an event sent when nothing was deleted; for the
/// groups (tried together, each failed its check): `sessions.groups.list` accepting an unknown
/// member, positions counted from 1, a put dropping a group with members, an unknown group's
/// rename answered `UNAVAILABLE`, no `sessions.changed` after a refused rename or delete. For
/// `sessions.branches.list` and `sessions.fork` (two pairs, each run failed both checks): the
/// headline taken from the oldest message and the fork keeping the cut message; the headline cut
/// at 121 code points and a fork at an assistant message accepted.
@Suite(.enabled(if: InteropPython.shouldRun, "Python with websockets and cryptography not found (.venv or OPENCLAW_PYTHON)"))
struct ServeSessionsInteropTests {
    static let checks = ["schema-closed", "write-scope", "main-refused", "stale-guard", "delete-and-event", "delete-missing",
                         "archive-then-delete", "deleted-elsewhere", "groups-schema", "groups-put", "groups-rename",
                         "groups-put-keeps-members", "groups-delete", "groups-elsewhere", "branches-list", "fork"]

    @Test
    func pythonChecksOfSessionsDeleteAndGroupsPass() async throws {
        try await ServeProcess.withServe(["--pairing", "auto"]) { serve, url in
            let peer = try InteropPython.start("sessions_peer.py", [url, "--timeout", "120"])
            defer { Task { await peer.kill() } }
            func context() -> Comment { Comment(rawValue: serve.transcript + "\n" + peer.transcript) }
            var consoleSteps = 0
            var seen = 0
            for check in Self.checks {
                // Console steps come before the check that needs them, in order.
                while true {
                    let found = try #require(await peer.objects.first(from: seen, timeout: .seconds(60)) { object in
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
            #expect(consoleSteps == 2)
            _ = try #require(await peer.object("step", "done"), context())
            #expect(await peer.waitForExit(timeout: .seconds(30)) == 0, context())
        }
    }
}
