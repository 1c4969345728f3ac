import Foundation
import Simulation

@testable import GatewayProtocol

/// The package's `SeededRandom` with the helpers the generators need, for reproducible
/// generated test data.
struct TestRandom {
    private var source: SeededRandom

    init(seed: UInt64) { source = SeededRandom(seed: seed) }

    mutating func next() -> UInt64 { source.next() }

    mutating func int(_ range: ClosedRange<Int>) -> Int {
        let width = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int(next() % width)
    }

    mutating func chance(_ probability: Double) -> Bool {
        Double(next() >> 11) / Double(1 << 53) < probability
    }

    mutating func pick<T>(_ items: [T]) -> T { items[int(0 ... items.count - 1)] }
}

/// Random `JSONValue` trees with the awkward corners of strings and numbers.
struct JSONTreeGenerator {
    var random: TestRandom
    /// Whether NaN and infinities may appear (they have no JSON form).
    var allowNonFinite = false
    /// Whether strings with lone surrogates (`.illFormedString`) may appear; Foundation's coders,
    /// the reference of the Codable bridges' tests, have no such strings.
    var allowIllFormedStrings = false

    init(seed: UInt64, allowNonFinite: Bool = false, allowIllFormedStrings: Bool = false) {
        random = TestRandom(seed: seed)
        self.allowNonFinite = allowNonFinite
        self.allowIllFormedStrings = allowIllFormedStrings
    }

    static let interestingStrings: [String] = [
        "", "a", "/", "//", "\\", "\"", "\u{0}", "\u{1}", "\u{1F}", "\u{7F}", "\u{80}", "é", "e\u{301}", "😀",
        "👩‍👩‍👧", "\u{2028}\u{2029}", "\u{FEFF}", "\t\n\r\u{8}\u{C}", "\u{10FFFF}", "\u{FFFD}", "日本語", "</script>",
        "key with spaces", "ünïcödé/slash\\back\"quote", "Index 0", "super", "null", "true", "1", "-0",
    ]

    static let interestingDoubles: [Double] = [
        0.0, -0.0, 1.0, -1.0, 0.5, 0.1, 0.2, 1.5, -2.75, 100.0, 1e15, 1e16, 1e17, 1e21, 1e22, 1e300,
        9_007_199_254_740_991, 9_007_199_254_740_992, 9_007_199_254_740_994, 9.007199254740994e15,
        1_152_921_504_606_846_976, 9.223372036854775e18, 9_223_372_036_854_775_808, -9_223_372_036_854_775_808,
        18_446_744_073_709_551_616, 1.7976931348623157e308, -1.7976931348623157e308, .leastNonzeroMagnitude, 2.2250738585072014e-308,
        123456.789, 1e-7, 1e-5, 0.0001, 3.141592653589793, 2.718281828459045, 1.0000000000000002, 0.30000000000000004,
        Double(Float(0.1)), 4.35e15, 6.02214076e23, -1e-300,
    ]

    static let interestingInts: [Int64] = [
        0, 1, -1, 2, 10, 255, 256, -128, 65535, 1_767_225_600_000, Int64(Int32.max), Int64(Int32.min),
        9_007_199_254_740_992, 9_007_199_254_740_993, -9_007_199_254_740_993, .max, .min, .max - 1, .min + 1,
    ]

    mutating func value(depth: Int = 0, maxDepth: Int = 6) -> JSONValue {
        let containerChance = depth >= maxDepth ? 0.0 : 0.45 - Double(depth) * 0.05
        if random.chance(containerChance) {
            if random.chance(0.5) {
                let count = random.chance(0.1) ? random.int(10 ... 40) : random.int(0 ... 6)
                return .array((0 ..< count).map { _ in value(depth: depth + 1, maxDepth: maxDepth) })
            }
            let count = random.chance(0.1) ? random.int(10 ... 40) : random.int(0 ... 6)
            var members: [String: JSONValue] = [:]
            for _ in 0 ..< count { members[string()] = value(depth: depth + 1, maxDepth: maxDepth) }
            return .object(members)
        }
        switch random.int(0 ... 9) {
        case 0: return .null
        case 1: return .bool(random.chance(0.5))
        case 2, 3: return .int(int())
        case 4, 5: return .double(double())
        case 6 where allowIllFormedStrings && random.chance(0.3): return .string(utf16: utf16WithLoneSurrogates())
        default: return .string(string())
        }
    }

    /// The UTF-16 code units of a string with lone surrogates among them (or, by chance, only
    /// pairs): what a JavaScript string can hold and a Swift `String` cannot.
    mutating func utf16WithLoneSurrogates() -> [UInt16] {
        var units: [UInt16] = []
        for _ in 0 ..< random.int(1 ... 4) {
            units.append(contentsOf: string().utf16)
            let lone = random.chance(0.5) ? random.int(0xD800 ... 0xDBFF) : random.int(0xDC00 ... 0xDFFF)
            units.append(UInt16(lone))
        }
        if random.chance(0.5) { units.append(contentsOf: string().utf16) }
        return units
    }

    mutating func int() -> Int64 {
        switch random.int(0 ... 3) {
        case 0: return random.pick(Self.interestingInts)
        case 1: return Int64(random.int(-1000 ... 1000))
        case 2: return Int64(bitPattern: random.next())
        default: return Int64(bitPattern: random.next()) >> random.int(0 ... 63)
        }
    }

    mutating func double() -> Double {
        if allowNonFinite, random.chance(0.08) { return random.pick([.nan, .infinity, -.infinity]) }
        switch random.int(0 ... 5) {
        case 0, 1: return random.pick(Self.interestingDoubles)
        case 2:
            // Any finite bit pattern.
            while true {
                let candidate = Double(bitPattern: random.next())
                if candidate.isFinite { return candidate }
            }
        case 3: return Double(Int64(bitPattern: random.next()) >> random.int(0 ... 63))  // integral, any magnitude
        case 4: return Double(random.int(-100_000 ... 100_000)) / Double(random.pick([1, 2, 4, 10, 100, 1000, 3]))
        default:
            let exponent = random.int(-30 ... 30)
            return Double(random.int(1 ... 999_999)) * pow(10, Double(exponent))
        }
    }

    mutating func string() -> String {
        if random.chance(0.35) { return random.pick(Self.interestingStrings) }
        var scalars = String.UnicodeScalarView()
        for _ in 0 ..< random.int(0 ... 12) {
            let value: UInt32
            switch random.int(0 ... 9) {
            case 0: value = UInt32(random.int(0 ... 0x1F))
            case 1: value = random.pick([0x22, 0x5C, 0x2F, 0x7F, 0x2028, 0x2029, 0xFEFF])
            case 2: value = UInt32(random.int(0x80 ... 0x7FF))
            case 3: value = UInt32(random.int(0x800 ... 0xD7FF))
            case 4: value = UInt32(random.int(0xE000 ... 0xFFFD))
            case 5: value = UInt32(random.int(0x10000 ... 0x10FFFF))
            case 6: value = 0x301  // a combining mark
            default: value = UInt32(random.int(0x20 ... 0x7E))
            }
            if let scalar = Unicode.Scalar(value) { scalars.append(scalar) }
        }
        return String(scalars)
    }
}

/// A JSON text for a value, written with random variations that a strict serializer never
/// produces: whitespace, escapes of any character, alternative number spellings, repeated keys,
/// lone surrogates, and (invalid for `JSON.parse`) trailing commas.
struct JSONTextGenerator {
    var random: TestRandom

    init(seed: UInt64) { random = TestRandom(seed: seed) }

    mutating func text(for value: JSONValue) -> String {
        var output = ""
        write(value, to: &output)
        return whitespace() + output + whitespace()
    }

    private mutating func whitespace() -> String {
        guard random.chance(0.3) else { return "" }
        return String((0 ..< random.int(1 ... 3)).map { _ in random.pick([" ", "\t", "\n", "\r"]) })
    }

    private mutating func write(_ value: JSONValue, to output: inout String) {
        switch value {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .int(let integer): output += intText(integer)
        case .double(let double): output += doubleText(double)
        case .string(let string): output += stringText(string)
        case .illFormedString(let string): output += unitsText(string.utf16)
        case .array(let items):
            output += "[" + whitespace()
            for (index, item) in items.enumerated() {
                if index > 0 { output += whitespace() + "," + whitespace() }
                write(item, to: &output)
            }
            if !items.isEmpty, random.chance(0.1) { output += "," }
            output += whitespace() + "]"
        case .object(let members):
            output += "{" + whitespace()
            var first = true
            // In a fixed order, so that the same seed gives the same text in every process (a
            // dictionary's order changes with the process's hash seed).
            for (key, member) in members.sorted(by: { JSONWriter.utf8Precedes($0.key, $1.key) }) {
                if !first { output += "," + whitespace() }
                first = false
                output += stringText(key) + whitespace() + ":" + whitespace()
                write(member, to: &output)
                if random.chance(0.05) {
                    // A repeated key: `JSON.parse` keeps the last value.
                    output += "," + stringText(key) + ":" + "\"repeated\""
                }
            }
            if !members.isEmpty, random.chance(0.1) { output += "," }
            output += whitespace() + "}"
        }
    }

    private mutating func intText(_ integer: Int64) -> String {
        switch random.int(0 ... 7) {
        case 0: return "\(integer).0"
        case 1: return "\(integer)e0"
        case 2: return "\(integer)0e-1"
        case 3: return "\(integer)E+0"
        default: return String(integer)
        }
    }

    private mutating func doubleText(_ double: Double) -> String {
        guard double.isFinite else { return "null" }
        let shortest = JavaScriptNumber.text(double)
        switch random.int(0 ... 5) {
        case 0: return String(format: "%.17g", double).replacingOccurrences(of: "+", with: "")
        case 1: return String(format: "%.3e", double)
        default: return shortest
        }
    }

    /// A number literal of any shape, valid or nearly: signs, leading zeros, long digit runs,
    /// fractions, exponents large and small, missing parts.
    mutating func numberLiteral() -> String {
        func digits(_ range: ClosedRange<Int>) -> String {
            String((0 ..< random.int(range)).map { _ in Character(String(random.int(0 ... 9))) })
        }
        var text = random.chance(0.3) ? "-" : (random.chance(0.02) ? "+" : "")
        switch random.int(0 ... 9) {
        case 0: text += "0"
        case 1: text += "0" + digits(1 ... 3)  // a leading zero
        case 2: text += "1" + digits(15 ... 25)  // around 2^53 and 2^64
        case 3: text += "9" + digits(300 ... 320)  // around the largest double
        case 4: text += ""  // no integer part
        default: text += String(random.int(1 ... 9)) + digits(0 ... 12)
        }
        if random.chance(0.4) {
            text += "."
            text += random.chance(0.05) ? "" : digits(random.chance(0.1) ? 300 ... 400 : 1 ... 20)
        }
        if random.chance(0.4) {
            text += random.pick(["e", "E"]) + random.pick(["", "+", "-"])
            if random.chance(0.95) {
                text += random.chance(0.2) ? String(random.int(290 ... 420)) : (random.chance(0.02) ? "1" + digits(20 ... 25) : String(random.int(0 ... 30)))
            }
        }
        return text
    }

    private mutating func stringText(_ string: String) -> String {
        var output = "\""
        if random.chance(0.03) { output += loneSurrogateEscape() }
        for scalar in string.unicodeScalars {
            if random.chance(0.01) { output += loneSurrogateEscape() }
            let escapeAnyway = random.chance(0.15)
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += random.chance(0.5) ? "\\\\" : "\\u005C"
            case "/" where escapeAnyway: output += "\\/"
            case "\u{8}": output += "\\b"
            case "\u{C}": output += "\\f"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            default:
                if scalar.value < 0x20 || escapeAnyway {
                    for unit in String(scalar).utf16 {
                        let hex = String(unit, radix: 16, uppercase: random.chance(0.5))
                        output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                    }
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        return output + "\""
    }
}

extension JSONTextGenerator {
    /// A string literal of UTF-16 code units: well-formed runs as `stringText(_:)` writes them,
    /// each lone surrogate as an escape.
    fileprivate mutating func unitsText(_ units: [UInt16]) -> String {
        var output = "\""
        var run: [UInt16] = []
        func flush() {
            output += stringText(String(decoding: run, as: UTF16.self)).dropFirst().dropLast()
            run.removeAll()
        }
        var index = 0
        while index < units.count {
            if let length = JSONValue.IllFormedString.scalarLength(at: index, in: units) {
                run.append(contentsOf: units[index ..< index + length])
                index += length
            } else {
                flush()
                output += "\\u" + String(units[index], radix: 16, uppercase: random.chance(0.5))
                index += 1
            }
        }
        flush()
        return output + "\""
    }

    /// A `\uXXXX` escape of a surrogate that may end up lone (or pair with a neighbour).
    fileprivate mutating func loneSurrogateEscape() -> String {
        let unit = random.chance(0.5) ? random.int(0xD800 ... 0xDBFF) : random.int(0xDC00 ... 0xDFFF)
        return "\\u" + String(unit, radix: 16, uppercase: random.chance(0.5))
    }
}

/// A description of an error that two implementations must agree on: the kind, the path (as
/// string keys), and the description.
func errorSummary(_ error: any Error) -> String {
    func path(_ keys: [any CodingKey]) -> String { keys.map(\.stringValue).joined(separator: "/") }
    switch error {
    case DecodingError.typeMismatch(let type, let context):
        return "typeMismatch(\(type)) at /\(path(context.codingPath)): \(context.debugDescription)"
    case DecodingError.valueNotFound(let type, let context):
        return "valueNotFound(\(type)) at /\(path(context.codingPath)): \(context.debugDescription)"
    case DecodingError.keyNotFound(let key, let context):
        return "keyNotFound(\(key.stringValue)) at /\(path(context.codingPath)): \(context.debugDescription)"
    case DecodingError.dataCorrupted(let context):
        // A number that does not fit: JSONDecoder says only that the data is not valid JSON
        // (at the top level); JSONValueDecoder names the number and its path.
        if context.debugDescription == "The given data was not valid JSON." && context.codingPath.isEmpty
            || context.debugDescription.hasPrefix("Number ") && context.debugDescription.contains("does not fit in")
        {
            return "dataCorrupted(number does not fit)"
        }
        return "dataCorrupted at /\(path(context.codingPath)): \(context.debugDescription)"
    case EncodingError.invalidValue(_, let context):
        return "invalidValue at /\(path(context.codingPath)): \(context.debugDescription)"
    default:
        return "\(type(of: error)): \(error)"
    }
}

/// The outcome of an operation, comparable across implementations.
enum Outcome<Value: Equatable>: Equatable, CustomStringConvertible {
    case value(Value)
    case failure(String)

    init(_ body: () throws -> Value) {
        do { self = .value(try body()) } catch { self = .failure(errorSummary(error)) }
    }

    var description: String {
        switch self {
        case .value(let value): "value \(value)"
        case .failure(let summary): "error \(summary)"
        }
    }
}

/// Every path into a value, with the value there.
func allPaths(_ value: JSONValue, prefix: [JSONPathStep] = []) -> [[JSONPathStep]] {
    var paths: [[JSONPathStep]] = [prefix]
    switch value {
    case .array(let items):
        for (index, item) in items.enumerated() { paths += allPaths(item, prefix: prefix + [.index(index)]) }
    case .object(let members):
        for (key, member) in members.sorted(by: { $0.key < $1.key }) { paths += allPaths(member, prefix: prefix + [.key(key)]) }
    default:
        break
    }
    return paths
}

/// `value` with the member at `path` replaced (`nil` removes an object member).
func replacing(_ path: ArraySlice<JSONPathStep>, in value: JSONValue, with replacement: JSONValue?) -> JSONValue {
    guard let step = path.first else { return replacement ?? .null }
    switch (step, value) {
    case (.key(let key), .object(var members)):
        if path.count == 1 {
            members[key] = replacement
        } else if let member = members[key] {
            members[key] = replacing(path.dropFirst(), in: member, with: replacement)
        }
        return .object(members)
    case (.index(let index), .array(var items)) where items.indices.contains(index):
        items[index] = replacing(path.dropFirst(), in: items[index], with: replacement ?? .null)
        return .array(items)
    default:
        return value
    }
}
