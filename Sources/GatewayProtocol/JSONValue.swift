import Foundation

/// A JSON document of any shape, for the open-ended parts of the protocol (`params`, `payload`,
/// `details`).
///
/// Integers and floating-point numbers are kept apart so that values such as milliseconds and
/// `seq` are always encoded as JSON integers (`1767225600000`, never `1.7672256e12`).
public enum JSONValue: Sendable, Hashable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number without a fractional part that fits in 64 bits.
    case int(Int64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object. Key order is not significant; encoding sorts keys for reproducible output.
    case object([String: JSONValue])
}

extension JSONValue: Codable {
    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
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

    /// Encodes the value; integers stay integers.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
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
    /// The string, when this is a string.
    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }
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
    /// Accepts what Foundation's `JSONDecoder` accepts (see `parse(_:)`, which does the work).
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
    /// Byte for byte what Foundation's `JSONEncoder` writes with `.sortedKeys` and
    /// `.withoutEscapingSlashes`. Non-finite doubles, which have no JSON form, are written as
    /// `null`, which is what JavaScript's JSON.stringify does; a document with containers nested
    /// 512 deep, which `JSONEncoder` refuses to write, is `null` as a whole.
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
        if JSONCoding.codableThroughText {
            self = try JSONValue.parse(JSONCoding.encoder.encode(value))
        } else {
            self = try JSONValueEncoder.encode(value)
        }
    }

    /// Decodes this JSON value as `T`, as `JSONDecoder` decodes its `encoded()` text.
    /// - Throws: `DecodingError` when the shape does not match `T`.
    public func decode<T: Decodable>(as type: T.Type = T.self) throws -> T {
        if JSONCoding.codableThroughText {
            return try JSONDecoder().decode(T.self, from: Data(serializedBytes()))
        }
        return try JSONValueDecoder.decode(T.self, from: self)
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
    /// BENCHMARK ONLY (temporary): `OPENCLAW_JSON_CODABLE=text` routes the Codable bridges through Foundation.
    static let codableThroughText = ProcessInfo.processInfo.environment["OPENCLAW_JSON_CODABLE"] == "text"

    /// Compact output with sorted keys and unescaped slashes: reproducible, and byte-identical
    /// for equal values.
    package static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    // The Foundation paths that `JSONValue` used before it had its own parser, serializer,
    // encoder and decoder. They stay as the reference that the tests compare against.

    /// `JSONValue(parsing:)` through `JSONDecoder` and `JSONValue.init(from:)`.
    package static func foundationParse(_ data: Data) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// `encoded()` through `JSONEncoder`, non-finite doubles as `null`.
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
