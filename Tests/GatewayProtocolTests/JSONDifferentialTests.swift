import Foundation
import Testing

@testable import GatewayProtocol

/// `JSONValue.parse(_:)` and `encoded()` against Node.js's `JSON.parse` and `JSON.stringify`
/// (`NodeJSONOracle`), the functions the real Gateway reads and writes frames with.
///
/// Every input must be accepted by both or refused by both, and an accepted one must be written
/// the same, byte for byte, up to the documented differences of a `JSONValue` (docs/fidelity.md,
/// "JSON"): members sorted by key, lone surrogates of keys as U+FFFD, keys equal to Swift
/// (canonically equivalent, or equal once lone surrogates are replaced) merged, nesting beyond
/// `maximumParseDepth` refused. The generated inputs come from a seed, random on each run unless
/// `OPENCLAW_JSON_SEED` is set; a failure prints the seed that reproduces it.
@Suite("JSON differential against Node.js", .enabled(if: NodeJSONOracle.shouldRun, "no node (set OPENCLAW_NODE, or install Node.js)"))
struct JSONDifferentialTests {
    static let seed: UInt64 = ProcessInfo.processInfo.environment["OPENCLAW_JSON_SEED"].flatMap { UInt64($0) }
        ?? UInt64.random(in: 0 ... UInt64.max)

    /// How an input came out: agreement, a documented difference, or a disagreement.
    enum Verdict: Hashable {
        case agree
        case deeperThanLimit
        case keysMerged
        case disagree(String)
    }

    static func verdict(_ input: Data, node: NodeJSONOracle.Answer) -> Verdict {
        let ours = Result { () throws(JSONValue.ParseError) in try JSONValue.parse(input) }
        switch (ours, node) {
        case (.failure, .refused):
            return .agree
        case (.failure(let error), .accepted(let depth, _, _)):
            if error.kind == .tooDeep && depth > JSONValue.maximumParseDepth { return .deeperThanLimit }
            return .disagree("we refuse (\(error)), JSON.parse accepts: \(node)")
        case (.success(let value), .refused):
            return .disagree("we accept \(value.jsonString.prefix(300)), JSON.parse refuses")
        case (.success(let value), .accepted(_, let merged, let canonical)):
            let written = value.encoded()
            if written == canonical { return .agree }
            // Two keys that Swift finds equal are one key here (its value the document's last).
            if merged { return .keysMerged }
            return .disagree("ours \(String(decoding: written.prefix(300), as: UTF8.self))\n JSON.stringify \(String(decoding: canonical.prefix(300), as: UTF8.self))")
        }
    }

    static func show(_ input: Data) -> String {
        let text = String(decoding: input.prefix(160), as: UTF8.self).debugDescription
        let shown = input.count > 160 ? "\(text)… (\(input.count) bytes)" : text
        return input.count <= 400 ? "\(shown) [base64 \(input.base64EncodedString())]" : shown
    }

    /// Compares every input and records each disagreement (the first 10) with the seed.
    /// - Returns: how often each verdict was seen, and how many inputs `JSON.parse` accepted.
    static func compare(_ inputs: [Data], seed: UInt64?) async throws -> (seen: [Verdict: Int], accepted: Int) {
        let answers = try await NodeJSONOracle.answers(inputs)
        var seen: [Verdict: Int] = [:]
        var disagreements = 0
        for (input, answer) in zip(inputs, answers) {
            let verdict = verdict(input, node: answer)
            if case .disagree(let why) = verdict {
                disagreements += 1
                if disagreements <= 10 {
                    let replay = seed.map { " (OPENCLAW_JSON_SEED=\($0) reproduces it)" } ?? ""
                    Issue.record("\(show(input))\(replay): \(why)")
                }
                seen[.disagree(""), default: 0] += 1
            } else {
                seen[verdict, default: 0] += 1
            }
        }
        return (seen, answers.filter { $0 != .refused }.count)
    }

    @Test func handWrittenCornersAgreeWithJSONParse() async throws {
        let (seen, _) = try await Self.compare(JSONDifferentialCorpus.fixed, seed: nil)
        #expect(seen[.disagree(""), default: 0] == 0)
        // The documented differences occur in the corpus, so the classification is exercised.
        #expect(seen[.deeperThanLimit, default: 0] > 0)
        #expect(seen[.keysMerged, default: 0] > 0)
    }

    @Test func generatedDocumentsAgreeWithJSONParse() async throws {
        let inputs = JSONDifferentialCorpus.generated(seed: Self.seed, count: 4_000)
        let (seen, accepted) = try await Self.compare(inputs, seed: Self.seed)
        #expect(seen[.disagree(""), default: 0] == 0, "OPENCLAW_JSON_SEED=\(Self.seed)")
        // Both outcomes are common, so neither side passes by accepting or refusing everything.
        #expect(accepted > 1_000 && accepted < 3_400, "\(accepted) of 4000 accepted (OPENCLAW_JSON_SEED=\(Self.seed))")
        print("JSON differential: seed \(Self.seed), \(accepted) of \(inputs.count) generated documents accepted by JSON.parse")
    }

    /// Documents full of lone surrogates (in string values, next to pairs and escapes; in keys
    /// where the text generator adds them):
    /// `JSON.parse` keeps each in the string and `JSON.stringify` writes it back as `\udxxx`;
    /// so do we.
    @Test func generatedDocumentsWithLoneSurrogatesAgreeWithJSONParse() async throws {
        var trees = JSONTreeGenerator(seed: Self.seed &+ 7)
        var texts = JSONTextGenerator(seed: Self.seed &+ 8)
        var inputs: [Data] = []
        while inputs.count < 1_500 {
            let units = trees.utf16WithLoneSurrogates()
            let key = trees.utf16WithLoneSurrogates()
            let value: JSONValue = [String(decoding: key, as: UTF16.self): .string(utf16: units), "list": [.string(utf16: units), trees.value(maxDepth: 3)]]
            inputs.append(value.encoded())
            inputs.append(Data(texts.text(for: value).utf8))
        }
        let (seen, accepted) = try await Self.compare(inputs, seed: Self.seed)
        #expect(seen[.disagree(""), default: 0] == 0, "OPENCLAW_JSON_SEED=\(Self.seed)")
        // Half the inputs are `encoded()` text, which both accept; the other half have trailing
        // commas now and then.
        #expect(accepted > 1_000, "\(accepted) of \(inputs.count) accepted (OPENCLAW_JSON_SEED=\(Self.seed))")
        // Lone surrogates did reach the values: a parser that replaced them would disagree here.
        let illFormed = inputs.prefix(200).filter { input in
            guard let value = try? JSONValue.parse(input) else { return false }
            if case .illFormedString = value["list"]?.arrayValue?.first { return true }
            return false
        }
        #expect(illFormed.count > 80, "\(illFormed.count) of 200 (OPENCLAW_JSON_SEED=\(Self.seed))")
    }

    /// Values built in code (any double, any string, nesting) are written as `JSON.stringify`
    /// writes the value `JSON.parse` reads back from our text, and read back by us as that value.
    @Test func writtenValuesAreWhatJSONStringifyWrites() async throws {
        var trees = JSONTreeGenerator(seed: Self.seed, allowNonFinite: true, allowIllFormedStrings: true)
        let values = (0 ..< 1_500).map { _ in javaScriptValue(trees.value()) }
        let written = values.map { $0.encoded() }
        let answers = try await NodeJSONOracle.answers(written)
        var failures = 0
        for (text, answer) in zip(written, answers) {
            if case .accepted(_, _, let canonical) = answer, canonical == text { continue }
            failures += 1
            if failures <= 10 {
                Issue.record("\(Self.show(text)) (OPENCLAW_JSON_SEED=\(Self.seed)): JSON.stringify(JSON.parse(ours)) is \(answer)")
            }
        }
        #expect(failures == 0)
        for (value, text) in zip(values, written) {
            #expect(try JSONValue.parse(text) == value, "\(Self.show(text)) (OPENCLAW_JSON_SEED=\(Self.seed))")
        }
    }

    /// A broken rule is caught: the comparison sees a parser that kept the first of repeated
    /// keys, accepted a trailing comma, or wrote a number as Swift does.
    @Test func theComparisonCatchesEachOldFoundationRule() async throws {
        let inputs = [#"{"a":1,"a":2}"#, "[1,]", "1e21"].map { Data($0.utf8) }
        let answers = try await NodeJSONOracle.answers(inputs)
        #expect(answers[0] == .accepted(depth: 1, keysMerged: false, canonical: Data(#"{"a":2}"#.utf8)))
        #expect(answers[1] == .refused)
        #expect(answers[2] == .accepted(depth: 0, keysMerged: false, canonical: Data("1e+21".utf8)))
        #expect(Self.verdict(inputs[0], node: .accepted(depth: 1, keysMerged: false, canonical: Data(#"{"a":1}"#.utf8))) != .agree)
        #expect(Self.verdict(inputs[1], node: .accepted(depth: 1, keysMerged: false, canonical: Data("[1]".utf8))) != .agree)
        #expect(Self.verdict(inputs[2], node: .accepted(depth: 0, keysMerged: false, canonical: Data("1e21".utf8))) != .agree)
    }
}

/// `value` as `JSON.parse` would read it back from its text: numbers as `JSONValue.number(_:)`
/// keeps them (an integer beyond 2^53 becomes the nearest double), non-finite numbers `null`.
func javaScriptValue(_ value: JSONValue) -> JSONValue {
    switch value {
    case .int(let integer): return JSONValue.number(Double(integer))
    case .double(let double): return double.isFinite ? JSONValue.number(double) : .null
    case .array(let items): return .array(items.map(javaScriptValue))
    case .object(let members): return .object(members.mapValues(javaScriptValue))
    default: return value
    }
}

/// RFC 8259's and ECMAScript's corners with the values `JSONValue.parse(_:)` must give,
/// independently of any other implementation.
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

    @Test func loneSurrogatesAreKeptAndWrittenBackAsJSONStringifyWritesThem() throws {
        // Input, the UTF-16 code units JavaScript keeps, and what `JSON.stringify` writes.
        let cases: [(String, [UInt16], String)] = [
            (#""\uD800""#, [0xD800], #""\ud800""#), (#""\uDC00""#, [0xDC00], #""\udc00""#),
            (#""\uD800\u0041""#, [0xD800, 0x41], #""\ud800A""#),
            (#""\uDC00\uD800""#, [0xDC00, 0xD800], #""\udc00\ud800""#),
            (#""\uD800\uD800\uDC00""#, [0xD800, 0xD800, 0xDC00], "\"\\ud800\u{10000}\""),
            (#""a\uDBFF""#, [0x61, 0xDBFF], #""a\udbff""#), (#""\uD800\"""#, [0xD800, 0x22], #""\ud800\"""#),
            (#""é\udfff\n""#, [0xE9, 0xDFFF, 0x0A], #""é\udfff\n""#),
        ]
        for (text, units, written) in cases {
            let value = try JSONValue.parse(text)
            #expect(value.utf16Value == units, "\(text)")
            #expect(value == JSONValue.string(utf16: units), "\(text)")
            #expect(value.jsonString == written, "\(text)")
            #expect(value.stringValue == String(decoding: units, as: UTF16.self), "\(text): read as a String, U+FFFD")
            #expect(try JSONValue.parse(value.jsonString) == value, "\(text): written and read back")
        }
        // Distinct JavaScript strings stay distinct, and each has one representation.
        #expect(try JSONValue.parse(#""\uD800""#) != JSONValue.parse(#""\uDBFF""#))
        #expect(try JSONValue.parse(#""\uD800""#) != .string("\u{FFFD}"))
        #expect(JSONValue.string(utf16: Array("a😀".utf16)) == .string("a😀"))
        #expect(JSONValue.IllFormedString(utf16: Array("a😀".utf16)) == nil)
        // An ill-formed string decodes as a well-formed `String`, as `JSONDecoder` reads the escape.
        #expect(try JSONValue.parse(#"{"s":"x\uD800"}"#).decode(as: [String: String].self) == ["s": "x\u{FFFD}"])
        // An object key is a Swift `String`: a lone surrogate in it is U+FFFD (docs/fidelity.md).
        #expect(try JSONValue.parse(#"{"\uD800":1}"#) == ["\u{FFFD}": 1])
        // A surrogate as raw bytes (CESU-8) is not UTF-8: a WebSocket text frame cannot hold it.
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse(Data([0x22, 0xED, 0xA0, 0x80, 0x22])) }
        // A broken escape after a high surrogate is still an error.
        #expect(Self.kind(#""\uD800\u12""#) == .invalidString)
    }

    @Test func controlCharactersMustBeEscaped() {
        for byte in [0x00, 0x09, 0x0A, 0x1F] as [UInt8] {
            #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse(Data([0x22, byte, 0x22])) }
        }
        #expect(throws: Never.self) { try JSONValue.parse(Data([0x22, 0x7F, 0x22])) }
        #expect(JSONValue.string("\u{0}\u{1F}\u{7F}\u{2028}/").jsonString == #""\u0000\u001f\#u{7F}\#u{2028}/""#)
    }

    @Test func numbersAreJavaScriptNumbers() throws {
        #expect(try JSONValue.parse("9007199254740992") == .int(9_007_199_254_740_992))
        #expect(try JSONValue.parse("-9007199254740992") == .int(-9_007_199_254_740_992))
        // Beyond 2^53 a number is the nearest double, as in JavaScript.
        #expect(try JSONValue.parse("9007199254740993") == .int(9_007_199_254_740_992))
        #expect(try JSONValue.parse("9007199254740995") == .double(9_007_199_254_740_996))
        #expect(try JSONValue.parse("9223372036854775807") == .double(9_223_372_036_854_775_808))
        #expect(try JSONValue.parse("123456789012345678901234567890") == .double(1.2345678901234568e29))
        // Negative zero reads as the integer 0 (JSON.stringify writes it as 0).
        for text in ["-0", "-0.0", "-0e0", "-0E+7"] {
            #expect(try JSONValue.parse(text) == .int(0), "\(text)")
        }
        #expect(JSONValue.double(-0.0).jsonString == "0")
        // Whole numbers are integers however they are written.
        #expect(try JSONValue.parse("1e2") == .int(100))
        #expect(try JSONValue.parse("1E+2") == .int(100))
        #expect(try JSONValue.parse("100e-2") == .int(1))
        #expect(try JSONValue.parse("1.5e-3") == .double(0.0015))
        #expect(try JSONValue.parse("4.9e-324") == .double(.leastNonzeroMagnitude))
        #expect(try JSONValue.parse("1e-400") == .int(0))
        // Beyond the largest double: infinity, which is written as null.
        #expect(try JSONValue.parse("1e400") == .double(.infinity))
        #expect(try JSONValue.parse("-1e99999999999999999999") == .double(-.infinity))
        #expect(try JSONValue.parse("[1e400]").jsonString == "[null]")
        // Outside the grammar.
        for text in ["01", "-01", "+1", ".5", "1.", "1.e3", "-", "1e", "1e+", "0x10", "NaN", "Infinity", "-Infinity"] {
            #expect(Self.kind(text) != nil, "\(text)")
        }
    }

    @Test func numbersAreWrittenAsNumberToString() {
        let cases: [(JSONValue, String)] = [
            (.double(1e21), "1e+21"), (.double(1e20), "100000000000000000000"), (.double(1e-7), "1e-7"),
            (.double(1e-6), "0.000001"), (.double(1.5e300), "1.5e+300"), (.double(0.1), "0.1"), (.double(100), "100"),
            (.double(-2.5e-8), "-2.5e-8"), (.double(123e18), "123000000000000000000"), (.double(1.2345678901234569e23), "1.2345678901234569e+23"),
            (.double(.leastNonzeroMagnitude), "5e-324"), (.double(.greatestFiniteMagnitude), "1.7976931348623157e+308"),
            (.double(.nan), "null"), (.double(-.infinity), "null"), (.int(.max), "9223372036854775807"),
        ]
        for (value, text) in cases {
            #expect(value.jsonString == text, "\(value)")
        }
    }

    @Test func repeatedKeysKeepTheLastValue() throws {
        #expect(try JSONValue.parse(#"{"a":1,"b":2,"a":3}"#) == ["a": 3, "b": 2])
        #expect(try JSONValue.parse(#"{"a":1,"\u0061":2}"#) == ["a": 2])
        #expect(try JSONValue.parse(#"{"a":{"x":1},"a":null}"#) == ["a": nil])
    }

    @Test func trailingCommasAreRefused() {
        for text in ["[1,]", "[1 , ]", "{\"a\":1,}", "{\"a\":1 ,\n}", "[[],{},]", "[,]", "[1,,2]", "{,}"] {
            #expect(Self.kind(text) == .unexpectedCharacter, "\(text.debugDescription)")
        }
    }

    @Test func onlyTheFourWhitespaceCharactersSeparateTokens() throws {
        #expect(try JSONValue.parse(" \t\n\r[ \t\n\r1 \t\n\r, \t\n\r2 \t\n\r] \t\n\r") == [1, 2])
        // A byte-order mark is not whitespace: JSON.parse refuses "\u{FEFF}1", at its start too.
        for text in ["\u{B}1", "\u{C}1", "1\u{C}", "\u{A0}1", "\u{2028}1", "[\u{FEFF}1]", "\u{FEFF}1", "\u{FEFF}{}", "/**/1"] {
            #expect(Self.kind(text) == .unexpectedCharacter, "\(text.debugDescription)")
        }
        // Nor is any other encoding detected: UTF-16 is not UTF-8 text.
        #expect(Self.kind(String(decoding: [0xFF, 0xFE, 0x31, 0x00], as: UTF8.self)) != nil)
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse(Data([0x31, 0x00])) }
    }

    @Test func textAfterTheDocumentIsRefused() {
        for text in ["[1]x", "[1] [2]", "1 2", "{}x", #""a""b""#, "null null", "[1]\u{0}", "truex"] {
            #expect(Self.kind(text) == .unexpectedCharacter, "\(text.debugDescription)")
        }
        #expect(Self.kind("[1]\n\n") == nil)
    }

    @Test func parseErrorsNameTheirKindAndOffset() {
        let cases: [(String, JSONValue.ParseError.Kind, Int)] = [
            ("", .unexpectedEnd, 0), ("[1,2", .unexpectedEnd, 4), ("[1 2]", .unexpectedCharacter, 3),
            ("1 x", .unexpectedCharacter, 2), ("\"a\tb\"", .invalidString, 2), ("\"\\q\"", .invalidString, 2),
            ("[01]", .unexpectedCharacter, 2), ("{\"a\" 1}", .unexpectedCharacter, 5), ("tru", .unexpectedEnd, 3),
            ("[1,]", .unexpectedCharacter, 3), ("{\"a\":1,}", .unexpectedCharacter, 7), ("\u{FEFF}1", .unexpectedCharacter, 0),
        ]
        for (text, kind, offset) in cases {
            do {
                _ = try JSONValue.parse(text)
                Issue.record("\(text.debugDescription) was accepted")
            } catch {
                #expect(error.kind == kind, "\(text.debugDescription): \(error)")
                #expect(error.offset == offset, "\(text.debugDescription): \(error)")
                #expect(error.description.hasPrefix("invalid JSON at byte \(offset): "))
            }
        }
        do {
            _ = try JSONValue.parse(Data([0x22, 0xFF, 0x22]))
            Issue.record("not UTF-8 was accepted")
        } catch {
            #expect(error.kind == .invalidEncoding)
        }
    }

    @Test func nestingIsLimitedSoThatNoInputCanExhaustTheStack() throws {
        // Far deeper than any stack allows for recursion: refused at level 513 without descending.
        let hostile = String(repeating: "[", count: 1_000_000)
        #expect(Self.kind(hostile) == .tooDeep)
        let hostileObjects = String(repeating: "{\"a\":", count: 200_000)
        #expect(Self.kind(hostileObjects) == .tooDeep)
        for object in [false, true] {
            let deepest = try JSONValue.parse(JSONDifferentialCorpus.nested(512, object: object))
            // What is read is written back.
            #expect(deepest.jsonString == JSONDifferentialCorpus.nested(512, object: object))
            do {
                _ = try JSONValue.parse(JSONDifferentialCorpus.nested(513, object: object))
                Issue.record("513 levels were accepted")
            } catch {
                #expect(error.isTooDeep)
                // The opening bracket of level 513.
                #expect(error.offset == (object ? 5 * 512 : 512))
            }
        }
        // A value nested deeper than the writer's limit, built in code, is written as null.
        var deep: JSONValue = 0
        for _ in 0 ..< 2_000 { deep = [deep] }
        #expect(deep.jsonString == "null")
    }

    @Test func tooDeepStaysADataCorruptedDecodingErrorThroughParsingInitializers() throws {
        let tooDeep = JSONDifferentialCorpus.nested(600, object: false)
        let attempts: [() throws -> JSONValue] = [{ try JSONValue(parsing: tooDeep) }, { try JSONValue(parsing: Data(tooDeep.utf8)) }]
        for attempt in attempts {
            do {
                _ = try attempt()
                Issue.record("accepted")
            } catch DecodingError.dataCorrupted(let context) {
                #expect(context.codingPath.isEmpty)
                let parseError = try #require(context.underlyingError as? JSONValue.ParseError)
                #expect(parseError.kind == .tooDeep)
                #expect(parseError.offset == 512)
                #expect(context.debugDescription.contains("nested deeper than 512"))
            }
        }
        do {
            _ = try Frame(decoding: Data(("{\"type\":\"req\",\"id\":\"a\",\"method\":\"m\",\"params\":" + tooDeep + "}").utf8))
            Issue.record("accepted")
        } catch let error as FrameDecodingError {
            #expect(error.description == "invalid JSON")
            #expect(error.parseError?.kind == .tooDeep)
            // The frame object is level 1, so the params' 512th [ (at 45 + 511) is level 513.
            #expect(error.parseError?.offset == 45 + 511)
        }
    }

    @Test func parsingTextAndBytesAgree() {
        for text in JSONDifferentialCorpus.handWritten {
            #expect((try? JSONValue.parse(text)) == (try? JSONValue.parse(Data(text.utf8))), "\(text.debugDescription)")
        }
    }
}
