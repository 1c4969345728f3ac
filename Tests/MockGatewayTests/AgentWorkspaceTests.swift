import Foundation
import GatewayProtocol
import MockGateway
import Testing

/// `agents.workspace.list` / `agents.workspace.get` over a real socket, against a temporary
/// workspace with links, big files and fake images (upstream `agents-workspace.ts` and its test).
///
/// Breaks tried: listing files before directories (the order test fails), a default limit of 500
/// (the pagination test fails), following symbolic links (the link tests fail), reading hard
/// links, sniffing images by extension (the disguised image is then served), checking the text
/// cap after reading only 256 KiB (the too-large details lose `size`).
@Suite("agents.workspace.list/get")
struct AgentWorkspaceTests {
    /// A workspace directory with every kind of entry the rules talk about, and a directory
    /// outside it that links point to.
    struct Fixture {
        let root: URL
        let workspace: URL
        let outside: URL

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("agent-workspace-\(UUID().uuidString)")
            workspace = root.appendingPathComponent("workspace")
            outside = root.appendingPathComponent("outside")
            let files = FileManager.default
            try files.createDirectory(at: workspace.appendingPathComponent("src"), withIntermediateDirectories: true)
            try files.createDirectory(at: workspace.appendingPathComponent("bulk"), withIntermediateDirectories: true)
            try files.createDirectory(at: outside, withIntermediateDirectories: true)
            try write("notes.md", Data("# Notes\n".utf8))
            try write(".gitignore", Data("dist\n".utf8))
            try write("src/index.ts", Data("export const ok = true;\n".utf8))
            try write("src/util.ts", Data("export const util = 1;\n".utf8))
            for index in 0..<12 { try write(String(format: "bulk/file-%02d.txt", index), Data("x".utf8)) }
            try Data("outside\n".utf8).write(to: outside.appendingPathComponent("secret.txt"))
            try files.createSymbolicLink(atPath: workspace.appendingPathComponent("linked.txt").path,
                                         withDestinationPath: outside.appendingPathComponent("secret.txt").path)
            try files.createSymbolicLink(atPath: workspace.appendingPathComponent("linked-dir").path,
                                         withDestinationPath: outside.path)
            try Data("shared\n".utf8).write(to: outside.appendingPathComponent("shared.txt"))
            try files.linkItem(atPath: outside.appendingPathComponent("shared.txt").path,
                               toPath: workspace.appendingPathComponent("shared.txt").path)
            try write("large.log", Data(repeating: UInt8(ascii: "x"), count: 260 * 1024))
            try write("exact.log", Data(repeating: UInt8(ascii: "y"), count: 256 * 1024))
            try write("shot.png", Self.png)
            try write("renamed.jpg", Self.png)
            try write("disguised.png", Data("SQLite format 3\0".utf8) + Data(repeating: 7, count: 64))
            try write("large.png", Data(repeating: 0, count: 5 * 1024 * 1024 + 1))
            try write("blob.bin", Data([0x00, 0x01, 0x02, 0xFF]))
            try write("invalid.txt", Data([0xC3, 0x28]))
        }

        func write(_ path: String, _ data: Data) throws {
            try data.write(to: workspace.appendingPathComponent(path))
        }

        func remove() { try? FileManager.default.removeItem(at: root) }

        /// A 1x1 PNG.
        static let png = Data(base64Encoded:
            "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==") ?? Data()
    }

    /// Runs `body` with a Gateway whose agent `main` browses a fresh fixture, and a reader.
    func withWorkspace(_ body: (Fixture, ConnectedSession) async throws -> Void) async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        var configuration = GatewayConfiguration()
        configuration.agents.setWorkspace(fixture.workspace.path, forAgent: "main")
        try await Gateway.withGateway(configuration) { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xA1),
                                                                scopes: [OperatorScope.read.rawValue])
            #expect(reader.hello.features.methods.contains(GatewayMethod.agentsWorkspaceList.rawValue))
            #expect(reader.hello.features.methods.contains(GatewayMethod.agentsWorkspaceGet.rawValue))
            try await body(fixture, reader)
        }
    }

    static func list(_ session: ConnectedSession, _ params: JSONValue) async throws -> ResponseFrame {
        try await session.client.request(GatewayMethod.agentsWorkspaceList.rawValue, params: params)
    }

    static func get(_ session: ConnectedSession, _ path: String) async throws -> ResponseFrame {
        try await session.client.request(GatewayMethod.agentsWorkspaceGet.rawValue, params: ["agentId": "main", "path": .string(path)])
    }

    static func names(_ response: ResponseFrame) -> [String] {
        response.payload?["entries"]?.arrayValue?.compactMap { $0["path"]?.stringValue } ?? []
    }

    @Test("the root: directories first, then files by name; symbolic links are not listed; no parentPath")
    func listsTheRoot() async throws {
        try await withWorkspace { _, reader in
            let response = try await Self.list(reader, ["agentId": "main"])
            #expect(response.ok)
            #expect(Self.names(response) == ["bulk", "src", ".gitignore", "blob.bin", "disguised.png", "exact.log",
                                             "invalid.txt", "large.log", "large.png", "notes.md", "renamed.jpg",
                                             "shared.txt", "shot.png"])
            #expect(response.payload?["path"] == "")
            #expect(response.payload?["parentPath"] == nil)
            #expect(response.payload?["totalEntries"] == 13)
            #expect(response.payload?["offset"] == 0)
            #expect(response.payload?["agentId"] == "main")
            let entries = response.payload?["entries"]?.arrayValue ?? []
            let directory = try #require(entries.first)
            #expect(directory["kind"] == "directory" && directory["size"] == nil)
            let notes = try #require(entries.first { $0["path"] == "notes.md" })
            #expect(notes["kind"] == "file" && notes["size"] == 8 && notes["name"] == "notes.md")
            #expect((notes["updatedAtMs"]?.int64Value ?? 0) > 0)
            #expect(Set(notes.objectValue?.keys.map { $0 } ?? []) == ["path", "name", "kind", "size", "updatedAtMs"])
        }
    }

    @Test("a subdirectory carries its parentPath; pages follow offset and limit, 250 by default and never more than 500")
    func paginates() async throws {
        try await withWorkspace { fixture, reader in
            let src = try await Self.list(reader, ["agentId": "main", "path": "./src/"])
            #expect(Self.names(src) == ["src/index.ts", "src/util.ts"])
            #expect(src.payload?["path"] == "src" && src.payload?["parentPath"] == "")
            let first = try await Self.list(reader, ["agentId": "main", "path": "bulk", "limit": 5])
            #expect(Self.names(first).count == 5 && first.payload?["totalEntries"] == 12)
            let tail = try await Self.list(reader, ["agentId": "main", "path": "bulk", "offset": 10, "limit": 5])
            #expect(Self.names(tail) == ["bulk/file-10.txt", "bulk/file-11.txt"] && tail.payload?["offset"] == 10)
            let past = try await Self.list(reader, ["agentId": "main", "path": "bulk", "offset": 40])
            #expect(Self.names(past).isEmpty && past.payload?["offset"] == 12)

            for index in 12..<620 { try fixture.write(String(format: "bulk/file-%03d.txt", index), Data()) }
            let byDefault = try await Self.list(reader, ["agentId": "main", "path": "bulk"])
            #expect(Self.names(byDefault).count == 250 && byDefault.payload?["totalEntries"] == 620)
            let capped = try await Self.list(reader, ["agentId": "main", "path": "bulk", "limit": 10_000])
            #expect(Self.names(capped).count == 500)
        }
    }

    @Test("paths: absolute or escaping is workspace_path_invalid; a link or a missing directory is workspace_path_not_found")
    func refusesPaths() async throws {
        try await withWorkspace { _, reader in
            for path in ["../", "src/../../outside.txt", "/etc", "C:\\Windows", "\\\\server\\share"] {
                let response = try await Self.list(reader, ["agentId": "main", "path": .string(path)])
                #expect(response.error?.code == ErrorCode.invalidRequest.rawValue, "\(path)")
                #expect(response.error?.details?["type"] == "workspace_path_invalid", "\(path)")
                #expect(response.error?.details?["path"] == .string(path), "\(path)")
            }
            for path in ["linked-dir", "missing", "notes.md"] {
                let response = try await Self.list(reader, ["agentId": "main", "path": .string(path)])
                #expect(response.error == ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "workspace directory not found",
                                                     details: ["type": "workspace_path_not_found", "path": .string(path)]), "\(path)")
            }
        }
    }

    @Test("previews: UTF-8 text inline, a real image as base64 with its sniffed type (whatever its name says)")
    func previews() async throws {
        try await withWorkspace { _, reader in
            let text = try await Self.get(reader, "notes.md")
            #expect(text.payload?["agentId"] == "main")
            #expect(text.payload?["file"] == ["path": "notes.md", "name": "notes.md", "size": 8,
                                              "updatedAtMs": text.payload?["file"]?["updatedAtMs"] ?? .null,
                                              "mimeType": "text/plain", "encoding": "utf8", "content": "# Notes\n"])
            let exact = try await Self.get(reader, "exact.log")
            #expect(exact.payload?["file"]?["size"] == .int(256 * 1024), "256 KiB is still previewed")
            let image = try await Self.get(reader, "shot.png")
            #expect(image.payload?["file"]?["encoding"] == "base64" && image.payload?["file"]?["mimeType"] == "image/png")
            #expect(image.payload?["file"]?["content"] == .string(Fixture.png.base64EncodedString()))
            let renamed = try await Self.get(reader, "renamed.jpg")
            #expect(renamed.payload?["file"]?["mimeType"] == "image/png")
            let nested = try await Self.get(reader, "src/../src/index.ts")
            #expect(nested.payload?["file"]?["path"] == "src/../src/index.ts")
            #expect(nested.payload?["file"]?["content"] == "export const ok = true;\n")
        }
    }

    @Test("refusals: too large with {maxBytes, path, size}; links, directories and missing files not found; binaries unsupported")
    func refusesFiles() async throws {
        try await withWorkspace { _, reader in
            let large = try await Self.get(reader, "large.log")
            #expect(large.error == ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "workspace file is too large to preview",
                                              details: ["type": "workspace_file_too_large", "maxBytes": .int(256 * 1024),
                                                        "path": "large.log", "size": .int(260 * 1024)]))
            let largeImage = try await Self.get(reader, "large.png")
            #expect(largeImage.error?.details?["maxBytes"] == .int(5 * 1024 * 1024))
            #expect(largeImage.error?.details?["size"] == .int(5 * 1024 * 1024 + 1))
            for path in ["linked.txt", "linked-dir/secret.txt", "shared.txt", "src", "missing.txt"] {
                let response = try await Self.get(reader, path)
                #expect(response.error == ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "workspace file not found",
                                                     details: ["type": "workspace_file_not_found", "path": .string(path)]), "\(path)")
            }
            for path in ["disguised.png", "blob.bin", "invalid.txt"] {
                let response = try await Self.get(reader, path)
                #expect(response.error == ErrorShape(code: ErrorCode.invalidRequest.rawValue,
                                                     message: "workspace file is not UTF-8 text or a supported image",
                                                     details: ["type": "workspace_file_unsupported", "path": .string(path)]), "\(path)")
            }
            let escape = try await Self.get(reader, "../outside/secret.txt")
            #expect(escape.error?.details?["type"] == "workspace_path_invalid")
        }
    }

    @Test("params are closed; an unknown agent is refused; an agent without a workspace has no directory")
    func refusesParamsAndAgents() async throws {
        try await withWorkspace { _, reader in
            let cases: [(String, JSONValue, String)] = [
                (GatewayMethod.agentsWorkspaceList.rawValue, ["agentId": "main", "recursive": true],
                 "invalid agents.workspace.list params: at root: unexpected property 'recursive'"),
                (GatewayMethod.agentsWorkspaceList.rawValue, ["path": ""],
                 "invalid agents.workspace.list params: at root: must have required property 'agentId'"),
                (GatewayMethod.agentsWorkspaceList.rawValue, ["agentId": "main", "limit": 0],
                 "invalid agents.workspace.list params: at /limit: must be >= 1"),
                (GatewayMethod.agentsWorkspaceList.rawValue, ["agentId": "main", "offset": 1.5],
                 "invalid agents.workspace.list params: at /offset: must be integer"),
                (GatewayMethod.agentsWorkspaceList.rawValue, ["agentId": ""],
                 "invalid agents.workspace.list params: at /agentId: must NOT have fewer than 1 characters"),
                (GatewayMethod.agentsWorkspaceGet.rawValue, ["agentId": "main", "path": "notes.md", "encoding": "base64"],
                 "invalid agents.workspace.get params: at root: unexpected property 'encoding'"),
                (GatewayMethod.agentsWorkspaceGet.rawValue, ["agentId": "main"],
                 "invalid agents.workspace.get params: at root: must have required property 'path'"),
                (GatewayMethod.agentsWorkspaceGet.rawValue, ["agentId": "ghost", "path": "notes.md"], "agent \"ghost\" not found"),
                (GatewayMethod.agentsWorkspaceList.rawValue, ["agentId": "ghost"], "agent \"ghost\" not found"),
            ]
            for (method, params, message) in cases {
                let response = try await reader.client.request(method, params: params)
                #expect(response.error == ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: message), "\(params)")
            }
        }
        try await Gateway.withGateway { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xA2),
                                                                scopes: [OperatorScope.read.rawValue])
            let response = try await Self.list(reader, ["agentId": "main"])
            #expect(response.error?.details?["type"] == "workspace_path_not_found")
            let approver = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xA3),
                                                                  scopes: [OperatorScope.approvals.rawValue])
            let refused = try await Self.list(approver, ["agentId": "main"])
            #expect(refused.error?.message == "missing scope: operator.read")
        }
    }

    @Test("the scripting API sets a workspace at run time; agents.list names the agents")
    func scriptedWorkspace() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        try await Gateway.withGateway { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xA4),
                                                                scopes: [OperatorScope.read.rawValue])
            await gateway.setAgentWorkspace(fixture.workspace.appendingPathComponent("src").path, agentId: "coder")
            let listed = try await Self.list(reader, ["agentId": "coder"])
            #expect(Self.names(listed) == ["index.ts", "util.ts"])
            let agents = try await reader.client.request(GatewayMethod.agentsList.rawValue, params: [:])
            #expect(agents.payload == ["defaultId": "main", "mainKey": "main", "scope": "per-sender",
                                       "agents": [["id": "main"], ["id": "coder"]]])
            let bad = try await reader.client.request(GatewayMethod.agentsList.rawValue, params: ["agentId": "main"])
            #expect(bad.error?.message == "invalid agents.list params: at root: unexpected property 'agentId'")
        }
    }
}
