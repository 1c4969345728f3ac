import Foundation
import TestSupport

/// Node.js as the oracle of JSON: the real Gateway reads every frame with `JSON.parse` and writes
/// every frame with `JSON.stringify`.
///
/// One `node` process answers a whole batch: each input is one line of base64 on its standard
/// input, each answer one line on its standard output, in order. The input is decoded as strict
/// UTF-8 (a WebSocket text frame is UTF-8, and the Gateway's WebSocket layer refuses one that is
/// not), a leading U+FEFF kept, then given to `JSON.parse`. The answer is
///
/// - `ERR` when it is refused;
/// - `OK depth merged base64` otherwise, where `depth` is the deepest nesting of arrays and
///   objects, `merged` is 1 when two keys of one object are one key to Swift (they differ only
///   in lone surrogates of keys, see below, or only in Unicode normalisation: Swift compares strings by
///   canonical equivalence), and the base64 is the UTF-8 of the value as `JSON.stringify` writes it, in the form
///   `JSONValue.encoded()` promises: object members sorted by the UTF-8 bytes of their keys, and
///   every lone surrogate of a key replaced by U+FFFD (the two documented differences between a
///   `JSONValue` and a JavaScript value; docs/fidelity.md, "JSON"). Numbers, strings (lone
///   surrogates of string values as `\udxxx`), `null` for non-finite numbers:
///   `JSON.stringify`'s own.
///
/// `node` is `OPENCLAW_NODE`, else the first `node` or `nodejs` on `PATH`. CI sets
/// `OPENCLAW_REQUIRE_NODE=1`, which turns a missing `node` from a skip into a failure.
enum NodeJSONOracle {
    /// One answer.
    enum Answer: Equatable, CustomStringConvertible {
        case refused
        case accepted(depth: Int, keysMerged: Bool, canonical: Data)

        var description: String {
            switch self {
            case .refused: "refused"
            case .accepted(let depth, let merged, let canonical):
                "accepted (depth \(depth)\(merged ? ", keys merged" : "")): \(String(decoding: canonical.prefix(300), as: UTF8.self))"
            }
        }
    }

    struct Problem: Error, CustomStringConvertible {
        var description: String
    }

    static let isRequired = ProcessInfo.processInfo.environment["OPENCLAW_REQUIRE_NODE"] == "1"

    /// The `node` executable, or why there is none.
    static let executable: Result<String, Problem> = {
        let environment = ProcessInfo.processInfo.environment
        if let configured = environment["OPENCLAW_NODE"] {
            return FileManager.default.isExecutableFile(atPath: configured)
                ? .success(configured) : .failure(Problem(description: "OPENCLAW_NODE=\(configured) is not executable"))
        }
        for directory in (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            for name in ["node", "nodejs"] {
                let path = "\(directory)/\(name)"
                if FileManager.default.isExecutableFile(atPath: path) { return .success(path) }
            }
        }
        return .failure(Problem(description: "no node on PATH; install Node.js (Debian: apt-get install nodejs) or set OPENCLAW_NODE"))
    }()

    /// Whether the Node.js tests run: `node` was found, or CI requires them (then they fail).
    static var shouldRun: Bool {
        if isRequired { return true }
        if case .success = executable { return true }
        return false
    }

    /// The script `node` runs. Written for Node.js 18 and later (Debian 12 ships 18): no
    /// `String.prototype.toWellFormed`.
    static let script = #"""
        'use strict';
        const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
        const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
        const wellFormed = (s) => s.replace(lone, '\ufffd');
        const utf8Order = (a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
        function canonical(value, depth, seen) {
          if (typeof value === 'string') return JSON.stringify(value);
          if (value === null || typeof value !== 'object') return JSON.stringify(value);
          seen.depth = Math.max(seen.depth, depth + 1);
          if (Array.isArray(value)) return '[' + value.map((item) => canonical(item, depth + 1, seen)).join(',') + ']';
          const members = new Map();
          const swiftKeys = new Set();
          for (const key of Object.keys(value)) {
            const name = wellFormed(key);
            // Swift compares strings by canonical equivalence: NFC-equal keys are one key there.
            const swiftKey = name.normalize('NFC');
            if (swiftKeys.has(swiftKey)) seen.merged = true;
            swiftKeys.add(swiftKey);
            members.set(name, value[key]);
          }
          return '{' + [...members.keys()].sort(utf8Order)
            .map((key) => JSON.stringify(key) + ':' + canonical(members.get(key), depth + 1, seen)).join(',') + '}';
        }
        let pending = '';
        const answers = [];
        function answer(line) {
          let text;
          try {
            text = decoder.decode(Buffer.from(line, 'base64'));
          } catch (error) {
            return 'ERR';
          }
          let value;
          try {
            value = JSON.parse(text);
          } catch (error) {
            return 'ERR';
          }
          try {
            const seen = { depth: 0, merged: false };
            const written = canonical(value, 0, seen);
            return 'OK ' + seen.depth + ' ' + (seen.merged ? 1 : 0) + ' ' + Buffer.from(written, 'utf8').toString('base64');
          } catch (error) {
            // Deeper than this script's own recursion allows (JSON.parse itself did not fail).
            return 'OK 1000000 0 ';
          }
        }
        process.stdin.setEncoding('latin1');
        process.stdin.on('data', (chunk) => {
          pending += chunk;
          let newline;
          while ((newline = pending.indexOf('\n')) >= 0) {
            answers.push(answer(pending.slice(0, newline)));
            pending = pending.slice(newline + 1);
          }
          if (answers.length > 0) {
            process.stdout.write(answers.join('\n') + '\n');
            answers.length = 0;
          }
        });
        """#

    /// Node's answer for each input, in order, from one `node` process.
    static func answers(_ inputs: [Data]) async throws -> [Answer] {
        let node = try executable.get()
        var batch = Data()
        for input in inputs {
            batch.append(Data(input.base64EncodedString().utf8))
            batch.append(0x0A)
        }
        let output = try await AsyncProcess.run(URL(fileURLWithPath: node), ["-e", script], input: batch, timeout: .seconds(300))
        guard output.status == 0 else {
            throw Problem(description: "node exited with \(output.status): \(output.stderrText)")
        }
        let lines = output.stdout.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast()
        var answers: [Answer] = []
        for line in lines {
            let fields = line.split(separator: 0x20, maxSplits: 3, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
            if fields == ["ERR"] {
                answers.append(.refused)
            } else if fields.count == 4, fields[0] == "OK", let depth = Int(fields[1]),
                      let canonical = Data(base64Encoded: fields[3]) {
                answers.append(.accepted(depth: depth, keysMerged: fields[2] == "1", canonical: canonical))
            } else {
                throw Problem(description: "node wrote an unreadable line: \(String(decoding: line.prefix(200), as: UTF8.self))")
            }
        }
        guard answers.count == inputs.count else {
            throw Problem(description: "node answered \(answers.count) of \(inputs.count) inputs")
        }
        return answers
    }
}
