import Foundation
import GatewayProtocol
import Testing

/// `sessions.delete`, the session group methods, `sessions.branches.list`, `sessions.fork`,
/// `sessions.rewind`, `sessions.branches.switch`, `sessions.create` and
/// `sessions.observer.visibility` of `harness serve` as an independent Python client sees them on
/// the wire (`Tests/Interop/sessions_peer.py`; docs/protocol.md §8.6), with a deletion, a group
/// catalog, a rewind and a creation from another device typed on the console (`session-delete`,
/// `session-groups`, `session-rewind`, `session-create`).
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
/// at 121 code points and a fork at an assistant message accepted. For the transcript tree,
/// `sessions.create` and `sessions.observer.visibility` (three runs, each break failed its
/// check): a rewind that keeps the cut message on the active path, a switch onto the active tip
/// accepted, `runStarted` never true, `fork: true` ignored, `{ok: false}` for a visibility; the
/// inactive tips listed oldest first (`tree-elsewhere`) and the `sessions.create` scope left at
/// `operator.write` for `execNode` (`create`); `sessions.changed` for a creation sent as
/// `reason: "patch"` (`create`, `create-fork`); an entry on an inactive branch answered `not_found`
/// by `chat.message.get` (`rewind`).
@Suite(.enabled(if: InteropPython.shouldRun, "Python with websockets and cryptography not found (.venv or OPENCLAW_PYTHON)"))
struct ServeSessionsInteropTests {
    static let checks = ["schema-closed", "write-scope", "main-refused", "stale-guard", "delete-and-event", "delete-missing",
                         "archive-then-delete", "deleted-elsewhere", "groups-schema", "groups-put", "groups-rename",
                         "groups-put-keeps-members", "groups-delete", "groups-elsewhere", "branches-list", "fork",
                         "rewind", "branches-switch", "tree-elsewhere", "create", "create-fork", "created-elsewhere",
                         "observer-visibility"]

    @Test
    func pythonChecksOfSessionsDeleteAndGroupsPass() async throws {
        try await ConsoleDrivenPeer.run("sessions_peer.py", checks: Self.checks, consoleSteps: 4, peerTimeout: 120,
                                        lineTimeout: .seconds(60))
    }
}
