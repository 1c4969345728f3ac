import Foundation
import HarnessCLI
import MockGateway
import Testing

/// `serve --help`, the console's `help` and docs/harness-serve.md name the same flags and
/// commands, so that neither says something the other does not.
@Suite("harness serve: help and docs agree")
struct ServeDocumentationTests {
    static let guide = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/harness-serve.md")

    /// The first cells of the table rows under `heading` (up to the next heading).
    static func firstCells(under heading: String) throws -> [String] {
        let text = try String(contentsOf: guide, encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n\(heading)\n").dropFirst().first, "no \(heading)")
        return (section.components(separatedBy: "\n#").first ?? "").split(separator: "\n")
            .filter { $0.hasPrefix("| `") }
            .compactMap { $0.split(separator: "|").first.map { String($0).trimmingCharacters(in: .whitespaces) } }
    }

    /// Every `--flag` in `text`.
    static func flags(in text: String) -> Set<String> {
        Set(text.matches(of: /--[a-z][a-z-]*/).map { String($0.output) })
    }

    @Test func everyServeFlagIsInTheFlagTableAndBack() async throws {
        let output = HarnessLibraryTests.Output()
        let status = try await Harness.tool().main(["serve", "--help"], io: output.io)
        #expect(status == 0)
        let options = try #require(output.out.components(separatedBy: "\nOPTIONS:\n").last)
        let inHelp = Set(options.split(separator: "\n").compactMap { line in
            line.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init)
        }.filter { $0.hasPrefix("--") })
        let documented = Self.flags(in: try Self.firstCells(under: "## Flags").joined(separator: " "))
        #expect(inHelp.subtracting(["--help"]) == documented.subtracting(["--help"]),
                "in --help only: \(inHelp.subtracting(documented).sorted()); in the docs only: \(documented.subtracting(inHelp).sorted())")
    }

    @Test func everyConsoleCommandHasARowInTheCommandTable() throws {
        let cells = try Self.firstCells(under: "## Console commands")
        for command in ConsoleCommandHelp.all {
            #expect(cells.contains { $0.hasPrefix("`\(command.name)") || $0.contains("/ `\(command.name)`") },
                    "\(command.name) has no row in docs/harness-serve.md")
        }
    }
}
