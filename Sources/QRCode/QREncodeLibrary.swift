import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// libqrencode, opened with `dlopen` when a QR code is first drawn, so that building and running
/// everything else needs neither the library nor its header. Only the two functions the package
/// calls are declared here, after `qrencode.h` of libqrencode 4.1.1 (Debian libqrencode-dev):
///
/// ```c
/// typedef struct { int version; int width; unsigned char *data; } QRcode;
/// extern QRcode *QRcode_encodeString8bit(const char *string, int version, QRecLevel level);
/// extern void QRcode_free(QRcode *qrcode);
/// ```
///
/// (`QRecLevel` is a C enum: `QR_ECLEVEL_L = 0, QR_ECLEVEL_M, QR_ECLEVEL_Q, QR_ECLEVEL_H`.)
public struct QREncodeLibrary: Sendable {
    /// `QRcode_encodeString8bit(string, version, level)`.
    typealias Encode = @convention(c) (UnsafePointer<CChar>?, Int32, Int32) -> UnsafeMutableRawPointer?
    /// `QRcode_free(qrcode)`.
    typealias Free = @convention(c) (UnsafeMutableRawPointer?) -> Void

    /// The file the library was opened from (one of the candidates).
    public let path: String
    /// The symbols' addresses: plain numbers, so that the value is `Sendable`; they stay valid
    /// because the library is never closed.
    private let encodeAddress: UInt
    private let freeAddress: UInt

    /// The names and paths tried in turn: the runtime package's soname first (Debian
    /// `libqrencode4`), then the development symlink, then Homebrew's and MacPorts' places.
    public static let candidates: [String] = {
        #if canImport(Darwin)
        ["libqrencode.4.dylib", "libqrencode.dylib",
         "/opt/homebrew/lib/libqrencode.4.dylib", "/opt/homebrew/lib/libqrencode.dylib",
         "/usr/local/lib/libqrencode.4.dylib", "/usr/local/lib/libqrencode.dylib",
         "/opt/local/lib/libqrencode.4.dylib"]
        #else
        ["libqrencode.so.4", "libqrencode.so"]
        #endif
    }()

    /// What to install when the library is missing.
    public static let installHint =
        "install libqrencode: apt-get install libqrencode4 (or libqrencode-dev) on Debian/Ubuntu, brew install qrencode on macOS"

    /// The library from `candidates`, opened once per process.
    public static let system: Result<QREncodeLibrary, QRCodeError> = Result { () throws(QRCodeError) in
        try QREncodeLibrary(candidates: candidates)
    }

    /// Opens the first of `candidates` that loads and has both functions.
    /// - Throws: `QRCodeError` naming the candidates and what to install when none does.
    public init(candidates: [String]) throws(QRCodeError) {
        var reasons: [String] = []
        for candidate in candidates {
            guard let handle = dlopen(candidate, RTLD_NOW | RTLD_LOCAL) else {
                reasons.append(dlerror().map { String(cString: $0) } ?? candidate)
                continue
            }
            guard let encode = dlsym(handle, "QRcode_encodeString8bit"), let free = dlsym(handle, "QRcode_free") else {
                reasons.append("\(candidate): no QRcode_encodeString8bit or QRcode_free")
                dlclose(handle)
                continue
            }
            path = candidate
            encodeAddress = UInt(bitPattern: encode)
            freeAddress = UInt(bitPattern: free)
            return
        }
        throw QRCodeError(description: """
            QR codes need libqrencode, which was not found (tried \(candidates.joined(separator: ", "))); \
            \(Self.installHint)\(reasons.isEmpty ? "" : " [\(reasons.joined(separator: "; "))]")
            """)
    }

    /// Calls `QRcode_encodeString8bit`; nil on failure (with `errno` set).
    func encodeString8bit(_ text: String, _ version: Int32, _ level: Int32) -> UnsafeMutableRawPointer? {
        // Non-nil: the address came from a successful dlsym.
        guard let address = UnsafeRawPointer(bitPattern: encodeAddress) else { return nil }
        let function = unsafeBitCast(address, to: Encode.self)
        return text.withCString { function($0, version, level) }
    }

    /// Calls `QRcode_free`.
    func free(_ code: UnsafeMutableRawPointer) {
        guard let address = UnsafeRawPointer(bitPattern: freeAddress) else { return }
        unsafeBitCast(address, to: Free.self)(code)
    }

    /// The fields of a `QRcode`, read at the offsets of its C layout: two `int`s, then a pointer
    /// at the next pointer-aligned offset.
    struct Symbol {
        let width: Int
        let data: UnsafePointer<UInt8>?

        init(_ code: UnsafeMutableRawPointer) {
            let intSize = MemoryLayout<Int32>.size
            let alignment = MemoryLayout<UnsafeRawPointer>.alignment
            let dataOffset = (2 * intSize + alignment - 1) / alignment * alignment
            width = Int(code.load(fromByteOffset: intSize, as: Int32.self))
            data = code.load(fromByteOffset: dataOffset, as: UnsafePointer<UInt8>?.self)
        }
    }
}
