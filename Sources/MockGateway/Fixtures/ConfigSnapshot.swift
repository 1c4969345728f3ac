import Foundation
import GatewayProtocol

/// `config.get`: the Gateway configuration of the fixtures (`"config"` of `harness serve
/// --fixtures FILE`, ``GatewayFixtures/config``, `Gateway.setGatewayConfig(_:)`) answered as
/// upstream's `ConfigFileSnapshot` with its secrets redacted.
///
/// Upstream (read for facts, nothing copied): the handler `config.get` of
/// `src/gateway/server-methods/config.ts@df97f02fadfa32908cd269d235683e371788430e` (the same in
/// `@008cb77d1107550850d4b8fef512b8178fca21ef`) checks the closed empty `ConfigGetParamsSchema`
/// (`packages/gateway-protocol/src/schema/config.ts@00632cd5bb5653aef8989f897f3702d6abc9135d`)
/// and answers `redactConfigSnapshot(readConfigFileSnapshot(), uiHints)`: the snapshot
/// `{path, exists, raw, parsed, resolved, valid, config, hash?, issues, warnings, legacyIssues}`
/// (`ConfigFileSnapshot`, `src/config/types.openclaw.ts@0018db51965beceff8c3cea74ebdfae14b1ee7bd`)
/// with `config`, `parsed`, `resolved` and `raw` redacted and `hash` kept
/// (`src/config/redact-snapshot.ts@0b981a511df6ce710431e4bc7a5065cdd0d33510`).
///
/// The redaction is upstream's rule for paths the schema's UI hints do not cover
/// (`redactObjectGuessing`): a string at a dotted path that `isSensitiveConfigPath` calls
/// sensitive (`/token$/i`, `/password/i`, `/secret/i`, `/api.?key/i`, the whole path tested,
/// `src/config/schema.hints.ts@002d5d1e547c301f7db5bc38b23d8b93c3c49b58`) becomes
/// `__OPENCLAW_REDACTED__` unless it is a `${VAR}` placeholder; array items are tested at
/// `<path>[]` with the `[]` dropped; an object at a sensitive path ending in `serviceAccount` or
/// `serviceAccountRef` becomes the sentinel as a whole; everything else is walked. The fake has
/// no configuration schema, so no UI hints mark a path sensitive or not.
enum ConfigSnapshot {
    /// Upstream's `REDACTED_SENTINEL`.
    static let redactedSentinel = "__OPENCLAW_REDACTED__"
    /// The snapshot's `path`: the fake's configuration is not a file.
    static let path = "(in memory)"

    /// The answer to `config.get` with `params` over `config`.
    static func answer(_ params: JSONValue?, config: [String: JSONValue]) -> Result<JSONValue, GatewayError> {
        do throws(GatewayError) {
            _ = try MethodParams(params, method: .configGet, members: [])
            return .success(snapshot(config))
        } catch {
            return .failure(error)
        }
    }

    /// The redacted snapshot of `config`. `raw` is the configuration written as JSON (members
    /// sorted) with its secrets redacted; `hash` is the SHA-256 hex of the unredacted text.
    static func snapshot(_ config: [String: JSONValue]) -> JSONValue {
        let text = JSONValue.object(config).jsonString
        let redacted = redact(.object(config), at: "")
        return .object([
            "path": .string(path),
            "exists": true,
            "raw": .string(redacted.jsonString),
            "parsed": redacted,
            "resolved": redacted,
            "valid": true,
            "config": redacted,
            "hash": .string(SHA256Digest.hex(Data(text.utf8))),
            "issues": [],
            "warnings": [],
            "legacyIssues": [],
        ])
    }

    /// `value` at dotted `path` with the secrets replaced by ``redactedSentinel``.
    static func redact(_ value: JSONValue, at path: String) -> JSONValue {
        if let items = value.arrayValue {
            let itemPath = path + "[]"
            return .array(items.map { item in
                if isSensitive(itemPath), let text = item.stringValue, !isEnvPlaceholder(text) {
                    return .string(redactedSentinel)
                }
                return redact(item, at: itemPath)
            })
        }
        guard let object = value.objectValue else { return value }
        var result: [String: JSONValue] = [:]
        for (key, member) in object {
            let memberPath = path.isEmpty ? key : "\(path).\(key)"
            if isSensitive(memberPath), let text = member.stringValue, !isEnvPlaceholder(text) {
                result[key] = .string(redactedSentinel)
            } else if isSensitive(memberPath), isWholeObjectSensitive(memberPath), member.objectValue != nil {
                result[key] = .string(redactedSentinel)
            } else {
                result[key] = redact(member, at: memberPath)
            }
        }
        return .object(result)
    }

    /// Upstream's `isSensitivePath`: a trailing `[]` is dropped before the test.
    static func isSensitive(_ path: String) -> Bool {
        isSensitiveConfigPath(path.hasSuffix("[]") ? String(path.dropLast(2)) : path)
    }

    /// Upstream's `isSensitiveConfigPath`: the whole dotted path ends in `token` or contains
    /// `password`, `secret`, or `api` and `key` with at most one character between them (case
    /// ignored).
    static func isSensitiveConfigPath(_ path: String) -> Bool {
        let lowered = Array(path.lowercased().unicodeScalars)
        func matches(_ word: String, at index: Int) -> Bool {
            let scalars = Array(word.unicodeScalars)
            guard index >= 0, index + scalars.count <= lowered.count else { return false }
            return Array(lowered[index..<index + scalars.count]) == scalars
        }
        func contains(_ word: String) -> Bool {
            lowered.indices.contains { matches(word, at: $0) }
        }
        if matches("token", at: lowered.count - 5) || contains("password") || contains("secret") { return true }
        return lowered.indices.contains { index in
            guard matches("api", at: index) else { return false }
            if matches("key", at: index + 3) { return true }
            // `.` matches any one character but a line terminator.
            guard index + 3 < lowered.count, !["\n", "\r", "\u{2028}", "\u{2029}"].contains(lowered[index + 3]) else {
                return false
            }
            return matches("key", at: index + 4)
        }
    }

    /// Upstream's `isWholeObjectSensitivePath`: the path ends in `serviceaccount` or
    /// `serviceaccountref` (case ignored).
    static func isWholeObjectSensitive(_ path: String) -> Bool {
        let lowered = path.lowercased()
        return lowered.hasSuffix("serviceaccount") || lowered.hasSuffix("serviceaccountref")
    }

    /// Upstream's `isEnvVarPlaceholder`: the trimmed value is `${…}` with no `}` inside.
    static func isEnvPlaceholder(_ value: String) -> Bool {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix("${"), trimmed.hasSuffix("}"), trimmed.count >= 3 else { return false }
        return !trimmed.dropFirst(2).dropLast().contains("}")
    }
}
