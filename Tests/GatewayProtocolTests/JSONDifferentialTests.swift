import Foundation
import TestSupport
import Testing

@testable import GatewayProtocol

/// `JSONValue.parse(_:)` against two other JSON implementations, Foundation's `JSONSerialization`
/// and Python's `json` module, on `JSONDifferentialCorpus`: every document is accepted or refused
/// by both, with the same value, except for the documented `JSONDivergence`s.
@Suite("JSON differential")
struct JSONDifferentialTests {
    /// What the oracles are expected to differ in; each must also occur in the corpus, so that the
    /// classification is exercised.
    static let pythonDivergences: Set<JSONDivergence> = [
        .trailingComma, .repeatedKeyFirstWins, .canonicallyEquivalentKeysMerged, .loneSurrogateRefused,
        .numberBeyondDoubleRefused, .deeperThanLimitRefused, .roundedToDouble, .largeNumberTruncatedViaDecimal,
        .negativeZeroUnsigned,
    ]

    @Test func agreesWithJSONSerializationUpToDocumentedDivergences() {
        let comparison = DifferentialComparison(
            // Whether canonically equivalent keys show depends on how its dictionary is bridged.
            allowed: JSONSerializationOracle.divergences.union(JSONSerializationOracle.quirks).union([.canonicallyEquivalentKeysMerged]),
            keepsLastOfRepeatedKeys: true,
            dropsLeadingByteOrderMarks: JSONSerializationOracle.quirks.contains(.oracleDropsLeadingByteOrderMark),
            guessesUTF16: JSONSerializationOracle.quirks.contains(.oracleGuessesUTF16))
        var seen: [JSONDivergence: Int] = [:]
        var unexplained = 0
        for input in JSONDifferentialCorpus.all {
            let verdict = comparison.verdict(input: input, ours: Result { () throws(JSONValue.ParseError) in try JSONValue.parse(input) },
                                             theirs: JSONSerializationOracle.parse(input))
            switch verdict {
            case .agree: break
            case .documented(let kinds): for kind in kinds { seen[kind, default: 0] += 1 }
            case .unexplained(let why):
                unexplained += 1
                if unexplained <= 10 { Issue.record("\(Self.show(input)): \(why)") }
            }
        }
        #expect(unexplained == 0)
        for kind in JSONSerializationOracle.divergences {
            #expect(seen[kind, default: 0] > 0, "the corpus never showed \(kind) against JSONSerialization")
        }
    }

    @Test(.enabled(if: PythonForJSONTests.shouldRun, "no Python (OPENCLAW_PYTHON or .venv)"))
    func agreesWithPythonJSONUpToDocumentedDivergences() async throws {
        let inputs = JSONDifferentialCorpus.all
        let theirs = try await PythonForJSONTests.parse(inputs)
        #expect(theirs.count == inputs.count, "json_oracle.py answered \(theirs.count) of \(inputs.count) documents")
        guard theirs.count == inputs.count else { return }
        let comparison = DifferentialComparison(allowed: Self.pythonDivergences)
        var seen: [JSONDivergence: Int] = [:]
        var unexplained = 0
        for (input, result) in zip(inputs, theirs) {
            let verdict = comparison.verdict(input: input, ours: Result { () throws(JSONValue.ParseError) in try JSONValue.parse(input) }, theirs: result)
            switch verdict {
            case .agree: break
            case .documented(let kinds): for kind in kinds { seen[kind, default: 0] += 1 }
            case .unexplained(let why):
                unexplained += 1
                if unexplained <= 10 { Issue.record("\(Self.show(input)): \(why)") }
            }
        }
        #expect(unexplained == 0)
        for kind in Self.pythonDivergences {
            #expect(seen[kind, default: 0] > 0, "the corpus never showed \(kind) against Python")
        }

        // The classification of a few documents, pinned.
        let pinned: [(String, DifferentialVerdict)] = [
            ("[1,]", .documented([.trailingComma])),
            ("{\"a\":1,\"a\":2}", .documented([.repeatedKeyFirstWins])),
            ("\"\\uD800\"", .documented([.loneSurrogateRefused])),
            ("1e400", .documented([.numberBeyondDoubleRefused])),
            (JSONDifferentialCorpus.nested(600, object: false), .documented([.deeperThanLimitRefused])),
            ("18446744073709551616", .documented([.roundedToDouble])),
            ("9007199254740993.0", .documented([.largeNumberTruncatedViaDecimal])),
            ("9007199254740993.5", .documented([.largeNumberTruncatedViaDecimal])),
            (#"{"\u00e9":1,"e\u0301":2}"#, .documented([.canonicallyEquivalentKeysMerged])),
            ("-0.0", .documented([.negativeZeroUnsigned])),
            ("-0", .agree), ("\"\\uD834\\uDD1E\"", .agree), ("1e2", .agree), ("[1] x", .agree), ("\u{C}1", .agree),
            (JSONDifferentialCorpus.nested(512, object: true), .agree),
        ]
        let pinnedResults = try await PythonForJSONTests.parse(pinned.map { Data($0.0.utf8) })
        #expect(pinnedResults.count == pinned.count)
        guard pinnedResults.count == pinned.count else { return }
        for ((text, expected), result) in zip(pinned, pinnedResults) {
            let input = Data(text.utf8)
            let verdict = comparison.verdict(input: input, ours: Result { () throws(JSONValue.ParseError) in try JSONValue.parse(input) }, theirs: result)
            #expect(verdict == expected, "\(Self.show(input))")
        }
    }

    static func show(_ input: Data) -> String {
        let text = String(decoding: input.prefix(120), as: UTF8.self).debugDescription
        return input.count > 120 ? "\(text)… (\(input.count) bytes)" : text
    }
}

/// RFC 8259's corners with the values `JSONValue.parse(_:)` must give, independently of any
/// other implementation.
@Suite("JSON RFC 8259 corners")
struct JSONRFC8259Tests {
    static func kind(_ text: String) -> JSONValue.ParseError.Kind? {
        do {
            _ = try JSONValue.parse(text)
            return nil
        } catch {
            return error.kind
        }
    }

    @Test func stringsDecodeEscapesAndSurrogatePairs() throws {
        #expect(try JSONValue.parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{C}\n\r\t"))
        #expect(try JSONValue.parse(#""\u0041\u00e9\u20AC\uFFFF""#) == .string("Aé€\u{FFFF}"))
        #expect(try JSONValue.parse(#""\uD834\uDD1E""#) == .string("\u{1D11E}"))
        #expect(try JSONValue.parse(#""\udbff\udfff""#) == .string("\u{10FFFF}"))
        #expect(try JSONValue.parse(#""\u0000""#) == .string("\u{0}"))
        // Composed and decomposed é keep their code points in a string value.
        #expect(try JSONValue.parse(#""e\u0301""#).stringValue.map { Array($0.unicodeScalars) } == ["e", "\u{301}"])
    }

    @Test func loneSurrogatesAreRefusedEverywhere() {
        for text in [#""\uD800""#, #""\uDC00""#, #""\uD800\u0041""#, #""\uDC00\uD800""#, #""\uD800\uD800""#, #"{"\uD800":1}"#] {
            #expect(Self.kind(text) == .invalidString, "\(text)")
        }
        // The same surrogate as raw bytes (CESU-8) is not UTF-8.
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse(Data([0x22, 0xED, 0xA0, 0x80, 0x22])) }
        // A string holds Unicode scalars only, so nothing written can hold a lone surrogate.
        #expect(JSONValue.string("\u{FFFD}").jsonString == "\"\u{FFFD}\"")
    }

    @Test func controlCharactersMustBeEscaped() {
        for byte in [0x00, 0x09, 0x0A, 0x1F] as [UInt8] {
            #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse(Data([0x22, byte, 0x22])) }
        }
        #expect(throws: Never.self) { try JSONValue.parse(Data([0x22, 0x7F, 0x22])) }
        #expect(JSONValue.string("\u{0}\u{1F}\u{7F}").jsonString == #""\u0000\u001f\#u{7F}""#)
    }

    @Test func numbersFollowTheGrammarAndTheInt64FirstRule() throws {
        #expect(try JSONValue.parse("9223372036854775807") == .int(.max))
        #expect(try JSONValue.parse("-9223372036854775808") == .int(.min))
        #expect(try JSONValue.parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try JSONValue.parse("-9223372036854775809") == .double(-9_223_372_036_854_775_808))
        #expect(try JSONValue.parse("123456789012345678901234567890") == .double(1.2345678901234568e29))
        // Negative zero is the integer 0, written back as 0.
        for text in ["-0", "-0.0", "-0e0", "-0E+7"] {
            #expect(try JSONValue.parse(text) == .int(0), "\(text)")
        }
        #expect(JSONValue.double(-0.0).jsonString == "-0")
        // Exponents.
        #expect(try JSONValue.parse("1e2") == .int(100))
        #expect(try JSONValue.parse("1E+2") == .int(100))
        #expect(try JSONValue.parse("1.5e-3") == .double(0.0015))
        #expect(try JSONValue.parse("1e308") == .double(1e308))
        #expect(try JSONValue.parse("4.9e-324") == .double(.leastNonzeroMagnitude))
        #expect(try JSONValue.parse("1e-400") == .int(0))
        #expect(Self.kind("1e309") == .numberOutOfRange)
        #expect(Self.kind("-1e99999999999999999999") == .numberOutOfRange)
        // Outside the grammar.
        for text in ["01", "-01", "+1", ".5", "1.", "1.e3", "-", "1e", "1e+", "0x10", "NaN", "Infinity", "-Infinity"] {
            #expect(Self.kind(text) != nil, "\(text)")
        }
    }

    @Test func repeatedKeysKeepTheFirstValue() throws {
        #expect(try JSONValue.parse(#"{"a":1,"b":2,"a":3}"#) == ["a": 1, "b": 2])
        #expect(try JSONValue.parse(#"{"a":1,"\u0061":2}"#) == ["a": 1])
    }

    @Test func onlyTheFourWhitespaceCharactersSeparateTokens() throws {
        #expect(try JSONValue.parse(" \t\n\r[ \t\n\r1 \t\n\r, \t\n\r2 \t\n\r] \t\n\r") == [1, 2])
        for text in ["\u{B}1", "\u{C}1", "1\u{C}", "\u{A0}1", "\u{2028}1", "[\u{FEFF}1]", "/**/1"] {
            #expect(Self.kind(text) == .unexpectedCharacter, "\(text.debugDescription)")
        }
    }

    @Test func textAfterTheDocumentIsRefused() {
        for text in ["[1]x", "[1] [2]", "1 2", "{}x", #""a""b""#, "null null", "[1]\u{0}", "truex"] {
            #expect(Self.kind(text) == .unexpectedCharacter, "\(text.debugDescription)")
        }
        #expect(Self.kind("[1]\n\n") == nil)
    }

    @Test func nestingIsLimitedSoThatNoInputCanExhaustTheStack() throws {
        // Far deeper than any stack allows for recursion: refused at level 513 without descending.
        let hostile = String(repeating: "[", count: 1_000_000)
        #expect(Self.kind(hostile) == .tooDeep)
        let hostileObjects = String(repeating: "{\"a\":", count: 200_000)
        #expect(Self.kind(hostileObjects) == .tooDeep)
        #expect(Self.kind(JSONDifferentialCorpus.nested(512, object: false)) == nil)
        // A value nested deeper than the writer's limit, built in code, is written as null.
        var deep: JSONValue = 0
        for _ in 0 ..< 2_000 { deep = [deep] }
        #expect(deep.jsonString == "null")
    }
}

/// The Python interpreter for the `json` differential test: `InteropInterpreter`'s (only the
/// standard library is needed). With `OPENCLAW_REQUIRE_INTEROP=1` a missing interpreter fails the
/// test instead of skipping it.
enum PythonForJSONTests {
    static let interpreter = InteropInterpreter.find(importing: ["json"])

    static var shouldRun: Bool {
        if InteropInterpreter.isRequired { return true }
        if case .success = interpreter { return true }
        return false
    }

    struct Problem: Error, CustomStringConvertible {
        var description: String
    }

    /// Python's result for each input, in order.
    static func parse(_ inputs: [Data]) async throws -> [Result<OracleValue, OracleRefusal>] {
        let python = try interpreter.get()
        let corpus = FileManager.default.temporaryDirectory.appendingPathComponent("json-oracle-\(UUID().uuidString).txt")
        try Data(inputs.map(PythonJSONOracle.hex).joined(separator: "\n").utf8).write(to: corpus)
        defer { try? FileManager.default.removeItem(at: corpus) }
        let script = InteropInterpreter.packageRoot.appendingPathComponent("Tests/Interop/json_oracle.py").path
        let output = try await AsyncProcess.run(URL(fileURLWithPath: python), [script, corpus.path], timeout: .seconds(120))
        guard output.status == 0 else {
            throw Problem(description: "json_oracle.py exited with \(output.status): \(output.stderrText)")
        }
        var results: [Result<OracleValue, OracleRefusal>] = []
        for line in output.stdoutText.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            guard let result = PythonJSONOracle.parse(line: line) else {
                throw Problem(description: "json_oracle.py wrote an unreadable line: \(line.prefix(200))")
            }
            results.append(result)
        }
        return results
    }
}
