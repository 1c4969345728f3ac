import Foundation
import GatewayProtocol
import TestSupport
import Testing

/// Same client, same seed, same result: two `harness run --node reference` processes (each with
/// its own hash seed, thread timing and memory layout) give the same report and the same
/// transcripts once the wall-time fields are removed: `durationMs` in the report, `t` in the
/// transcripts (and the path of the transcript directory). Where Ed25519 signing is randomized
/// (CryptoKit on Apple platforms) `device.signature` is removed too: it differs on every
/// signing, and every one verifies.
@Suite(.serialized)
struct DeterminismTests {
    /// Runs the whole catalogue in a fresh process and returns the normalized JSON report and
    /// the normalized transcripts by file name.
    private static func catalogue(seed: UInt64, in directory: URL, name: String) async throws -> (report: String, transcripts: [String: String]) {
        let json = directory.appendingPathComponent("\(name).json")
        let transcripts = directory.appendingPathComponent("\(name)-transcripts")
        let run = try await AsyncProcess.run(try ServeProcess.executable(), [
            "run", "--node", "reference", "--seed", String(seed), "--json", json.path, "--transcripts", transcripts.path, "--quiet",
        ])
        #expect(run.status == 0, "the reference client passes the catalogue with seed \(seed): \(run.stderrText.suffix(500))")
        // Where the files went is the one other difference between two runs.
        let reportText = try String(contentsOf: json, encoding: .utf8).replacingOccurrences(of: transcripts.path, with: "<transcripts>")
        let report = try normalized(try JSONValue(parsing: reportText), dropping: "durationMs")
        var files: [String: String] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: transcripts.path).sorted() {
            let text = try String(contentsOf: transcripts.appendingPathComponent(file), encoding: .utf8)
            // Transcripts are JSON Lines; the client logs next to them are plain text.
            files[file] = file.hasSuffix(".jsonl") ? try text.split(separator: "\n").map { line in
                try normalized(try JSONValue(parsing: String(line)), dropping: "t")
            }.joined(separator: "\n") : text
        }
        return (report, files)
    }

    /// `value` without the members named `key` at any depth (and, where signing is randomized,
    /// without `signature` in `device` objects), as sorted-key JSON text.
    private static func normalized(_ value: JSONValue, dropping key: String) throws -> String {
        func strip(_ value: JSONValue, in parent: String?) -> JSONValue {
            switch value {
            case .object(let members):
                var kept: [String: JSONValue] = [:]
                for (name, member) in members where name != key {
                    if name == "signature", parent == "device", !DeviceIdentity.signaturesAreDeterministic { continue }
                    kept[name] = strip(member, in: name)
                }
                return .object(kept)
            case .array(let items):
                return .array(items.map { strip($0, in: parent) })
            default:
                return value
            }
        }
        return strip(value, in: nil).jsonString
    }

    @Test func theSameSeedGivesTheSameReportAndTranscripts() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("determinism-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let first = try await Self.catalogue(seed: 20_261_201, in: directory, name: "first")
        let second = try await Self.catalogue(seed: 20_261_201, in: directory, name: "second")
        if first.report != second.report { Issue.record("the normalized reports of two runs of the same seed differ") }
        #expect(first.transcripts.count > 90, "every run kept its transcript")
        #expect(first.transcripts.keys.sorted() == second.transcripts.keys.sorted())
        for (file, text) in first.transcripts.sorted(by: { $0.key < $1.key }) where second.transcripts[file] != text {
            Issue.record("the transcript \(file) differs between two runs of the same seed")
        }

        // Another seed makes other choices (ids, keys, interleavings): the check can tell.
        let other = try await Self.catalogue(seed: 7, in: directory, name: "other")
        #expect(other.transcripts != first.transcripts)
    }
}
