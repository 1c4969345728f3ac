import Foundation
import Testing

@testable import GatewayProtocol

/// The hand-written parser, serializer, encoder and decoder against Foundation's `JSONDecoder`
/// and `JSONEncoder` (kept in `JSONCoding.foundation…` as the reference).
@Suite("JSON equivalence with Foundation")
struct JSONEquivalenceTests {
    // MARK: Serializer

    @Test func encodedIsByteIdenticalToJSONEncoderForRandomTrees() {
        var generator = JSONTreeGenerator(seed: 1, allowNonFinite: true)
        var mismatches = 0
        for _ in 0 ..< 800 {
            let value = generator.value()
            let ours = value.encoded()
            let theirs = JSONCoding.foundationEncoded(value)
            if ours != theirs {
                mismatches += 1
                Issue.record("encoded() differs for \(value):\n ours   \(String(decoding: ours, as: UTF8.self))\n theirs \(String(decoding: theirs, as: UTF8.self))")
                if mismatches > 5 { return }
            }
            #expect(value.jsonString == String(decoding: theirs, as: UTF8.self))
        }
    }

    @Test func encodedMatchesJSONEncoderOnEdgeValues() {
        let values: [JSONValue] = [
            .null, true, false, 0, -0.0, .double(1), .double(-1), .int(.max), .int(.min), .double(.nan), .double(.infinity),
            .double(-.infinity), .double(.leastNonzeroMagnitude), .double(1e16), .double(1e-7), .double(123_456_789_012_345_683_968),
            .string(""), .string("\u{0}\u{1}\u{1F}\u{7F}/\\\"\u{8}\u{C}\n\r\t\u{2028}😀é"),
            [:], [], [[]], [[:]], ["b": 1, "a": 2, "B": 3, "é": 4, "e": 5, "": 6, "aa": 7, "a\u{0}": 8, "😀": 9, "\u{FFFF}": 10],
            .array([.double(.nan), ["x": .double(-.infinity)]]),
        ]
        for value in values {
            #expect(value.encoded() == JSONCoding.foundationEncoded(value), "\(value)")
        }
    }

    // MARK: Parser

    @Test func parsingEncodedTreesAgreesWithJSONDecoder() throws {
        var generator = JSONTreeGenerator(seed: 2)
        for _ in 0 ..< 600 {
            let data = generator.value().encoded()
            let ours = try JSONValue.parse(data)
            #expect(ours == (try JSONCoding.foundationParse(data)), "\(String(decoding: data, as: UTF8.self))")
        }
    }

    @Test func parsingVariedTextsAgreesWithJSONDecoder() {
        var trees = JSONTreeGenerator(seed: 3)
        var texts = JSONTextGenerator(seed: 4)
        var disagreements = 0
        for _ in 0 ..< 600 {
            let text = texts.text(for: trees.value())
            let result = parsesAgree(Data(text.utf8))
            if !result.agree {
                disagreements += 1
                Issue.record("\(text)\n ours \(result.ours)\n foundation \(result.foundation)")
                if disagreements > 5 { return }
            }
        }
    }

    @Test func parsingMutatedTextsAgreesWithJSONDecoder() {
        var trees = JSONTreeGenerator(seed: 5)
        var random = TestRandom(seed: 6)
        let alphabet = Array(#"{}[]:,"\ -+.eE0123456789tnfu/abx"#.utf8) + [0x00, 0x09, 0x0A, 0x7F, 0xC3, 0xA9, 0xED, 0xA0, 0x80, 0xFF]
        var disagreements = 0
        for _ in 0 ..< 1500 {
            var bytes = Array(trees.value(maxDepth: 3).encoded())
            for _ in 0 ..< random.int(1 ... 3) {
                let position = bytes.isEmpty ? 0 : random.int(0 ... bytes.count - 1)
                switch random.int(0 ... 2) {
                case 0 where !bytes.isEmpty: bytes.remove(at: position)
                case 1: bytes.insert(random.pick(alphabet), at: min(position, bytes.count))
                default: if !bytes.isEmpty { bytes[position] = random.pick(alphabet) }
                }
            }
            let result = parsesAgree(Data(bytes))
            if !result.agree {
                disagreements += 1
                Issue.record("\(bytes) \(String(decoding: bytes, as: UTF8.self))\n ours \(result.ours)\n foundation \(result.foundation)")
                if disagreements > 5 { return }
            }
        }
    }

    static let numberLiterals: [String] = [
        "0", "-0", "1", "-1", "0.0", "-0.0", "1.0", "1.5", "1e2", "1E2", "1e+2", "1e-2", "1.0e+2", "100e-2", "0.1e1",
        "0e0", "0e-5", "-0e+3", "1e-400", "-1e-400", "2e-324", "3e-324", "4.9e-324", "1e400", "-1e400", "1.7976931348623157e308",
        "1.7976931348623159e308", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
        "18446744073709551615", "18446744073709551616", "123456789012345678901234567890", "9223372036854775807.0",
        "9223372036854775295.0", "9223372036854775296.0", "9.223372036854775295e18", "92233720368547752950e-1",
        "92233720368547752951e-1", "9007199254740992.0", "9007199254740993.0", "9007199254740993", "9007199254740993.5",
        "-9007199254740993.0", "1e15", "1e16", "1e17", "1e18", "1e19", "1.152921504606847e+18", "1152921504606846976.0",
        "4.35e15", "0.1", "0.30000000000000004", "1.0000000000000001", "0.9999999999999999", "12345678901234567890e-10",
        "9007199254740993.000000000000000000000000000000000000001", "1" + String(repeating: "0", count: 30) + "e-30",
        "00", "01", "-01", "-", "--1", "+1", ".5", "1.", "1.e5", "-.5", "1e", "1e+", "1e-", "1ee5", "1e5.5", "1.5.5",
        "0x10", "1_000", "NaN", "-NaN", "Infinity", "-Infinity", "inf", "1 2", "1-2", "1+2", "2e", "0e", "-0e",
    ]

    @Test(arguments: numberLiterals)
    func numberLiteralsParseAsJSONDecoderReadsThem(_ literal: String) {
        for text in [literal, "[\(literal)]", "{\"n\":\(literal)}", " \(literal) "] {
            let result = parsesAgree(Data(text.utf8))
            #expect(result.agree, "\(text): ours \(result.ours), foundation \(result.foundation)")
        }
    }

    @Test func aNumberOnWhichJSONDecoderStopsTheProcessIsADouble() throws {
        // Foundation's JSONDecoder fails a precondition on this number (its Decimal reading of the
        // text overflows, then `JSONScanner.validateNumber` finds nothing wrong), so there is no
        // oracle: the Double value is what JSONDecoder would fall back to.
        let literal = "9007199254740993" + String(repeating: "0", count: 200) + "e-200"
        #expect(try JSONValue.parse(literal) == .double(9_007_199_254_740_992))
        #expect(try JSONValue.parse("[\(literal)]") == [.double(9_007_199_254_740_992)])
    }

    static let documents: [String] = [
        // Valid, with the corners Foundation accepts.
        "[1,]", "{\"a\":1,}", "[[],{},]", "[1, 2 ,3 , ]", "{\"a\":1,\"a\":2}", "{\"a\":{\"x\":1},\"a\":[2]}", " \t\n\r1\r\n",
        "\"\\u0000\"", "\"\\ud83d\\ude00\"", "\"\\uD83D\\uDE00\"", "\"\\/\"", "\"\\b\\f\\n\\r\\t\\\"\\\\\"", "\"\u{7F}\"", "\"é\"",
        "\"\\u00e9\"", "\"e\\u0301\"", "{\"é\":1,\"e\\u0301\":2}", "[true,false,null]", "\"\"", "{\"\":\"\"}", "-0", "[-0.0]",
        // Invalid: both must reject.
        "", " ", "[", "]", "{", "}", "[1", "[1,", "{\"a\"", "{\"a\":", "{\"a\":1", "{\"a\" 1}", "{1:2}", "{a:1}", "[,]", "[1,,2]",
        "[,1]", "{,}", "{\"a\":1,,}", "1,", "[1]x", "1 x", "[1 2]", "{\"a\":1 \"b\":2}", "nul", "nulll", "tru", "True", "NULL",
        "'a'", "\"abc", "\"\\\"", "\"\\x\"", "\"\\U0041\"", "\"\\u12\"", "\"\\u12G4\"", "\"\\ud800\"", "\"\\udc00\"",
        "\"\\ud800\\u0041\"", "\"\\ud800\\n\"", "\"\\ud800x\"", "\"\\udc00\\ud800\"", "\"\\ud800\\ud800\"", "\"\t\"", "\"\n\"",
        "\"\u{1}\"", "\u{0C}1", "1\u{0C}", "\u{A0}1", "/* */1", "// c\n1", "[1]\u{0}", "\u{FEFF}[1]", "[\u{FEFF}1]",
        "[01]", "[.5]", "[1.]", "[NaN]", "[Infinity]", "[-Infinity]", "[1e400]", "{\"a\":1e400}",
    ]

    @Test(arguments: documents)
    func documentsAreAcceptedOrRejectedAsByJSONDecoder(_ text: String) {
        let result = parsesAgree(Data(text.utf8))
        #expect(result.agree, "\(text.debugDescription): ours \(result.ours), foundation \(result.foundation)")
        // Parsing from a String and from bytes agree.
        #expect((try? JSONValue.parse(text)) == (try? JSONValue.parse(Data(text.utf8))))
    }

    @Test func encodingsAndByteOrderMarksAreDetectedAsByJSONDecoder() throws {
        let text = #"{"a":[1,"é😀"]}"#
        var inputs: [[UInt8]] = [
            [0xEF, 0xBB, 0xBF] + Array(text.utf8),
            [0xFF, 0xFE] + Array(text.utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] },
            [0xFE, 0xFF] + Array(text.utf16).flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] },
            Array(text.utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] },
            Array(text.utf16).flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] },
            [0x31, 0x00], [0x00, 0x31], [0xFF, 0xFE], [0xEF, 0xBB, 0xBF], [0xFF, 0xFE, 0x00, 0xD8, 0x31, 0x00],
            [0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xF0, 0x9F, 0x98, 0x22], [0x22, 0x00, 0x22], [0x7B, 0xFF, 0xFE, 0x7D],
        ]
        for scalarValue: UInt32 in [0x20, 0x41, 0x7E] {
            inputs.append(Array(String(repeating: "[", count: 2).utf8) + [UInt8(scalarValue)] + Array("]]".utf8))
        }
        for bytes in inputs {
            let result = parsesAgree(Data(bytes))
            #expect(result.agree, "\(bytes): ours \(result.ours), foundation \(result.foundation)")
        }
        #expect(try JSONValue.parse(Data([0xFF, 0xFE] + Array(text.utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }))
            == ["a": [1, "é😀"]])
    }

    // MARK: Depth

    static func nested(_ depth: Int, object: Bool) -> String {
        object
            ? String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)
            : String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    @Test func nestingUpTo512LevelsParsesAndDeeperIsTooDeep() throws {
        for object in [false, true] {
            let deepest = Data(Self.nested(JSONValue.maximumParseDepth, object: object).utf8)
            #expect(try JSONValue.parse(deepest) == (try JSONCoding.foundationParse(deepest)))
            let tooDeep = Data(Self.nested(JSONValue.maximumParseDepth + 1, object: object).utf8)
            #expect(throws: (any Error).self) { try JSONCoding.foundationParse(tooDeep) }
            do {
                _ = try JSONValue.parse(tooDeep)
                Issue.record("513 levels were accepted")
            } catch {
                #expect(error.kind == .tooDeep)
                #expect(error.isTooDeep)
                // The opening bracket of level 513.
                #expect(error.offset == (object ? 5 * 512 : 512))
            }
        }
        // Mixed containers, with whitespace and a byte-order mark shifting the offset.
        let mixed = "\u{FEFF} " + String(repeating: "[{\"k\":", count: 257) + "0" + String(repeating: "}]", count: 257)
        do {
            _ = try JSONValue.parse(Data(mixed.utf8))
            Issue.record("514 levels were accepted")
        } catch {
            #expect(error.kind == .tooDeep)
            // Level 513 is the [ of the 257th repetition; the byte-order mark counts.
            #expect(error.offset == 3 + 1 + 256 * 6)
        }
    }

    @Test func tooDeepStaysADataCorruptedDecodingErrorThroughParsingInitializers() throws {
        let tooDeep = Self.nested(600, object: false)
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

    @Test func parseErrorsNameTheirKindAndOffset() {
        let cases: [(String, JSONValue.ParseError.Kind, Int)] = [
            ("", .unexpectedEnd, 0), ("[1,2", .unexpectedEnd, 4), ("[1 2]", .unexpectedCharacter, 3),
            ("1 x", .unexpectedCharacter, 2), ("\"\\ud800\"", .invalidString, 7), ("\"\\udc00\"", .invalidString, 1),
            ("\"a\tb\"", .invalidString, 2), ("\"\\q\"", .invalidString, 2), ("[1e400]", .numberOutOfRange, 1),
            ("[01]", .unexpectedCharacter, 2), ("{\"a\" 1}", .unexpectedCharacter, 5), ("tru", .unexpectedEnd, 3),
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
        } catch {
            #expect(error.kind == .invalidEncoding)
        }
    }

    @Test func writerDepthLimitMatchesJSONEncoder() throws {
        let deepest = try JSONValue.parse(Self.nested(511, object: true))
        let tooDeepToWrite = try JSONValue.parse(Self.nested(512, object: false))
        #expect(deepest.encoded() == JSONCoding.foundationEncoded(deepest))
        #expect(deepest.jsonString.hasPrefix("{\"a\":{\"a\":"))
        // JSONEncoder refuses 512 levels; encoded() has always written null then.
        #expect(tooDeepToWrite.encoded() == JSONCoding.foundationEncoded(tooDeepToWrite))
        #expect(tooDeepToWrite.jsonString == "null")
        #expect(try JSONValue(encoding: deepest) == (try JSONCoding.foundationValue(encoding: deepest)))
        #expect(Outcome { try JSONValue(encoding: tooDeepToWrite) } == Outcome { try JSONCoding.foundationValue(encoding: tooDeepToWrite) })
        #expect(try tooDeepToWrite.decode(as: JSONValue.self) == .null)
        #expect(Outcome { try tooDeepToWrite.decode(as: [JSONValue].self) }
            == Outcome { try JSONCoding.foundationDecode(tooDeepToWrite, as: [JSONValue].self) })
    }

    // MARK: Encoder and decoder on JSONValue trees

    @Test func encodingTreesAgreesWithJSONEncoderRoundTrip() {
        var generator = JSONTreeGenerator(seed: 7, allowNonFinite: true)
        for _ in 0 ..< 500 {
            let value = generator.value()
            let ours = Outcome { try JSONValue(encoding: value) }
            let theirs = Outcome { try JSONCoding.foundationValue(encoding: value) }
            #expect(ours == theirs, "\(value)")
            // Through containers too.
            #expect(Outcome { try JSONValue(encoding: ["wrapped": [value]]) }
                == Outcome { try JSONCoding.foundationValue(encoding: ["wrapped": [value]]) })
        }
    }

    @Test func decodingTreesAgreesWithJSONDecoder() {
        var generator = JSONTreeGenerator(seed: 8, allowNonFinite: true)
        for _ in 0 ..< 400 {
            let value = generator.value()
            #expect(Outcome { try value.decode(as: JSONValue.self) } == Outcome { try JSONCoding.foundationDecode(value, as: JSONValue.self) })
            #expect(Outcome { try value.decode(as: [String: JSONValue].self) }
                == Outcome { try JSONCoding.foundationDecode(value, as: [String: JSONValue].self) })
            #expect(Outcome { try value.decode(as: [JSONValue?].self) }
                == Outcome { try JSONCoding.foundationDecode(value, as: [JSONValue?].self) })
            // Which member's error a dictionary reports depends on its iteration order (hash
            // seeds differ between the two dictionaries), so only success or failure is compared.
            let oursMap = Outcome { try value.decode(as: [String: Int].self) }
            let theirsMap = Outcome { try JSONCoding.foundationDecode(value, as: [String: Int].self) }
            switch (oursMap, theirsMap) {
            case (.value(let a), .value(let b)): #expect(a == b)
            case (.failure, .failure): break
            default: Issue.record("\(value) as [String: Int]: ours \(oursMap), foundation \(theirsMap)")
            }
            #expect(Outcome { try value.decode(as: [Double?].self) }
                == Outcome { try JSONCoding.foundationDecode(value, as: [Double?].self) })
            #expect(Outcome { try value.decode(as: [String].self) }
                == Outcome { try JSONCoding.foundationDecode(value, as: [String].self) })
        }
    }

    @Test func numbersDecodeAsJSONDecoderConvertsThem() {
        var generator = JSONTreeGenerator(seed: 9, allowNonFinite: true)
        func random(_ generator: inout JSONTreeGenerator) -> JSONValue {
            generator.random.chance(0.5) ? .double(generator.double()) : .int(generator.int())
        }
        var numbers: [JSONValue] = JSONTreeGenerator.interestingDoubles.map(JSONValue.double)
            + JSONTreeGenerator.interestingInts.map(JSONValue.int) + [.double(.nan), .double(.infinity), "1", true, .null]
        for _ in 0 ..< 300 { numbers.append(random(&generator)) }
        for number in numbers {
            func check<T: Decodable & Equatable>(_ type: T.Type) {
                let ours = Outcome { try number.decode(as: T.self) }
                let theirs = Outcome { try JSONCoding.foundationDecode(number, as: T.self) }
                #expect(ours == theirs, "\(number) as \(T.self)")
            }
            check(Int.self); check(Int8.self); check(Int16.self); check(Int32.self); check(Int64.self)
            check(UInt.self); check(UInt8.self); check(UInt16.self); check(UInt32.self); check(UInt64.self)
            check(Double.self); check(Float.self); check(Decimal.self); check(Bool.self); check(String.self)
            check(Date.self); check(Int?.self); check([Int].self)
            if #available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *) {
                check(Int128.self)
                check(UInt128.self)
            }
        }
    }

    @Test func numbersEncodeAsJSONEncoderWritesThem() {
        var generator = JSONTreeGenerator(seed: 10, allowNonFinite: true)
        for _ in 0 ..< 300 {
            let double = generator.double()
            let float = Float(double)
            let integer = generator.int()
            #expect(Outcome { try JSONValue(encoding: double) } == Outcome { try JSONCoding.foundationValue(encoding: double) }, "\(double)")
            #expect(Outcome { try JSONValue(encoding: float) } == Outcome { try JSONCoding.foundationValue(encoding: float) }, "\(float)")
            #expect(Outcome { try JSONValue(encoding: [float]) } == Outcome { try JSONCoding.foundationValue(encoding: [float]) }, "\(float)")
            #expect(Outcome { try JSONValue(encoding: UInt64(bitPattern: integer)) }
                == Outcome { try JSONCoding.foundationValue(encoding: UInt64(bitPattern: integer)) })
            #expect(Outcome { try JSONValue(encoding: ["d": double]) } == Outcome { try JSONCoding.foundationValue(encoding: ["d": double]) })
            if let decimal = Decimal(string: JSONNumber.text(double.isFinite ? double : 0)) {
                #expect(Outcome { try JSONValue(encoding: decimal) } == Outcome { try JSONCoding.foundationValue(encoding: decimal) }, "\(decimal)")
            }
            if #available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *) {
                let wide = Int128(integer) * Int128(generator.random.int(1 ... 1_000_000))
                #expect(Outcome { try JSONValue(encoding: wide) } == Outcome { try JSONCoding.foundationValue(encoding: wide) })
            }
        }
    }
}
