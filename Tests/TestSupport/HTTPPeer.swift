import Foundation
import Locking

/// The independent HTTP client of the wire tests: `Tests/Interop/http_peer.py`, the Python
/// standard library's `http.client` and raw sockets (nothing of this package).
public enum HTTPPeer {
    /// One thing the peer does.
    public enum Step: Sendable {
        /// A request on the peer's keep-alive connection.
        case request(method: String = "GET", path: String, headers: [String: String] = [:], body: String? = nil)
        /// Raw text (with its `\r\n`) on a new connection; everything answered until close is reported.
        case raw(String, halfClose: Bool = false)

        var json: [String: Any] {
            switch self {
            case .request(let method, let path, let headers, let body):
                var object: [String: Any] = ["kind": "request", "method": method, "path": path, "headers": headers]
                if let body { object["body"] = body }
                return object
            case .raw(let text, let halfClose):
                return ["kind": "raw", "send": text, "half_close": halfClose]
            }
        }
    }

    /// What the peer saw for one step.
    public struct Result: Sendable, CustomStringConvertible {
        /// The status (`nil` for raw steps and errors).
        public var status: Int?
        /// Response headers, lower-case names.
        public var headers: [String: String]
        /// The response body as text.
        public var body: String
        /// Whether the request went over the previous request's connection.
        public var reused: Bool
        /// Everything a raw step received.
        public var raw: String?
        /// Whether the server closed a raw step's connection.
        public var closed: Bool
        /// The peer's error, if the step failed.
        public var error: String?

        /// The status line of a raw step's first response (`HTTP/1.1 400 Bad Request`).
        public var rawStatusLine: String? { raw?.components(separatedBy: "\r\n").first }

        /// A short description for test failures.
        public var description: String {
            if let error { return "error: \(error)" }
            if let raw { return "raw(closed: \(closed)): \(raw.prefix(300))" }
            return "\(status ?? 0) \(headers) \(body.prefix(200))"
        }
    }

    /// Whether the peer runs: Python exists, or CI requires it (then a missing one fails).
    public static var shouldRun: Bool {
        if InteropInterpreter.isRequired { return true }
        if case .success = interpreter { return true }
        return false
    }

    /// The interpreter (the standard library is all the peer needs).
    public static let interpreter = InteropInterpreter.find(importing: ["http.client", "ssl"])

    /// Runs the steps against `base` (`http://127.0.0.1:PORT` or `https://…`) and returns one
    /// result per step.
    /// - Throws: when Python is unavailable or the peer printed something unreadable.
    public static func run(base: String, _ steps: [Step]) async throws -> [Result] {
        let python = try interpreter.get()
        let plan = try JSONSerialization.data(withJSONObject: ["base": base, "steps": steps.map(\.json)])
        let script = InteropInterpreter.packageRoot.appendingPathComponent("Tests/Interop/http_peer.py").path
        let output = OutputBuffer()
        let process = try TestProcess(
            executable: python, arguments: ["-u", script, String(decoding: plan, as: UTF8.self)], input: .null,
            stdout: { output.append($0) }, stderr: { FileHandle.standardError.write($0) })
        _ = await process.waitForExit()
        let lines = String(decoding: output.data, as: UTF8.self).split(separator: "\n")
        return try lines.map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw InteropInterpreter.Unavailable(description: "unreadable peer line: \(line)")
            }
            return Result(status: object["status"] as? Int, headers: object["headers"] as? [String: String] ?? [:],
                          body: object["body"] as? String ?? "", reused: object["reused"] as? Bool ?? false,
                          raw: object["raw"] as? String, closed: object["closed"] as? Bool ?? false,
                          error: object["error"] as? String)
        }
    }

    private final class OutputBuffer: Sendable {
        private let bytes = Locked(Data())
        func append(_ chunk: Data) { bytes.withLock { $0.append(chunk) } }
        var data: Data { bytes.withLock { $0 } }
    }
}
