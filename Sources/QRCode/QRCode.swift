import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a text could not be encoded as a QR code.
public struct QRCodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public var description: String
}

/// A QR code symbol made by libqrencode (opened at run time, see `QREncodeLibrary`): a square of
/// dark and light modules, with renderings for a terminal and as a PNG image. `harness serve`
/// shows setup codes with it.
public struct QRCode: Sendable, Hashable {
    /// How much damage the symbol survives (a larger level makes a larger symbol).
    public enum ErrorCorrection: Sendable, Hashable {
        /// About 7 % of the symbol may be unreadable.
        case low
        /// About 15 % (the usual choice for screens).
        case medium
        /// About 25 %.
        case quartile
        /// About 30 %.
        case high
    }

    /// Modules per side (21 for version 1, +4 per version).
    public let size: Int
    /// `size * size` modules, row by row; `true` is dark.
    public let modules: [Bool]

    /// Encodes `text` as 8-bit data with the smallest version that fits, with libqrencode found
    /// at run time (`QREncodeLibrary.system`).
    /// - Throws: `QRCodeError` when libqrencode is not installed, or the text is empty or too
    ///   long for a QR code.
    public init(encoding text: String, errorCorrection: ErrorCorrection = .medium) throws(QRCodeError) {
        try self.init(encoding: text, errorCorrection: errorCorrection, library: QREncodeLibrary.system.get())
    }

    /// Encodes `text` as 8-bit data with `library` (one opened from another place, see
    /// `QREncodeLibrary.init(candidates:)`).
    /// - Throws: `QRCodeError` when the text is empty or too long for a QR code.
    public init(encoding text: String, errorCorrection: ErrorCorrection, library: QREncodeLibrary) throws(QRCodeError) {
        guard !text.isEmpty else { throw QRCodeError(description: "nothing to encode") }
        // QRecLevel in qrencode.h: QR_ECLEVEL_L = 0, QR_ECLEVEL_M, QR_ECLEVEL_Q, QR_ECLEVEL_H.
        let level: Int32 = switch errorCorrection {
        case .low: 0
        case .medium: 1
        case .quartile: 2
        case .high: 3
        }
        guard let code = library.encodeString8bit(text, 0, level) else {
            throw QRCodeError(description: "libqrencode cannot encode \(text.utf8.count) bytes: \(String(cString: strerror(errno)))")
        }
        defer { library.free(code) }
        let symbol = QREncodeLibrary.Symbol(code)
        let width = symbol.width
        guard width > 0, let data = symbol.data else {
            throw QRCodeError(description: "libqrencode returned an empty symbol")
        }
        size = width
        // Bit 0 of each byte is the module's colour (1 = dark); the other bits describe its role.
        modules = (0..<(width * width)).map { data[$0] & 1 == 1 }
    }

    /// Whether the module at `row`, `column` is dark; outside the symbol (the quiet zone) is light.
    public func isDark(row: Int, column: Int) -> Bool {
        guard (0..<size).contains(row), (0..<size).contains(column) else { return false }
        return modules[row * size + column]
    }

    /// The symbol for a terminal: two module rows per text line with the half-block characters
    /// `▀ ▄ █`, drawn black on white with ANSI colours so that it scans on light and dark themes
    /// alike, with a quiet zone of `border` modules.
    public func terminalText(border: Int = 2) -> String {
        let range = -border..<(size + border)
        var lines: [String] = []
        for top in stride(from: range.lowerBound, to: range.upperBound, by: 2) {
            var line = "\u{1B}[30;47m"
            for column in range {
                switch (isDark(row: top, column: column), isDark(row: top + 1, column: column)) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            lines.append(line + "\u{1B}[0m")
        }
        return lines.joined(separator: "\n")
    }

    /// The symbol as an 8-bit greyscale PNG: `scale` pixels per module and a quiet zone of
    /// `border` modules (the standard asks for 4).
    public func png(scale: Int = 8, border: Int = 4) -> [UInt8] {
        let scale = max(1, scale)
        let side = (size + 2 * max(0, border)) * scale
        var raw: [UInt8] = []
        raw.reserveCapacity((side + 1) * side)
        for y in 0..<side {
            raw.append(0)  // filter type: none
            let row = y / scale - border
            for x in 0..<side {
                raw.append(isDark(row: row, column: x / scale - border) ? 0 : 255)
            }
        }
        var header: [UInt8] = []
        header.appendBigEndian(UInt32(side))
        header.appendBigEndian(UInt32(side))
        header += [8, 0, 0, 0, 0]  // bit depth 8, greyscale, deflate, adaptive filtering, no interlace
        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        PNG.appendChunk("IHDR", header, to: &file)
        PNG.appendChunk("IDAT", PNG.zlibStored(raw), to: &file)
        PNG.appendChunk("IEND", [], to: &file)
        return file
    }
}

/// The few pieces of PNG and zlib (RFC 1950/1951) a QR image needs: chunks with CRC-32, and a
/// zlib stream of uncompressed ("stored") deflate blocks.
enum PNG {
    static func appendChunk(_ type: String, _ data: [UInt8], to file: inout [UInt8]) {
        file.appendBigEndian(UInt32(data.count))
        let typed = Array(type.utf8) + data
        file += typed
        file.appendBigEndian(crc32(typed))
    }

    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, data.count - offset)
            let last = offset + count == data.count
            out.append(last ? 1 : 0)
            out += [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[offset..<(offset + count)]
            offset += count
        } while offset < data.count
        out.appendBigEndian(adler32(data))
        return out
    }

    static let crcTable: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }
}

extension [UInt8] {
    fileprivate mutating func appendBigEndian(_ value: UInt32) {
        append(contentsOf: [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)])
    }
}
