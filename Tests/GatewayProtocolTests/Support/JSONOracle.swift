import Foundation

@testable import GatewayProtocol

/// A parsed JSON value as another implementation (Foundation's `JSONSerialization`, Python's
/// `json`) produced it, in a form that loses nothing: integers as their exact decimal text,
/// floating-point numbers as their bits, exact decimals as their text, strings as code points
/// (lone surrogates included) and objects as their members in document order (repeated keys
/// included, where the implementation keeps them).
indirect enum OracleValue: Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    /// An integer, exactly, in decimal.
    case integer(String)
    /// A binary floating-point number (infinite when the implementation lets a number overflow).
    case double(Double)
    /// A decimal number, as its text (`JSONSerialization`'s `NSDecimalNumber`).
    case decimal(String)
    /// Code points; a lone surrogate is a value in D800...DFFF.
    case string([UInt32])
    case array([OracleValue])
    /// Members in document order.
    case object([OracleMember])

    var description: String {
        switch self {
        case .null: "null"
        case .bool(let flag): "\(flag)"
        case .integer(let text): text
        case .double(let double): "\(double)d"
        case .decimal(let text): "\(text)m"
        case .string(let scalars): Self.text(scalars).debugDescription
        case .array(let items): "[" + items.map(\.description).joined(separator: ",") + "]"
        case .object(let members): "{" + members.map { "\(Self.text($0.key).debugDescription):\($0.value)" }.joined(separator: ",") + "}"
        }
    }

    /// The string of `scalars`, a lone surrogate shown as U+FFFD.
    static func text(_ scalars: [UInt32]) -> String {
        var text = String.UnicodeScalarView()
        for value in scalars { text.append(Unicode.Scalar(value) ?? "\u{FFFD}") }
        return String(text)
    }

    static func scalars(_ text: String) -> [UInt32] { text.unicodeScalars.map(\.value) }

    /// Whether a string anywhere in the value holds a lone UTF-16 surrogate.
    var containsLoneSurrogate: Bool {
        func lone(_ scalars: [UInt32]) -> Bool { scalars.contains { (0xD800 ... 0xDFFF).contains($0) } }
        switch self {
        case .string(let scalars): return lone(scalars)
        case .array(let items): return items.contains { $0.containsLoneSurrogate }
        case .object(let members): return members.contains { lone($0.key) || $0.value.containsLoneSurrogate }
        default: return false
        }
    }

    /// Whether a number anywhere in the value is beyond `Double`'s range (infinite, or an exact
    /// integer or decimal whose nearest `Double` is infinite).
    var containsNumberBeyondDouble: Bool {
        switch self {
        case .double(let double): double.isInfinite
        case .integer(let text), .decimal(let text): Double(text)?.isInfinite ?? true
        case .array(let items): items.contains { $0.containsNumberBeyondDouble }
        case .object(let members): members.contains { $0.value.containsNumberBeyondDouble }
        default: false
        }
    }

    /// The deepest nesting of containers (a scalar is 0, `[]` is 1).
    var depth: Int {
        switch self {
        case .array(let items): 1 + (items.map(\.depth).max() ?? 0)
        case .object(let members): 1 + (members.map(\.value.depth).max() ?? 0)
        default: 0
        }
    }
}

/// Why another implementation refused a document.
struct OracleRefusal: Error, Equatable {
    var message: String
    init(_ message: String) { self.message = message }
}

/// A member of an `OracleValue.object`.
struct OracleMember: Equatable {
    var key: [UInt32]
    var value: OracleValue
}

/// A documented way in which `JSONValue.parse(_:)` differs from another JSON implementation.
///
/// `JSONValue.parse(_:)` keeps the rules of Foundation's `JSONDecoder` (which `JSONValue` used
/// before it had its own parser) and `JSONValue`'s own model; those differ from RFC 8259's strict
/// grammar and from other parsers in these ways only, and the differential tests fail on any
/// other difference.
enum JSONDivergence: String, CaseIterable, CustomStringConvertible {
    /// `[1,]` and `{"a":1,}` are accepted (as `JSONDecoder` accepts them); RFC 8259 has no
    /// trailing comma.
    case trailingComma
    /// A repeated key keeps its first value (as `JSONDecoder`); the other keeps its last.
    case repeatedKeyFirstWins
    /// Keys that are canonically equivalent Unicode (`"é"` and `"e\u0301"`) are one key, the first
    /// (a `JSONValue` object is a Swift `Dictionary` keyed by `String`, whose `==` is canonical
    /// equivalence); the other keeps both. String values keep their exact code points.
    case canonicallyEquivalentKeysMerged
    /// A lone UTF-16 surrogate (`"\ud800"`, or its bytes in CESU-8) is refused; the other makes a
    /// string that is not valid Unicode.
    case loneSurrogateRefused
    /// A number beyond `Double`'s range (`1e400`, an integer of 400 digits) is refused; the other
    /// makes it infinite or keeps it exactly.
    case numberBeyondDoubleRefused
    /// Nesting deeper than `JSONValue.maximumParseDepth` (512) is refused.
    case deeperThanLimitRefused
    /// A number that is not an `Int64` and that a `Double` does not hold exactly (an integer
    /// beyond `Int64`, `0.30000000000000004` as a decimal) is the nearest `Double`; the other
    /// keeps it exactly (Python's `int`, `JSONSerialization`'s `NSDecimalNumber`).
    case roundedToDouble
    /// A number at or above 2^53 whose `Double` is whole is read as `JSONDecoder` reads it, from
    /// its decimal text truncated to an integer (`9007199254740993.0` and `9007199254740993.5`
    /// are 9007199254740993); the other rounds it to a `Double` or keeps the decimal.
    case largeNumberTruncatedViaDecimal
    /// Not a difference of ours: the oracle drops a raw U+FEFF at the start of a string or key
    /// and right after an escape sequence (swift-corelibs-foundation's `JSONSerialization`
    /// decodes each run between escapes as a document that may start with a byte-order mark);
    /// ours keeps every code point, as RFC 8259 says.
    case oracleDropsLeadingByteOrderMark
    /// Not a difference of ours: the oracle reads a document with NUL bytes (`33 00 34`) as
    /// UTF-16 where `JSONDecoder`'s encoding detection, which ours follows, reads UTF-8 and finds
    /// a NUL after the document.
    case oracleGuessesUTF16
    /// Not a difference of ours: the oracle does not check the numbers of a value that a
    /// repeated key replaces (swift-corelibs-foundation's `JSONSerialization` converts a number
    /// only when it builds the value it keeps), so `{"x":{"a":1e400},"x":2}` is accepted there.
    case oracleSkipsReplacedValues
    /// `-0.0` and `-0e0` are the integer 0 (`JSONDecoder` reads numbers as `Int64` first); the
    /// other keeps the sign in a `Double`.
    case negativeZeroUnsigned

    var description: String { rawValue }
}

/// How one document came out of `JSONValue.parse(_:)` and of another implementation.
enum DifferentialVerdict: Equatable {
    case agree
    case documented(Set<JSONDivergence>)
    case unexplained(String)
}

/// Compares `JSONValue.parse(_:)` with another implementation's result for one document.
struct DifferentialComparison {
    /// The divergences this oracle is known to have; any other is unexplained.
    var allowed: Set<JSONDivergence>
    /// Whether the oracle keeps a repeated key's last value without showing the others
    /// (`JSONSerialization`): the repeated keys are then found in the input text.
    var keepsLastOfRepeatedKeys = false
    /// Whether the oracle drops a raw U+FEFF at the start of a string and after an escape
    /// sequence (`JSONSerialization` of swift-corelibs-foundation does).
    var dropsLeadingByteOrderMarks = false
    /// Whether the oracle reads short documents with NUL bytes as UTF-16 where `JSONDecoder`'s
    /// detection reads UTF-8 (`JSONSerialization` of swift-corelibs-foundation does, `3\u{0}4`).
    var guessesUTF16 = false

    func verdict(input: Data, ours: Result<JSONValue, JSONValue.ParseError>, theirs: Result<OracleValue, OracleRefusal>)
        -> DifferentialVerdict
    {
        switch (ours, theirs) {
        case (.failure, .failure):
            return .agree
        case (.success(let value), .success(let other)):
            var seen: Set<JSONDivergence> = []
            let repeated = keepsLastOfRepeatedKeys ? JSONKeyScan.repeatedKeys(in: input) : []
            if let difference = compare(value, other, at: "$", repeated: repeated, seen: &seen) {
                return .unexplained("both accepted, values differ at \(difference)\n ours   \(value.jsonString.prefix(600))\n theirs \(other.description.prefix(600))")
            }
            return finish(seen, "both accepted")
        case (.success(let value), .failure(let refusal)):
            var seen: Set<JSONDivergence> = []
            if JSONKeyScan.hasTrailingComma(input) { seen.insert(.trailingComma) }
            if seen.isEmpty {
                return .unexplained("ours accepted \(value.jsonString.prefix(200)), theirs refused: \(refusal.message)")
            }
            return finish(seen, "ours accepted, theirs refused: \(refusal.message)")
        case (.failure(let error), .success(let other)):
            var seen: Set<JSONDivergence> = []
            if guessesUTF16, input.contains(0) { seen.insert(.oracleGuessesUTF16) }
            if keepsLastOfRepeatedKeys, error.kind == .numberOutOfRange, !JSONKeyScan.repeatedKeys(in: input).isEmpty {
                seen.insert(.oracleSkipsReplacedValues)
            }
            switch error.kind {
            case .tooDeep where other.depth > JSONValue.maximumParseDepth: seen.insert(.deeperThanLimitRefused)
            case .invalidString where other.containsLoneSurrogate, .invalidEncoding where other.containsLoneSurrogate:
                seen.insert(.loneSurrogateRefused)
            case .numberOutOfRange where other.containsNumberBeyondDouble: seen.insert(.numberBeyondDoubleRefused)
            default: break
            }
            if seen.isEmpty {
                return .unexplained("ours refused (\(error)), theirs accepted \(other.description.prefix(200))")
            }
            return finish(seen, "ours refused (\(error))")
        }
    }

    private func finish(_ seen: Set<JSONDivergence>, _ context: String) -> DifferentialVerdict {
        if seen.isEmpty { return .agree }
        let unexpected = seen.subtracting(allowed)
        if !unexpected.isEmpty {
            return .unexplained("\(context): divergence \(unexpected.sorted { $0.rawValue < $1.rawValue }) not expected of this oracle")
        }
        return .documented(seen)
    }

    /// Whether `ours` has the code points of `theirs`, or, where the oracle drops some U+FEFF,
    /// the same code points apart from U+FEFF (and more of them).
    private func sameString(_ ours: String, _ theirs: [UInt32], seen: inout Set<JSONDivergence>) -> Bool {
        let scalars = OracleValue.scalars(ours)
        if scalars == theirs { return true }
        guard dropsLeadingByteOrderMarks else { return false }
        let kept = scalars.filter { $0 != 0xFEFF }
        guard kept == theirs.filter({ $0 != 0xFEFF }), scalars.count > theirs.count else { return false }
        seen.insert(.oracleDropsLeadingByteOrderMark)
        return true
    }

    /// The key under which an object member is looked up: its string, without U+FEFF where the
    /// oracle drops some.
    private func groupingKey(_ key: String) -> String {
        guard dropsLeadingByteOrderMarks else { return key }
        return String(String.UnicodeScalarView(key.unicodeScalars.filter { $0 != "\u{FEFF}" }))
    }

    /// `nil` when `ours` is `theirs` up to the documented divergences (noted in `seen`),
    /// otherwise the path of the first difference.
    private func compare(_ ours: JSONValue, _ theirs: OracleValue, at path: String, repeated: Set<String>,
                         seen: inout Set<JSONDivergence>) -> String? {
        switch (ours, theirs) {
        case (.null, .null): return nil
        case (.bool(let a), .bool(let b)): return a == b ? nil : path
        case (.int(let a), .integer(let b)): return String(a) == b ? nil : path
        case (.int(let a), .double(let b)):
            // JSONDecoder's Int64-first reading of a number with a fraction or an exponent.
            if Double(a) == b, Int64(exactly: b) == a {
                if b == 0, b.sign == .minus { seen.insert(.negativeZeroUnsigned) }
                return nil
            }
            guard b.magnitude >= JSONNumber.exactIntegerLimit, b.rounded() == b, (Double(a) - b).magnitude <= b.ulp else { return path }
            seen.insert(.largeNumberTruncatedViaDecimal)
            return nil
        case (.int(let a), .decimal(let b)):
            guard let exact = Decimal(string: b) else { return path }
            if exact == Decimal(a) { return nil }
            if let nearest = Double(b), nearest == Double(a), Int64(exactly: nearest) == a {
                // `1.0000000000000001`: its Double is 1, which ours reads as an integer.
                seen.insert(.roundedToDouble)
                return nil
            }
            guard Decimal(a).magnitude >= Decimal(JSONNumber.exactIntegerLimit), (exact - Decimal(a)).magnitude < 1 else { return path }
            seen.insert(.largeNumberTruncatedViaDecimal)
            return nil
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern ? nil : path
        case (.double(let a), .integer(let b)), (.double(let a), .decimal(let b)):
            // Ours holds every plain integer literal in Int64 range as `.int`.
            if case .integer = theirs, Int64(b) != nil { return path }
            if let exact = Decimal(string: b), exact == Decimal(a) { return nil }
            // The nearest Double of the exact value (a Decimal of 38 digits may itself be rounded).
            guard let nearest = Double(b), (nearest - a).magnitude <= a.ulp else { return path }
            seen.insert(.roundedToDouble)
            return nil
        case (.string(let a), .string(let b)): return sameString(a, b, seen: &seen) ? nil : path
        case (.array(let a), .array(let b)):
            guard a.count == b.count else { return "\(path) (\(a.count) items, theirs \(b.count))" }
            for (index, (x, y)) in zip(a, b).enumerated() {
                if let difference = compare(x, y, at: "\(path)[\(index)]", repeated: repeated, seen: &seen) { return difference }
            }
            return nil
        case (.object(let a), .object(let b)):
            // Group the other's members as a Swift dictionary groups keys (canonical equivalence),
            // the first of each group winning.
            var firsts: [String: OracleMember] = [:]
            for member in b {
                let key = groupingKey(OracleValue.text(member.key))
                if let first = firsts[key] {
                    seen.insert(first.key == member.key ? .repeatedKeyFirstWins : .canonicallyEquivalentKeysMerged)
                } else {
                    firsts[key] = member
                }
            }
            // Where the oracle drops U+FEFF, keys that differ only in it are one key there.
            var oursByGroup: [String: Int] = [:]
            for key in a.keys { oursByGroup[groupingKey(key), default: 0] += 1 }
            guard oursByGroup.count == firsts.count else { return "\(path) (\(a.count) members, theirs \(firsts.count))" }
            for (key, value) in a {
                guard let other = firsts[groupingKey(key)] else { return "\(path) (key \(key.debugDescription) only in ours)" }
                if oursByGroup[groupingKey(key), default: 0] > 1 {
                    seen.insert(.oracleDropsLeadingByteOrderMark)
                    continue
                }
                guard sameString(key, other.key, seen: &seen) else { return "\(path) (key \(key.debugDescription) spelled differently)" }
                if let difference = compare(value, other.value, at: "\(path).\(key)", repeated: repeated, seen: &seen) {
                    // The oracle kept a repeated key's last value.
                    guard repeated.contains(key) else { return difference }
                    seen.insert(.repeatedKeyFirstWins)
                }
            }
            return nil
        default:
            return path
        }
    }
}

/// Lexical facts about a document's text, for explaining divergences.
enum JSONKeyScan {
    /// Whether a comma followed by whitespace and `]` or `}` occurs outside strings.
    static func hasTrailingComma(_ data: Data) -> Bool {
        var inString = false
        var escaped = false
        var pendingComma = false
        for byte in data {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
                pendingComma = false
            case UInt8(ascii: ","): pendingComma = true
            case 0x20, 0x09, 0x0A, 0x0D: break
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                if pendingComma { return true }
            default: pendingComma = false
            }
        }
        return false
    }

    /// The keys that occur more than once in one object (by Swift `String` equality), each key
    /// string token decoded by `JSONValue.parse(_:)`.
    static func repeatedKeys(in data: Data) -> Set<String> {
        let bytes = Array(data)
        var repeated: Set<String> = []
        // One entry per open container: the keys seen so far, or nil for an array.
        var stack: [Set<String>?] = []
        var expectingKey = false
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "{"):
                stack.append([])
                expectingKey = true
            case UInt8(ascii: "["):
                stack.append(nil)
                expectingKey = false
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if !stack.isEmpty { stack.removeLast() }
                expectingKey = false
            case UInt8(ascii: ","):
                expectingKey = stack.last.map { $0 != nil } ?? false
            case UInt8(ascii: "\""):
                var end = index + 1
                while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
                    end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1
                }
                if expectingKey, end < bytes.count, case .string(let key)? = try? JSONValue.parse(Data(bytes[index ... end])),
                   let last = stack.indices.last, var keys = stack[last] {
                    if !keys.insert(key).inserted { repeated.insert(key) }
                    stack[last] = keys
                }
                expectingKey = false
                index = end
            default:
                break
            }
            index += 1
        }
        return repeated
    }
}

/// Inputs for the differential tests: the corners of RFC 8259 and generated documents.
enum JSONDifferentialCorpus {
    static func nested(_ depth: Int, object: Bool) -> String {
        object
            ? String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)
            : String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    /// Hand-written documents, by RFC 8259 topic.
    static let handWritten: [String] = {
        var texts: [String] = []
        // Strings: every escape, surrogate pairs, lone and mismatched surrogates, control characters.
        texts += [
            #""\"\\\/\b\f\n\r\t""#, #""\u0000\u001f\u0020\u007f\u0080\u07ff\u0800\uffff""#, #""\uD834\uDD1E""#, #""\ud834\udd1e""#,
            #""\uDBFF\uDFFF""#, #""\uD800\uDC00""#, #""\uD800""#, #""\uDFFF""#, #""\uDC00\uD800""#, #""\uD800\uD800""#,
            #""\uD800\u0041""#, #""a\uD800""#, #""\uD800b""#, #"["\uD800"]"#, #"{"\uDC00":1}"#, #""\u00""#, #""\u00zz""#,
            #""\x41""#, #""\'""#, #""\a""#, "\"\u{1F}\"", "\"\u{7F}\"", "\"\t\"", "\"a\nb\"", "\"\u{2028}\u{2029}\"",
            "\"😀\"", "\"é\"", "\"e\u{301}\"", #"{"é":1,"e\u0301":2}"#, "\"", #""abc"#, #""\"#,
        ]
        // Numbers: integers beyond Int64, negative zero, exponents, the grammar.
        texts += [
            "0", "-0", "-0.0", "-0e0", "-0E-5", "[-0]", "{\"z\":-0.0}", "0.0", "1", "-1", "9223372036854775807",
            "-9223372036854775808", "9223372036854775808", "-9223372036854775809", "18446744073709551615",
            "18446744073709551616", "-18446744073709551617", "123456789012345678901234567890",
            String(repeating: "9", count: 400), "-" + String(repeating: "1", count: 310), "9007199254740993",
            "9007199254740993.0", "9007199254740993e0", "90071992547409930e-1", "1e2", "1E2", "1e+2", "1E-2", "1.5e3",
            "1.0", "1e16", "1e19", "1.5", "0.1", "1e308", "1.7976931348623157e308", "1.7976931348623159e308", "1e309",
            "-1e309", "1e400", "[1e400]", "1e-307", "1e-323", "4.9e-324", "2.5e-324", "2e-324", "1e-400", "-1e-400",
            "1e99999999999999999999", "1e-99999999999999999999", "0.000000000000000000000000000001",
            "1" + String(repeating: "0", count: 30) + "e-30", "00", "01", "-01", "+1", ".5", "1.", "-", "--1", "1e", "1e+",
            "0x1F", "1_0", "NaN", "Infinity", "-Infinity", "[NaN]", "1.5e", "1.e3", "-.5",
        ]
        // Objects: repeated keys.
        texts += [
            #"{"a":1,"a":2}"#, #"{"a":1,"b":2,"a":3}"#, #"{"a":{"x":1},"a":[2]}"#, #"{"a":null,"a":1}"#,
            #"{"k":{"a":1,"a":2},"k":0}"#, #"[{"a":1,"a":2},{"b":1,"b":1}]"#, #"{"\u0061":1,"a":2}"#,
        ]
        // Structure: trailing commas, empty members, trailing garbage.
        texts += [
            "[1,]", "[1 , ]", "{\"a\":1,}", "{\"a\":1 ,\n}", "[[],{},]", "[,]", "[,1]", "[1,,2]", "{,}", "{\"a\":1,,}",
            "[1]x", "[1] [2]", "1 2", "{}x", "\"a\"\"b\"", "null null", "[1]\n\n", "[1]\u{0}", "truex", "nul", "nulll", "True",
            "[1", "{\"a\"", "{\"a\":", "{\"a\" 1}", "{1:2}", "{a:1}", "{'a':1}", "", " ", "[", "]", "{", "}", ":", ",",
        ]
        // Whitespace: only space, tab, line feed and carriage return.
        texts += [
            " \t\n\r[ \t\n\r1 \t\n\r, \t\n\r2 \t\n\r] \t\n\r", "\u{B}1", "\u{C}1", "1\u{C}", "\u{A0}1", "\u{2028}1",
            "[1\u{2029}]", "\u{FEFF}1", "[\u{FEFF}1]", "/**/1", "// c\n1", "# c\n1",
        ]
        // Depth.
        for depth in [100, 511, 512, 513, 600] {
            texts.append(nested(depth, object: false))
            texts.append(nested(depth, object: true))
        }
        return texts
    }()

    /// Documents in other encodings and with byte-order marks.
    static let encoded: [[UInt8]] = {
        let text = #"{"a":[1,"é😀"]}"#
        return [
            [0xEF, 0xBB, 0xBF] + Array(text.utf8),
            [0xFF, 0xFE] + Array(text.utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] },
            [0xFE, 0xFF] + Array(text.utf16).flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] },
            Array(text.utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] },
            Array(text.utf16).flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] },
            // Invalid UTF-8 inside strings: a stray continuation, a truncated sequence, an
            // overlong form, UTF-8-encoded surrogates (CESU-8), beyond U+10FFFF.
            [0x22, 0xFF, 0x22], [0x22, 0x80, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xE0, 0x80, 0xAF, 0x22],
            [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],
            [0x22, 0xF0, 0x9F, 0x98, 0x22], [0x22, 0x00, 0x22], [0x7B, 0xFF, 0xFE, 0x7D], [0xC3, 0xA9],
        ]
    }()

    /// Every input: hand-written, encoded, and generated (random trees as `encoded()` writes them,
    /// the same trees written with varied whitespace, escapes, number spellings, repeated keys
    /// and trailing commas, and byte-level mutations of them).
    static let all: [Data] = {
        var inputs = handWritten.map { Data($0.utf8) } + encoded.map { Data($0) }
        for literal in JSONEquivalenceTests.numberLiterals {
            inputs += [Data(literal.utf8), Data("[\(literal)]".utf8), Data("{\"n\":\(literal)}".utf8)]
        }
        inputs += JSONEquivalenceTests.documents.map { Data($0.utf8) }
        var trees = JSONTreeGenerator(seed: 101)
        var texts = JSONTextGenerator(seed: 102)
        for _ in 0 ..< 250 {
            let value = trees.value(maxDepth: 4)
            inputs.append(value.encoded())
            inputs.append(Data(texts.text(for: value).utf8))
        }
        var random = TestRandom(seed: 103)
        let alphabet = Array(#"{}[]:,"\ -+.eE0123456789tnfu/abxD"#.utf8) + [0x00, 0x09, 0x0A, 0x0C, 0x7F, 0xC3, 0xA9, 0xED, 0xA0, 0x80, 0xFF]
        for _ in 0 ..< 600 {
            var bytes = Array(trees.value(maxDepth: 3).encoded())
            for _ in 0 ..< random.int(1 ... 3) {
                let position = bytes.isEmpty ? 0 : random.int(0 ... bytes.count - 1)
                switch random.int(0 ... 2) {
                case 0 where !bytes.isEmpty: bytes.remove(at: position)
                case 1: bytes.insert(random.pick(alphabet), at: min(position, bytes.count))
                default: if !bytes.isEmpty { bytes[position] = random.pick(alphabet) }
                }
            }
            inputs.append(Data(bytes))
        }
        return inputs
    }()
}

/// Foundation's `JSONSerialization` (swift-corelibs-foundation on Linux, Darwin's Foundation
/// elsewhere) as an oracle.
enum JSONSerializationOracle {
    /// Where `JSONSerialization` is known to differ: it keeps a repeated key's last value, and
    /// numbers that a `Double` does not hold exactly as `NSDecimalNumber`s (it accepts trailing
    /// commas and refuses more than 512 levels too).
    static let divergences: Set<JSONDivergence> = [
        .repeatedKeyFirstWins, .roundedToDouble, .largeNumberTruncatedViaDecimal, .negativeZeroUnsigned,
    ]
    /// The quirks of swift-corelibs-foundation's `JSONSerialization` (not Darwin's).
    #if canImport(Darwin)
    static let quirks: Set<JSONDivergence> = []
    #else
    static let quirks: Set<JSONDivergence> = [.oracleDropsLeadingByteOrderMark, .oracleGuessesUTF16, .oracleSkipsReplacedValues]
    #endif

    static func parse(_ data: Data) -> Result<OracleValue, OracleRefusal> {
        do {
            let object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            guard let value = convert(object) else { return .failure(OracleRefusal("unexpected object \(type(of: object))")) }
            return .success(value)
        } catch {
            return .failure(OracleRefusal("\(error)"))
        }
    }

    private static func convert(_ object: Any) -> OracleValue? {
        switch object {
        case is NSNull: return .null
        case let string as String: return .string(OracleValue.scalars(string))
        case let array as [Any]:
            var items: [OracleValue] = []
            for item in array {
                guard let value = convert(item) else { return nil }
                items.append(value)
            }
            return .array(items)
        case let dictionary as [String: Any]:
            var members: [OracleMember] = []
            for (key, item) in dictionary {
                guard let value = convert(item) else { return nil }
                members.append(OracleMember(key: OracleValue.scalars(key), value: value))
            }
            return .object(members)
        case let decimal as NSDecimalNumber: return .decimal(decimal.stringValue)
        case let number as NSNumber: return convert(number)
        default: return nil
        }
    }

    private static func convert(_ number: NSNumber) -> OracleValue? {
        switch String(cString: number.objCType) {
        case "c", "B": return .bool(number.boolValue)
        case "q", "l", "i", "s": return .integer(String(number.int64Value))
        case "Q", "L", "I", "S", "C": return .integer(String(number.uint64Value))
        case "d", "f": return .double(number.doubleValue)
        default: return nil
        }
    }
}

/// Python's `json` module (through `Tests/Interop/json_oracle.py`) as an oracle.
enum PythonJSONOracle {
    /// Reads one output line of `json_oracle.py`.
    static func parse(line: Substring) -> Result<OracleValue, OracleRefusal>? {
        if line.hasPrefix("err ") { return .failure(OracleRefusal(String(line.dropFirst(4)))) }
        guard line.hasPrefix("ok ") else { return nil }
        var tokens = line.dropFirst(3).split(separator: " ")[...]
        guard let value = read(&tokens), tokens.isEmpty else { return nil }
        return .success(value)
    }

    private static func read(_ tokens: inout ArraySlice<Substring>) -> OracleValue? {
        guard let token = tokens.popFirst() else { return nil }
        switch token {
        case "n": return .null
        case "t": return .bool(true)
        case "f": return .bool(false)
        default: break
        }
        let payload = token.dropFirst(2)
        switch token.prefix(2) {
        case "i:": return .integer(String(payload))
        case "d:":
            guard let bits = UInt64(payload, radix: 16) else { return nil }
            return .double(Double(bitPattern: bits))
        case "s:":
            guard let bytes = hexBytes(payload), bytes.count % 4 == 0 else { return nil }
            return .string(stride(from: 0, to: bytes.count, by: 4).map { offset in
                bytes[offset ..< offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            })
        case "a:":
            guard let count = Int(payload) else { return nil }
            var items: [OracleValue] = []
            for _ in 0 ..< count {
                guard let item = read(&tokens) else { return nil }
                items.append(item)
            }
            return .array(items)
        case "o:":
            guard let count = Int(payload) else { return nil }
            var members: [OracleMember] = []
            for _ in 0 ..< count {
                guard case .string(let key)? = read(&tokens), let value = read(&tokens) else { return nil }
                members.append(OracleMember(key: key, value: value))
            }
            return .object(members)
        default:
            return nil
        }
    }

    private static func hexBytes(_ text: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count / 2)
        var high: UInt8?
        for character in text.utf8 {
            let digit: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = character - UInt8(ascii: "a") + 10
            default: return nil
            }
            if let first = high {
                bytes.append(first << 4 | digit)
                high = nil
            } else {
                high = digit
            }
        }
        return high == nil ? bytes : nil
    }

    static func hex(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(data.count * 2)
        for byte in data {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
