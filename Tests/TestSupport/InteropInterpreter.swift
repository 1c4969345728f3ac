#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Spawning

/// The Python interpreter of the interoperability tests, found one way for every test target.
///
/// `OPENCLAW_PYTHON` if set, else `.venv/bin/python3` in the package root; usable only when it
/// can import the modules a test needs (`websockets`, `cryptography`). CI sets
/// `OPENCLAW_REQUIRE_INTEROP=1`, which turns a missing interpreter from a skip into a failure.
public enum InteropInterpreter {
    /// Why the interpreter cannot be used, with the command that fixes it.
    public struct Unavailable: Error, CustomStringConvertible, Sendable {
        /// The reason, in one sentence.
        public var description: String
    }

    /// The package root, found from this file's path (`Tests/TestSupport/<file>`).
    public static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Whether CI requires the interoperability tests (`OPENCLAW_REQUIRE_INTEROP=1`).
    public static let isRequired = ProcessInfo.processInfo.environment["OPENCLAW_REQUIRE_INTEROP"] == "1"

    /// The command that creates the virtual environment the tests expect.
    public static let setupCommand = "python3 -m venv .venv && .venv/bin/pip install -r Tests/Interop/requirements.txt"

    /// The configured interpreter's path (`OPENCLAW_PYTHON`, else the package's `.venv`), whether
    /// or not it exists.
    public static var configuredPath: String {
        ProcessInfo.processInfo.environment["OPENCLAW_PYTHON"]
            ?? packageRoot.appendingPathComponent(".venv/bin/python3").path
    }

    /// The interpreter when it exists and imports every module of `modules`; otherwise why not.
    ///
    /// Runs the interpreter once to check the imports; callers keep the result in a `static let`.
    /// This blocks its thread for the check, so call it from a static initializer, not from a
    /// test body running on the cooperative pool many times.
    public static func find(importing modules: [String]) -> Result<String, Unavailable> {
        let path = configuredPath
        guard FileManager.default.isExecutableFile(atPath: path) else {
            return .failure(Unavailable(description: "no Python at \(path); run `\(setupCommand)` or set OPENCLAW_PYTHON"))
        }
        // Spawned without Foundation's `Process` (see `TestProcess`), and waited for with
        // `waitpid`, which returns as soon as the check exits.
        let pid: pid_t
        do {
            pid = try ProcessSpawn.spawn(path: path, arguments: ["-c", "import " + modules.joined(separator: ", ")],
                                         environment: nil, stdin: .null, stdout: .null, stderr: .null)
        } catch {
            return .failure(Unavailable(description: "\(path) does not run: \(error)"))
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard status == 0 else {
            let names = modules.joined(separator: " and ")
            return .failure(Unavailable(description: "\(path) cannot import \(names); run `\(setupCommand)`"))
        }
        return .success(path)
    }
}
