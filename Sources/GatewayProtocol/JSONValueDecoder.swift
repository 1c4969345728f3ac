import Foundation

/// A `Decoder` that reads any `Decodable` from a `JSONValue`, with the observable behaviour of
/// writing the value as `encoded()` text and decoding that with Foundation's `JSONDecoder`
/// (default strategies), which is what `JSONValue.decode(as:)` used to do:
///
/// - a non-finite double reads as `null` (`encoded()` writes it so), and a value nested too deep
///   for `encoded()` reads as `null` as a whole;
/// - numbers convert as `JSONDecoder` converts the text (see `JSONNumber`): `Int` from `5.0`,
///   not from `5.5`; `Float` from `0.1` rounded from the text;
/// - `Date` defers to its own `Decodable` conformance, `Data` is a base64 string, `URL` a string,
///   `Decimal` a number; an `.illFormedString` reads as its well-formed `String` (each lone
///   surrogate U+FFFD, what `JSONDecoder` makes of the escape);
/// - a repeated key cannot occur (a `JSONValue` object has unique keys);
/// - errors are the `DecodingError`s `JSONDecoder` throws, with the same kinds, paths and
///   descriptions ("No value associated with key …", "Expected to decode Int but found a string
///   instead.", "Cannot get value of type String -- found null value instead", "Unkeyed
///   container is at end."); the exception is a number that does not fit the requested type,
///   which `JSONDecoder` reports as "The given data was not valid JSON." with an empty path and
///   this decoder as `dataCorrupted` at the number's path ("Number 300 does not fit in Int8.").
///
/// Behaviour read in swiftlang/swift-foundation
/// Sources/FoundationEssentials/JSON/JSONDecoder.swift@03154e776cada7050ea4578a191eb0782af7e24b and
/// checked against the toolchain's `JSONDecoder` by `JSONCodableEquivalenceTests`.
final class JSONValueDecoder: Decoder {
    private(set) var value: JSONValue
    private(set) var path: JSONCodingPath

    init(value: JSONValue, path: JSONCodingPath = .root) {
        self.value = value
        self.path = path
    }

    var codingPath: [any CodingKey] { path.keys }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Decodes a top-level value as `JSONValue.decode(as:)` does.
    static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        // `encoded()` writes `null` for a document its writer refuses.
        let root: JSONValue = value.nestingExceeds(JSONNumber.foundationWriteDepth - 1) ? .null : value
        return try JSONValueDecoder(value: root).unwrap(root, as: T.self, at: .root)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        switch value {
        case .object(let members):
            return KeyedDecodingContainer(JSONKeyedDecodingContainer<Key>(decoder: self, members: members, path: path))
        case let other where other.readsAsNull:
            throw DecodingError.valueNotFound([String: Any].self, DecodingError.Context(
                codingPath: codingPath, debugDescription: "Cannot get keyed decoding container -- found null value instead"))
        default:
            throw DecodingError.typeMismatch([String: Any].self, DecodingError.Context(
                codingPath: codingPath,
                debugDescription: "Expected to decode \([String: Any].self) but found \(value.jsonTypeDescription) instead."))
        }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        switch value {
        case .array(let items):
            return JSONUnkeyedDecodingContainer(decoder: self, items: items, path: path)
        case let other where other.readsAsNull:
            throw DecodingError.valueNotFound([Any].self, DecodingError.Context(
                codingPath: codingPath, debugDescription: "Cannot get unkeyed decoding container -- found null value instead"))
        default:
            throw DecodingError.typeMismatch([Any].self, DecodingError.Context(
                codingPath: codingPath,
                debugDescription: "Expected to decode \([Any].self) but found \(value.jsonTypeDescription) instead."))
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    /// Runs `body` with the decoder positioned on `value` at `path`.
    func with<R>(_ value: JSONValue, at path: JSONCodingPath, _ body: () throws -> R) rethrows -> R {
        let savedValue = self.value
        let savedPath = self.path
        self.value = value
        self.path = path
        defer {
            self.value = savedValue
            self.path = savedPath
        }
        return try body()
    }

    /// Decodes `value`, found at `path`, as `T`.
    func unwrap<T: Decodable>(_ value: JSONValue, as type: T.Type, at path: JSONCodingPath) throws -> T {
        let keys = JSONErrorPath(base: path)
        if T.self == JSONValue.self, let result = Self.normalized(value) as? T { return result }
        if T.self == String.self, let result = try Self.string(value, keys) as? T { return result }
        if T.self == Int.self, let result = try Self.integer(value, as: Int.self, keys) as? T { return result }
        if T.self == Bool.self, let result = try Self.bool(value, keys) as? T { return result }
        if T.self == Double.self, let result = try Self.double(value, keys) as? T { return result }
        if T.self == Int64.self, let result = try Self.integer(value, as: Int64.self, keys) as? T { return result }
        if T.self == Date.self {
            try Self.checkNotNull(value, Date.self, keys)
            return try with(value, at: path) { try T(from: self) }
        }
        if T.self == Data.self, let result = try Self.data(value, keys) as? T { return result }
        if T.self == URL.self, let result = try Self.url(value, keys) as? T { return result }
        if T.self == Decimal.self, let result = try Self.decimal(value, keys) as? T { return result }
        return try with(value, at: path) { try T(from: self) }
    }

    // MARK: Scalars

    static func checkNotNull<T>(_ value: JSONValue, _ type: T.Type, _ path: JSONErrorPath) throws {
        if value.readsAsNull {
            throw DecodingError.valueNotFound(type, DecodingError.Context(
                codingPath: path.keys, debugDescription: "Cannot get value of type \(type) -- found null value instead"))
        }
    }

    static func typeMismatch(_ type: Any.Type, _ value: JSONValue, _ path: JSONErrorPath) -> DecodingError {
        DecodingError.typeMismatch(type, DecodingError.Context(
            codingPath: path.keys, debugDescription: "Expected to decode \(type) but found \(value.jsonTypeDescription) instead."))
    }

    static func doesNotFit(_ text: String, _ type: Any.Type, _ path: JSONErrorPath) -> DecodingError {
        DecodingError.dataCorrupted(DecodingError.Context(
            codingPath: path.keys, debugDescription: "Number \(text) does not fit in \(type)."))
    }

    static func bool(_ value: JSONValue, _ path: JSONErrorPath) throws -> Bool {
        guard case .bool(let flag) = value else { throw typeMismatch(Bool.self, value, path) }
        return flag
    }

    static func string(_ value: JSONValue, _ path: JSONErrorPath) throws -> String {
        try checkNotNull(value, String.self, path)
        guard let string = value.stringValue else { throw typeMismatch(String.self, value, path) }
        return string
    }

    static func integer<T: FixedWidthInteger>(_ value: JSONValue, as type: T.Type, _ path: JSONErrorPath) throws -> T {
        try checkNotNull(value, T.self, path)
        switch value {
        case .int(let integer):
            guard let result = T(exactly: integer) else { throw doesNotFit(String(integer), T.self, path) }
            return result
        case .double(let double):
            guard let result = JSONNumber.integer(double, as: T.self) else {
                throw doesNotFit(JSONNumber.text(double), T.self, path)
            }
            return result
        default:
            throw typeMismatch(T.self, value, path)
        }
    }

    static func double(_ value: JSONValue, _ path: JSONErrorPath) throws -> Double {
        try checkNotNull(value, Double.self, path)
        switch value {
        case .int(let integer): return Double(integer)
        case .double(let double): return double
        default: throw typeMismatch(Double.self, value, path)
        }
    }

    static func float(_ value: JSONValue, _ path: JSONErrorPath) throws -> Float {
        try checkNotNull(value, Float.self, path)
        switch value {
        case .int(let integer): return Float(integer)
        case .double(let double):
            guard let result = JSONNumber.float(double) else { throw doesNotFit(JSONNumber.text(double), Float.self, path) }
            return result
        default: throw typeMismatch(Float.self, value, path)
        }
    }

    static func data(_ value: JSONValue, _ path: JSONErrorPath) throws -> Data {
        try checkNotNull(value, Data.self, path)
        guard let string = value.stringValue else { throw typeMismatch(String.self, value, path) }
        guard let data = Data(base64Encoded: string) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: path.keys, debugDescription: "Encountered Data is not valid Base64."))
        }
        return data
    }

    static func url(_ value: JSONValue, _ path: JSONErrorPath) throws -> URL {
        try checkNotNull(value, URL.self, path)
        let string = try self.string(value, path)
        guard let url = URL(string: string) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: path.keys, debugDescription: "Invalid URL string."))
        }
        return url
    }

    static func decimal(_ value: JSONValue, _ path: JSONErrorPath) throws -> Decimal {
        try checkNotNull(value, Decimal.self, path)
        let text: String
        switch value {
        case .int(let integer): text = String(integer)
        case .double(let double): text = JSONNumber.text(double)
        default: throw DecodingError.typeMismatch(Decimal.self, DecodingError.Context(codingPath: path.keys, debugDescription: ""))
        }
        guard let decimal = JSONNumber.decimal(text) else { throw doesNotFit(text, Decimal.self, path) }
        return decimal
    }

    /// A `JSONValue` as `encoded()` text decoded with `JSONDecoder` makes it: non-finite doubles
    /// `null`, the others as `JSONNumber.value(of:)`.
    static func normalized(_ value: JSONValue) -> JSONValue {
        normalizedNumbers(value) ?? value
    }

    /// The value with its doubles normalised, or `nil` when nothing changes.
    private static func normalizedNumbers(_ value: JSONValue) -> JSONValue? {
        switch value {
        case .double(let double):
            guard double.isFinite else { return .null }
            let number = JSONNumber.value(of: double)
            if case .double = number { return nil }
            return number
        case .array(let items):
            var changed: [JSONValue]?
            for (index, item) in items.enumerated() {
                if let replacement = normalizedNumbers(item) {
                    if changed == nil { changed = items }
                    changed?[index] = replacement
                }
            }
            return changed.map(JSONValue.array)
        case .object(let members):
            var changed: [String: JSONValue]?
            for (key, member) in members {
                if let replacement = normalizedNumbers(member) {
                    if changed == nil { changed = members }
                    changed?[key] = replacement
                }
            }
            return changed.map(JSONValue.object)
        default:
            return nil
        }
    }
}

extension JSONValue {
    /// `null`, and non-finite doubles, which `encoded()` writes as `null`.
    var readsAsNull: Bool {
        switch self {
        case .null: true
        case .double(let double): !double.isFinite
        default: false
        }
    }

    /// The name Foundation's `JSONDecoder` gives the type of a value in its messages.
    var jsonTypeDescription: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int: "number"
        case .double(let double): double.isFinite ? "number" : "null"
        case .string, .illFormedString: "a string"
        case .array: "an array"
        case .object: "a dictionary"
        }
    }
}

extension JSONValueDecoder: SingleValueDecodingContainer {
    func decodeNil() -> Bool { value.readsAsNull }
    func decode(_ type: Bool.Type) throws -> Bool { try Self.bool(value, JSONErrorPath(base: path)) }
    func decode(_ type: String.Type) throws -> String { try Self.string(value, JSONErrorPath(base: path)) }
    func decode(_ type: Double.Type) throws -> Double { try Self.double(value, JSONErrorPath(base: path)) }
    func decode(_ type: Float.Type) throws -> Float { try Self.float(value, JSONErrorPath(base: path)) }
    func decode(_ type: Int.Type) throws -> Int { try Self.integer(value, as: type, JSONErrorPath(base: path)) }
    func decode(_ type: Int8.Type) throws -> Int8 { try Self.integer(value, as: type, JSONErrorPath(base: path)) }
    func decode(_ type: Int16.Type) throws -> Int16 { try Self.integer(value, as: type, JSONErrorPath(base: path)) }
    func decode(_ type: Int32.Type) throws -> Int32 { try Self.integer(value, as: type, JSONErrorPath(base: path)) }
    func decode(_ type: Int64.Type) throws -> Int64 { try Self.integer(value, as: type, JSONErrorPath(base: path)) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type) throws -> Int128 { try Self.integer(value, as: type, JSONErrorPath(base: path)) }
    func decode(_ type: UInt.Type) throws -> UInt { try Self.integer(value, as: type, JSONErrorPath(base: path)) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try Self.integer(value, as: type, JSONErrorPath(base: path)) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try Self.integer(value, as: type, JSONErrorPath(base: path)) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try Self.integer(value, as: type, JSONErrorPath(base: path)) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try Self.integer(value, as: type, JSONErrorPath(base: path)) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type) throws -> UInt128 { try Self.integer(value, as: type, JSONErrorPath(base: path)) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unwrap(value, as: type, at: path) }
}

// MARK: - Containers

struct JSONKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: JSONValueDecoder
    let members: [String: JSONValue]
    let path: JSONCodingPath

    var codingPath: [any CodingKey] { path.keys }
    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func member(_ key: Key) throws -> JSONValue {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(
                codingPath: codingPath, debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return value
    }

    /// The member, or `nil` when it is absent or `null` (what `decodeIfPresent` returns `nil` for).
    private func presentMember(_ key: Key) -> JSONValue? {
        guard let value = members[key.stringValue], !value.readsAsNull else { return nil }
        return value
    }

    private func at(_ key: Key) -> JSONErrorPath { JSONErrorPath(base: path, last: .key(key)) }

    func decodeNil(forKey key: Key) throws -> Bool { try member(key).readsAsNull }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try JSONValueDecoder.bool(member(key), at(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try JSONValueDecoder.string(member(key), at(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try JSONValueDecoder.double(member(key), at(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try JSONValueDecoder.float(member(key), at(key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try JSONValueDecoder.integer(member(key), as: type, at(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try JSONValueDecoder.integer(member(key), as: type, at(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try JSONValueDecoder.integer(member(key), as: type, at(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try JSONValueDecoder.integer(member(key), as: type, at(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try JSONValueDecoder.integer(member(key), as: type, at(key)) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try JSONValueDecoder.integer(member(key), as: type, at(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try JSONValueDecoder.integer(member(key), as: type, at(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try JSONValueDecoder.integer(member(key), as: type, at(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try JSONValueDecoder.integer(member(key), as: type, at(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try JSONValueDecoder.integer(member(key), as: type, at(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try JSONValueDecoder.integer(member(key), as: type, at(key)) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try JSONValueDecoder.integer(member(key), as: type, at(key)) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.unwrap(member(key), as: type, at: path.appending(key))
    }

    // The common optionals, without the two extra lookups of the protocol's default.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        // JSONDecoder checks Bool for null itself (it reads no null as a Bool).
        try presentMember(key).map { try JSONValueDecoder.bool($0, at(key)) }
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try presentMember(key).map { try JSONValueDecoder.string($0, at(key)) }
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try presentMember(key).map { try JSONValueDecoder.integer($0, as: type, at(key)) }
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        try presentMember(key).map { try JSONValueDecoder.integer($0, as: type, at(key)) }
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try presentMember(key).map { try JSONValueDecoder.double($0, at(key)) }
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try presentMember(key).map { try decoder.unwrap($0, as: type, at: path.appending(key)) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        let value = try member(key)
        return try decoder.with(value, at: path.appending(key)) { try decoder.container(keyedBy: type) }
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let value = try member(key)
        return try decoder.with(value, at: path.appending(key)) { try decoder.unkeyedContainer() }
    }

    func superDecoder() throws -> any Decoder {
        JSONValueDecoder(value: members[JSONCodingKey.superKey.stringValue] ?? .null, path: path.appending(JSONCodingKey.superKey))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        JSONValueDecoder(value: members[key.stringValue] ?? .null, path: path.appending(key))
    }
}

struct JSONUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let decoder: JSONValueDecoder
    let items: [JSONValue]
    let path: JSONCodingPath
    private(set) var currentIndex = 0

    init(decoder: JSONValueDecoder, items: [JSONValue], path: JSONCodingPath) {
        self.decoder = decoder
        self.items = items
        self.path = path
    }

    var codingPath: [any CodingKey] { path.keys }
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    private var currentKeys: JSONErrorPath { JSONErrorPath(base: path, last: .index(currentIndex)) }

    private func next<T>(_ type: T.Type, _ message: String = "Unkeyed container is at end.") throws -> JSONValue {
        guard currentIndex < items.count else {
            throw DecodingError.valueNotFound(type, DecodingError.Context(
                codingPath: path.appending(index: currentIndex).keys, debugDescription: message))
        }
        return items[currentIndex]
    }

    /// The next element, or `nil` at the end or for `null`; advances in every case (as
    /// JSONDecoder's `decodeIfPresent` does, even at the end).
    private mutating func nextIfPresent() -> JSONValue? {
        defer { currentIndex += 1 }
        guard currentIndex < items.count, !items[currentIndex].readsAsNull else { return nil }
        return items[currentIndex]
    }

    private mutating func scalar<T>(_ type: T.Type, _ read: (JSONValue, JSONErrorPath) throws -> T) throws -> T {
        let value = try next(type)
        let result = try read(value, currentKeys)
        currentIndex += 1
        return result
    }

    private mutating func scalarIfPresent<T>(_ read: (JSONValue, JSONErrorPath) throws -> T) throws -> T? {
        let keys = currentKeys
        guard let value = nextIfPresent() else { return nil }
        return try read(value, keys)
    }

    mutating func decodeNil() throws -> Bool {
        let value = try next(Never.self)
        guard value.readsAsNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try scalar(type, JSONValueDecoder.bool) }
    mutating func decode(_ type: String.Type) throws -> String { try scalar(type, JSONValueDecoder.string) }
    mutating func decode(_ type: Double.Type) throws -> Double { try scalar(type, JSONValueDecoder.double) }
    mutating func decode(_ type: Float.Type) throws -> Float { try scalar(type, JSONValueDecoder.float) }
    mutating func decode(_ type: Int.Type) throws -> Int { try scalar(type) { try JSONValueDecoder.integer($0, as: type, $1) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try scalar(type) { try JSONValueDecoder.integer($0, as: type, $1) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try scalar(type) { try JSONValueDecoder.integer($0, as: type, $1) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try scalar(type) { try JSONValueDecoder.integer($0, as: type, $1) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try scalar(type) { try JSONValueDecoder.integer($0, as: type, $1) } }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try scalar(type) { try JSONValueDecoder.integer($0, as: type, $1) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try scalar(type) { try JSONValueDecoder.integer($0, as: type, $1) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try scalar(type) { try JSONValueDecoder.integer($0, as: type, $1) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try scalar(type) { try JSONValueDecoder.integer($0, as: type, $1) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try scalar(type) { try JSONValueDecoder.integer($0, as: type, $1) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try scalar(type) { try JSONValueDecoder.integer($0, as: type, $1) } }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try scalar(type) { try JSONValueDecoder.integer($0, as: type, $1) } }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let value = try next(type)
        let result = try decoder.unwrap(value, as: type, at: path.appending(index: currentIndex))
        currentIndex += 1
        return result
    }

    mutating func decodeIfPresent(_ type: Bool.Type) throws -> Bool? {
        // JSONDecoder reads a null element as nil here, though `decode(Bool.self)` rejects null.
        try scalarIfPresent(JSONValueDecoder.bool)
    }
    mutating func decodeIfPresent(_ type: String.Type) throws -> String? { try scalarIfPresent(JSONValueDecoder.string) }
    mutating func decodeIfPresent(_ type: Double.Type) throws -> Double? { try scalarIfPresent(JSONValueDecoder.double) }
    mutating func decodeIfPresent(_ type: Float.Type) throws -> Float? { try scalarIfPresent(JSONValueDecoder.float) }
    mutating func decodeIfPresent(_ type: Int.Type) throws -> Int? { try scalarIfPresent { try JSONValueDecoder.integer($0, as: type, $1) } }
    mutating func decodeIfPresent(_ type: Int8.Type) throws -> Int8? { try scalarIfPresent { try JSONValueDecoder.integer($0, as: type, $1) } }
    mutating func decodeIfPresent(_ type: Int16.Type) throws -> Int16? { try scalarIfPresent { try JSONValueDecoder.integer($0, as: type, $1) } }
    mutating func decodeIfPresent(_ type: Int32.Type) throws -> Int32? { try scalarIfPresent { try JSONValueDecoder.integer($0, as: type, $1) } }
    mutating func decodeIfPresent(_ type: Int64.Type) throws -> Int64? { try scalarIfPresent { try JSONValueDecoder.integer($0, as: type, $1) } }
    mutating func decodeIfPresent(_ type: UInt.Type) throws -> UInt? { try scalarIfPresent { try JSONValueDecoder.integer($0, as: type, $1) } }
    mutating func decodeIfPresent(_ type: UInt8.Type) throws -> UInt8? { try scalarIfPresent { try JSONValueDecoder.integer($0, as: type, $1) } }
    mutating func decodeIfPresent(_ type: UInt16.Type) throws -> UInt16? { try scalarIfPresent { try JSONValueDecoder.integer($0, as: type, $1) } }
    mutating func decodeIfPresent(_ type: UInt32.Type) throws -> UInt32? { try scalarIfPresent { try JSONValueDecoder.integer($0, as: type, $1) } }
    mutating func decodeIfPresent(_ type: UInt64.Type) throws -> UInt64? { try scalarIfPresent { try JSONValueDecoder.integer($0, as: type, $1) } }

    mutating func decodeIfPresent<T: Decodable>(_ type: T.Type) throws -> T? {
        let elementPath = path.appending(index: currentIndex)
        guard let value = nextIfPresent() else { return nil }
        return try decoder.unwrap(value, as: type, at: elementPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let value = try next(KeyedDecodingContainer<NestedKey>.self)
        let container = try decoder.with(value, at: path.appending(index: currentIndex)) { try decoder.container(keyedBy: type) }
        currentIndex += 1
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let value = try next((any UnkeyedDecodingContainer).self)
        let container = try decoder.with(value, at: path.appending(index: currentIndex)) { try decoder.unkeyedContainer() }
        currentIndex += 1
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let value = try next((any Decoder).self, "Cannot get superDecoder() -- unkeyed container is at end.")
        let decoder = JSONValueDecoder(value: value, path: path.appending(index: currentIndex))
        currentIndex += 1
        return decoder
    }
}
