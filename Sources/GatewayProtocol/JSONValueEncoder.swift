import Foundation

/// An `Encoder` that builds a `JSONValue` directly, with the observable behaviour of encoding with
/// Foundation's `JSONEncoder` (default strategies) and decoding the text back into a `JSONValue`,
/// which is what `JSONValue(encoding:)` used to do:
///
/// - numbers come out as that round trip makes them (`1.0` → `.int(1)`, `UInt64.max` → `.double`,
///   see `JSONNumber`); a non-finite `Double` or `Float` throws `EncodingError.invalidValue`
///   ("Unable to encode Double.nan directly in JSON.") with the path to it;
/// - `Date` defers to its own `Encodable` conformance (a `Double` of seconds since 2001),
///   `Data` is a base64 string, `URL` its `absoluteString`, `Decimal` its number;
/// - a value that encodes nothing is `{}`; at the top level it throws
///   `EncodingError.invalidValue` ("Top-level T did not encode any values.");
/// - containers nested 512 deep throw `EncodingError.invalidValue` ("Unable to encode the given
///   top-level value to JSON."), as `JSONEncoder`'s writer does;
/// - keyed containers keep the last value per key, a nested container for a key that already
///   holds an object continues that object, and `superEncoder()` writes its value when released.
///
/// Where `JSONEncoder` stops the process on an `Encodable` implementation error (a second value
/// through one single-value container, a keyed and an unkeyed container for the same position),
/// this encoder keeps the latest container or value instead. Error paths include the keys of
/// nested containers (`JSONEncoder` leaves those out).
///
/// Behaviour read in swiftlang/swift-foundation
/// Sources/FoundationEssentials/JSON/JSONEncoder.swift@0506e469fe003a012f8acf05a2885f6e5ea4efed and
/// checked against the toolchain's `JSONEncoder` by `JSONCodableEquivalenceTests`.
final class JSONValueEncoder: Encoder {
    fileprivate var single: JSONValue?
    fileprivate var object: JSONObjectBox?
    fileprivate var array: JSONArrayBox?

    private let parent: JSONValueEncoder?
    /// The path from the parent encoder to the container that created this encoder.
    private let parentPath: JSONCodingPath
    /// This encoder's own step below that container.
    private let step: Step
    private let writeBack: WriteBack?

    enum Step {
        case none
        case key(any CodingKey)
        case index(Int)
    }

    enum WriteBack {
        case object(JSONObjectBox, String)
        case array(JSONArrayBox, Int)
    }

    init(parent: JSONValueEncoder? = nil, parentPath: JSONCodingPath = .root, step: Step = .none, writeBack: WriteBack? = nil) {
        self.parent = parent
        self.parentPath = parentPath
        self.step = step
        self.writeBack = writeBack
    }

    deinit {
        // A super encoder hands its value to the container that made it when it is released, as
        // JSONEncoder's referencing encoder does.
        guard let writeBack else { return }
        let value = takeValue() ?? .object([:])
        switch writeBack {
        case .object(let box, let key): box.set(value, for: key)
        case .array(let box, let index): box.insert(value, at: index)
        }
    }

    var codingPath: [any CodingKey] {
        var path = parent?.codingPath ?? []
        path += parentPath.keys
        switch step {
        case .none: break
        case .key(let key): path.append(key)
        case .index(let index): path.append(JSONCodingKey(index: index))
        }
        return path
    }

    func codingPath(adding relative: JSONCodingPath, _ last: Step = .none) -> [any CodingKey] {
        var path = codingPath + relative.keys
        switch last {
        case .none: break
        case .key(let key): path.append(key)
        case .index(let index): path.append(JSONCodingKey(index: index))
        }
        return path
    }

    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Encodes a top-level value.
    static func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        let encoder = JSONValueEncoder()
        guard let result = try encoder.boxTopLevel(value) else {
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: [], debugDescription: "Top-level \(T.self) did not encode any values."))
        }
        guard !result.nestingExceeds(JSONNumber.foundationWriteDepth - 1) else {
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: [], debugDescription: "Unable to encode the given top-level value to JSON."))
        }
        return result
    }

    func takeValue() -> JSONValue? {
        if let object {
            self.object = nil
            return object.value
        }
        if let array {
            self.array = nil
            return array.value
        }
        defer { single = nil }
        return single
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if let object {
            return KeyedEncodingContainer(JSONKeyedEncodingContainer<Key>(encoder: self, box: object, path: .root))
        }
        let box = JSONObjectBox()
        if case .object(let members)? = single { box.members = members }
        single = nil
        array = nil
        object = box
        return KeyedEncodingContainer(JSONKeyedEncodingContainer<Key>(encoder: self, box: box, path: .root))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if let array {
            return JSONUnkeyedEncodingContainer(encoder: self, box: array, path: .root)
        }
        let box = JSONArrayBox()
        if case .array(let items)? = single { box.items = items }
        single = nil
        object = nil
        array = box
        return JSONUnkeyedEncodingContainer(encoder: self, box: box, path: .root)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: Boxing

    /// The value of a special type (one `JSONEncoder` treats specially, or that needs no encoder
    /// of its own), or `nil` for any other type.
    fileprivate func specialValue<T: Encodable>(_ value: T, path: () -> [any CodingKey]) throws -> JSONValue? {
        if T.self == JSONValue.self, let json = value as? JSONValue { return try Self.normalized(json, path: path) }
        if T.self == String.self, let string = value as? String { return .string(string) }
        if T.self == Int.self, let integer = value as? Int { return .int(Int64(integer)) }
        if T.self == Bool.self, let flag = value as? Bool { return .bool(flag) }
        if T.self == Double.self, let double = value as? Double { return try Self.number(double, path: path) }
        if T.self == Int64.self, let integer = value as? Int64 { return .int(integer) }
        if T.self == [String].self, let strings = value as? [String] { return .array(strings.map(JSONValue.string)) }
        if T.self == [JSONValue].self, let items = value as? [JSONValue] {
            return try Self.normalized(.array(items), path: path)
        }
        if T.self == [String: JSONValue].self, let members = value as? [String: JSONValue] {
            return try Self.normalized(.object(members), path: path)
        }
        if T.self == Data.self, let data = value as? Data { return .string(data.base64EncodedString()) }
        if T.self == URL.self, let url = value as? URL { return .string(url.absoluteString) }
        if T.self == Decimal.self, let decimal = value as? Decimal {
            guard !decimal.isNaN else {
                throw EncodingError.invalidValue(decimal, EncodingError.Context(
                    codingPath: path(), debugDescription: "Unable to encode Decimal.nan directly in JSON."))
            }
            guard let number = JSONNumber.value(ofNumberText: decimal.description) else {
                throw EncodingError.invalidValue(decimal, EncodingError.Context(
                    codingPath: path(), debugDescription: "Unable to encode Decimal \(decimal) directly in JSON."))
            }
            return number
        }
        return nil
    }

    /// A value below one of this encoder's containers.
    fileprivate func box<T: Encodable>(_ value: T, below relative: JSONCodingPath, _ step: Step) throws -> JSONValue {
        if let special = try specialValue(value, path: { self.codingPath(adding: relative, step) }) { return special }
        let encoder = JSONValueEncoder(parent: self, parentPath: relative, step: step)
        try value.encode(to: encoder)
        return encoder.takeValue() ?? .object([:])
    }

    /// A value encoded through this encoder itself (top level, or a single-value container).
    fileprivate func boxTopLevel<T: Encodable>(_ value: T) throws -> JSONValue? {
        if let special = try specialValue(value, path: { self.codingPath }) { return special }
        try value.encode(to: self)
        return takeValue()
    }

    // MARK: Numbers

    static func number(_ value: Double, path: () -> [any CodingKey]) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: path(), debugDescription: "Unable to encode Double.\(value) directly in JSON."))
        }
        return JSONNumber.value(of: value)
    }

    static func number(_ value: Float, path: () -> [any CodingKey]) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: path(), debugDescription: "Unable to encode Float.\(value) directly in JSON."))
        }
        return JSONNumber.value(ofNumberText: JSONNumber.text(value)) ?? .double(Double(value))
    }

    static func number<T: FixedWidthInteger>(_ value: T) -> JSONValue {
        if let integer = Int64(exactly: value) { return .int(integer) }
        return JSONNumber.value(ofNumberText: String(value)) ?? .double(Double(value))
    }

    /// A `JSONValue` as encoding it with `JSONEncoder` and decoding the text back makes it:
    /// doubles normalised (`JSONNumber.value(of:)`), a non-finite one an error at its path.
    static func normalized(_ value: JSONValue, path: () -> [any CodingKey]) throws -> JSONValue {
        var steps: [JSONPathStep] = []
        do {
            return try normalizedNumbers(value, steps: &steps) ?? value
        } catch {
            // `steps` still holds the path to the double that threw.
            throw EncodingError.invalidValue(error.value, EncodingError.Context(
                codingPath: path() + steps.map(\.codingKey),
                debugDescription: "Unable to encode Double.\(error.value) directly in JSON."))
        }
    }

    private struct NonFiniteDouble: Error {
        var value: Double
    }

    /// The value with its doubles normalised, or `nil` when nothing changes.
    private static func normalizedNumbers(_ value: JSONValue, steps: inout [JSONPathStep]) throws(NonFiniteDouble) -> JSONValue? {
        switch value {
        case .double(let double):
            guard double.isFinite else { throw NonFiniteDouble(value: double) }
            let number = JSONNumber.value(of: double)
            if case .double = number { return nil }
            return number
        case .array(let items):
            var changed: [JSONValue]?
            for (index, item) in items.enumerated() {
                steps.append(.index(index))
                if let replacement = try normalizedNumbers(item, steps: &steps) {
                    if changed == nil { changed = items }
                    changed?[index] = replacement
                }
                steps.removeLast()
            }
            return changed.map(JSONValue.array)
        case .object(let members):
            var changed: [String: JSONValue]?
            for (key, member) in members {
                steps.append(.key(key))
                if let replacement = try normalizedNumbers(member, steps: &steps) {
                    if changed == nil { changed = members }
                    changed?[key] = replacement
                }
                steps.removeLast()
            }
            return changed.map(JSONValue.object)
        default:
            return nil
        }
    }
}

// MARK: - Storage

/// An object under construction; nested containers stay boxes until the value is taken.
final class JSONObjectBox {
    var members: [String: JSONValue] = [:]
    private var nested: [String: JSONNestedBox] = [:]

    func set(_ value: JSONValue, for key: String) {
        members[key] = value
        if !nested.isEmpty { nested[key] = nil }
    }

    func nestedObject(for key: String) -> JSONObjectBox {
        if case .object(let box)? = nested[key] { return box }
        let box = JSONObjectBox()
        // JSONEncoder continues an object already encoded for the key.
        if case .object(let existing)? = members.removeValue(forKey: key) { box.members = existing }
        nested[key] = .object(box)
        return box
    }

    func nestedArray(for key: String) -> JSONArrayBox {
        if case .array(let box)? = nested[key] { return box }
        let box = JSONArrayBox()
        if case .array(let existing)? = members.removeValue(forKey: key) { box.items = existing }
        nested[key] = .array(box)
        return box
    }

    var value: JSONValue {
        if nested.isEmpty { return .object(members) }
        var result = members
        for (key, box) in nested { result[key] = box.value }
        return .object(result)
    }
}

/// An array under construction; nested containers hold a placeholder until the value is taken.
final class JSONArrayBox {
    var items: [JSONValue] = []
    private var nested: [(index: Int, box: JSONNestedBox)] = []

    var count: Int { items.count }

    func append(_ value: JSONValue) { items.append(value) }

    func appendNested(_ box: JSONNestedBox) {
        nested.append((items.count, box))
        items.append(.null)
    }

    func insert(_ value: JSONValue, at index: Int) {
        let position = min(index, items.count)
        items.insert(value, at: position)
        for slot in nested.indices where nested[slot].index >= position { nested[slot].index += 1 }
    }

    var value: JSONValue {
        if nested.isEmpty { return .array(items) }
        var result = items
        for (index, box) in nested { result[index] = box.value }
        return .array(result)
    }
}

enum JSONNestedBox {
    case object(JSONObjectBox)
    case array(JSONArrayBox)

    var value: JSONValue {
        switch self {
        case .object(let box): box.value
        case .array(let box): box.value
        }
    }
}

// MARK: - Containers

struct JSONKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: JSONValueEncoder
    let box: JSONObjectBox
    /// The path from the encoder to this container.
    let path: JSONCodingPath

    var codingPath: [any CodingKey] { encoder.codingPath(adding: path) }

    mutating func encodeNil(forKey key: Key) throws { box.set(.null, for: key.stringValue) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { box.set(.bool(value), for: key.stringValue) }
    mutating func encode(_ value: String, forKey key: Key) throws { box.set(.string(value), for: key.stringValue) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        box.set(try JSONValueEncoder.number(value, path: { encoder.codingPath(adding: path, .key(key)) }), for: key.stringValue)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        box.set(try JSONValueEncoder.number(value, path: { encoder.codingPath(adding: path, .key(key)) }), for: key.stringValue)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { box.set(.int(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { box.set(.int(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { box.set(.int(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { box.set(.int(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { box.set(.int(value), for: key.stringValue) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128, forKey key: Key) throws { box.set(JSONValueEncoder.number(value), for: key.stringValue) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { box.set(JSONValueEncoder.number(value), for: key.stringValue) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { box.set(.int(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { box.set(.int(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { box.set(.int(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { box.set(JSONValueEncoder.number(value), for: key.stringValue) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128, forKey key: Key) throws { box.set(JSONValueEncoder.number(value), for: key.stringValue) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        box.set(try encoder.box(value, below: path, .key(key)), for: key.stringValue)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = box.nestedObject(for: key.stringValue)
        return KeyedEncodingContainer(JSONKeyedEncodingContainer<NestedKey>(encoder: encoder, box: nested, path: path.appending(key)))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = box.nestedArray(for: key.stringValue)
        return JSONUnkeyedEncodingContainer(encoder: encoder, box: nested, path: path.appending(key))
    }

    mutating func superEncoder() -> any Encoder {
        JSONValueEncoder(parent: encoder, parentPath: path, step: .key(JSONCodingKey.superKey),
                         writeBack: .object(box, JSONCodingKey.superKey.stringValue))
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        JSONValueEncoder(parent: encoder, parentPath: path, step: .key(key), writeBack: .object(box, key.stringValue))
    }
}

struct JSONUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let encoder: JSONValueEncoder
    let box: JSONArrayBox
    let path: JSONCodingPath

    var codingPath: [any CodingKey] { encoder.codingPath(adding: path) }
    var count: Int { box.count }

    mutating func encodeNil() throws { box.append(.null) }
    mutating func encode(_ value: Bool) throws { box.append(.bool(value)) }
    mutating func encode(_ value: String) throws { box.append(.string(value)) }
    mutating func encode(_ value: Double) throws {
        let index = box.count
        box.append(try JSONValueEncoder.number(value, path: { encoder.codingPath(adding: path, .index(index)) }))
    }
    mutating func encode(_ value: Float) throws {
        let index = box.count
        box.append(try JSONValueEncoder.number(value, path: { encoder.codingPath(adding: path, .index(index)) }))
    }
    mutating func encode(_ value: Int) throws { box.append(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { box.append(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { box.append(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { box.append(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { box.append(.int(value)) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws { box.append(JSONValueEncoder.number(value)) }
    mutating func encode(_ value: UInt) throws { box.append(JSONValueEncoder.number(value)) }
    mutating func encode(_ value: UInt8) throws { box.append(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { box.append(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { box.append(.int(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { box.append(JSONValueEncoder.number(value)) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws { box.append(JSONValueEncoder.number(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        box.append(try encoder.box(value, below: path, .index(box.count)))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let index = box.count
        let nested = JSONObjectBox()
        box.appendNested(.object(nested))
        return KeyedEncodingContainer(JSONKeyedEncodingContainer<NestedKey>(encoder: encoder, box: nested, path: path.appending(index: index)))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let index = box.count
        let nested = JSONArrayBox()
        box.appendNested(.array(nested))
        return JSONUnkeyedEncodingContainer(encoder: encoder, box: nested, path: path.appending(index: index))
    }

    mutating func superEncoder() -> any Encoder {
        let index = box.count
        return JSONValueEncoder(parent: encoder, parentPath: path, step: .index(index), writeBack: .array(box, index))
    }
}

extension JSONValueEncoder: SingleValueEncodingContainer {
    func encodeNil() throws { single = .null }
    func encode(_ value: Bool) throws { single = .bool(value) }
    func encode(_ value: String) throws { single = .string(value) }
    func encode(_ value: Double) throws { single = try Self.number(value, path: { self.codingPath }) }
    func encode(_ value: Float) throws { single = try Self.number(value, path: { self.codingPath }) }
    func encode(_ value: Int) throws { single = .int(Int64(value)) }
    func encode(_ value: Int8) throws { single = .int(Int64(value)) }
    func encode(_ value: Int16) throws { single = .int(Int64(value)) }
    func encode(_ value: Int32) throws { single = .int(Int64(value)) }
    func encode(_ value: Int64) throws { single = .int(value) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func encode(_ value: Int128) throws { single = Self.number(value) }
    func encode(_ value: UInt) throws { single = Self.number(value) }
    func encode(_ value: UInt8) throws { single = .int(Int64(value)) }
    func encode(_ value: UInt16) throws { single = .int(Int64(value)) }
    func encode(_ value: UInt32) throws { single = .int(Int64(value)) }
    func encode(_ value: UInt64) throws { single = Self.number(value) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func encode(_ value: UInt128) throws { single = Self.number(value) }

    func encode<T: Encodable>(_ value: T) throws {
        single = try boxTopLevel(value) ?? .object([:])
    }
}
