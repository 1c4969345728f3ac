import Foundation

/// A JSON document of any shape, for the open-ended parts of the protocol (`params`, `payload`,
/// `details`), read and written as JavaScript's `JSON.parse` and `JSON.stringify` read and write
/// it (the real Gateway's functions; docs/fidelity.md, "JSON").
///
/// Every JSON number is a JavaScript number (an IEEE double). Whole numbers up to 2^53 in
/// magnitude, which a double holds exactly, are `.int`, so that values such as milliseconds and
/// `seq` are integers to Swift code; `parse(_:)` makes every other number `.double`
/// (`JSONValue.number(_:)`).
public enum JSONValue: Sendable, Hashable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A whole number. Parsed ones are at most 2^53 in magnitude; one built in code may be larger
    /// and is then written in full, a value JavaScript would round.
    case int(Int64)
    /// Any other number: a fraction, a magnitude beyond 2^53, or a non-finite value (written as
    /// `null`, as `JSON.stringify` writes it).
    case double(Double)
    /// A string of well-formed Unicode (every string a Swift `String` can hold).
    case string(String)
    /// A string holding at least one lone UTF-16 surrogate, which a JavaScript string can hold
    /// and a Swift `String` cannot (`"\ud800"` parsed). `JSONValue.string(utf16:)` makes
    /// `.string` of well-formed code units, so each JavaScript string has one representation.
    case illFormedString(IllFormedString)
    /// An array.
    case array([JSONValue])
    /// An object. Member order is not kept (a repeated key keeps its last value, as in
    /// JavaScript); encoding sorts members by key for reproducible output. Keys are Swift
    /// strings: parsing keeps a lone surrogate in a key as U+FFFD.
    case object([String: JSONValue])
}

extension JSONValue: Codable {
    /// Decodes any JSON value. An integer that fits `Int64` stays exact; any other number is
    /// `JSONValue.number(_:)` of its `Double`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = JSONValue.number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a JSON value")
        }
    }

    /// Encodes the value; integers stay integers; an ill-formed string is encoded well-formed
    /// (each lone surrogate as U+FFFD), since an `Encoder` takes only a `String`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .illFormedString(let value): try container.encode(value.wellFormed)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// Creates `null`.
    public init(nilLiteral: ()) { self = .null }
    /// Creates a boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// Creates an integer.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// Creates a floating-point number.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// Creates a string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// Creates an array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// Creates an object; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue {
    /// A string that holds at least one lone UTF-16 surrogate: its UTF-16 code units, as a
    /// JavaScript string holds them. `JSONValue.encoded()` writes each lone surrogate as
    /// `JSON.stringify` does, as the escape `\udxxx`.
    public struct IllFormedString: Sendable, Hashable, CustomStringConvertible {
        /// The UTF-16 code units (at least one of them a lone surrogate).
        public let utf16: [UInt16]

        /// The string of `utf16`, or `nil` when the code units are well-formed UTF-16 (a
        /// `String` holds those: `.string`).
        public init?(utf16: some Sequence<UInt16>) {
            let units = Array(utf16)
            guard Self.hasLoneSurrogate(units) else { return nil }
            self.utf16 = units
        }

        /// The string with each lone surrogate replaced by U+FFFD (what a WebSocket or
        /// `TextEncoder` makes of it when it is sent on as UTF-8).
        public var wellFormed: String { String(decoding: utf16, as: UTF16.self) }

        /// `wellFormed`.
        public var description: String { wellFormed }

        /// Whether `units` hold a surrogate that is not half of a pair.
        static func hasLoneSurrogate(_ units: [UInt16]) -> Bool {
            var index = 0
            while index < units.count {
                guard let length = scalarLength(at: index, in: units) else { return true }
                index += length
            }
            return false
        }

        /// How many code units the scalar at `index` takes (1, or 2 for a surrogate pair), or
        /// `nil` when the unit there is a lone surrogate.
        static func scalarLength(at index: Int, in units: [UInt16]) -> Int? {
            let unit = units[index]
            if UTF16.isLeadSurrogate(unit) {
                return index + 1 < units.count && UTF16.isTrailSurrogate(units[index + 1]) ? 2 : nil
            }
            return UTF16.isTrailSurrogate(unit) ? nil : 1
        }
    }

    /// The string of UTF-16 code units, as JavaScript holds strings: `.string` when they are
    /// well-formed, `.illFormedString` when they hold a lone surrogate.
    public static func string(utf16: some Sequence<UInt16>) -> JSONValue {
        let units = Array(utf16)
        if let illFormed = IllFormedString(utf16: units) { return .illFormedString(illFormed) }
        return .string(String(decoding: units, as: UTF16.self))
    }

    /// The string, when this is a string; an ill-formed one with each lone surrogate as U+FFFD
    /// (`IllFormedString.wellFormed`).
    public var stringValue: String? {
        switch self {
        case .string(let v): v
        case .illFormedString(let v): v.wellFormed
        default: nil
        }
    }

    /// The UTF-16 code units of a string, lone surrogates kept, when this is a string.
    public var utf16Value: [UInt16]? {
        switch self {
        case .string(let v): Array(v.utf16)
        case .illFormedString(let v): v.utf16
        default: nil
        }
    }
    /// The boolean, when this is a boolean.
    public var boolValue: Bool? { if case .bool(let v) = self { v } else { nil } }
    /// The array, when this is an array.
    public var arrayValue: [JSONValue]? { if case .array(let v) = self { v } else { nil } }
    /// The members, when this is an object.
    public var objectValue: [String: JSONValue]? { if case .object(let v) = self { v } else { nil } }
    /// `true` for `null`.
    public var isNull: Bool { self == .null }

    /// The integer, when this is an integer or a floating-point number with no fractional part
    /// (clients may send `1767225600000.0`).
    public var int64Value: Int64? {
        switch self {
        case .int(let v): return v
        case .double(let v):
            guard v.isFinite, v.rounded() == v, abs(v) < 9.2e18 else { return nil }
            return Int64(v)
        default: return nil
        }
    }

    /// The number as a `Double`, for integers and floating-point numbers.
    public var doubleValue: Double? {
        switch self {
        case .int(let v): Double(v)
        case .double(let v): v
        default: nil
        }
    }

    /// The member `key` of an object, or `nil` for a missing key or a non-object.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// Decodes a JSON document from bytes.
    ///
    /// Accepts what JavaScript's `JSON.parse` accepts (see `parse(_:)`, which does the work).
    /// - Throws: `DecodingError.dataCorrupted` when `data` is not JSON; its `underlyingError` is
    ///   the `JSONValue.ParseError` (`.tooDeep` for nesting deeper than `maximumParseDepth`).
    public init(parsing data: Data) throws {
        do {
            self = try JSONValue.parse(data)
        } catch {
            throw error.decodingError
        }
    }

    /// Decodes a JSON document from a string (as used by `paramsJSON` and `payloadJSON`).
    /// - Throws: `DecodingError.dataCorrupted` when `text` is not JSON, as for `Data`.
    public init(parsing text: String) throws {
        do {
            self = try JSONValue.parse(text)
        } catch {
            throw error.decodingError
        }
    }

    /// The compact JSON encoding with sorted keys.
    ///
    /// Byte for byte what JavaScript's `JSON.stringify` writes for the same value, except that
    /// object members are sorted by the UTF-8 bytes of their keys: numbers as
    /// Number.prototype.toString writes them (`1e+21`, `0.000001`, `1e-7`), non-finite ones as
    /// `null`, strings with only `"`, `\` and control characters escaped. A document with
    /// containers nested deeper than `maximumParseDepth` is `null` as a whole.
    public func encoded() -> Data {
        Data(serializedBytes())
    }

    /// The compact JSON text with sorted keys.
    public var jsonString: String { String(decoding: serializedBytes(), as: UTF8.self) }

    /// Converts any `Encodable` value into a `JSONValue`: the value `JSONEncoder` would encode,
    /// read back as a `JSONValue` (so `1.0` becomes `.int(1)`), built without the text.
    /// - Throws: `EncodingError` when `value` cannot be encoded (a non-finite `Double`, nesting
    ///   512 deep, a top-level value that encodes nothing), or what `value`'s `encode(to:)` throws.
    public init<T: Encodable>(encoding value: T) throws {
        self = try JSONValueEncoder.encode(value)
    }

    /// Decodes this JSON value as `T`, as `JSONDecoder` decodes its `encoded()` text.
    /// - Throws: `DecodingError` when the shape does not match `T`.
    public func decode<T: Decodable>(as type: T.Type = T.self) throws -> T {
        try JSONValueDecoder.decode(T.self, from: self)
    }
}

extension JSONValue.ParseError {
    /// The error `JSONValue(parsing:)` throws: `dataCorrupted` at the top level, as
    /// `JSONDecoder` threw it, with this error underneath.
    var decodingError: DecodingError {
        DecodingError.dataCorrupted(DecodingError.Context(
            codingPath: [], debugDescription: "The given data was not valid JSON: \(description).", underlyingError: self))
    }
}

/// Shared, configured JSON coders.
package enum JSONCoding {
    /// Compact output with sorted keys and unescaped slashes: reproducible, and byte-identical
    /// for equal values.
    package static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    // The Foundation paths that `JSONValue` used before it had its own parser, serializer,
    // encoder and decoder. They stay as the reference that the Codable bridges' tests compare
    // against, and as JSONBench's baseline. (The parser and the writer now follow JavaScript
    // instead; Node.js is their reference.)

    /// What `JSONValue(parsing:)` did before it followed `JSON.parse`: `JSONDecoder` and
    /// `JSONValue.init(from:)`.
    package static func foundationParse(_ data: Data) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// What `encoded()` wrote before it followed `JSON.stringify`: `JSONEncoder`, non-finite
    /// doubles as `null`.
    package static func foundationEncoded(_ value: JSONValue) -> Data {
        (try? encoder.encode(value)) ?? (try? encoder.encode(value.replacingNonFinite())) ?? Data("null".utf8)
    }

    /// `JSONValue(encoding:)` through `JSONEncoder` and back through `JSONDecoder`.
    package static func foundationValue<T: Encodable>(encoding value: T) throws -> JSONValue {
        let data = try encoder.encode(value)
        return try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// `decode(as:)` through the `encoded()` text and `JSONDecoder`.
    package static func foundationDecode<T: Decodable>(_ value: JSONValue, as type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: foundationEncoded(value))
    }
}

extension JSONValue {
    fileprivate func replacingNonFinite() -> JSONValue {
        switch self {
        case .double(let v) where !v.isFinite: return .null
        case .array(let items): return .array(items.map { $0.replacingNonFinite() })
        case .object(let members): return .object(members.mapValues { $0.replacingNonFinite() })
        default: return self
        }
    }
}
