/// The escaping the HTML and JUnit XML reports share: the characters markup reserves become
/// entities, the characters a document cannot carry (control characters from a client's garbage
/// output) become U+FFFD, everything else is copied.
enum MarkupEscaping {
    /// Escapes `text`: a scalar for which `entity` returns a string is written as that string;
    /// any other scalar is copied when `allowed` holds for its value, U+FFFD otherwise.
    static func escape(_ text: String, entity: (Unicode.Scalar) -> String?, allowed: (UInt32) -> Bool) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if let replacement = entity(scalar) {
                out += replacement
            } else {
                out.unicodeScalars.append(allowed(scalar.value) ? scalar : "\u{FFFD}")
            }
        }
        return out
    }

    /// The entity of a character both HTML and XML reserve (`&`, `<`, `>`, `"`), and of a
    /// carriage return (kept as `&#13;`, which a parser does not fold into a line feed).
    static func reserved(_ scalar: Unicode.Scalar) -> String? {
        switch scalar {
        case "&": "&amp;"
        case "<": "&lt;"
        case ">": "&gt;"
        case "\"": "&quot;"
        case "\r": "&#13;"
        default: nil
        }
    }
}
