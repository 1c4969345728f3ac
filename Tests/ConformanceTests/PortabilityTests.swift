import Foundation
import Testing

/// Rules that keep the package building on every platform it declares (macOS 14, iOS 17, Linux),
/// checked here because CI builds on Linux only, where neither rule is enforced by the compiler.
@Suite struct PortabilityTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func swiftFiles(under directory: String) -> [URL] {
        let base = root.appendingPathComponent(directory)
        guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { return [] }
        var files: [URL] = []
        for case let url as URL in walker {
            if url.lastPathComponent == ".build" || url.lastPathComponent == ".venv" { walker.skipDescendants(); continue }
            if url.pathExtension == "swift" { files.append(url) }
        }
        return files
    }

    /// `Synchronization` (`Mutex`, `Atomic`) needs macOS 15 / iOS 18; the package uses `Locked`.
    @Test(arguments: ["Sources", "Tests", "scenarios", "Benchmarks", "Plugins", "examples"])
    func noModuleImportsSynchronization(_ directory: String) throws {
        let files = Self.swiftFiles(under: directory)
        #expect(!files.isEmpty)
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            let offending = text.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces) == "import Synchronization" }
            #expect(offending.isEmpty, "\(file.path) imports Synchronization: use Locked (module Locking)")
        }
    }

    /// Glibc is imported only behind `#if canImport(Glibc)`, so Darwin builds never see it.
    @Test func glibcIsOnlyImportedConditionally() throws {
        for file in Self.swiftFiles(under: "Sources") {
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (index, line) in lines.enumerated() where line.trimmingCharacters(in: .whitespaces) == "import Glibc" {
                let guarded = lines[..<index].reversed().first { $0.hasPrefix("#") }.map { $0.contains("canImport(Glibc)") || $0.contains("os(Linux)") }
                #expect(guarded == true, "\(file.path):\(index + 1) imports Glibc outside #if canImport(Glibc)")
            }
        }
    }
}
