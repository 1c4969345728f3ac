import Conformance
import Foundation
import GatewayProtocol
import MockGateway

let ws001 = Scenario(
    "WS-001", .must,
    title: "a preview refused as too large is shown as such and not requested again",
    requirement: "When the Gateway refuses a workspace file preview with workspace_file_too_large {maxBytes, path, size}, the client shows the file as too large to preview and does not ask for it again in a loop: one agents.workspace.get per time the user opens the file.",
    source: "docs/protocol.md §9.5",
    discussion: """
        Gives the Gateway's main agent a workspace with a 300 KiB text file (over the 256 KiB \
        text preview cap) and a small note, pairs the client and opens the large file in the \
        Files preview: the client must answer with an error (the preview shows no content). \
        Then 5 s of client time pass, and the user opens the small note, which must be shown; \
        once that answer is in, the Gateway must have received exactly one agents.workspace.get \
        for the large file, and refused it as too large.
        """,
    tags: ["workspace", "operator", "retry"],
    needs: [.openWorkspaceFile],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let large = "reports/large.txt", note = "notes.md"
    let files = [large: Data(repeating: UInt8(ascii: "a"), count: 300 * 1024), note: Data("# Plan\n".utf8)]
    try await run.withWorkspace(files) {
        _ = try await run.operatorSession()
        let cursor = run.mark()
        let refused = try await run.client.reply(to: .openWorkspaceFile(large))
        try run.expect(refused != .ok, "the client reported the 300 KiB file as previewed",
                       expected: "an error: the file is too large to preview", actual: "ok")
        await run.elapse(.seconds(5))
        // The second file's answer proves that every earlier request of the client has arrived.
        if case .error(let shown) = try await run.client.reply(to: .openWorkspaceFile(note)) {
            try run.fail("the client could not preview a small text file", expected: "ok", actual: shown)
        }
        let gets = run.requests(.agentsWorkspaceGet, from: cursor).filter { $0.request.params?["path"]?.stringValue == large }
        try run.expect(gets.count == 1, "the client asked for the preview that was refused as too large again",
                       expected: "one agents.workspace.get for \(large)", actual: "\(gets.count)")
        let type = gets.first?.response?.error?.details?["type"]?.stringValue
        try run.expectEqual(type, WorkspaceErrorType.fileTooLarge.rawValue, "the Gateway's answer to the preview of the large file")
    }
}
