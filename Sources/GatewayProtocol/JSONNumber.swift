import Foundation

/// Foundation's number rules, for `JSONValueEncoder` and `JSONValueDecoder`, the Codable bridges
/// (`JSONValue(encoding:)`, `decode(as:)`), which convert Swift values as Foundation's
/// `JSONEncoder` and `JSONDecoder` would through text. (The wire, `JSONValue.parse(_:)` and
/// `encoded()`, follows JavaScript instead: `JavaScriptNumber`.)
///
/// This type reproduces Foundation's rules without the text round trip:
///
/// - `JSONEncoder` writes a finite `Double` as its `description` without a trailing `.0`
///   (`1.0` → `1`, `1e16` → `1e+16`, `-0.0` → `-0`).
/// - `JSONDecoder` reads an integer type from a plain integer literal exactly; from any other
///   number it takes the `Double` (`strtod`) value, which must be a whole number the type holds;
///   below 2^53 that is the value (`5.0` → 5, `1e-400` → 0), from 2^53 on it reads the text again
///   as a `Decimal` and takes that value (`9007199254740993.0` → 9007199254740993). It reads a
///   floating-point type as the correctly rounded value of the text, refusing overflow to
///   infinity and underflow of a non-zero literal to zero.
/// - `JSONValue.init(from:)` tries `Int64` before `Double`, so a JSON number becomes `.int`
///   whenever `JSONDecoder` reads it as an `Int64`.
///
/// Facts read in swiftlang/swift-foundation
/// Sources/FoundationEssentials/JSON/JSONDecoder.swift@03154e776cada7050ea4578a191eb0782af7e24b
/// (`unwrapFixedWidthInteger`, `_slowpath_unwrapFixedWidthInteger`, `unwrapFloatingPoint`) and
/// Sources/FoundationEssentials/JSON/JSONEncoder.swift@0506e469fe003a012f8acf05a2885f6e5ea4efed
/// (`JSONEncoderValue.number(from:)`), and checked against the toolchain's Foundation (Swift
/// 6.3.1) by `JSONEquivalenceTests`.
enum JSONNumber {
    /// `JSONEncoder`'s writer refuses containers at this depth (the top-level container is 1);
    /// the bridges refuse, or read as `null`, what it refuses.
    static let foundationWriteDepth = 512

    /// 2^53: below it every integer is a `Double`, and `JSONDecoder` trusts the `Double` value.
    static let exactIntegerLimit = 9_007_199_254_740_992.0

    /// The text `JSONEncoder` writes for a finite `Double`.
    static func text(_ value: Double) -> String {
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }

    /// The text `JSONEncoder` writes for a finite `Float`.
    static func text(_ value: Float) -> String {
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }

    /// The `JSONValue` that `JSONDecoder` makes of the text `JSONEncoder` writes for a finite
    /// `Double` (what `JSONValue(encoding:)` and a text round trip have always produced).
    static func value(of double: Double) -> JSONValue {
        guard let integer = Int64(exactly: double) else { return .double(double) }
        if double.magnitude < exactIntegerLimit { return .int(integer) }
        if let viaDecimal = integerViaDecimal(text(double), as: Int64.self) { return .int(viaDecimal) }
        return .double(double)
    }

    /// The `JSONValue` that `JSONDecoder` makes of a JSON number literal that is not a plain
    /// integer in `Int64` range (it has a fraction or an exponent, or too many digits).
    /// - Returns: `nil` when `JSONDecoder` rejects the number (it overflows a `Double`).
    static func value(ofLiteral text: String) -> JSONValue? {
        guard let double = Double(text), double.isFinite else { return nil }
        if let integer = Int64(exactly: double) {
            if double.magnitude < exactIntegerLimit { return .int(integer) }
            if let viaDecimal = integerViaDecimal(text, as: Int64.self) { return .int(viaDecimal) }
        }
        // Not zero here: a zero `Double` is `Int64(exactly:)` and returned above.
        return .double(double)
    }

    /// The `JSONValue` that `JSONDecoder` makes of a number's text as `JSONEncoder` writes it (a
    /// `Float`, a `Decimal`, a wide integer), or `nil` when it overflows a `Double`.
    static func value(ofNumberText text: String) -> JSONValue? {
        if let integer = Int64(text) { return .int(integer) }
        return value(ofLiteral: text)
    }

    /// `JSONDecoder`'s integer of type `T` for a finite `Double` written as `JSONEncoder` writes
    /// it, or `nil` where `JSONDecoder` throws.
    static func integer<T: FixedWidthInteger>(_ double: Double, as type: T.Type) -> T? {
        guard let value = T(exactly: double) else { return nil }
        if double.magnitude < exactIntegerLimit { return value }
        return integerViaDecimal(text(double), as: T.self)
    }

    /// `JSONDecoder`'s `Float` for a finite `Double` written as `JSONEncoder` writes it, or `nil`
    /// where `JSONDecoder` throws (the text overflows a `Float`, or rounds to zero).
    static func float(_ double: Double) -> Float? {
        let narrowed = Float(double)
        // Exactly representable: the nearest `Float` to the (shortest, round-tripping) text is it.
        if Double(narrowed) == double { return narrowed }
        let text = text(double)
        guard let parsed = Float(text), parsed.isFinite, parsed != 0 else { return nil }
        return parsed
    }

    /// `JSONDecoder`'s `Decimal` for the text of a number, or `nil` where it throws.
    static func decimal(_ text: String) -> Decimal? {
        guard let decimal = Decimal(string: text), !decimal.isNaN else { return nil }
        return decimal
    }

    /// `JSONDecoder`'s second reading of an integral number at or above 2^53: the text as a
    /// `Decimal`, whose mantissa must fit 64 bits, scaled by its exponent (truncating), which
    /// must fit `T`.
    ///
    /// Where Foundation's own parse of the text fails, its `JSONDecoder` stops the process (a
    /// failed precondition in `JSONScanner.validateNumber`, e.g. for `9007199254740993` followed
    /// by 200 zeros and `e-200`); here the number is simply not an integer.
    static func integerViaDecimal<T: FixedWidthInteger>(_ text: String, as type: T.Type) -> T? {
        guard let decimal = Decimal(string: text), !decimal.isNaN else { return nil }
        let isNegative = decimal.sign == .minus && !decimal.isZero
        if isNegative && !T.isSigned { return nil }
        guard var magnitude = UInt64(decimal.significand.description) else { return nil }
        let exponent = decimal.exponent
        if exponent < 0 {
            for _ in 0 ..< -exponent {
                magnitude /= 10
                if magnitude == 0 { break }
            }
        } else {
            for _ in 0 ..< exponent {
                let (product, overflow) = magnitude.multipliedReportingOverflow(by: 10)
                guard !overflow else { return nil }
                magnitude = product
            }
        }
        guard let value = T(exactly: magnitude) else { return nil }
        return isNegative ? 0 - value : value
    }
}
