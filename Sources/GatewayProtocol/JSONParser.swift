import Foundation

extension JSONValue {
    /// The deepest nesting of arrays and objects that `JSONValue.parse(_:)` accepts (the limit of
    /// Foundation's `JSONDecoder`, which the parser replaces).
    public static let maximumParseDepth = 512

    /// Why bytes are not a JSON document, and where.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The kind of problem.
        public enum Kind: Sendable, Hashable {
            /// Arrays and objects are nested deeper than `JSONValue.maximumParseDepth`.
            case tooDeep
            /// The document ends early (includes an empty document).
            case unexpectedEnd
            /// A character that JSON does not allow here (includes text after the document).
            case unexpectedCharacter
            /// A bad escape, a lone or mismatched UTF-16 surrogate, or an unescaped control
            /// character in a string.
            case invalidString
            /// Bytes that are not UTF-8 (or not the UTF-16/UTF-32 a byte-order mark announces).
            case invalidEncoding
            /// A number Swift cannot hold (it overflows a `Double`).
            case numberOutOfRange
        }

        /// The kind of problem.
        public var kind: Kind
        /// The byte offset of the problem in the input (for UTF-16 or UTF-32 input, in its UTF-8
        /// transcoding).
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

    /// Parses a JSON document (RFC 8259, plus the trailing commas and encodings Foundation's
    /// `JSONDecoder` accepts).
    ///
    /// Accepts exactly what `JSONValue(parsing:)` has always accepted through `JSONDecoder`: any
    /// value at the top level, whitespace around it, a trailing comma before `]` or `}`, a UTF-8
    /// byte-order mark, and UTF-16 or UTF-32 input that starts with a byte-order mark or that the
    /// first bytes show to be such. A repeated object key keeps its first value. A number is
    /// `.int` when `JSONDecoder` reads it as an `Int64` (`1.0` and `1e2` are integers, so is
    /// `1e-400`, which is 0), otherwise `.double`. Nesting deeper than `maximumParseDepth`
    /// is `.tooDeep`.
    /// - Throws: `ParseError`.
    public static func parse(_ data: Data) throws(ParseError) -> JSONValue {
        let result: Result<JSONValue, ParseError> = data.withUnsafeBytes { raw in
            Result { () throws(ParseError) -> JSONValue in try parse(raw.bindMemory(to: UInt8.self)) }
        }
        return try result.get()
    }

    /// Parses a JSON document from text; see `parse(_:)` for `Data`.
    /// - Throws: `ParseError`.
    public static func parse(_ text: String) throws(ParseError) -> JSONValue {
        var text = text
        let result: Result<JSONValue, ParseError> = text.withUTF8 { bytes in
            Result { () throws(ParseError) -> JSONValue in try parse(bytes) }
        }
        return try result.get()
    }

    /// Parses bytes after Foundation's encoding detection (RFC 4627 §3 plus byte-order marks).
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(ParseError) -> JSONValue {
        let count = bytes.count
        let b0: UInt8? = count > 0 ? bytes[0] : nil
        let b1: UInt8? = count > 1 ? bytes[1] : nil
        let b2: UInt8? = count > 2 ? bytes[2] : nil
        let b3: UInt8? = count > 3 ? bytes[3] : nil
        let encoding: String.Encoding
        let bomLength: Int
        // The rules of JSONDecoder.withUTF8Representation(of:_:) in swiftlang/swift-foundation
        // Sources/FoundationEssentials/JSON/JSONDecoder.swift@03154e776cada7050ea4578a191eb0782af7e24b.
        switch (b0, b1, b2, b3) {
        case (0, 0, 0xFE, 0xFF): (encoding, bomLength) = (.utf32BigEndian, 4)
        case (0xFE, 0xFF, 0, 0): (encoding, bomLength) = (.utf32LittleEndian, 4)
        case (0xFE, 0xFF, _, _): (encoding, bomLength) = (.utf16BigEndian, 2)
        case (0xFF, 0xFE, _, _): (encoding, bomLength) = (.utf16LittleEndian, 2)
        case (0xEF, 0xBB, 0xBF, _): (encoding, bomLength) = (.utf8, 3)
        case let (0, 0, 0, .some(nz)) where nz != 0: (encoding, bomLength) = (.utf32BigEndian, 0)
        case let (0, .some(nz1), 0, .some(nz2)) where nz1 != 0 && nz2 != 0: (encoding, bomLength) = (.utf16BigEndian, 0)
        case let (.some(nz), 0, 0, 0) where nz != 0: (encoding, bomLength) = (.utf32LittleEndian, 0)
        case let (.some(nz1), 0, .some(nz2), 0) where nz1 != 0 && nz2 != 0: (encoding, bomLength) = (.utf16LittleEndian, 0)
        case let (0, .some(nz), nil, nil) where nz != 0: (encoding, bomLength) = (.utf16BigEndian, 0)
        case let (.some(nz), 0, nil, nil) where nz != 0: (encoding, bomLength) = (.utf16LittleEndian, 0)
        default: (encoding, bomLength) = (.utf8, 0)
        }
        let body = UnsafeBufferPointer(rebasing: bytes[bomLength...])
        if encoding == .utf8 {
            var parser = JSONParser(bytes: body, offsetBias: bomLength)
            return try parser.parseDocument()
        }
        guard var transcoded = String(bytes: body, encoding: encoding) else {
            throw ParseError(kind: .invalidEncoding, offset: 0, description: "the input is not valid \(encoding)")
        }
        let result: Result<JSONValue, ParseError> = transcoded.withUTF8 { utf8 in
            Result { () throws(ParseError) -> JSONValue in
                var parser = JSONParser(bytes: utf8, offsetBias: 0)
                return try parser.parseDocument()
            }
        }
        return try result.get()
    }
}

/// A recursive-descent JSON parser over UTF-8 bytes that builds `JSONValue`s directly.
///
/// It accepts what Foundation's `JSONDecoder` accepts when it decodes a `JSONValue` (facts read
/// in swiftlang/swift-foundation
/// Sources/FoundationEssentials/JSON/JSONScanner.swift@03154e776cada7050ea4578a191eb0782af7e24b:
/// the trailing-comma rule, the 512-level limit, the whitespace set, escapes and surrogates),
/// checked against the toolchain's `JSONDecoder` by `JSONEquivalenceTests`. Numbers follow
/// `JSONNumber`.
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let offsetBias: Int
    private var index = 0
    private var depth = 0

    init(bytes: UnsafeBufferPointer<UInt8>, offsetBias: Int) {
        self.bytes = bytes
        self.offsetBias = offsetBias
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
        case UInt8(ascii: "\""): return .string(try parseString())
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
                index += 1
                skipWhitespace()
                // A trailing comma is accepted, as Foundation's JSONDecoder accepts it.
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return .array(items)
                }
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
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count else { throw error(.unexpectedEnd, "the document ends inside an object") }
            guard bytes[index] == UInt8(ascii: ":") else {
                throw error(.unexpectedCharacter, "unexpected \(describe(bytes[index])) after an object key (expected :)")
            }
            index += 1
            let value = try parseValue()
            // A repeated key keeps its first value, as Foundation's JSONDecoder does.
            Self.keepFirst(value, in: &members[key])
            skipWhitespace()
            guard index < bytes.count else { throw error(.unexpectedEnd, "the document ends inside an object") }
            switch bytes[index] {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return .object(members)
                }
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            case let byte:
                throw error(.unexpectedCharacter, "unexpected \(describe(byte)) in an object (expected , or })")
            }
        }
    }

    private static func keepFirst(_ value: JSONValue, in slot: inout JSONValue?) {
        if slot == nil { slot = value }
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

    /// Parses a string starting at its opening quote.
    private mutating func parseString() throws(ParseError) -> String {
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
            return String(decoding: run, as: UTF8.self)
        }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(cursor - start + 16)
        buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start ..< cursor]))
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
                return String(decoding: buffer, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape(into: &buffer)
            case 0 ..< 0x20:
                throw error(.invalidString, "unescaped control character \(describe(byte)) in a string")
            default:
                buffer.append(byte)
                index += 1
            }
        }
    }

    /// Parses one escape sequence starting at its backslash.
    private mutating func parseEscape(into buffer: inout [UInt8]) throws(ParseError) {
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
            let scalar: Unicode.Scalar
            if UTF16.isLeadSurrogate(unit) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error(.invalidString, "a high surrogate \\u\(hex(unit)) is not followed by a low surrogate")
                }
                index += 2
                let trail = try parseHex4()
                guard UTF16.isTrailSurrogate(trail) else {
                    index -= 6
                    throw error(.invalidString, "a high surrogate \\u\(hex(unit)) is followed by \\u\(hex(trail)), not a low surrogate")
                }
                scalar = UTF16.decode(UTF16.EncodedScalar([unit, trail]))
            } else {
                guard let single = Unicode.Scalar(unit) else {
                    index -= 6
                    throw error(.invalidString, "a lone low surrogate \\u\(hex(unit))")
                }
                scalar = single
            }
            UTF8Validation.append(scalar, to: &buffer)
            return
        default:
            throw error(.invalidString, "invalid escape \\\(describeEscape(escaped)) in a string")
        }
        index += 1
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
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default:
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
        if isPlainInteger, let integer = plainInteger(integerStart ..< integerEnd, negative: negative) {
            return .int(integer)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start ..< index]), as: UTF8.self)
        guard let value = JSONNumber.value(ofLiteral: text) else {
            index = start
            throw error(.numberOutOfRange, "the number \(text) does not fit in a Double")
        }
        return value
    }

    private mutating func requireDigits(in part: String) throws(ParseError) {
        guard index < bytes.count else { throw error(.unexpectedEnd, "the document ends inside \(part)") }
        guard isDigit(bytes[index]) else { throw error(.unexpectedCharacter, "unexpected \(describe(bytes[index])) in \(part)") }
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    /// The `Int64` of a run of digits, or `nil` when it does not fit.
    private func plainInteger(_ digits: Range<Int>, negative: Bool) -> Int64? {
        // Accumulate negatively so that Int64.min fits.
        var value: Int64 = 0
        for position in digits {
            let digit = Int64(bytes[position] &- UInt8(ascii: "0"))
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = shifted.subtractingReportingOverflow(digit)
            if overflow1 || overflow2 { return nil }
            value = next
        }
        if negative { return value }
        return value == .min ? nil : -value
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
        let offset = index + offsetBias
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
