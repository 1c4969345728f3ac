import Foundation
import Testing

@testable import GatewayProtocol

/// `trimmingWhitespacesAndNewlines()` gives what Foundation's
/// `trimmingCharacters(in: .whitespacesAndNewlines)` gives, on its fast path (printable ASCII at
/// both ends) and off it, on `String` and `Substring`.
@Suite struct TrimmingTests {
    static let samples: [String] = [
        "", " ", "\t\n", "a", "a ", " a", " a ", "system.run", "\tsystem.run\n", "iOS 18.4.0", "~x!", "!",
        "\u{0B}v", "v\u{0C}", "\r\nx\r\n", "x\u{85}", "\u{85}x", "\u{A0}x\u{A0}", "\u{2028}x\u{2029}", "\u{3000}全角\u{3000}",
        "\u{1C}x\u{1F}", "\u{7F}x\u{7F}", "é", " é ", "e\u{301}", "\u{301}e", "🙂", " 🙂 ", "a b", "\u{200B}x\u{200B}",
        "\u{FEFF}x", "x\u{1680}", "\u{0}x\u{0}",
    ]

    @Test(arguments: samples)
    func sameAsFoundation(_ text: String) {
        #expect(text.trimmingWhitespacesAndNewlines() == text.trimmingCharacters(in: .whitespacesAndNewlines))
        let sub = ("<" + text + ">").dropFirst().dropLast()
        #expect(sub.trimmingWhitespacesAndNewlines() == sub.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
