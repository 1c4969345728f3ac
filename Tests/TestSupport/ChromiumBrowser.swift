import Foundation

/// Headless Chromium for the browser tests, found on the PATH (`chromium`, `chromium-browser`,
/// `google-chrome`) or named by `OPENCLAW_CHROMIUM`.
public enum ChromiumBrowser {
    /// The executable, `nil` when none is found.
    public static let path: String? = {
        let environment = ProcessInfo.processInfo.environment
        if let configured = environment["OPENCLAW_CHROMIUM"], FileManager.default.isExecutableFile(atPath: configured) {
            return configured
        }
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            for directory in (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
                let candidate = "\(directory)/\(name)"
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            }
        }
        return nil
    }()

    /// `OPENCLAW_REQUIRE_BROWSER=1` (set by `.ci/run`): a missing browser fails the test.
    public static let required = ProcessInfo.processInfo.environment["OPENCLAW_REQUIRE_BROWSER"] == "1"
}
