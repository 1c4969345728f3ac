import Foundation

extension StringProtocol {
    /// `trimmingCharacters(in: .whitespacesAndNewlines)`, without Foundation's work when there is
    /// nothing to trim: when the first and the last scalar are printable ASCII other than the
    /// space (`!` to `~`, none of them in the set) the text comes back unchanged; anything else
    /// goes to Foundation. The result is always what Foundation gives; only the common case (a
    /// command name, a nonce, a platform label) is cheaper. Command lists and connect metadata
    /// are trimmed on every node connect and invoke.
    public func trimmingWhitespacesAndNewlines() -> String {
        let scalars = unicodeScalars
        if let first = scalars.first, let last = scalars.last,
           (0x21 ... 0x7E).contains(first.value), (0x21 ... 0x7E).contains(last.value) {
            return String(self)
        }
        return trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `trimmingCharacters(in: .whitespaces)`, with the same shortcut as
    /// ``trimmingWhitespacesAndNewlines()``: printable ASCII other than the space at both ends
    /// comes back unchanged (none of it is in the set); anything else goes to Foundation. A
    /// client trims the nonce of every `connect.challenge`.
    public func trimmingWhitespaces() -> String {
        let scalars = unicodeScalars
        if let first = scalars.first, let last = scalars.last,
           (0x21 ... 0x7E).contains(first.value), (0x21 ... 0x7E).contains(last.value) {
            return String(self)
        }
        return trimmingCharacters(in: .whitespaces)
    }
}
