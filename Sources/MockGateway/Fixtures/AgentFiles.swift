import Foundation
import GatewayProtocol

/// `agents.files.list/get/set`: the agent's bootstrap files (the Control UI's agent editor), kept
/// in the agent's workspace directory.
///
/// Upstream: the handlers of `src/gateway/server-methods/agents-files.ts` (the version with the
/// `expectedHash` compare-and-set and `agent_file_conflict`), the closed schemas of
/// `packages/gateway-protocol/src/schema/agents-files.ts@3266f9e9188fd4d519278d32782fb35b069160ac`,
/// and `WORKSPACE_BOOTSTRAP_FILENAMES` / `isExpectedAbsentBootstrapFile` of the agent workspace
/// module:
///
/// - the editable names are `AGENTS.md`, `SOUL.md`, `IDENTITY.md`, `USER.md`, `BOOTSTRAP.md`,
///   `MEMORY.md` (another name is `unsupported file "<name>"`); `list` shows them without
///   `IDENTITY.md`;
/// - a missing file is `{name, path, missing: true, expectedAbsent}` (`expectedAbsent` for the
///   optional `SOUL.md`, `IDENTITY.md`, `USER.md` and for `MEMORY.md`);
/// - a symbolic or hard link is `unsafe workspace file "<name>"`;
/// - `hash` is the SHA-256 hex of the bytes; `set` with `expectedHash` writes only when the
///   file's hash is that one, otherwise `agent file "<name>" changed since it was read` with
///   `details {type: "agent_file_conflict", name, currentHash?}`.
enum AgentFiles {
    /// `WORKSPACE_BOOTSTRAP_FILENAMES`.
    static let names = ["AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "BOOTSTRAP.md", "MEMORY.md"]
    /// What `agents.files.list` shows (`CORE_FILE_NAMES`: without `IDENTITY.md`).
    static let listedNames = names.filter { $0 != "IDENTITY.md" }
    /// `isExpectedAbsentBootstrapFile`.
    static let expectedAbsent: Set<String> = ["SOUL.md", "IDENTITY.md", "USER.md", "MEMORY.md"]

    /// The answer to `agents.files.list`.
    static func list(_ params: JSONValue?, agents: AgentRoster) -> Result<JSONValue, GatewayError> {
        do throws(GatewayError) {
            let reader = try MethodParams(params, method: .agentsFilesList, members: ["agentId"], required: ["agentId"])
            let workspace = try Workspace(agentId: reader.requiredString("agentId"), agents: agents)
            let files = listedNames.map { name -> JSONValue in
                guard let file = workspace.regularFile(name) else { return workspace.missing(name) }
                return ["name": .string(name), "path": .string(workspace.path(name)), "missing": false,
                        "size": .int(Int64(file.size)), "updatedAtMs": .int(file.updatedAtMs)]
            }
            return .success(["agentId": .string(workspace.agentId), "workspace": .string(workspace.directory),
                             "files": .array(files)])
        } catch {
            return .failure(error)
        }
    }

    /// The answer to `agents.files.get`.
    static func get(_ params: JSONValue?, agents: AgentRoster) -> Result<JSONValue, GatewayError> {
        do throws(GatewayError) {
            let reader = try MethodParams(params, method: .agentsFilesGet, members: ["agentId", "name"],
                                          required: ["agentId", "name"])
            let workspace = try Workspace(agentId: reader.requiredString("agentId"), agents: agents)
            let name = try workspace.editableName(reader.requiredString("name"))
            let file: JSONValue
            switch try workspace.read(name) {
            case nil: file = workspace.missing(name)
            case let (entry, bytes)?: file = workspace.present(name, entry: entry, bytes: bytes)
            }
            return .success(["agentId": .string(workspace.agentId), "workspace": .string(workspace.directory), "file": file])
        } catch {
            return .failure(error)
        }
    }

    /// The answer to `agents.files.set`, after writing the file.
    static func set(_ params: JSONValue?, agents: AgentRoster) -> Result<JSONValue, GatewayError> {
        do throws(GatewayError) {
            let reader = try MethodParams(
                params, method: .agentsFilesSet,
                members: ["agentId", "name", "content", "expectedWorkspace", "expectedHash", "expectedMissing"],
                required: ["agentId", "name", "content"])
            let agentId = try reader.requiredString("agentId")
            let rawName = try reader.requiredString("name")
            guard let content = reader.object["content"]?.stringValue else {
                throw MethodParams.invalid(.agentsFilesSet, at: "/content", "must be string")
            }
            _ = try reader.string("expectedWorkspace", nonEmpty: true)
            let expectedHash = try reader.string("expectedHash")
            if let expectedHash, !isSHA256Hex(expectedHash) {
                throw MethodParams.invalid(.agentsFilesSet, at: "/expectedHash", "must match pattern \"^[a-fA-F0-9]{64}$\"")
            }
            let expectedMissing = reader.object["expectedMissing"]
            if let expectedMissing, expectedMissing != .bool(true) {
                throw MethodParams.invalid(.agentsFilesSet, at: "/expectedMissing", "must be equal to constant")
            }
            if expectedHash != nil, expectedMissing != nil {
                throw MethodParams.invalid(.agentsFilesSet, at: "", "must NOT be valid")
            }
            let workspace = try Workspace(agentId: agentId, agents: agents)
            let name = try workspace.editableName(rawName)
            let current = try workspace.read(name)
            let currentHash = current.map { SHA256Digest.hex(Data($0.bytes)) }
            let conflict = (expectedHash.map { $0.lowercased() != currentHash } ?? false) || (expectedMissing != nil && current != nil)
            if conflict {
                var details: [String: JSONValue] = ["type": .string(WorkspaceErrorType.agentFileConflict.rawValue), "name": .string(name)]
                if let currentHash { details["currentHash"] = .string(currentHash) }
                throw GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue,
                                              message: "agent file \"\(name)\" changed since it was read", details: .object(details)))
            }
            let bytes = Array(content.utf8)
            guard (try? Data(bytes).write(to: URL(fileURLWithPath: workspace.path(name)))) != nil,
                  let entry = workspace.regularFile(name)
            else { throw workspace.unsafe(name) }
            var file = workspace.present(name, entry: entry, bytes: bytes).objectValue ?? [:]
            file["content"] = .string(content)
            return .success(["ok": true, "agentId": .string(workspace.agentId), "workspace": .string(workspace.directory),
                             "file": .object(file)])
        } catch {
            return .failure(error)
        }
    }

    /// `Sha256String`: 64 hexadecimal digits.
    static func isSHA256Hex(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (65...70).contains($0) || (97...102).contains($0) }
    }

    /// One agent's workspace directory as the file methods see it.
    struct Workspace {
        let agentId: String
        let directory: String

        /// The agent's workspace; an unknown agent is upstream's refusal, an agent without a
        /// workspace directory this Gateway's own `agent "<id>" has no workspace`.
        init(agentId: String, agents: AgentRoster) throws(GatewayError) {
            let agent = try agents.resolve(agentId).get()
            guard let directory = agent.workspaceDirectory, !directory.isEmpty else {
                throw GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "agent \"\(agentId)\" has no workspace"))
            }
            self.agentId = agent.id
            self.directory = directory
        }

        /// The file's absolute path (`path` of the entries).
        func path(_ name: String) -> String { URL(fileURLWithPath: directory).appendingPathComponent(name).path }

        /// The trimmed name when it is editable, else `unsupported file "<name>"`.
        func editableName(_ raw: String) throws(GatewayError) -> String {
            let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            guard AgentFiles.names.contains(name) else {
                throw GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "unsupported file \"\(name)\""))
            }
            return name
        }

        /// The file when it is a regular file with one link.
        func regularFile(_ name: String) -> WorkspaceEntry? {
            guard let entry = WorkspaceDisk.info(path(name), name: name), !entry.isDirectory, entry.linkCount <= 1 else { return nil }
            return entry
        }

        /// The file and its bytes; `nil` when missing; a link or anything but a regular file is
        /// `unsafe workspace file "<name>"`.
        func read(_ name: String) throws(GatewayError) -> (entry: WorkspaceEntry, bytes: [UInt8])? {
            let path = path(name)
            guard (try? FileManager.default.attributesOfItem(atPath: path)) != nil else { return nil }
            guard let entry = regularFile(name), let data = FileManager.default.contents(atPath: path) else { throw unsafe(name) }
            return (entry, [UInt8](data))
        }

        /// `unsafe workspace file "<name>"`.
        func unsafe(_ name: String) -> GatewayError {
            GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "unsafe workspace file \"\(name)\""))
        }

        /// `{name, path, missing: true, expectedAbsent}`.
        func missing(_ name: String) -> JSONValue {
            ["name": .string(name), "path": .string(path(name)), "missing": true,
             "expectedAbsent": .bool(AgentFiles.expectedAbsent.contains(name))]
        }

        /// `{name, path, missing: false, size, updatedAtMs, hash, content}`.
        func present(_ name: String, entry: WorkspaceEntry, bytes: [UInt8]) -> JSONValue {
            ["name": .string(name), "path": .string(path(name)), "missing": false, "size": .int(Int64(bytes.count)),
             "updatedAtMs": .int(entry.updatedAtMs), "hash": .string(SHA256Digest.hex(Data(bytes))),
             "content": .string(String(decoding: bytes, as: UTF8.self))]
        }
    }
}
