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

    /// The table row of a console command, as docs/harness-serve.md must have it: the usage (and
    /// the aliases), the one line of help and the example, with `|` escaped for Markdown.
    static func tableRow(_ entry: ConsoleCommandHelp) -> String {
        func escaped(_ text: String) -> String { text.replacingOccurrences(of: "|", with: "\\|") }
        let aliases = entry.aliases.isEmpty ? "" : " (also " + entry.aliases.map { "`\($0)`" }.joined(separator: ", ") + ")"
        return "| `\(escaped(entry.usage))`\(aliases) | \(escaped(entry.summary)) | `\(escaped(entry.example))` |"
    }

    /// The rows of the command table: the table that follows `## Console commands` (up to the
    /// next heading).
    static func commandTableRows() throws -> [String] {
        let text = try String(contentsOf: guide, encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n## Console commands\n").dropFirst().first, "no command table")
        return (section.components(separatedBy: "\n#").first ?? "").split(separator: "\n").map(String.init)
            .filter { $0.hasPrefix("| `") }
    }

    /// The console's `help` (its registry) and the command table are the same list: the same
    /// commands in the same order, with the same usage, aliases, one-line help and example.
    @Test func theCommandTableIsTheConsolesHelp() throws {
        let expected = ConsoleCommandHelp.all.map(Self.tableRow)
        let documented = try Self.commandTableRows()
        #expect(documented == expected, """
            docs/harness-serve.md's command table differs from the console's help; in the docs only: \
            \(documented.filter { !expected.contains($0) }); in help only: \(expected.filter { !documented.contains($0) }).
            The table should read:
            \(expected.joined(separator: "\n"))
            """)
        // `help` lists exactly these usages and summaries.
        let help = ConsoleResult.help(ConsoleCommandHelp.all).text.split(separator: "\n").map(String.init)
        #expect(help.count == expected.count)
        for (line, entry) in zip(help, ConsoleCommandHelp.all) {
            #expect(line.hasPrefix(entry.usage + " ") && line.hasSuffix(entry.summary), "\(line)")
        }
    }
}
