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
    /// - Throws: `DecodingError` when `data` is not JSON.
    public init(parsing data: Data) throws {
        self = try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// Decodes a JSON document from a string (as used by `paramsJSON` and `payloadJSON`).
    /// - Throws: `DecodingError` when `text` is not JSON.
    public init(parsing text: String) throws {
        try self.init(parsing: Data(text.utf8))
    }

    /// The compact JSON encoding with sorted keys.
    public func encoded() -> Data {
        // Encoding a JSONValue cannot fail except for non-finite doubles, which have no JSON form;
        // they are written as `null`, which is what JavaScript's JSON.stringify does.
        (try? JSONCoding.encoder.encode(self)) ?? (try? JSONCoding.encoder.encode(self.replacingNonFinite())) ?? Data("null".utf8)
    }

    /// The compact JSON text with sorted keys.
    public var jsonString: String { String(decoding: encoded(), as: UTF8.self) }

    private func replacingNonFinite() -> JSONValue {
        switch self {
        case .double(let v) where !v.isFinite: return .null
        case .array(let items): return .array(items.map { $0.replacingNonFinite() })
        case .object(let members): return .object(members.mapValues { $0.replacingNonFinite() })
        default: return self
        }
    }

    /// Converts any `Encodable` value into a `JSONValue`.
    /// - Throws: `EncodingError` when `value` cannot be encoded.
    public init<T: Encodable>(encoding value: T) throws {
        let data = try JSONCoding.encoder.encode(value)
        self = try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// Decodes this JSON value as `T`.
    /// - Throws: `DecodingError` when the shape does not match `T`.
    public func decode<T: Decodable>(as type: T.Type = T.self) throws -> T {
        try JSONDecoder().decode(T.self, from: encoded())
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
}
