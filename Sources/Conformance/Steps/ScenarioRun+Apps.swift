import Foundation
import GatewayProtocol
import MockGateway

/// One request of the client as it arrived at the Gateway, with the Gateway's answer (if it was
/// sent by the time the scenario looked).
public struct AnsweredRequest: Sendable, Hashable, CustomStringConvertible {
    /// The connection it came on.
    public var connectionId: String
    /// The request.
    public var request: RequestFrame
    /// The Gateway's response.
    public var response: ResponseFrame?

    /// `method {params}`.
    public var description: String {
        request.method + (request.params.map { " \($0.jsonString)" } ?? "")
    }
}

/// Steps of the scenarios of the apps' Files view (`WS-`) and voice wake settings (`VW-`).
extension ScenarioRun {
    /// The requests for `method` the Gateway received after `cursor`, in arrival order, each with
    /// the response the Gateway sent on the same connection (matched by request id).
    public func requests(_ method: GatewayMethod, from cursor: EventCursor = .start, on gateway: Gateway? = nil) -> [AnsweredRequest] {
        var found: [AnsweredRequest] = []
        var pending: [String: Int] = [:]
        for event in events(from: cursor, on: gateway) {
            switch event {
            case .frameIn(let connectionId, .request(let request)?, _) where request.method == method.rawValue:
                pending["\(connectionId) \(request.id)"] = found.count
                found.append(AnsweredRequest(connectionId: connectionId, request: request))
            case .frameOut(let connectionId, .response(let response)):
                if let index = pending.removeValue(forKey: "\(connectionId) \(response.id)") { found[index].response = response }
            default:
                break
            }
        }
        return found
    }

    /// The modification time of every file and folder a scenario's workspace holds:
    /// 2026-01-01T00:00:00Z, the simulated runs' epoch.
    static let workspaceModificationDate = Date(timeIntervalSince1970: 1_767_225_600)

    /// Runs `body` with a workspace directory holding `files` (relative path → content) as the
    /// workspace of agent `agentId` on the run's Gateway; the directory is removed afterwards.
    /// - Throws: `HarnessError` when the directory cannot be written, or whatever `body` throws.
    public func withWorkspace<T: Sendable>(
        _ files: [String: Data], agentId: String = AgentRoster.mainAgentId, _ body: () async throws -> T
    ) async throws -> T {
        let fileManager = FileManager.default
        let root = fileManager.temporaryDirectory.appendingPathComponent("openclaw-harness-workspace-\(UUID().uuidString.prefix(8))",
                                                                         isDirectory: true)
        defer { try? fileManager.removeItem(at: root) }
        do {
            try fileManager.createDirectory(at: root, withIntermediateDirectories: true)
            for (path, content) in files {
                let url = root.appendingPathComponent(path)
                try fileManager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try content.write(to: url)
            }
            // Every entry gets one fixed modification time, so that the `updatedAtMs` the Gateway
            // answers is the same on every run of a seed (a transcript must not carry wall time).
            let fixed: [FileAttributeKey: Any] = [.modificationDate: Self.workspaceModificationDate]
            let entries = (fileManager.enumerator(atPath: root.path)?.allObjects as? [String]) ?? []
            for entry in entries.sorted(by: { $0.count > $1.count }) {
                try fileManager.setAttributes(fixed, ofItemAtPath: root.appendingPathComponent(entry).path)
            }
            try fileManager.setAttributes(fixed, ofItemAtPath: root.path)
        } catch {
            throw HarnessError("cannot write the scenario's workspace in \(root.path): \(error.localizedDescription)")
        }
        note("workspace of agent \(agentId): \(files.count) files")
        await gateway.setAgentWorkspace(root.path, agentId: agentId)
        return try await body()
    }
}
