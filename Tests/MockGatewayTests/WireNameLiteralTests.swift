import Foundation
import GatewayProtocol
import Testing

/// Wire names (methods, events, node events and commands, error codes) are spelled once, in
/// `Sources/GatewayProtocol/Names.swift` and `ErrorCodes.swift`; everything else in `Sources/`
/// uses the constants.
@Suite("Wire names are spelled only in Names")
struct WireNameLiteralTests {
    /// `Sources/`, from this file's path.
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// The files that define the names.
    static let nameFiles: Set<String> = ["GatewayProtocol/Names.swift", "GatewayProtocol/ErrorCodes.swift"]

    /// A quoted dotted name of a Gateway family (`"node.list"`, `"exec.approval.requested"`).
    /// A string that ends with a dot is a family prefix (`"camera."`), not a name.
    static let dottedName = #""(node|chat|sessions|session|agents|agent|approval|exec|question|push|device|talk|voicewake|config|health|models|skills|cron|gateway|system|canvas|camera|screen|location|plugin|openclaw|connect|update|wizard|debug)\.[A-Za-z][A-Za-z.]*[A-Za-z]""#

    /// A quoted top-level error code or connect detail code of the catalogue
    /// (`"INVALID_REQUEST"`, `"DEVICE_AUTH_NONCE_REQUIRED"`).
    static let errorCode = "\"(" + (ErrorCode.allKnown.map(\.rawValue) + ConnectErrorDetailCode.allKnown.map(\.rawValue))
        .joined(separator: "|") + ")\""

    /// The quoted wire names in `text` outside comments, as `file:line: literal`. The first
    /// argument of `ConsoleEventLine(` is a console event-line name (the console's own
    /// vocabulary, `docs/harness-serve.md`), not a wire name.
    static func violations(in text: String, file: String) throws -> [String] {
        let pattern = try NSRegularExpression(pattern: "(ConsoleEventLine\\()?(" + dottedName + "|" + errorCode + ")")
        var found: [String] = []
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("//") { continue }
            let range = NSRange(line.startIndex..., in: line)
            for match in pattern.matches(in: line, range: range) {
                guard match.range(at: 1).location == NSNotFound, let literal = Range(match.range(at: 2), in: line) else { continue }
                let quoted = String(line[literal])
                found.append("\(file):\(index + 1): \(quoted)")
            }
        }
        return found
    }

    @Test("no method, event or error-code name is quoted in Sources/ outside the Names files")
    func noWireNameLiterals() throws {
        let enumerator = try #require(FileManager.default.enumerator(at: Self.sources, includingPropertiesForKeys: nil))
        var found: [String] = []
        var scanned = 0
        for case let url as URL in enumerator where url.pathExtension == "swift" {
            let file = String(url.path.dropFirst(Self.sources.path.count + 1))
            guard !Self.nameFiles.contains(file) else { continue }
            scanned += 1
            found += try Self.violations(in: String(contentsOf: url, encoding: .utf8), file: file)
        }
        #expect(scanned > 100, "Sources/ was found and read")
        #expect(found.isEmpty, "use the constants of Sources/GatewayProtocol/Names.swift:\n\(found.joined(separator: "\n"))")
    }

    @Test("the scan finds quoted names and detail codes in code, and skips comments, prefixes and console lines")
    func scanFindsLiterals() throws {
        let code = """
            let method = "node.list"
            fail(ErrorShape(code: "INVALID_REQUEST", message: "invalid node.list params"))
            // "node.list" in a comment
            let prefix = "camera."
            ConsoleEventLine("node.event", [])
            if family("device.pair") { }
            case "DEVICE_AUTH_NONCE_REQUIRED": "HS-004"
            """
        #expect(try Self.violations(in: code, file: "MockGateway/Example.swift") == [
            "MockGateway/Example.swift:1: \"node.list\"", "MockGateway/Example.swift:2: \"INVALID_REQUEST\"",
            "MockGateway/Example.swift:6: \"device.pair\"", "MockGateway/Example.swift:7: \"DEVICE_AUTH_NONCE_REQUIRED\"",
        ])
    }
}
