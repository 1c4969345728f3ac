/// Numbers as JavaScript has them: every JSON number is an IEEE 754 double, written by
/// `JSON.stringify` as ECMAScript's Number::toString writes it (ECMA-262 §6.1.6.1.20).
enum JavaScriptNumber {
    /// 2^53: every whole number up to it in magnitude is exact in a double.
    static let exactIntegerLimit: Int64 = 1 << 53

    /// The `JSON.stringify` text of `value`: `null` when it is not finite, `0` for both zeros,
    /// otherwise the shortest digits that read back as `value`, placed as Number::toString
    /// places them (`100`, `0.000001`, `1e-7`, `1e+21`, `1.5e+300`).
    static func text(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == 0 { return "0" }
        // Swift's `description` holds the shortest round-tripping digits, nearest to the value
        // where several are as short (what Number::toString asks for), in its own layout
        // (`1e-07`, `100.0`, `1.5e+300`); only the layout changes here.
        let (digits, exponent) = shortestDigits(of: value.magnitude)
        let k = digits.count
        let n = exponent  // the value is 0.d1d2...dk × 10^n
        var text = value < 0 ? "-" : ""
        if k <= n && n <= 21 {
            text += digits + String(repeating: "0", count: n - k)
        } else if 0 < n && n <= 21 {
            text += digits.prefix(n) + "." + digits.dropFirst(n)
        } else if -6 < n && n <= 0 {
            text += "0." + String(repeating: "0", count: -n) + digits
        } else {
            let e = n - 1
            text += String(digits.prefix(1))
            if k > 1 { text += "." + digits.dropFirst() }
            text += "e" + (e < 0 ? "-" : "+") + String(e.magnitude)
        }
        return text
    }

    /// The shortest decimal digits of a finite positive `value` (no leading or trailing zeros)
    /// and the exponent `n` with `value` = 0.digits × 10^n.
    static func shortestDigits(of value: Double) -> (digits: String, exponent: Int) {
        let description = value.description
        var mantissa = Substring(description)
        var exponent = 0
        if let e = description.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = description[..<e]
            exponent = Int(description[description.index(after: e)...]) ?? 0
        }
        var digits: [UInt8] = []
        var integerDigits: Int?
        for byte in mantissa.utf8 {
            if byte == UInt8(ascii: ".") { integerDigits = digits.count } else { digits.append(byte) }
        }
        var pointPosition = integerDigits ?? digits.count
        let leadingZeros = digits.prefix { $0 == UInt8(ascii: "0") }.count
        digits.removeFirst(leadingZeros)
        pointPosition -= leadingZeros
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        return (String(decoding: digits, as: UTF8.self), pointPosition + exponent)
    }
}

extension JSONValue {
    /// The `JSONValue` of a JavaScript number: `.int` for a whole number up to 2^53 in magnitude
    /// (negative zero included, which `JSON.stringify` writes as `0`), `.double` for any other
    /// (fractions, larger magnitudes, infinities, NaN; `encoded()` writes the last three as
    /// `null`, as `JSON.stringify` does).
    ///
    /// `parse(_:)` keeps every number this way, so that two documents `JSON.parse` reads as the
    /// same numbers compare equal.
    public static func number(_ value: Double) -> JSONValue {
        if value.magnitude <= Double(JavaScriptNumber.exactIntegerLimit), let integer = Int64(exactly: value) {
            return .int(integer)
        }
        return .double(value)
    }
}
