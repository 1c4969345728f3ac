import GatewayProtocol

/// The Files view of the reference client: read-only browsing of an agent workspace through
/// `agents.workspace.list` and `agents.workspace.get` (docs/protocol.md §9.5), as the Android
/// app's Files card does (`apps/android/.../WorkspaceFiles.kt` and `ui/WorkspaceFilesScreen.kt`
/// at 4188f999):
///
/// - a folder is listed without a `limit` (the Gateway's default page of 250; it never pages by
///   more than 500) and the next page is asked for at `offset` = the entries shown so far, until
///   `totalEntries` are shown;
/// - a file is asked for once per opening; a refusal (`workspace_file_too_large {maxBytes, path,
///   size}`, an unsupported or missing file) is shown as such and is not asked for again until the
///   user opens the file again.
///
/// Pure state: the client sends the requests and feeds the answers in.
struct WorkspaceView: Sendable, Hashable {
    /// The agent browsed when a stimulus names none (upstream's default agent id).
    static let defaultAgentId = "main"
    /// `MAX_LIST_LIMIT`: the most entries the Gateway returns for one page.
    static let maxPageLimit = 500
    /// The page size the `workspace-limit-over-max` mutant asks for.
    static let oversizedPageLimit = 1_000
    /// A folder is never paged more often than this (a Gateway that never reaches `totalEntries`).
    static let maxPages = 1_000

    /// The folder the view shows.
    struct Folder: Sendable, Hashable {
        /// Whose workspace.
        var agentId: String
        /// The folder's path (`""`: the root).
        var path: String
        /// The entries' paths, in the order shown.
        var entries: [String] = []
        /// How many entries the folder has (`totalEntries` of the newest page).
        var totalEntries = 0
    }

    /// What the preview shows.
    enum Preview: Sendable, Hashable {
        /// The file's content (`mimeType`, `size` bytes).
        case shown(path: String, mimeType: String, size: Int)
        /// The Gateway refused to preview it as too large (`workspace_file_too_large`).
        case tooLarge(path: String, size: Int?, maxBytes: Int?)
        /// No preview for another reason (unsupported, missing, not reachable).
        case unavailable(path: String, reason: String)

        /// The file previewed.
        var path: String {
            switch self {
            case .shown(let path, _, _), .tooLarge(let path, _, _), .unavailable(let path, _): path
            }
        }

        /// What the preview area says, in a person's words (`nil` when the content is shown).
        var refusal: String? {
            switch self {
            case .shown: nil
            case .tooLarge(_, let size, let maxBytes):
                "too large to preview" + (size.map { ": \($0) bytes" } ?? "") + (maxBytes.map { ", at most \($0)" } ?? "")
            case .unavailable(_, let reason): "no preview: \(reason)"
            }
        }
    }

    /// The folder shown, if any.
    private(set) var folder: Folder?
    /// The file open in the preview, if any.
    private(set) var preview: Preview?

    // MARK: - Folders

    /// Opens `path` of `agentId`: nothing shown until its first page arrives.
    mutating func open(folder path: String, agentId: String) {
        folder = Folder(agentId: agentId, path: path)
    }

    /// The params of the page of the open folder that starts at `offset`: `{agentId, path?,
    /// offset?}`, without a `limit` (the Gateway's default page).
    func listParams(offset: Int, configuration: ReferenceConfiguration) -> JSONValue {
        var params: [String: JSONValue] = ["agentId": .string(folder?.agentId ?? Self.defaultAgentId)]
        if let path = folder?.path, !path.isEmpty { params["path"] = .string(path) }
        if offset > 0 { params["offset"] = .int(Int64(offset)) }
        // The mutant asks for more than a page can hold.
        if configuration.has(.workspaceLimitOverMax) { params["limit"] = .int(Int64(Self.oversizedPageLimit)) }
        return .object(params)
    }

    /// Adds a page of the open folder (`{entries, totalEntries, offset}`); returns the offset of
    /// the next page, or `nil` when every entry is shown (or the page brought nothing new).
    mutating func applyPage(_ payload: JSONValue) -> Int? {
        guard var current = folder else { return nil }
        let known = Set(current.entries)
        let paths = (payload["entries"]?.arrayValue ?? []).compactMap { $0["path"]?.stringValue }.filter { !$0.isEmpty }
        let fresh = paths.filter { !known.contains($0) }
        current.entries += fresh
        current.totalEntries = payload["totalEntries"]?.int64Value.map(Int.init) ?? current.entries.count
        folder = current
        guard !fresh.isEmpty, current.entries.count < current.totalEntries else { return nil }
        return current.entries.count
    }

    // MARK: - Previews

    /// The params of `agents.workspace.get` for `path`.
    static func getParams(path: String, agentId: String) -> JSONValue {
        ["agentId": .string(agentId), "path": .string(path)]
    }

    /// Shows the outcome of `agents.workspace.get` for `path`.
    @discardableResult
    mutating func applyPreview(path: String, result: Result<JSONValue, RequestFailure>) -> Preview {
        let shown: Preview
        switch result {
        case .success(let payload):
            let file = payload["file"]
            shown = .shown(path: path, mimeType: file?["mimeType"]?.stringValue ?? "text/plain",
                           size: file?["size"]?.int64Value.map(Int.init) ?? 0)
        case .failure(.gateway(let error)):
            let details = error.details
            if details?["type"]?.stringValue == WorkspaceErrorType.fileTooLarge.rawValue {
                shown = .tooLarge(path: path, size: details?["size"]?.int64Value.map(Int.init),
                                  maxBytes: details?["maxBytes"]?.int64Value.map(Int.init))
            } else {
                shown = .unavailable(path: path, reason: details?["type"]?.stringValue ?? error.message)
            }
        case .failure(let failure):
            shown = .unavailable(path: path, reason: "\(failure)")
        }
        preview = shown
        return shown
    }

    /// Closes the preview (another file or folder was opened).
    mutating func closePreview() {
        preview = nil
    }
}
