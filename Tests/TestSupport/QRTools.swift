import Foundation
import QRCode

/// Whether libqrencode, which `QRCode` opens at run time, is installed.
public enum QRLibrary {
    /// The library could be opened.
    public static let installed = (try? QREncodeLibrary.system.get()) != nil

    /// `OPENCLAW_REQUIRE_QRENCODE=1` (set by `.ci/run`): a missing library fails the tests.
    public static let required = ProcessInfo.processInfo.environment["OPENCLAW_REQUIRE_QRENCODE"] == "1"

    /// Why a QR test is skipped.
    public static let skipMessage = "libqrencode not found (apt-get install libqrencode4, brew install qrencode); set OPENCLAW_REQUIRE_QRENCODE=1 to fail instead of skipping"
}

/// `zbarimg` from Debian's zbar-tools, the independent QR decoder of the tests.
public enum ZBar {
    /// Where `zbarimg` is, if anywhere.
    public static let path: String? = ["/usr/bin/zbarimg", "/usr/local/bin/zbarimg", "/opt/homebrew/bin/zbarimg"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// `OPENCLAW_REQUIRE_ZBAR=1` (set by `.ci/run`): a missing `zbarimg` fails the tests.
    public static let required = ProcessInfo.processInfo.environment["OPENCLAW_REQUIRE_ZBAR"] == "1"

    /// Why a test that decodes QR codes is skipped.
    public static let skipMessage = "zbarimg not found (apt-get install zbar-tools); set OPENCLAW_REQUIRE_ZBAR=1 to fail instead of skipping"

    /// A decode that could not run or did not succeed.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
    }

    /// The text of the one QR code in the PNG `file`, without the trailing newline (`zbarimg
    /// --raw -q`, without blocking the cooperative pool).
    public static func decode(_ file: URL) async throws -> String {
        guard let path else { throw Failure(description: "zbarimg was not found (apt-get install zbar-tools)") }
        let output = try await AsyncProcess.run(URL(fileURLWithPath: path), ["--raw", "-q", file.path], timeout: .seconds(60))
        guard output.status == 0 else { throw Failure(description: "zbarimg exited \(output.status): \(output.stderrText)") }
        var text = output.stdoutText
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    /// The text of the one QR code in `png`, through a temporary file.
    public static func decode(_ png: [UInt8]) async throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("qr-\(UUID().uuidString).png")
        try Data(png).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try await decode(file)
    }
}
