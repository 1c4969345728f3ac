import Foundation

@testable import GatewayProtocol

/// Inputs for the differential tests against `JSON.parse`: hand-written corners of RFC 8259 and
/// ECMAScript, and documents generated from a seed, valid and nearly valid.
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
        // Objects: repeated keys (the last value wins, `JSON.parse` keeps the first one's place),
        // keys JavaScript orders before others (array indices), keys with lone surrogates.
        texts += [
            #"{"b":1,"1":2,"a":3,"0":4,"10":5,"01":6,"-1":7,"4294967295":8,"4294967294":9}"#, #"{"__proto__":1}"#,
            #"{"\uD800":1,"\uDBFF":2}"#, #"{"\uD800":1,"\uDBFF":2,"\uD800":3}"#, #"{"\uD800":1,"\uFFFD":2}"#, #"{"a\uDC00b":{"c\uD800":[1]}}"#,
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
            "[1\u{2029}]", "\u{FEFF}1", "[\u{FEFF}1]", "1\u{FEFF}", "\u{FEFF}", "\u{FEFF}\u{FEFF}1", "/**/1", "// c\n1", "# c\n1",
            "\u{85}1", "\u{3000}1", "\u{1680}1", "1\u{200B}",
        ]
        // Depth.
        for depth in [100, 511, 512, 513, 600] {
            texts.append(nested(depth, object: false))
            texts.append(nested(depth, object: true))
        }
        return texts
    }()

    /// Byte-order marks, other encodings and bytes that are not UTF-8.
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
            [0xEF, 0xBB, 0xBF], [0xEF, 0xBB, 0xBF, 0x31], [0x20, 0xEF, 0xBB, 0xBF, 0x31], [0x31, 0xEF, 0xBB, 0xBF],
            [0xFF, 0xFE, 0x31, 0x00], [0x31, 0x00], [0x00, 0x31],
        ]
    }()

    /// The fixed inputs: hand-written, encoded, and the number literals and documents of
    /// `JSONRFC8259Tests`.
    static let fixed: [Data] = {
        var inputs = handWritten.map { Data($0.utf8) } + encoded.map { Data($0) }
        for literal in numberLiterals {
            inputs += [Data(literal.utf8), Data("[\(literal)]".utf8), Data("{\"n\":\(literal)}".utf8), Data(" \(literal) ".utf8)]
        }
        return inputs
    }()

    static let numberLiterals: [String] = [
        "0", "-0", "1", "-1", "0.0", "-0.0", "1.0", "1.5", "1e2", "1E2", "1e+2", "1e-2", "1.0e+2", "100e-2", "0.1e1",
        "0e0", "0e-5", "-0e+3", "1e-400", "-1e-400", "2e-324", "3e-324", "4.9e-324", "1e400", "-1e400", "1.7976931348623157e308",
        "1.7976931348623158e308", "1.7976931348623159e308", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "18446744073709551615", "18446744073709551616", "123456789012345678901234567890", "9007199254740992", "9007199254740993",
        "9007199254740993.5", "-9007199254740993", "9007199254740995", "1e15", "1e16", "1e17", "1e20", "1e21", "1e22", "123e18",
        "4.35e15", "0.1", "0.30000000000000004", "1.0000000000000001", "0.9999999999999999", "12345678901234567890e-10",
        "0.000001", "0.0000001", "1e-6", "1e-7", "1.5e-7", "123456789e-15", "5e-324", "2.2250738585072011e-308",
        "2.2250738585072012e-308", "1" + String(repeating: "0", count: 30) + "e-30", "0." + String(repeating: "0", count: 400) + "1",
        String(repeating: "7", count: 25) + "." + String(repeating: "3", count: 25) + "e-3",
        "00", "01", "-01", "-", "--1", "+1", ".5", "1.", "1.e5", "-.5", "1e", "1e+", "1e-", "1ee5", "1e5.5", "1.5.5",
        "0x10", "1_000", "NaN", "-NaN", "Infinity", "-Infinity", "inf", "1 2", "1-2", "1+2", "2e", "0e", "-0e",
    ]

    /// `count` generated inputs from `seed`: trees as `encoded()` writes them; the same trees
    /// written with varied whitespace, escapes (lone surrogates among them), number spellings,
    /// repeated keys and trailing commas; number literals of every shape; byte-order marks;
    /// nesting around the depth limit; and byte-level mutations of all of these.
    static func generated(seed: UInt64, count: Int) -> [Data] {
        var trees = JSONTreeGenerator(seed: seed, allowIllFormedStrings: true)
        var texts = JSONTextGenerator(seed: seed &+ 1)
        var random = TestRandom(seed: seed &+ 2)
        let alphabet = Array(#"{}[]:,"\ -+.eE0123456789tnfu/abxD"#.utf8)
            + [0x00, 0x09, 0x0A, 0x0C, 0x0D, 0x7F, 0xC3, 0xA9, 0xED, 0xA0, 0x80, 0xBB, 0xBF, 0xEF, 0xFF]
        var inputs: [Data] = []
        while inputs.count < count {
            var bytes: [UInt8]
            switch random.int(0 ... 9) {
            case 0, 1: bytes = Array(trees.value(maxDepth: 5).encoded())
            case 2, 3, 4: bytes = Array(texts.text(for: trees.value(maxDepth: 5)).utf8)
            case 5: bytes = Array(texts.numberLiteral().utf8)
            case 6:
                let depth = random.pick([1, 2, 100, 510, 511, 512, 513, 514, 600, random.int(1 ... 700)])
                bytes = Array(nested(depth, object: random.chance(0.5)).utf8)
                if random.chance(0.5) {
                    // Mixed containers: arrays inside objects inside arrays.
                    bytes = Array((String(repeating: "[{\"k\":", count: depth / 2) + "0" + String(repeating: "}]", count: depth / 2)).utf8)
                }
            default: bytes = Array(texts.text(for: trees.value(maxDepth: 3)).utf8)
            }
            if random.chance(0.05) { bytes = [0xEF, 0xBB, 0xBF] + bytes }
            if random.chance(0.3) {
                for _ in 0 ..< random.int(1 ... 3) {
                    let position = bytes.isEmpty ? 0 : random.int(0 ... bytes.count - 1)
                    switch random.int(0 ... 2) {
                    case 0 where !bytes.isEmpty: bytes.remove(at: position)
                    case 1: bytes.insert(random.pick(alphabet), at: min(position, bytes.count))
                    default: if !bytes.isEmpty { bytes[position] = random.pick(alphabet) }
                    }
                }
            }
            inputs.append(Data(bytes))
        }
        return inputs
    }
}
