import Conformance
import Foundation
import Scenarios
import Testing

/// The protocol reference and what cites it cannot drift apart: every `docs/protocol.md §N` named
/// by a scenario's `source:`, and by any file of the repository, is a heading of
/// `docs/protocol.md`, and a scenario cites sections of no other Markdown document.
@Suite("docs/protocol.md citations")
struct ProtocolCitationTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func reference() throws -> String {
        try String(contentsOf: root.appendingPathComponent("docs/protocol.md"), encoding: .utf8)
    }

    @Test func theReferenceHasItsNumberedSections() throws {
        let sections = ProtocolSections.headings(in: try Self.reference())
        for top in 1...12 { #expect(sections.contains("\(top)"), "no section \(top) in docs/protocol.md") }
        for section in ["3.3", "3.4", "3.9", "3.12", "4.4", "5.9", "6.5", "6.6", "7.4", "8.2", "10.5", "11.3"] {
            #expect(sections.contains(section), "no section \(section) in docs/protocol.md")
        }
        #expect(sections.count > 80)
    }

    @Test func everyScenarioSourceCitesSectionsThatExist() throws {
        let sections = ProtocolSections.headings(in: try Self.reference())
        #expect(allScenarios.count > 40)
        for scenario in allScenarios {
            let cited = ProtocolSections.citations(in: scenario.source)
            #expect(!cited.isEmpty, "\(scenario.id) cites no section of docs/protocol.md: \(scenario.source)")
            let missing = cited.filter { !sections.contains($0) }
            #expect(missing.isEmpty, "\(scenario.id) cites §\(missing.joined(separator: ", §")), not in docs/protocol.md")
            let others = ProtocolSections.otherDocumentCitations(in: scenario.source)
            #expect(others.isEmpty, "\(scenario.id) cites sections of \(others): \(scenario.source)")
        }
    }

    @Test func explainNamesTheSectionsOfTheReference() throws {
        let scenario = try #require(allScenarios.first { $0.id == "PAIR-006" })
        let text = ConformanceCommands.explanation(scenario)
        #expect(text.contains("Source:      docs/protocol.md §5.9-5.10"), "\(text)")
    }

    @Test func everyCitationInTheRepositoryNamesASectionThatExists() throws {
        let sections = ProtocolSections.headings(in: try Self.reference())
        var citing = 0
        for file in try Self.textFiles() {
            let text = try String(contentsOf: file, encoding: .utf8)
            let cited = ProtocolSections.citations(in: text)
            if !cited.isEmpty { citing += 1 }
            let missing = Set(cited.filter { !sections.contains($0) }).sorted()
            #expect(missing.isEmpty, "\(file.path) cites §\(missing.joined(separator: ", §")), not in docs/protocol.md")
        }
        #expect(citing > 50, "only \(citing) files cite docs/protocol.md; were the sources found under \(Self.root.path)?")
    }

    @Test func theCheckerFindsCitationsThatDoNotExist() throws {
        let sections = ProtocolSections.headings(in: try Self.reference())
        // Spelled in two parts so that this file does not cite the sections itself.
        let sample = "(docs/" + "protocol.md §5.8-5.10, §99.1 step 2; `docs/" + "protocol.md` §6.6 and §12.40)"
        let cited = ProtocolSections.citations(in: sample)
        #expect(cited == ["5.8", "5.9", "5.10", "99.1", "6.6", "12.40"])
        #expect(cited.filter { !sections.contains($0) } == ["99.1", "12.40"])
        #expect(ProtocolSections.citations(in: "RFC 4648 §5; gateway docs §3") == [])
        #expect(ProtocolSections.otherDocumentCitations(in: "notes.md §6.3; docs/" + "protocol.md §5.9") == ["notes.md"])
    }

    /// The repository's sources, scenarios, examples, docs and README (not build output).
    static func textFiles() throws -> [URL] {
        var files = [root.appendingPathComponent("README.md"), root.appendingPathComponent("CHANGELOG.md")]
        for directory in ["Sources", "scenarios", "examples", "docs", "Tests", "Plugins"] {
            let enumerator = FileManager.default.enumerator(at: root.appendingPathComponent(directory),
                                                            includingPropertiesForKeys: nil)
            while let file = enumerator?.nextObject() as? URL {
                if file.pathComponents.contains(".build") { enumerator?.skipDescendants(); continue }
                guard ["swift", "md", "py"].contains(file.pathExtension) else { continue }
                guard file.lastPathComponent != "protocol.md" || file.deletingLastPathComponent().lastPathComponent != "docs"
                else { continue }
                files.append(file)
            }
        }
        return files
    }
}

/// Reads section numbers from `docs/protocol.md` and citations of them from other text.
enum ProtocolSections {
    /// Markdown documents other than `docs/protocol.md` whose sections (`x.md §N`) a text cites.
    static func otherDocumentCitations(in text: String) -> [String] {
        text.matches(of: /([\w.\/-]+\.md)`? §/).map { String($0.1) }.filter { $0 != "docs/protocol.md" }
    }

    /// `## N. Title` and `### N.M Title` headings.
    static func headings(in markdown: String) -> Set<String> {
        var result: Set<String> = []
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            guard let match = line.wholeMatch(of: /[#]{2,3} (\d+(?:\.\d+)?)\.? .*/) else { continue }
            result.insert(String(match.1))
        }
        return result
    }

    /// Every section named after `docs/protocol.md` (also in backticks): `§N`, `§N.M`, ranges
    /// `§N.M-N.K` (every section in between), lists joined with `,` or `and`, and `step`/`item`
    /// qualifiers (which name the section).
    static func citations(in text: String) -> [String] {
        let citation = /docs\/protocol\.md`?((?:(?:,? and |, |,| )§\d+(?:\.\d+)?(?:[-–]\d+(?:\.\d+)?)?(?: steps? \d+(?:[-–]\d+)?| items? \d+)?)+)/
        let token = /§(\d+)(?:\.(\d+))?(?:[-–](\d+)(?:\.(\d+))?)?/
        var result: [String] = []
        for match in text.matches(of: citation) {
            for part in match.1.matches(of: token) {
                let section = Int(part.1) ?? 0
                guard let first = part.2.flatMap({ Int($0) }) else {
                    result.append("\(section)")
                    continue
                }
                guard let endSection = part.3.flatMap({ Int($0) }), let last = part.4.flatMap({ Int($0) }),
                      endSection == section, last >= first
                else {
                    result.append("\(section).\(first)")
                    if let endSection = part.3 { result.append(part.4.map { "\(endSection).\($0)" } ?? String(endSection)) }
                    continue
                }
                result += (first...last).map { "\(section).\($0)" }
            }
        }
        return result
    }
}
