import Foundation
import GatewayProtocol
import MockGateway
import Testing

/// `agents.files.list/get/set` over a real socket, on a temporary workspace (upstream
/// `agents-files.ts`). Break tried: writing without comparing the hash (the set test fails).
@Suite("agents.files.list/get/set")
struct AgentFilesTests {
    func withFiles(_ body: (URL, ConnectedSession, ConnectedSession) async throws -> Void) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("agent-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try Data("# Agents\n".utf8).write(to: root.appendingPathComponent("AGENTS.md"))
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("SOUL.md").path,
                                                   withDestinationPath: root.appendingPathComponent("AGENTS.md").path)
        var configuration = GatewayConfiguration()
        configuration.agents.setWorkspace(root.path, forAgent: "main")
        try await Gateway.withGateway(configuration) { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xC1),
                                                                scopes: [OperatorScope.read.rawValue])
            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xC2),
                                                               scopes: [OperatorScope.admin.rawValue])
            try await body(root, reader, admin)
        }
    }

    static let agentsHash = SHA256Digest.hex(Data("# Agents\n".utf8))

    @Test("list: the editable files but IDENTITY.md, present ones with size, missing ones with expectedAbsent")
    func list() async throws {
        try await withFiles { root, reader, _ in
            let response = try await reader.client.request(GatewayMethod.agentsFilesList.rawValue, params: ["agentId": "main"])
            #expect(response.payload?["workspace"] == .string(root.path))
            let files = response.payload?["files"]?.arrayValue ?? []
            #expect(files.compactMap { $0["name"]?.stringValue } == ["AGENTS.md", "SOUL.md", "USER.md", "BOOTSTRAP.md", "MEMORY.md"])
            #expect(files.first?["missing"] == false && files.first?["size"] == 9)
            #expect(files[1]["missing"] == true && files[1]["expectedAbsent"] == true, "a symbolic link is not a file")
            #expect(files[3]["missing"] == true && files[3]["expectedAbsent"] == false)
        }
    }

    @Test("get: content and hash; a missing file; a link is unsafe; other names are unsupported")
    func get() async throws {
        try await withFiles { root, reader, _ in
            let agents = try await reader.client.request(GatewayMethod.agentsFilesGet.rawValue, params: ["agentId": "main", "name": " AGENTS.md "])
            #expect(agents.payload?["file"]?["content"] == "# Agents\n")
            #expect(agents.payload?["file"]?["hash"] == .string(Self.agentsHash))
            #expect(agents.payload?["file"]?["path"] == .string(root.appendingPathComponent("AGENTS.md").path))
            let user = try await reader.client.request(GatewayMethod.agentsFilesGet.rawValue, params: ["agentId": "main", "name": "USER.md"])
            #expect(user.payload?["file"] == ["name": "USER.md", "path": .string(root.appendingPathComponent("USER.md").path),
                                              "missing": true, "expectedAbsent": true])
            let soul = try await reader.client.request(GatewayMethod.agentsFilesGet.rawValue, params: ["agentId": "main", "name": "SOUL.md"])
            #expect(soul.error == ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "unsafe workspace file \"SOUL.md\""))
            let other = try await reader.client.request(GatewayMethod.agentsFilesGet.rawValue, params: ["agentId": "main", "name": "../x.md"])
            #expect(other.error?.message == "unsupported file \"../x.md\"")
            let ghost = try await reader.client.request(GatewayMethod.agentsFilesGet.rawValue, params: ["agentId": "ghost", "name": "AGENTS.md"])
            #expect(ghost.error?.message == "agent \"ghost\" not found")
        }
    }

    @Test("set: compare-and-set on the hash; expectedMissing; needs operator.admin")
    func set() async throws {
        try await withFiles { root, reader, admin in
            let refused = try await reader.client.request(GatewayMethod.agentsFilesSet.rawValue,
                                                          params: ["agentId": "main", "name": "AGENTS.md", "content": "x"])
            #expect(refused.error?.message == "missing scope: operator.admin")
            let stale = try await admin.client.request(GatewayMethod.agentsFilesSet.rawValue, params: [
                "agentId": "main", "name": "AGENTS.md", "content": "new", "expectedHash": .string(String(repeating: "0", count: 64))])
            #expect(stale.error == ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "agent file \"AGENTS.md\" changed since it was read",
                                              details: ["type": "agent_file_conflict", "name": "AGENTS.md", "currentHash": .string(Self.agentsHash)]))
            #expect(try String(contentsOf: root.appendingPathComponent("AGENTS.md"), encoding: .utf8) == "# Agents\n")
            let written = try await admin.client.request(GatewayMethod.agentsFilesSet.rawValue, params: [
                "agentId": "main", "name": "AGENTS.md", "content": "new", "expectedHash": .string(Self.agentsHash.uppercased())])
            #expect(written.payload?["ok"] == true && written.payload?["file"]?["content"] == "new")
            #expect(written.payload?["file"]?["hash"] == .string(SHA256Digest.hex(Data("new".utf8))))
            #expect(try String(contentsOf: root.appendingPathComponent("AGENTS.md"), encoding: .utf8) == "new")
            let created = try await admin.client.request(GatewayMethod.agentsFilesSet.rawValue, params: [
                "agentId": "main", "name": "USER.md", "content": "me", "expectedMissing": true])
            #expect(created.payload?["file"]?["missing"] == false)
            let again = try await admin.client.request(GatewayMethod.agentsFilesSet.rawValue, params: [
                "agentId": "main", "name": "USER.md", "content": "me too", "expectedMissing": true])
            #expect(again.error?.details?["type"] == "agent_file_conflict")
            let both = try await admin.client.request(GatewayMethod.agentsFilesSet.rawValue, params: [
                "agentId": "main", "name": "USER.md", "content": "x", "expectedMissing": true,
                "expectedHash": .string(Self.agentsHash)])
            #expect(both.error?.message == "invalid agents.files.set params: at root: must NOT be valid")
            let closed = try await admin.client.request(GatewayMethod.agentsFilesSet.rawValue, params: [
                "agentId": "main", "name": "USER.md", "content": "x", "force": true])
            #expect(closed.error?.message == "invalid agents.files.set params: at root: unexpected property 'force'")
        }
    }
}
