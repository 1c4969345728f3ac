import Foundation
import GatewayProtocol

/// `agents.workspace.list` and `agents.workspace.get`: read-only browsing of an agent's workspace
/// directory, the Files card of the apps and the Control UI.
///
/// Follows upstream's read-only browsing handler (`src/gateway/server-methods/agents-workspace.ts`,
/// the version with `detectMime`), its file-system rules (`src/gateway/server-methods/workspace-fs.ts
/// @0b02147150b726ac52787f6d764459242b380362`) and its closed schemas
/// (`AgentsWorkspaceListParamsSchema`, `AgentsWorkspaceGetParamsSchema` and their results):
///
/// - `list {agentId, path?, offset?, limit?}` → `{agentId, path, parentPath?, entries: [{path,
///   name, kind, size?, updatedAtMs}], totalEntries, offset}`: directories first, then by name;
///   `limit` defaults to 250 and is capped at 500; `offset` past the end is the entry count.
///   Symbolic links and anything else that is neither a regular file nor a directory are not
///   listed.
/// - `get {agentId, path}` → `{agentId, file: {path, name, size, updatedAtMs, mimeType, encoding,
///   content}}`: UTF-8 text up to 256 KiB inline (`text/plain`, `utf8`), and files with an image
///   extension up to 5 MiB as `base64` when their bytes are an image (the MIME type is sniffed
///   from the bytes, never from the name).
/// - Refusals are `INVALID_REQUEST` with `details.type` (``WorkspaceErrorType``): an absolute path
///   or one that leaves the workspace is `workspace_path_invalid`; a path through a symbolic link,
///   a missing directory, a hard-linked file, a directory given to `get` are "not found"; a file
///   over its cap is `workspace_file_too_large {maxBytes, path, size}` (decided by its size
///   before anything is read); binary content is `workspace_file_unsupported`.
///
/// The handlers read the disk (the workspace is a real directory a test fills) but hold no state.
enum AgentWorkspaceBrowser {
    /// `DEFAULT_LIST_LIMIT`.
    static let defaultListLimit = 250
    /// `MAX_LIST_LIMIT`: a larger `limit` is lowered to this.
    static let maxListLimit = 500
    /// `WORKSPACE_PREVIEW_MAX_BYTES`: the cap of a text preview.
    static let textPreviewMaxBytes = 256 * 1024
    /// `MAX_IMAGE_BYTES`: the cap of an image preview.
    static let imagePreviewMaxBytes = 5 * 1024 * 1024
    /// The extensions that select the image cap and the image path (`IMAGE_EXTENSIONS`).
    static let imageExtensions: Set<String> = ["avif", "bmp", "gif", "heic", "heif", "jpeg", "jpg", "png", "webp"]

    // MARK: - Handlers

    /// The answer to `agents.workspace.list`.
    static func list(_ params: JSONValue?, agents: AgentRoster) -> Result<JSONValue, GatewayError> {
        do throws(GatewayError) {
            let reader = try MethodParams(params, method: .agentsWorkspaceList,
                                          members: ["agentId", "path", "offset", "limit"], required: ["agentId"])
            let agentId = try reader.requiredString("agentId")
            let rawPath = try reader.string("path")
            let offset = try reader.integer("offset", minimum: 0)
            let limit = try reader.integer("limit", minimum: 1)
            let agent = try agents.resolve(agentId).get()
            let path = try WorkspacePath(rawPath)
            guard let directory = WorkspaceDisk(agent: agent)?.directory(at: path.components) else {
                throw refusal(.pathNotFound, "workspace directory not found", ["path": .string(path.browserPath)])
            }
            let entries = directory.sorted { lhs, rhs in
                if lhs.isDirectory != rhs.isDirectory { return lhs.isDirectory }
                return nameOrder(lhs.name, rhs.name)
            }
            let start = min(offset ?? 0, entries.count)
            let count = min(limit ?? defaultListLimit, maxListLimit)
            let page = entries[start..<min(entries.count, start + count)].map { entry in
                entry.json(path: path.browserPath.isEmpty ? entry.name : "\(path.browserPath)/\(entry.name)")
            }
            var result: [String: JSONValue] = [
                "agentId": .string(agent.id), "path": .string(path.browserPath), "entries": .array(page),
                "totalEntries": .int(Int64(entries.count)), "offset": .int(Int64(start)),
            ]
            if !path.browserPath.isEmpty { result["parentPath"] = .string(path.parentPath) }
            return .success(.object(result))
        } catch {
            return .failure(error)
        }
    }

    /// The answer to `agents.workspace.get`.
    static func get(_ params: JSONValue?, agents: AgentRoster) -> Result<JSONValue, GatewayError> {
        do throws(GatewayError) {
            let reader = try MethodParams(params, method: .agentsWorkspaceGet, members: ["agentId", "path"],
                                          required: ["agentId", "path"])
            let agentId = try reader.requiredString("agentId")
            let rawPath = try reader.requiredString("path")
            let agent = try agents.resolve(agentId).get()
            let path = try WorkspacePath(rawPath)
            let notFound = refusal(.fileNotFound, "workspace file not found", ["path": .string(path.browserPath)])
            guard !path.components.isEmpty, let disk = WorkspaceDisk(agent: agent),
                  let file = disk.regularFile(at: path.components)
            else { throw notFound }
            let fileExtension = path.components.last.map { ($0 as NSString).pathExtension.lowercased() } ?? ""
            let expectsImage = imageExtensions.contains(fileExtension)
            let maxBytes = expectsImage ? imagePreviewMaxBytes : textPreviewMaxBytes
            if file.size > maxBytes {
                throw refusal(.fileTooLarge, "workspace file is too large to preview",
                              ["maxBytes": .int(Int64(maxBytes)), "path": .string(path.browserPath),
                               "size": .int(Int64(file.size))])
            }
            // fs-safe's `hardlinks: "reject"`: a file with more than one link is not read.
            guard file.linkCount <= 1, let bytes = disk.read(at: path.components, maxBytes: maxBytes) else {
                throw notFound
            }
            let mimeType: String
            let content: String
            if expectsImage {
                guard let sniffed = ImageSniffer.mimeType(of: bytes) else {
                    throw refusal(.fileUnsupported, "workspace file is not UTF-8 text or a supported image",
                                  ["path": .string(path.browserPath)])
                }
                mimeType = sniffed
                content = Data(bytes).base64EncodedString()
            } else {
                guard let text = strictUTF8(bytes) else {
                    throw refusal(.fileUnsupported, "workspace file is not UTF-8 text or a supported image",
                                  ["path": .string(path.browserPath)])
                }
                mimeType = "text/plain"
                content = text
            }
            let name = path.components.last ?? path.browserPath
            return .success([
                "agentId": .string(agent.id),
                "file": [
                    "path": .string(path.browserPath), "name": .string(name), "size": .int(Int64(bytes.count)),
                    "updatedAtMs": .int(file.updatedAtMs), "mimeType": .string(mimeType),
                    "encoding": .string(expectsImage ? "base64" : "utf8"), "content": .string(content),
                ],
            ])
        } catch {
            return .failure(error)
        }
    }

    // MARK: - Rules

    /// `INVALID_REQUEST` with `details {type, ...}` (upstream `workspaceError`).
    static func refusal(_ type: WorkspaceErrorType, _ message: String, _ details: [String: JSONValue]) -> GatewayError {
        var members = details
        members["type"] = .string(type.rawValue)
        return GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: message, details: .object(members)))
    }

    /// The name order within directories and within files (upstream `localeCompare`): case
    /// folded first, then by code point so that the order is total.
    static func nameOrder(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.lowercased(), right = rhs.lowercased()
        return left == right ? lhs < rhs : left < right
    }

    /// `decodeUtf8Strict`: the text when the bytes are valid UTF-8 without a NUL byte (a leading
    /// byte-order mark is dropped, as `TextDecoder` does); `nil` otherwise.
    static func strictUTF8(_ bytes: [UInt8]) -> String? {
        guard !bytes.contains(0) else { return nil }
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        let hadError = transcode(body.makeIterator(), from: UTF8.self, to: UTF32.self, stoppingOnError: true) { _ in }
        return hadError ? nil : String(decoding: body, as: UTF8.self)
    }
}

/// A request's workspace path, checked as upstream's `resolveWorkspaceScopeOrRespond` does.
struct WorkspacePath: Sendable, Hashable {
    /// The path as the result reports it (`normalizeRelativePath`: backslashes as slashes, empty
    /// and `.` segments dropped; `..` segments kept).
    let browserPath: String
    /// The path's segments with `..` applied (what is looked up on disk).
    let components: [String]

    /// Checks `raw` (absent: the workspace root): absolute paths (POSIX or Windows) and paths that
    /// leave the workspace are `workspace_path_invalid` with `details.path` as sent.
    init(_ raw: String?) throws(GatewayError) {
        let rawPath = raw ?? ""
        let portable = rawPath.replacingOccurrences(of: "\\", with: "/")
        if portable.hasPrefix("/") || Self.isWindowsAbsolute(rawPath) {
            throw AgentWorkspaceBrowser.refusal(.pathInvalid, "path must be workspace-relative", ["path": .string(rawPath)])
        }
        let segments = portable.split(separator: "/", omittingEmptySubsequences: true).map(String.init).filter { $0 != "." }
        var resolved: [String] = []
        for segment in segments {
            if segment == ".." {
                guard !resolved.isEmpty else {
                    throw AgentWorkspaceBrowser.refusal(.pathInvalid, "path escapes the agent workspace",
                                                        ["path": .string(rawPath)])
                }
                resolved.removeLast()
            } else {
                resolved.append(segment)
            }
        }
        browserPath = segments.joined(separator: "/")
        components = resolved
    }

    /// `path.dirname(browserPath)`, with `.` as the empty root.
    var parentPath: String {
        let segments = browserPath.split(separator: "/").map(String.init)
        return segments.dropLast().joined(separator: "/")
    }

    /// `path.win32.isAbsolute`: a leading slash or backslash, or a drive letter followed by `:`
    /// and a separator.
    static func isWindowsAbsolute(_ path: String) -> Bool {
        let characters = Array(path)
        if let first = characters.first, first == "/" || first == "\\" { return true }
        guard characters.count >= 3, characters[0].isASCII, characters[0].isLetter, characters[1] == ":" else { return false }
        return characters[2] == "/" || characters[2] == "\\"
    }
}

/// One entry of a listed directory.
struct WorkspaceEntry: Sendable, Hashable {
    /// The entry's file name.
    let name: String
    /// A directory (else a regular file).
    let isDirectory: Bool
    /// The size in bytes (files).
    let size: Int
    /// The modification time, whole milliseconds.
    let updatedAtMs: Int64
    /// The number of hard links.
    let linkCount: Int

    /// `{path, name, kind, size?, updatedAtMs}` (directories carry no size).
    func json(path: String) -> JSONValue {
        var entry: [String: JSONValue] = [
            "path": .string(path), "name": .string(name), "kind": .string(isDirectory ? "directory" : "file"),
            "updatedAtMs": .int(updatedAtMs),
        ]
        if !isDirectory { entry["size"] = .int(Int64(size)) }
        return .object(entry)
    }
}

/// The workspace directory of one agent on disk, with fs-safe's rules: the root is resolved once
/// (a root reached through a symbolic link is fine), nothing below it is reached through a
/// symbolic link.
struct WorkspaceDisk {
    /// The resolved root directory.
    let root: URL

    /// The agent's workspace, or `nil` when it has none or it is not a directory.
    init?(agent: AgentFixture) {
        guard let directory = agent.workspaceDirectory, !directory.isEmpty else { return nil }
        let root = URL(fileURLWithPath: directory).resolvingSymlinksInPath()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            return nil
        }
        self.root = root
    }

    /// The entries of the directory at `components`, or `nil` when it is not a directory reached
    /// without a symbolic link.
    func directory(at components: [String]) -> [WorkspaceEntry]? {
        guard let url = url(of: components), let info = Self.info(url.path, name: url.lastPathComponent), info.isDirectory,
              let names = try? FileManager.default.contentsOfDirectory(atPath: url.path)
        else { return nil }
        return names.compactMap { Self.info(url.appendingPathComponent($0).path, name: $0) }
    }

    /// The regular file at `components`, or `nil`.
    func regularFile(at components: [String]) -> WorkspaceEntry? {
        guard let url = url(of: components), let info = Self.info(url.path, name: url.lastPathComponent),
              !info.isDirectory
        else { return nil }
        return info
    }

    /// The bytes of the file at `components`, or `nil` when it cannot be read or is larger than
    /// `maxBytes` by now.
    func read(at components: [String], maxBytes: Int) -> [UInt8]? {
        guard let url = url(of: components), let data = FileManager.default.contents(atPath: url.path),
              data.count <= maxBytes
        else { return nil }
        return [UInt8](data)
    }

    /// The URL of `components` below the root when no ancestor below the root is a symbolic link
    /// (the last component is checked by `info`).
    private func url(of components: [String]) -> URL? {
        var url = root
        for component in components.dropLast() {
            url.appendPathComponent(component)
            guard let info = Self.info(url.path, name: component), info.isDirectory else { return nil }
        }
        if let last = components.last { url.appendPathComponent(last) }
        return url
    }

    /// What `lstat` says of `path`: a directory or a regular file (a symbolic link, a socket, a
    /// device: `nil`).
    static func info(_ path: String, name: String) -> WorkspaceEntry? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let type = attributes[.type] as? FileAttributeType
        else { return nil }
        guard type == .typeDirectory || type == .typeRegular else { return nil }
        let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
        let links = (attributes[.referenceCount] as? NSNumber)?.intValue ?? 1
        return WorkspaceEntry(name: name, isDirectory: type == .typeDirectory, size: size,
                              updatedAtMs: Int64(max(0, (modified * 1000).rounded(.down))), linkCount: links)
    }
}

/// Image types by their magic bytes, for the image types the Files card previews (upstream
/// `SUPPORTED_IMAGE_MIME_TYPES`: avif, bmp, gif, heic, heif, jpeg, png, webp).
enum ImageSniffer {
    /// The MIME type of `bytes` when they start like one of the supported images.
    static func mimeType(of bytes: [UInt8]) -> String? {
        func has(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<offset + prefix.count]) == prefix
        }
        if has([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if has([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if has(Array("GIF87a".utf8)) || has(Array("GIF89a".utf8)) { return "image/gif" }
        if has(Array("RIFF".utf8)), has(Array("WEBP".utf8), at: 8) { return "image/webp" }
        if has(Array("BM".utf8)), bytes.count >= 14 { return "image/bmp" }
        if has(Array("ftyp".utf8), at: 4), bytes.count >= 12 {
            switch String(decoding: bytes[8..<12], as: UTF8.self) {
            case "avif", "avis": return "image/avif"
            case "heic", "heix": return "image/heic"
            case "mif1": return "image/heif"
            default: return nil
            }
        }
        return nil
    }
}
