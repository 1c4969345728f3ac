import Foundation
import GatewayProtocol
import Testing
@testable import MockGateway

/// The table "Methods the apps call" of `docs/fidelity.md` against the method registry: a row
/// that says `yes` must be served on the current profile with the scope it names, a row that says
/// `no` must not be served (an operator gets `unknown method`). Breaks tried: marking
/// `voicewake.set` as `operator.read` in the table, and serving `tasks.list` without changing its
/// row; both fail here.
@Suite("docs/fidelity.md: the methods the apps call")
struct AppMethodTableTests {
    /// One row of the table.
    struct Row: Equatable {
        let method: String
        let scope: String
        let served: Bool
    }

    static let fidelity = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/fidelity.md")

    /// The rows between `<!-- app-methods:begin -->` and `<!-- app-methods:end -->`.
    static func rows(_ text: String) throws -> [Row] {
        let begin = try #require(text.range(of: "<!-- app-methods:begin -->"))
        let end = try #require(text.range(of: "<!-- app-methods:end -->"))
        var rows: [Row] = []
        for line in text[begin.upperBound..<end.lowerBound].split(separator: "\n") where line.hasPrefix("| `") {
            // Cells are split on " | " so that an escaped "\|" inside a cell stays in it.
            let cells = line.dropFirst(2).dropLast(2).components(separatedBy: " | ")
            try #require(cells.count == 5, "five cells: \(line)")
            func code(_ cell: String) -> String { cell.trimmingCharacters(in: CharacterSet(charactersIn: "` ")) }
            let served = cells[4].trimmingCharacters(in: .whitespaces)
            try #require(served == "yes" || served == "no", "served is yes or no: \(line)")
            rows.append(Row(method: code(cells[0]), scope: code(cells[3]), served: served == "yes"))
        }
        return rows
    }

    /// The differences between `rows` and `registry` on `profile`, one line each.
    static func mismatches(_ rows: [Row], registry: MethodRegistry, profile: GatewayProfile) -> [String] {
        var found: [String] = []
        var seen: Set<String> = []
        for row in rows {
            if !seen.insert(row.method).inserted { found.append("\(row.method): listed twice") }
            let spec = registry.spec(for: row.method)
            let served = spec?.isServed(by: profile) ?? false
            if served != row.served {
                found.append("\(row.method): the table says \(row.served ? "yes" : "no"), the registry \(served ? "serves" : "does not serve") it")
            }
            guard served, let spec else { continue }
            let scope = spec.scope.map { $0.raisedByParams ? "dynamic" : $0.scope.rawValue } ?? "node"
            if scope != row.scope { found.append("\(row.method): the table says \(row.scope), the registry \(scope)") }
        }
        return found
    }

    @Test("every row of the table agrees with the registry on the current profile")
    func tableMatchesRegistry() throws {
        let rows = try Self.rows(String(contentsOf: Self.fidelity, encoding: .utf8))
        #expect(rows.count >= 50, "the table was found and read")
        let found = Self.mismatches(rows, registry: .standard, profile: .current)
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }

    @Test("the comparison finds a wrong scope, a wrong served flag and a duplicate")
    func comparisonFindsMismatches() {
        let rows = [
            Row(method: GatewayMethod.voicewakeSet.rawValue, scope: "operator.read", served: true),
            Row(method: "example.unserved", scope: "operator.read", served: true),
            Row(method: GatewayMethod.nodeEvent.rawValue, scope: "node", served: true),
            Row(method: GatewayMethod.nodeEvent.rawValue, scope: "node", served: true),
        ]
        #expect(Self.mismatches(rows, registry: .standard, profile: .current) == [
            "voicewake.set: the table says operator.read, the registry operator.write",
            "example.unserved: the table says yes, the registry does not serve it",
            "node.event: listed twice",
        ])
    }
}
