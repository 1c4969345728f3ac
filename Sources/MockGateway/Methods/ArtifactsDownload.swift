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
/// blocks of the session's transcript (`findArtifact`), and one that is not there is
/// `INVALID_REQUEST "artifact not found"`, `details {type: "artifact_not_found", artifactId}`.
///
/// Not modelled: the fake Gateway's transcripts hold text only, so no session has an artifact and
/// every lookup that passes the checks above ends in `artifact_not_found`; the success answer
/// (`{artifact, encoding: "base64", data}` or `{artifact, url}`) and the
/// `artifact_download_unsupported` refusal are never sent.
enum ArtifactsDownload {
    /// The answer to `params`: always a refusal, as the fake Gateway's transcripts hold no artifacts.
    static func answer(_ params: JSONValue?) -> Result<JSONValue, GatewayError> {
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
            throw refusal("artifact_not_found", "artifact not found", ["artifactId": .string(artifactId)])
        } catch {
            return .failure(error)
        }
    }

    /// Upstream's `artifactError`: `INVALID_REQUEST` with `details {type, …}`.
    static func refusal(_ type: String, _ message: String, _ details: [String: JSONValue] = [:]) -> GatewayError {
        var members = details
        members["type"] = .string(type)
        return GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: message, details: .object(members)))
    }
}
