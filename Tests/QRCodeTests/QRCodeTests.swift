import Foundation
import Testing
import TestSupport
@testable import QRCode

/// The QR symbol, its terminal and PNG renderings, checked with a real decoder (`zbarimg`).
@Suite("QR code")
struct QRCodeTests {
    @Test(.enabled(if: QRLibrary.installed || QRLibrary.required, Comment(rawValue: QRLibrary.skipMessage)))
    func symbolsHaveTheStandardSizeAndFinderPatterns() throws {
        let code = try QRCode(encoding: "hello")
        #expect(code.size == 21, "a short text fits version 1")
        // The top-left finder pattern: a dark 7x7 ring around a light ring around a dark 3x3.
        #expect((0..<7).allSatisfy { code.isDark(row: 0, column: $0) && code.isDark(row: 6, column: $0) })
        #expect(!code.isDark(row: 1, column: 1) && code.isDark(row: 3, column: 3))
        #expect(!code.isDark(row: -1, column: 0) && !code.isDark(row: 0, column: 21), "the quiet zone is light")
        let longer = try QRCode(encoding: String(repeating: "x", count: 300))
        #expect(longer.size > 21 && (longer.size - 17) % 4 == 0)
        #expect(throws: QRCodeError.self) { try QRCode(encoding: "") }
        #expect(throws: QRCodeError.self) { try QRCode(encoding: String(repeating: "y", count: 4000)) }
    }

    @Test(.enabled(if: QRLibrary.installed || QRLibrary.required, Comment(rawValue: QRLibrary.skipMessage)))
    func terminalTextDrawsTwoRowsPerLine() throws {
        let code = try QRCode(encoding: "hello")
        let lines = code.terminalText(border: 2).split(separator: "\n")
        #expect(lines.count == (21 + 4 + 1) / 2)
        #expect(lines.allSatisfy { $0.hasPrefix("\u{1B}[30;47m") && $0.hasSuffix("\u{1B}[0m") })
        let body = lines[1].dropFirst("\u{1B}[30;47m".count).dropLast("\u{1B}[0m".count)
        #expect(body.count == 25)
    }

    @Test(.enabled(if: QRLibrary.installed || QRLibrary.required, Comment(rawValue: QRLibrary.skipMessage)))
    func pngIsWellFormed() throws {
        let png = try QRCode(encoding: "hello").png(scale: 2, border: 4)
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(Array(png[12..<16]) == Array("IHDR".utf8))
        #expect(Array(png[16..<20]) == [0, 0, 0, 58], "(21 + 8) * 2 pixels wide")
        #expect(PNG.crc32(Array("IEND".utf8)) == 0xAE42_6082, "the well-known CRC of an empty IEND chunk")
        #expect(PNG.adler32(Array("Wikipedia".utf8)) == 0x11E6_0398)
    }

    @Test func aMissingLibraryIsAnErrorThatSaysWhatToInstall() throws {
        let missing = "/nonexistent/libqrencode-missing.so.4"
        #expect {
            try QREncodeLibrary(candidates: [missing])
        } throws: { error in
            let text = "\(error)"
            return text.contains(missing) && text.contains("apt-get install libqrencode4") && text.contains("brew install qrencode")
        }
        // A file that loads but is not libqrencode: the C library has neither function.
        #if os(Linux)
        #expect(throws: QRCodeError.self) { try QREncodeLibrary(candidates: ["libc.so.6"]) }
        #endif
    }

    @Test(.enabled(if: QRLibrary.installed || QRLibrary.required, Comment(rawValue: QRLibrary.skipMessage)))
    func theUsualPlacesFindTheInstalledLibrary() throws {
        let found = try QREncodeLibrary.system.get()
        #expect(QREncodeLibrary.candidates.contains(found.path))
        #expect(try QRCode(encoding: "hello", errorCorrection: .medium, library: found).size == 21)
    }

    @Test(.enabled(if: QRLibrary.installed || QRLibrary.required, Comment(rawValue: QRLibrary.skipMessage)),
          .enabled(if: ZBar.path != nil || ZBar.required, Comment(rawValue: ZBar.skipMessage)))
    func zbarDecodesThePNGBackToTheText() async throws {
        let text = "oc-pair://eyJ1cmwiOiJ3c3M6Ly8xOTIuMTY4LjEuMjA6MTg3ODkiLCJib290c3RyYXBUb2tlbiI6ImFiYyJ9"
        #expect(try await ZBar.decode(QRCode(encoding: text).png()) == text)
    }
}
