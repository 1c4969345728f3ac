import Foundation
import OpenClawCrypto

/// Unpadded base64url (RFC 4648 §5), the encoding of public keys, signatures and tokens.
public enum Base64URL {
    /// Encodes bytes as unpadded base64url.
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        // Written out rather than Foundation's base64 plus three replacements: every device
        // proof, token and key goes through here, which made it a measurable share of a whole
        // conformance run (Benchmarks/README.md, "Where the CPU goes").
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            output.append(alphabet[Int(group >> 18)])
            output.append(alphabet[Int(group >> 12 & 0x3F)])
            output.append(alphabet[Int(group >> 6 & 0x3F)])
            output.append(alphabet[Int(group & 0x3F)])
            index += 3
        }
        switch input.count - index {
        case 1:
            let group = UInt32(input[index]) << 16
            output.append(alphabet[Int(group >> 18)])
            output.append(alphabet[Int(group >> 12 & 0x3F)])
        case 2:
            let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
            output.append(alphabet[Int(group >> 18)])
            output.append(alphabet[Int(group >> 12 & 0x3F)])
            output.append(alphabet[Int(group >> 6 & 0x3F)])
        default:
            break
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The base64url alphabet (RFC 4648 §5).
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Decodes base64url or standard base64, with or without padding, as the Gateway's verifier
    /// does.
    /// - Returns: the bytes, or `nil` when `text` has characters outside both alphabets, misplaced
    ///   or excess padding, or an impossible length.
    public static func decode(_ text: String) -> Data? {
        var body = Substring(text)
        var padding = 0
        while body.last == "=" {
            body.removeLast()
            padding += 1
        }
        guard padding <= 2 else { return nil }
        var normalized = ""
        normalized.reserveCapacity(body.utf8.count + 3)
        for scalar in body.unicodeScalars {
            switch scalar {
            case "A"..."Z", "a"..."z", "0"..."9", "+", "/": normalized.unicodeScalars.append(scalar)
            case "-": normalized.append("+")
            case "_": normalized.append("/")
            default: return nil
            }
        }
        let remainder = normalized.utf8.count % 4
        guard remainder != 1 else { return nil }
        // When padding was given it must be exactly what the length requires.
        let required = remainder == 0 ? 0 : 4 - remainder
        guard padding == 0 || padding == required else { return nil }
        normalized += String(repeating: "=", count: required)
        return Data(base64Encoded: normalized)
    }
}

/// Lower-case hexadecimal.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Encodes bytes as lower-case hex.
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var characters: [UInt8] = []
        characters.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            characters.append(digits[Int(byte >> 4)])
            characters.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: characters, as: UTF8.self)
    }

    /// Decodes hex (either case).
    /// - Returns: the bytes, or `nil` for an odd length or a non-hex character.
    public static func decode(_ text: String) -> Data? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var result = Data(capacity: utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = value(utf8[index]), let low = value(utf8[index + 1]) else { return nil }
            result.append(high << 4 | low)
            index += 2
        }
        return result
    }

    private static func value(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// SHA-256 (CryptoKit on Apple platforms, OpenSSL on Linux).
public enum SHA256Digest {
    /// The 32-byte SHA-256 digest of `data`.
    public static func hash(_ data: Data) -> Data { CryptoBackend.sha256(data) }

    /// The lower-case hex SHA-256 digest of `data`.
    public static func hex(_ data: Data) -> String { Hex.encode(hash(data)) }
}
