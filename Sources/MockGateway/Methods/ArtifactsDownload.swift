import Foundation
import GatewayProtocol

/// `artifacts.download`: one artifact (an image, audio or file block) of a session's transcript,
/// inline as base64 or by URL.
///
/// Upstream: the handler of `src/gateway/server-methods/artifacts.ts@201f71f845dfc599ee786f624969d6cbf0cec5e8`
/// with the params of its generation (`ArtifactsDownloadParamsSchema`,
/// `src/gateway/protocol/schema/artifacts.ts@5cf62c0bea6511f05ad5ac8a2b40b2a3322343fc`:
/// `{sessionKey?, runId?, taskId?, artifactId}`, every member a non-empty string, closed). After
/// the params, a query naming none of `sessionKey`, `runId`, `taskId` is refused
/// `INVALID_REQUEST "artifacts require one of sessionKey, runId, or taskId"`, `details {type:
/// "artifact_query_unsupported"}` (`requireQueryable`); then the artifact is looked up among the
/// blocks of the session's transcript (`collectArtifactsFromMessages`, ``collect(rows:sessionKey:runId:taskId:)``):
/// one that is not there is `INVALID_REQUEST "artifact not found"`, `details {type:
/// "artifact_not_found", artifactId}`; one whose block has neither data nor a safe URL is
/// `INVALID_REQUEST "artifact download is unsupported"`, `details {type:
/// "artifact_download_unsupported", artifactId}`; otherwise the answer is `{artifact, encoding:
/// "base64", data}` or `{artifact, url}` (`artifact` the summary without `data`/`url`).
///
/// Differs: the fake's rows have no `taskId`, so a `taskId` never matches; a query without
/// `sessionKey` (upstream resolves the run's session, `resolveSessionKeyForRun`) finds nothing;
/// `sizeBytes` of base64 data is the decoded length of valid base64 (Node decodes leniently).
enum ArtifactsDownload {
    /// One artifact of a transcript: the summary members and the payload it is downloaded by.
    struct Artifact: Sendable, Hashable {
        /// `artifact_` + the first 18 characters of base64url(sha256(key)).
        var id: String
        /// `image`, `audio` or `file`.
        var type: String
        /// The block's title, file name or alt text, else `"<type> <n>"`.
        var title: String
        /// The block's media type, if any.
        var mimeType: String?
        /// The size the block gives, else the decoded size of its base64 data.
        var sizeBytes: Int64?
        /// The session queried.
        var sessionKey: String
        /// The row's run, if any.
        var runId: String?
        /// The row's `__openclaw.seq`.
        var messageSeq: Int
        /// The base64 payload (mode `bytes`).
        var data: String?
        /// The safe URL (mode `url`).
        var url: String?

        /// `bytes`, `url` or `unsupported`.
        var mode: String { data != nil ? "bytes" : url != nil ? "url" : "unsupported" }

        /// Upstream's `toSummary`: every member but `data` and `url`.
        var summary: JSONValue {
            var object: [String: JSONValue] = [
                "id": .string(id), "type": .string(type), "title": .string(title), "sessionKey": .string(sessionKey),
                "messageSeq": .int(Int64(messageSeq)), "source": "session-transcript", "download": ["mode": .string(mode)],
            ]
            if let mimeType { object["mimeType"] = .string(mimeType) }
            if let sizeBytes { object["sizeBytes"] = .int(sizeBytes) }
            if let runId { object["runId"] = .string(runId) }
            return .object(object)
        }
    }

    /// The answer to `params`, looking artifacts up in `rows(sessionKey)` (the session's active rows).
    static func answer(_ params: JSONValue?, rows: (String) -> [ChatMessage]) -> Result<JSONValue, GatewayError> {
        do throws(GatewayError) {
            let reader = try MethodParams(params, method: .artifactsDownload,
                                          members: ["sessionKey", "runId", "taskId", "artifactId"],
                                          required: ["artifactId"])
            let sessionKey = try reader.string("sessionKey", nonEmpty: true)
            let runId = try reader.string("runId", nonEmpty: true)
            let taskId = try reader.string("taskId", nonEmpty: true)
            let artifactId = try reader.requiredString("artifactId")
            guard sessionKey != nil || runId != nil || taskId != nil else {
                throw refusal("artifact_query_unsupported", "artifacts require one of sessionKey, runId, or taskId")
            }
            let found = sessionKey.flatMap { key in
                collect(rows: rows(key), sessionKey: key, runId: runId, taskId: taskId).first { $0.id == artifactId }
            }
            guard let artifact = found else {
                throw refusal("artifact_not_found", "artifact not found", ["artifactId": .string(artifactId)])
            }
            if let data = artifact.data {
                return .success(["artifact": artifact.summary, "encoding": "base64", "data": .string(data)])
            }
            if let url = artifact.url {
                return .success(["artifact": artifact.summary, "url": .string(url)])
            }
            throw refusal("artifact_download_unsupported", "artifact download is unsupported", ["artifactId": .string(artifact.id)])
        } catch {
            return .failure(error)
        }
    }

    /// Upstream's `collectArtifactsFromMessages` over the rows' wire form: every artifact block of
    /// every row (of run `runId` when given; `taskId` never matches, the rows have none), in order.
    static func collect(rows: [ChatMessage], sessionKey: String, runId: String?, taskId: String?) -> [Artifact] {
        var artifacts: [Artifact] = []
        if taskId != nil { return [] }
        for row in rows {
            if let runId, row.runId != runId { continue }
            let content = row.json["content"]?.arrayValue ?? []
            for (index, value) in content.enumerated() {
                guard let block = value.objectValue, isArtifactBlock(block) else { continue }
                let type = normalizedType(text(block["type"]) ?? "file")
                let title = text(block["title"]) ?? text(block["fileName"]) ?? text(block["filename"])
                    ?? text(block["alt"]) ?? "\(type) \(artifacts.count + 1)"
                var artifact = download(block)
                artifact.id = id(sessionKey: sessionKey, messageSeq: row.seq, contentIndex: index, type: type, title: title)
                artifact.type = type
                artifact.title = title
                artifact.sessionKey = sessionKey
                artifact.runId = row.runId
                artifact.messageSeq = row.seq
                artifacts.append(artifact)
            }
        }
        return artifacts
    }

    /// Upstream's `artifactId`: `artifact_` + the first 18 characters of the base64url SHA-256 of
    /// `"<sessionKey>\0<messageSeq>\0<contentIndex>\0<type>\0<title>"`.
    static func id(sessionKey: String, messageSeq: Int, contentIndex: Int, type: String, title: String) -> String {
        let key = [sessionKey, String(messageSeq), String(contentIndex), type, title].joined(separator: "\u{0}")
        return "artifact_" + String(Base64URL.encode(SHA256Digest.hash(Data(key.utf8))).prefix(18))
    }

    /// Upstream's `isArtifactBlock`: a media type, or any of the payload members.
    static func isArtifactBlock(_ block: [String: JSONValue]) -> Bool {
        let mediaTypes: Set<String> = ["image", "audio", "file", "input_image", "input_audio", "input_file", "image_url"]
        if let type = text(block["type"])?.lowercased(), mediaTypes.contains(type) { return true }
        return ["url", "openUrl", "data", "source", "image_url", "audio_url"].contains { truthy(block[$0]) }
    }

    /// Upstream's `normalizeArtifactType`.
    static func normalizedType(_ type: String) -> String {
        switch type.trimmingCharacters(in: .whitespaces).lowercased() {
        case "image", "input_image", "image_url": "image"
        case "audio", "input_audio": "audio"
        default: "file"
        }
    }

    /// Upstream's `resolveBlockDownload`: base64 data (direct or from a `data:` URL) wins over a
    /// safe URL; the summary members other than the payload are filled in by the caller.
    static func download(_ block: [String: JSONValue]) -> Artifact {
        let source = block["source"]?.objectValue ?? [:]
        let data = text(block["data"]), content = text(block["content"]), sourceData = text(source["data"])
        let url = text(block["url"]) ?? text(block["openUrl"]), sourceURL = text(source["url"])
        let imageURL = text(block["image_url"]) ?? text(block["image_url"]?.objectValue?["url"])
        let audioURL = text(block["audio_url"])
        let dataURL = [url, sourceURL, imageURL, audioURL, data, content, sourceData].compactMap { $0 }.first(where: isDataURL)
        let direct = [data, sourceData, content].compactMap { $0 }.first { !isDataURL($0) }
        let base64 = dataURL.flatMap(base64(fromDataURL:)) ?? direct
        let remote = [url, sourceURL, imageURL, audioURL].compactMap { $0 }.first(where: isSafeURL)
        let mimeType = text(block["mimeType"]) ?? text(block["media_type"]) ?? text(source["media_type"])
            ?? text(source["mimeType"]) ?? dataURL.flatMap(mime(fromDataURL:))
        var size: Int64?
        if let explicit = (block["sizeBytes"] ?? source["sizeBytes"])?.doubleValue, explicit.isFinite, explicit >= 0 {
            size = Int64(explicit.rounded(.down))
        } else if let base64 {
            size = Data(base64Encoded: base64, options: .ignoreUnknownCharacters).map { Int64($0.count) }
        }
        return Artifact(id: "", type: "", title: "", mimeType: mimeType, sizeBytes: size, sessionKey: "", runId: nil,
                        messageSeq: 0, data: base64, url: base64 == nil ? remote : nil)
    }

    /// Upstream's `isSafeDownloadUrl`: `/api/…` paths and http(s) URLs, never `data:`.
    static func isSafeURL(_ value: String) -> Bool {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty || isDataURL(trimmed) { return false }
        if trimmed.hasPrefix("/") { return !trimmed.hasPrefix("//") && trimmed.hasPrefix("/api/") }
        guard let scheme = URL(string: trimmed)?.scheme?.lowercased(), URL(string: trimmed)?.host?.isEmpty == false else {
            return false
        }
        return scheme == "http" || scheme == "https"
    }

    private static func isDataURL(_ value: String) -> Bool { value.lowercased().hasPrefix("data:") }

    /// The payload of a `data:…;base64,` URL, whitespace removed.
    private static func base64(fromDataURL value: String) -> String? {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let comma = trimmed.firstIndex(of: ","), trimmed[..<comma].lowercased().hasSuffix(";base64") else { return nil }
        return String(trimmed[trimmed.index(after: comma)...].filter { !$0.isWhitespace })
    }

    /// The media type of a `data:` URL, lower-cased.
    private static func mime(fromDataURL value: String) -> String? {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst(5)
        let head = trimmed.prefix { $0 != ";" && $0 != "," }
        guard !head.isEmpty, trimmed.contains(",") else { return nil }
        return head.lowercased()
    }

    /// A string member trimmed, `nil` when absent, not a string or blank (upstream's `asNonEmptyString`).
    private static func text(_ value: JSONValue?) -> String? {
        guard let string = value?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines), !string.isEmpty else { return nil }
        return string
    }

    /// JavaScript truthiness of a member.
    private static func truthy(_ value: JSONValue?) -> Bool {
        switch value {
        case nil, .null?: false
        case .bool(let flag)?: flag
        case .string(let string)?: !string.isEmpty
        case .int(let number)?: number != 0
        case .double(let number)?: number != 0 && !number.isNaN
        default: true
        }
    }

    /// Upstream's `artifactError`: `INVALID_REQUEST` with `details {type, …}`.
    static func refusal(_ type: String, _ message: String, _ details: [String: JSONValue] = [:]) -> GatewayError {
        var members = details
        members["type"] = .string(type)
        return GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: message, details: .object(members)))
    }
}
