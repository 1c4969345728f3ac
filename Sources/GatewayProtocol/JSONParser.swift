import Foundation

extension JSONValue {
    /// The deepest nesting of arrays and objects that `JSONValue.parse(_:)` accepts.
    ///
    /// JavaScript's `JSON.parse` has no such limit (it fails only when its stack runs out, some
    /// thousands of levels deep); the project keeps this one so that no input can exhaust a stack.
    public static let maximumParseDepth = 512

    /// Why bytes are not a JSON document, and where.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The kind of problem.
        public enum Kind: Sendable, Hashable {
            /// Arrays and objects are nested deeper than `JSONValue.maximumParseDepth`.
            case tooDeep
            /// The document ends early (includes an empty document).
            case unexpectedEnd
            /// A character that JSON does not allow here (includes text after the document, a
            /// trailing comma and a byte-order mark).
            case unexpectedCharacter
            /// A bad escape or an unescaped control character in a string.
            case invalidString
            /// Bytes that are not UTF-8.
            case invalidEncoding
        }

        /// The kind of problem.
        public var kind: Kind
        /// The byte offset of the problem in the input.
        public var offset: Int
        /// A sentence naming the problem and its offset.
        public var description: String

        /// Creates an error.
        public init(kind: Kind, offset: Int, description: String) {
            self.kind = kind
            self.offset = offset
            self.description = description
        }

        /// `true` for `.tooDeep`.
        public var isTooDeep: Bool { kind == .tooDeep }
    }

    /// Parses a JSON document as JavaScript's `JSON.parse` parses the text of a WebSocket text
    /// frame (the real Gateway's reading of every frame).
    ///
    /// - The input is UTF-8 (a WebSocket text frame is); bytes that are not are refused, as the
    ///   Gateway's WebSocket layer refuses such a frame.
    /// - Grammar: ECMA-404 / RFC 8259 exactly: any value at the top level, whitespace (space,
    ///   tab, LF, CR) around it; no trailing comma, no byte-order mark (U+FEFF is not JSON
    ///   whitespace, so `JSON.parse` refuses it).
    /// - A repeated object key keeps its last value.
    /// - A `\u` escape of a lone UTF-16 surrogate is accepted and kept, as `JSON.parse` keeps it:
    ///   a string value holding one is `.illFormedString` (its UTF-16 code units), which
    ///   `encoded()` writes back as `JSON.stringify` does. An object key is a Swift `String`, so
    ///   a lone surrogate in a key becomes U+FFFD. A surrogate pair written as two escapes is the
    ///   one character it encodes.
    /// - A number is a JavaScript number: the IEEE double nearest to the literal (`1e400` is
    ///   infinity, `1e-400` is 0, `9007199254740993` is 9007199254740992), kept as
    ///   `JSONValue.number(_:)` keeps it (`.int` for whole numbers up to 2^53 in magnitude).
    /// - Nesting deeper than `maximumParseDepth` is `.tooDeep`.
    /// - Throws: `ParseError`.
    public static func parse(_ data: Data) throws(ParseError) -> JSONValue {
        let result: Result<JSONValue, ParseError> = data.withUnsafeBytes { raw in
            Result { () throws(ParseError) -> JSONValue in
                var parser = JSONParser(bytes: raw.bindMemory(to: UInt8.self))
                return try parser.parseDocument()
            }
        }
        return try result.get()
    }

    /// Parses a JSON document from text; see `parse(_:)` for `Data`.
    /// - Throws: `ParseError`.
    public static func parse(_ text: String) throws(ParseError) -> JSONValue {
        var text = text
        let result: Result<JSONValue, ParseError> = text.withUTF8 { bytes in
            Result { () throws(ParseError) -> JSONValue in
                var parser = JSONParser(bytes: bytes)
                return try parser.parseDocument()
            }
        }
        return try result.get()
    }
}

/// A recursive-descent JSON parser over UTF-8 bytes that builds `JSONValue`s directly, with the
/// grammar and results of ECMAScript's `JSON.parse` (ECMA-262 §25.5.1; see `JSONValue.parse(_:)`
/// for the rules), checked against Node.js by `JSONDifferentialTests`. Recursion is bounded by
/// `JSONValue.maximumParseDepth`.
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    typealias ParseError = JSONValue.ParseError

    mutating func parseDocument() throws(ParseError) -> JSONValue {
        let value = try parseValue()
        skipWhitespace()
        if index < bytes.count {
            throw error(.unexpectedCharacter, "unexpected \(describe(bytes[index])) after the top-level value")
        }
        return value
    }

    // MARK: Values

    private mutating func parseValue() throws(ParseError) -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw error(.unexpectedEnd, "the document ends where a value was expected") }
        switch bytes[index] {
        case UInt8(ascii: "\""):
            switch try parseString() {
            case .text(let text): return .string(text)
            case .units(let units): return JSONValue.string(utf16: units)
            }
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parseNumber()
        case let byte:
            throw error(.unexpectedCharacter, "unexpected \(describe(byte)) where a value was expected")
        }
    }

    private mutating func enterContainer() throws(ParseError) {
        guard depth < JSONValue.maximumParseDepth else {
            throw error(.tooDeep, "arrays and objects are nested deeper than \(JSONValue.maximumParseDepth) levels")
        }
        depth += 1
    }

    private mutating func parseArray() throws(ParseError) -> JSONValue {
        try enterContainer()
        defer { depth -= 1 }
        index += 1  // [
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array([])
        }
        var items: [JSONValue] = []
        while true {
            items.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw error(.unexpectedEnd, "the document ends inside an array") }
            switch bytes[index] {
            case UInt8(ascii: ","):
                // A value must follow: `JSON.parse` refuses a trailing comma.
                index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(items)
            case let byte:
                throw error(.unexpectedCharacter, "unexpected \(describe(byte)) in an array (expected , or ])")
            }
        }
    }

    private mutating func parseObject() throws(ParseError) -> JSONValue {
        try enterContainer()
        defer { depth -= 1 }
        index += 1  // {
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object([:])
        }
        var members: [String: JSONValue] = [:]
        while true {
            guard index < bytes.count else { throw error(.unexpectedEnd, "the document ends inside an object") }
            guard bytes[index] == UInt8(ascii: "\"") else {
                throw error(.unexpectedCharacter, "unexpected \(describe(bytes[index])) in an object (expected a string key)")
            }
            let key = try parseString().key
            skipWhitespace()
            guard index < bytes.count else { throw error(.unexpectedEnd, "the document ends inside an object") }
            guard bytes[index] == UInt8(ascii: ":") else {
                throw error(.unexpectedCharacter, "unexpected \(describe(bytes[index])) after an object key (expected :)")
            }
            index += 1
            // A repeated key keeps its last value, as in `JSON.parse`.
            members[key] = try parseValue()
            skipWhitespace()
            guard index < bytes.count else { throw error(.unexpectedEnd, "the document ends inside an object") }
            switch bytes[index] {
            case UInt8(ascii: ","):
                // A member must follow: `JSON.parse` refuses a trailing comma.
                index += 1
                skipWhitespace()
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            case let byte:
                throw error(.unexpectedCharacter, "unexpected \(describe(byte)) in an object (expected , or })")
            }
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(ParseError) {
        let count = literal.utf8CodeUnitCount
        let start = literal.utf8Start
        for offset in 0 ..< count {
            guard index + offset < bytes.count else {
                index += offset
                throw error(.unexpectedEnd, "the document ends inside \(literal)")
            }
            guard bytes[index + offset] == start[offset] else {
                let byte = bytes[index + offset]
                index += offset
                throw error(.unexpectedCharacter, "unexpected \(describe(byte)) in \(literal)")
            }
        }
        index += count
    }

    // MARK: Strings

    /// A parsed string: text, or UTF-16 code units when it holds a lone surrogate.
    private enum ParsedString {
        case text(String)
        case units([UInt16])

        /// The string as an object key (a Swift `String`: a lone surrogate becomes U+FFFD).
        var key: String {
            switch self {
            case .text(let text): text
            case .units(let units): String(decoding: units, as: UTF16.self)
            }
        }
    }

    /// A lone surrogate escape: where its code unit goes in the UTF-8 buffer of the string.
    private typealias LoneSurrogate = (offset: Int, unit: UInt16)

    /// Parses a string starting at its opening quote.
    private mutating func parseString() throws(ParseError) -> ParsedString {
        let start = index + 1
        var cursor = start
        // Fast path: no escapes.
        while cursor < bytes.count {
            let byte = bytes[cursor]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            cursor += 1
        }
        guard cursor < bytes.count else {
            index = cursor
            throw error(.unexpectedEnd, "the document ends inside a string")
        }
        if bytes[cursor] == UInt8(ascii: "\"") {
            let run = UnsafeBufferPointer(rebasing: bytes[start ..< cursor])
            guard UTF8Validation.isValid(run) else {
                index = start
                throw error(.invalidEncoding, "a string is not valid UTF-8")
            }
            index = cursor + 1
            return .text(String(decoding: run, as: UTF8.self))
        }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(cursor - start + 16)
        buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start ..< cursor]))
        var lone: [LoneSurrogate] = []
        index = cursor
        while true {
            guard index < bytes.count else { throw error(.unexpectedEnd, "the document ends inside a string") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                let closing = index
                guard UTF8Validation.isValid(buffer) else {
                    index = start
                    throw error(.invalidEncoding, "a string is not valid UTF-8")
                }
                index = closing + 1
                return lone.isEmpty ? .text(String(decoding: buffer, as: UTF8.self)) : .units(Self.units(buffer, lone))
            case UInt8(ascii: "\\"):
                try parseEscape(into: &buffer, lone: &lone)
            case 0 ..< 0x20:
                throw error(.invalidString, "unescaped control character \(describe(byte)) in a string")
            default:
                buffer.append(byte)
                index += 1
            }
        }
    }

    /// The UTF-16 code units of valid UTF-8 `buffer` with each lone surrogate put back at its
    /// offset (an offset between two scalars).
    private static func units(_ buffer: [UInt8], _ lone: [LoneSurrogate]) -> [UInt16] {
        var units: [UInt16] = []
        units.reserveCapacity(buffer.count + lone.count)
        var start = 0
        for surrogate in lone {
            units.append(contentsOf: String(decoding: buffer[start ..< surrogate.offset], as: UTF8.self).utf16)
            units.append(surrogate.unit)
            start = surrogate.offset
        }
        units.append(contentsOf: String(decoding: buffer[start...], as: UTF8.self).utf16)
        return units
    }

    /// Parses one escape sequence starting at its backslash.
    private mutating func parseEscape(into buffer: inout [UInt8], lone: inout [LoneSurrogate]) throws(ParseError) {
        index += 1
        guard index < bytes.count else { throw error(.unexpectedEnd, "the document ends inside an escape sequence") }
        let escaped = bytes[index]
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(escaped)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            index += 1
            let unit = try parseHex4()
            if let scalar = Unicode.Scalar(unit) {
                UTF8Validation.append(scalar, to: &buffer)
            } else if UTF16.isLeadSurrogate(unit), let trail = pendingTrailSurrogate() {
                // A high surrogate pairs with a low one in the escape right after it.
                index += 6
                UTF8Validation.append(UTF16.decode(UTF16.EncodedScalar([unit, trail])), to: &buffer)
            } else {
                // Any other surrogate is lone, and `JSON.parse` keeps it (`JSONValue.parse(_:)`).
                lone.append((buffer.count, unit))
            }
            return
        default:
            throw error(.invalidString, "invalid escape \\\(describeEscape(escaped)) in a string")
        }
        index += 1
    }

    /// The low surrogate of a `\uXXXX` escape at `index`, if one is there (not moving).
    private func pendingTrailSurrogate() -> UInt16? {
        guard index + 6 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { return nil }
        var value: UInt16 = 0
        for offset in 2 ..< 6 {
            guard let digit = Self.hexValue(bytes[index + offset]) else { return nil }
            value = value << 4 | UInt16(digit)
        }
        return UTF16.isTrailSurrogate(value) ? value : nil
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Reads four hex digits at `index` and moves past them.
    private mutating func parseHex4() throws(ParseError) -> UInt16 {
        var value: UInt16 = 0
        for offset in 0 ..< 4 {
            guard index + offset < bytes.count else {
                index += offset
                throw error(.unexpectedEnd, "the document ends inside a \\u escape")
            }
            let byte = bytes[index + offset]
            guard let digit = Self.hexValue(byte) else {
                index += offset
                throw error(.invalidString, "\(describe(byte)) is not a hex digit in a \\u escape")
            }
            value = value << 4 | UInt16(digit)
        }
        index += 4
        return value
    }

    // MARK: Numbers

    private mutating func parseNumber() throws(ParseError) -> JSONValue {
        let start = index
        var negative = false
        if bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard index < bytes.count else { throw error(.unexpectedEnd, "the document ends inside a number") }
        let integerStart = index
        switch bytes[index] {
        case UInt8(ascii: "0"):
            index += 1
            if index < bytes.count, isDigit(bytes[index]) {
                throw error(.unexpectedCharacter, "a number has a leading zero")
            }
        case UInt8(ascii: "1")...UInt8(ascii: "9"):
            index += 1
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        case let byte:
            throw error(.unexpectedCharacter, "unexpected \(describe(byte)) after - in a number")
        }
        let integerEnd = index
        var isPlainInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isPlainInteger = false
            index += 1
            try requireDigits(in: "the fraction of a number")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isPlainInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            try requireDigits(in: "the exponent of a number")
        }
        // Up to 15 digits an integer is exact in a double: no text conversion needed.
        if isPlainInteger, integerEnd - integerStart <= 15 {
            var magnitude: Int64 = 0
            for position in integerStart ..< integerEnd {
                magnitude = magnitude * 10 + Int64(bytes[position] &- UInt8(ascii: "0"))
            }
            return .int(negative ? -magnitude : magnitude)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start ..< index]), as: UTF8.self)
        // Swift's conversion rounds correctly, to infinity on overflow and to zero on underflow,
        // as ECMAScript's StringToNumber does; the grammar was checked above, so it succeeds.
        return JSONValue.number(Double(text) ?? .nan)
    }

    private mutating func requireDigits(in part: String) throws(ParseError) {
        guard index < bytes.count else { throw error(.unexpectedEnd, "the document ends inside \(part)") }
        guard isDigit(bytes[index]) else { throw error(.unexpectedCharacter, "unexpected \(describe(bytes[index])) in \(part)") }
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    // MARK: Helpers

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private func error(_ kind: ParseError.Kind, _ what: String) -> ParseError {
        let offset = index
        return ParseError(kind: kind, offset: offset, description: "invalid JSON at byte \(offset): \(what)")
    }

    private func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    private func describeEscape(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return String(Character(Unicode.Scalar(byte))) }
        return "(byte 0x\(String(byte, radix: 16, uppercase: true)))"
    }

    private func hex(_ unit: UInt16) -> String {
        let digits = String(unit, radix: 16, uppercase: true)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }
}

/// UTF-8 validation (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
enum UTF8Validation {
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var index = 0
        let count = bytes.count
        while index < count {
            // Skip ASCII eight bytes at a time.
            while index + 8 <= count, raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                index += 8
            }
            guard index < count else { break }
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int
            let minimum: UInt32
            var scalar: UInt32
            switch lead {
            case 0xC2...0xDF: (length, minimum, scalar) = (2, 0x80, UInt32(lead & 0x1F))
            case 0xE0...0xEF: (length, minimum, scalar) = (3, 0x800, UInt32(lead & 0x0F))
            case 0xF0...0xF4: (length, minimum, scalar) = (4, 0x10000, UInt32(lead & 0x07))
            default: return false
            }
            guard index + length <= count else { return false }
            for offset in 1 ..< length {
                let continuation = bytes[index + offset]
                guard continuation & 0xC0 == 0x80 else { return false }
                scalar = scalar << 6 | UInt32(continuation & 0x3F)
            }
            guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else { return false }
            index += length
        }
        return true
    }

    /// Appends the UTF-8 encoding of `scalar`.
    static func append(_ scalar: Unicode.Scalar, to buffer: inout [UInt8]) {
        let value = scalar.value
        switch value {
        case 0 ..< 0x80:
            buffer.append(UInt8(value))
        case 0x80 ..< 0x800:
            buffer.append(UInt8(0xC0 | value >> 6))
            buffer.append(UInt8(0x80 | value & 0x3F))
        case 0x800 ..< 0x10000:
            buffer.append(UInt8(0xE0 | value >> 12))
            buffer.append(UInt8(0x80 | value >> 6 & 0x3F))
            buffer.append(UInt8(0x80 | value & 0x3F))
        default:
            buffer.append(UInt8(0xF0 | value >> 18))
            buffer.append(UInt8(0x80 | value >> 12 & 0x3F))
            buffer.append(UInt8(0x80 | value >> 6 & 0x3F))
            buffer.append(UInt8(0x80 | value & 0x3F))
        }
    }

    static func isValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { isValid($0) }
    }
}
