import Foundation
import GatewayProtocol
import Locking

/// Removes secrets from everything the Gateway records or prints: frames (parsed or not),
/// the upgrade request's target and headers, and log lines.
///
/// Two rules, neither of which needs the text to be valid JSON:
/// - **By key.** The value of a member whose name is a secret key (``isSecretKey(_:)``: `token`,
///   `password`, `bootstrapToken`, `deviceToken`, `setupCode`, any name ending in `token` or
///   containing `password` or `secret`, ...) is replaced by `<redacted>`: in JSON text
///   (`"token":"…"`, also when the frame is cut off inside the value), in `key=value` pairs
///   (query strings, log lines), and after `Bearer ` / in `Authorization`-style headers.
/// - **By value.** Every secret the redactor knows is replaced wherever it appears: the
///   configured shared token or password (``pin(_:)``), and every value it has seen under a
///   secret key (``learn(_:)``: tokens the Gateway issued and tokens clients presented).
///   Values shorter than ``minimumValueLength`` characters are redacted by key only, so that a
///   test secret such as `x` does not blank out every `x` in a log.
///
/// A disabled redactor (`--show-secrets`) changes nothing and learns nothing.
public final class SecretRedactor: Sendable {
    /// What a secret is replaced with.
    public static let placeholder = "<redacted>"
    /// The shortest value redacted wherever it appears.
    public static let minimumValueLength = 6
    /// How many learned values are kept (the oldest are forgotten first; pinned ones never).
    public static let learnedCapacity = 4_096

    /// Member names (lower-cased) whose string values are secrets, besides the suffix and
    /// substring rules of ``isSecretKey(_:)``.
    public static let secretKeyNames: Set<String> = [
        "token", "devicetoken", "bootstraptoken", "password", "sendgrant", "relayhandle", "approvalruntimetoken",
        "agentruntimeidentitytoken", "setupcode", "authorization", "proxy-authorization", "cookie", "set-cookie",
        "apikey", "api_key", "api-key", "passwd", "pwd",
    ]

    private struct State: Sendable {
        /// Values made of base64url characters, found as whole runs of such characters.
        var learned: Set<String> = []
        /// How many learned values have each UTF-8 length (indexed by length).
        var learnedLengths: [Int] = []
        var learnedOrder: [String] = []
        var learnedHead = 0
        /// Values with other characters, found by substring search.
        var pinned: [String] = []
        var learnedPinned: [String] = []
        /// Counts the changes to what is known: a snapshot of an older version is stale.
        var version = 0
    }

    /// Whether anything is redacted.
    public let isEnabled: Bool
    private let isLearning: Bool
    // All mutable state is behind the lock.
    private let state = Locked(State())

    /// Creates a redactor.
    /// - Parameters:
    ///   - enabled: `false` turns every method into the identity (`--show-secrets`).
    ///   - learning: `false` redacts by key and pinned values only, remembering nothing.
    public init(enabled: Bool = true, learning: Bool = true) {
        self.isEnabled = enabled
        self.isLearning = learning
    }

    /// Whether `name` names a secret: one of ``secretKeyNames``, or (case-insensitively) ending
    /// in `token`, or containing `password` or `secret`.
    public static func isSecretKey(_ name: some StringProtocol) -> Bool {
        // Byte-level (ASCII case folding; a non-ASCII name matches only by its ASCII letters)
        // and without copying the name: this runs for every member of every recorded frame,
        // and Foundation's substring search was a measurable share of a conformance run
        // (Benchmarks/README.md).
        name.utf8.withContiguousStorageIfAvailable(isSecretKey(bytes:))
            ?? Array(name.utf8).withUnsafeBufferPointer(isSecretKey(bytes:))
    }

    private static func isSecretKey(bytes name: UnsafeBufferPointer<UInt8>) -> Bool {
        name.count >= 5 && equalsLowered(UnsafeBufferPointer(rebasing: name[(name.count - 5)...]), suffixToken)
            || containsLowered(name, passwordBytes) || containsLowered(name, secretBytes)
            || secretKeyNameBytes.contains { equalsLowered(name, $0) }
    }

    private static let suffixToken = Array("token".utf8)
    private static let passwordBytes = Array("password".utf8)
    private static let secretBytes = Array("secret".utf8)
    private static let secretKeyNameBytes = secretKeyNames.sorted().map { Array($0.utf8) }

    /// `byte` with ASCII upper case folded to lower case.
    private static func lowered(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }

    /// Whether `text`, ASCII-lower-cased, is `lower` (which is lower case).
    private static func equalsLowered(_ text: UnsafeBufferPointer<UInt8>, _ lower: [UInt8]) -> Bool {
        guard text.count == lower.count else { return false }
        for index in 0..<text.count where lowered(text[index]) != lower[index] { return false }
        return true
    }

    /// Whether `text`, ASCII-lower-cased, contains `lower` (which is lower case and not empty).
    private static func containsLowered(_ text: UnsafeBufferPointer<UInt8>, _ lower: [UInt8]) -> Bool {
        guard text.count >= lower.count else { return false }
        var index = 0
        let last = text.count - lower.count
        while index <= last {
            if lowered(text[index]) == lower[0] {
                var offset = 1
                while offset < lower.count, lowered(text[index + offset]) == lower[offset] { offset += 1 }
                if offset == lower.count { return true }
            }
            index += 1
        }
        return false
    }

    /// Whether `needle` occurs in `haystack` (bytes; an empty needle always does).
    static func contains(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = needle.first else { return true }
        guard haystack.count >= needle.count else { return false }
        var index = 0
        let last = haystack.count - needle.count
        while index <= last {
            if haystack[index] == first {
                var offset = 1
                while offset < needle.count, haystack[index + offset] == needle[offset] { offset += 1 }
                if offset == needle.count { return true }
            }
            index += 1
        }
        return false
    }

    private static func contains(_ haystack: String, _ needle: String) -> Bool {
        var haystack = haystack
        var needle = needle
        return haystack.withUTF8 { h in needle.withUTF8 { n in contains(h, n) } }
    }

    // MARK: Known values

    /// Remembers a configured secret (the shared token or password); it is never forgotten.
    public func pin(_ secret: String) {
        guard isEnabled, secret.count >= Self.minimumValueLength else { return }
        state.withLock { state in
            if !state.pinned.contains(secret) {
                state.pinned.append(secret)
                state.version += 1
            }
        }
    }

    /// Remembers a secret value seen under a secret key (an issued or a presented token).
    public func learn(_ secret: String) {
        guard isEnabled, isLearning, secret.count >= Self.minimumValueLength, secret != Self.placeholder else { return }
        state.withLock { state in
            if Self.isRunOnly(secret) {
                guard !state.learned.contains(secret) else { return }
                state.learned.insert(secret)
                state.version += 1
                let length = secret.utf8.count
                if state.learnedLengths.count <= length {
                    state.learnedLengths.append(contentsOf: repeatElement(0, count: length + 1 - state.learnedLengths.count))
                }
                state.learnedLengths[length] += 1
                state.learnedOrder.append(secret)
                if state.learned.count > Self.learnedCapacity {
                    let oldest = state.learnedOrder[state.learnedHead]
                    state.learnedHead += 1
                    state.learned.remove(oldest)
                    state.learnedLengths[oldest.utf8.count] -= 1
                    if state.learnedHead > 1_024 {
                        state.learnedOrder.removeFirst(state.learnedHead)
                        state.learnedHead = 0
                    }
                }
            } else if !state.pinned.contains(secret), !state.learnedPinned.contains(secret) {
                state.learnedPinned.append(secret)
                state.version += 1
                if state.learnedPinned.count > 64 { state.learnedPinned.removeFirst() }
            }
        }
    }

    /// Remembers every string found under a secret key in `value` (also inside `payloadJSON` /
    /// `paramsJSON` strings).
    public func learnSecrets(in value: JSONValue) {
        guard isEnabled, isLearning else { return }
        Self.walkSecretValues(value) { learn($0) }
    }

    /// How many secret values are known (pinned and learned).
    public var knownSecretCount: Int {
        state.withLock { $0.learned.count + $0.pinned.count + $0.learnedPinned.count }
    }

    // MARK: Redacting

    /// `value` with secret members replaced (by key), and every known secret replaced in every
    /// other string (by value). Learns what it redacts by key.
    public func redact(_ value: JSONValue) -> JSONValue {
        guard isEnabled else { return value }
        // One walk finds the values under secret keys and redacts with what is known; only when
        // learning them changed what is known (a secret seen for the first time, which the rest
        // of the frame must not show either) does a second walk redact with the new knowledge.
        // The result is the same as learning first and redacting then, without a second walk
        // of every recorded frame (Benchmarks/README.md).
        let before = snapshot()
        var found: [String] = []
        let first = Self.changed(value, known: before, found: &found)
        guard isLearning, !found.isEmpty else { return first ?? value }
        for secret in found { learn(secret) }
        let after = snapshot()
        guard after.version != before.version else { return first ?? value }
        var ignored: [String] = []
        return Self.changed(value, known: after, found: &ignored) ?? value
    }

    /// `text` (a frame that is not JSON, a log line, any output) with secrets replaced by key
    /// and by value. Learns what it redacts by key.
    public func redact(text: String) -> String {
        guard isEnabled else { return text }
        var bytes = Array(text.utf8)
        var found: [String] = []
        bytes = Self.redactJSONMembers(bytes, found: &found)
        bytes = Self.redactPairs(bytes, found: &found)
        for secret in found { learn(secret) }
        return Self.redactValues(String(decoding: bytes, as: UTF8.self), known: snapshot())
    }

    /// Learns what ``redact(text:)`` would learn from `text` (the values under secret keys and
    /// after `Bearer `) without building the redacted text: for text that is not kept but may
    /// reveal a secret that later text must not show.
    public func learnSecrets(inText text: String) {
        guard isEnabled, isLearning else { return }
        var found: [String] = []
        let bytes = Self.redactJSONMembers(Array(text.utf8), found: &found)
        _ = Self.redactPairs(bytes, found: &found)
        for secret in found { learn(secret) }
    }

    /// Only the by-value rule: every known secret in `text` replaced.
    public func redactKnownValues(in text: String) -> String {
        guard isEnabled else { return text }
        return Self.redactValues(text, known: snapshot())
    }

    /// The request target of an upgrade request (`/path?query`) with secret query parameters
    /// and known secrets replaced.
    public func redact(requestTarget target: String) -> String {
        redact(text: target)
    }

    /// Header fields with secrets replaced: the whole value of a field whose name is a secret
    /// key (`Authorization`, `Cookie`, `X-OpenClaw-Token`, ...), except a leading scheme such as
    /// `Bearer`; every other value by the text rules.
    public func redact(headers: [(name: String, value: String)]) -> [(name: String, value: String)] {
        guard isEnabled else { return headers }
        return headers.map { field in
            guard Self.isSecretKey(field.name) else { return (field.name, redact(text: field.value)) }
            let parts = field.value.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].allSatisfy(\.isLetter) {
                learn(String(parts[1]))
                return (field.name, "\(parts[0]) \(Self.placeholder)")
            }
            learn(field.value)
            return (field.name, Self.placeholder)
        }
    }

    // MARK: - Implementation

    private struct Known: Sendable {
        var learned: Set<String>
        /// How many learned values have each UTF-8 length: a run of another length is no secret
        /// and is not looked up.
        var learnedLengths: [Int]
        var substrings: [String]
        var version: Int
        var isEmpty: Bool { learned.isEmpty && substrings.isEmpty }
    }

    private func snapshot() -> Known {
        state.withLock { state in
            Known(learned: state.learned, learnedLengths: state.learnedLengths,
                  substrings: state.learnedPinned.isEmpty ? state.pinned : state.pinned + state.learnedPinned,
                  version: state.version)
        }
    }

    private static func walkSecretValues(_ value: JSONValue, _ found: (String) -> Void) {
        switch value {
        case .object(let members):
            for (key, member) in members {
                if let text = member.stringValue {
                    if isSecretKey(key) {
                        found(text)
                    } else if key == "payloadJSON" || key == "paramsJSON", let inner = try? JSONValue(parsing: text) {
                        walkSecretValues(inner, found)
                    }
                } else {
                    walkSecretValues(member, found)
                }
            }
        case .array(let items):
            for item in items { walkSecretValues(item, found) }
        default:
            break
        }
    }

    /// `value` redacted, or `nil` when redacting changes nothing: most of a frame has no
    /// secret, and rebuilding every object of every recorded frame was a measurable share of a
    /// conformance run. Appends to `found` every string under a secret key (also inside
    /// `payloadJSON` / `paramsJSON`), as ``walkSecretValues(_:_:)`` finds them.
    private static func changed(_ value: JSONValue, known: Known, found: inout [String]) -> JSONValue? {
        switch value {
        case .object(let members):
            var result: [String: JSONValue]?
            for (key, member) in members {
                let replacement: JSONValue?
                if let text = member.stringValue {
                    if isSecretKey(key) {
                        found.append(text)
                        replacement = text == placeholder ? nil : .string(placeholder)
                    } else if key == "payloadJSON" || key == "paramsJSON", let inner = try? JSONValue(parsing: text),
                              inner.objectValue != nil || inner.arrayValue != nil {
                        // Push registrations and invoke params carry secrets inside a JSON string
                        // (always written back compact, with sorted keys).
                        let rewritten = (changed(inner, known: known, found: &found) ?? inner).jsonString
                        replacement = rewritten == text ? nil : .string(rewritten)
                    } else {
                        replacement = changedValues(text, known: known).map(JSONValue.string)
                    }
                } else {
                    replacement = changed(member, known: known, found: &found)
                }
                if let replacement {
                    if result == nil { result = members }
                    result?[key] = replacement
                }
            }
            return result.map(JSONValue.object)
        case .array(let items):
            var result: [JSONValue]?
            for (index, item) in items.enumerated() {
                guard let replacement = changed(item, known: known, found: &found) else { continue }
                if result == nil { result = items }
                result?[index] = replacement
            }
            return result.map(JSONValue.array)
        case .string, .illFormedString:
            // An ill-formed string is searched as its well-formed text (lone surrogates U+FFFD).
            return value.stringValue.flatMap { changedValues($0, known: known) }.map(JSONValue.string)
        default:
            return nil
        }
    }

    /// Base64url characters: the alphabet of the tokens the Gateway issues.
    private static func isRunByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    private static func isRunOnly(_ text: String) -> Bool { text.utf8.allSatisfy(isRunByte) }

    private static func redactValues(_ text: String, known: Known) -> String {
        changedValues(text, known: known) ?? text
    }

    /// `text` with every known secret replaced, or `nil` when it holds none.
    private static func changedValues(_ text: String, known: Known) -> String? {
        guard !known.isEmpty, text.utf8.count >= minimumValueLength else { return nil }
        var result = text
        var replaced = false
        for secret in known.substrings where contains(result, secret) {
            result = result.replacingOccurrences(of: secret, with: placeholder)
            replaced = true
        }
        guard !known.learned.isEmpty else { return replaced ? result : nil }
        // Whole runs of token characters are looked up; a run of a length no known secret has
        // cannot be one, so a large payload costs one pass and no copies.
        let output: [UInt8]? = result.withUTF8 { bytes -> [UInt8]? in
            var output: [UInt8] = []
            var changed = false
            var index = 0
            var copiedUpTo = 0
            while index < bytes.count {
                guard isRunByte(bytes[index]) else { index += 1; continue }
                var end = index + 1
                while end < bytes.count, isRunByte(bytes[end]) { end += 1 }
                let length = end - index
                if length >= minimumValueLength, length < known.learnedLengths.count, known.learnedLengths[length] > 0,
                   known.learned.contains(String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<end]), as: UTF8.self)) {
                    if !changed { output.reserveCapacity(bytes.count); changed = true }
                    output.append(contentsOf: bytes[copiedUpTo..<index])
                    output.append(contentsOf: placeholder.utf8)
                    copiedUpTo = end
                }
                index = end
            }
            guard changed else { return nil }
            output.append(contentsOf: bytes[copiedUpTo...])
            return output
        }
        return output.map { String(decoding: $0, as: UTF8.self) } ?? (replaced ? result : nil)
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// `"key" : "value"` with a secret key: the value's characters become the placeholder, also
    /// when the text ends inside the value (a truncated frame).
    static func redactJSONMembers(_ bytes: [UInt8], found: inout [String]) -> [UInt8] {
        guard bytes.contains(UInt8(ascii: "\"")) else { return bytes }
        return bytes.withUnsafeBufferPointer { input -> [UInt8] in
            var output: [UInt8] = []
            output.reserveCapacity(input.count)
            var index = 0
            var copied = 0
            // After a secret key and its colon, the next string literal is a secret.
            var afterSecretKey = false
            var sawColon = false
            while index < input.count {
                let byte = input[index]
                if byte == UInt8(ascii: "\"") {
                    let (end, closed) = RawFrameInspection.stringEnd(input, from: index)
                    if afterSecretKey && sawColon {
                        output.append(contentsOf: input[copied...index])
                        let valueEnd = closed ? end : input.count
                        found.append(String(decoding: UnsafeBufferPointer(rebasing: input[(index + 1)..<valueEnd]), as: UTF8.self))
                        output.append(contentsOf: placeholder.utf8)
                        copied = valueEnd
                        afterSecretKey = false
                        sawColon = false
                        index = closed ? end + 1 : input.count
                        continue
                    }
                    let content = UnsafeBufferPointer(rebasing: input[(index + 1)..<min(end, input.count)])
                    afterSecretKey = closed && content.count <= 64 && isSecretKey(String(decoding: content, as: UTF8.self))
                    sawColon = false
                    index = closed ? end + 1 : input.count
                    continue
                }
                if afterSecretKey {
                    if byte == UInt8(ascii: ":") && !sawColon {
                        sawColon = true
                    } else if !isWhitespace(byte) {
                        afterSecretKey = false
                        sawColon = false
                    }
                }
                index += 1
            }
            output.append(contentsOf: input[copied...])
            return output
        }
    }

    private static func isKeyByte(_ byte: UInt8) -> Bool {
        isRunByte(byte) || byte == UInt8(ascii: ".")
    }

    private static func isPairValueEnd(_ byte: UInt8) -> Bool {
        isWhitespace(byte) || [UInt8(ascii: "&"), UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: ","),
                               UInt8(ascii: ";"), UInt8(ascii: "#"), UInt8(ascii: ")"), UInt8(ascii: "}"),
                               UInt8(ascii: "]"), UInt8(ascii: "<")].contains(byte)
    }

    /// `key=value` with a secret key (query strings, log lines) and `Bearer value`.
    static func redactPairs(_ bytes: [UInt8], found: inout [String]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        var copied = 0
        let bearer = Array("bearer ".utf8)
        while index < bytes.count {
            let byte = bytes[index]
            var valueStart: Int?
            if byte == UInt8(ascii: "=") {
                var keyStart = index
                while keyStart > 0, isKeyByte(bytes[keyStart - 1]) { keyStart -= 1 }
                if keyStart < index, isSecretKey(String(decoding: bytes[keyStart..<index], as: UTF8.self)) {
                    valueStart = index + 1
                }
            } else if (byte | 0x20) == bearer[0], index + bearer.count <= bytes.count,
                      bytes[index..<(index + bearer.count)].map({ $0 | 0x20 }) == bearer.map({ $0 | 0x20 }),
                      index == 0 || !isKeyByte(bytes[index - 1]) {
                valueStart = index + bearer.count
            }
            guard let start = valueStart else { index += 1; continue }
            var end = start
            while end < bytes.count, !isPairValueEnd(bytes[end]) { end += 1 }
            let value = bytes[start..<end]
            if !value.isEmpty, !value.elementsEqual(placeholder.utf8) {
                found.append(String(decoding: value, as: UTF8.self))
                output.append(contentsOf: bytes[copied..<start])
                output.append(contentsOf: placeholder.utf8)
                copied = end
            }
            index = max(end, index + 1)
        }
        guard copied > 0 else { return bytes }
        output.append(contentsOf: bytes[copied...])
        return output
    }
}
