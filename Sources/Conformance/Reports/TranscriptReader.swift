import Foundation
import GatewayProtocol
import MockGateway

/// A transcript file read back: its entries and where they came from.
public struct TranscriptDocument: Sendable, Hashable {
    /// The file's path (or another name for a person).
    public var name: String
    /// The entries, in file order.
    public var entries: [TranscriptEntry]

    /// Creates a document.
    public init(name: String, entries: [TranscriptEntry]) {
        self.name = name
        self.entries = entries
    }
}

/// A transcript file that cannot be read, with the line at fault when there is one.
public struct TranscriptReadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// The 1-based line, for a malformed line.
    public var line: Int?
    /// What is wrong.
    public var reason: String

    /// Creates the error.
    public init(path: String, line: Int? = nil, reason: String) {
        self.path = path
        self.line = line
        self.reason = reason
    }

    /// `FILE:LINE: reason` or `FILE: reason`.
    public var description: String {
        line.map { "\(path):\($0): \(reason)" } ?? "\(path): \(reason)"
    }
}

/// Reads JSON Lines transcripts as `harness run --transcripts` and `harness serve --transcript`
/// write them (`docs/reports.md`).
public enum TranscriptReader {
    /// Reads one file. Blank lines are skipped.
    /// - Throws: `TranscriptReadError` for a missing, unreadable or non-UTF-8 file and for the
    ///   first line that is not a transcript entry.
    public static func read(path: String) throws(TranscriptReadError) -> TranscriptDocument {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw TranscriptReadError(path: path, reason: "no such file")
        }
        guard !isDirectory.boolValue else { throw TranscriptReadError(path: path, reason: "is a directory, not a transcript file") }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw TranscriptReadError(path: path, reason: "cannot be read (permission denied)")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw TranscriptReadError(path: path, reason: "cannot be read: \(error.localizedDescription)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw TranscriptReadError(path: path, reason: "is not UTF-8 text (a JSON Lines transcript was expected)")
        }
        return try parse(text, name: path)
    }

    /// Parses JSON Lines text.
    /// - Throws: `TranscriptReadError` naming the first bad line.
    public static func parse(_ text: String, name: String) throws(TranscriptReadError) -> TranscriptDocument {
        var entries: [TranscriptEntry] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty { continue }
            let value: JSONValue
            do {
                value = try JSONValue(parsing: trimmed)
            } catch {
                throw TranscriptReadError(path: name, line: index + 1, reason: "not valid JSON (\(Self.excerpt(trimmed)))")
            }
            do {
                entries.append(try TranscriptEntry(json: value))
            } catch {
                throw TranscriptReadError(path: name, line: index + 1, reason: "not a transcript entry: \(error.message)")
            }
        }
        return TranscriptDocument(name: name, entries: entries)
    }

    private static func excerpt(_ line: String) -> String {
        let prefix = line.prefix(60)
        return "starts with " + JSONValue.string(String(prefix) + (line.count > 60 ? "..." : "")).jsonString
    }
}
