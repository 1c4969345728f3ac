import Conformance
import Foundation
import GatewayProtocol
import MockGateway

let ws002 = Scenario(
    "WS-002", .must,
    title: "a workspace listing asks for at most 500 entries a page and pages to the end",
    requirement: "A client browsing an agent workspace never asks agents.workspace.list for more than 500 entries (the Gateway's maximum page) and asks for the next page at an offset until it has all totalEntries of the folder.",
    source: "docs/protocol.md §9.5",
    discussion: """
        Gives the Gateway's main agent a workspace whose root holds 620 files, pairs the client \
        and has the user open the root folder in the Files view with every page of it. Once the \
        client answers, every agents.workspace.list request it sent must have no limit or one of \
        at most 500, and the pages the Gateway answered must reach the folder's 620 entries.
        """,
    tags: ["workspace", "operator", "paging"],
    needs: [.browseWorkspace],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let total = 620
    let files = Dictionary(uniqueKeysWithValues: (0..<total).map { (String(format: "file-%04d.txt", $0), Data("\($0)\n".utf8)) })
    try await run.withWorkspace(files) {
        _ = try await run.operatorSession()
        let cursor = run.mark()
        if case .error(let shown) = try await run.client.reply(to: .browseWorkspace()) {
            try run.fail("the client could not show the workspace root", expected: "ok", actual: shown)
        }
        let lists = run.requests(.agentsWorkspaceList, from: cursor)
        try run.expect(!lists.isEmpty, "the client did not list the workspace", expected: "agents.workspace.list", actual: "none")
        let oversized = lists.filter { ($0.request.params?["limit"]?.int64Value ?? 0) > 500 }
        try run.expect(oversized.isEmpty, "the client asked for more entries than a page holds",
                       expected: "limit absent or at most 500", actual: oversized.map(\.description).joined(separator: "; "))
        let reached = lists.compactMap { list -> Int? in
            guard let payload = list.response?.payload, let offset = payload["offset"]?.int64Value,
                  let entries = payload["entries"]?.arrayValue else { return nil }
            return Int(offset) + entries.count
        }.max() ?? 0
        try run.expectEqual(reached, total, "the entries of the folder the client's pages reached")
    }
}
