import Foundation
import GatewayProtocol
@testable import MockGateway
import Testing

/// The Watch direct mode glued to the Gateway (docs/protocol.md §13): setup codes, pairing,
/// `node.list`'s registry, invokes through polls, device removal, idle expiry, shutdown; driven
/// through `Gateway.respondToWatch` on the manual clock.
@Suite("Watch direct mode in the Gateway")
struct WatchGatewayTests {
    static let address = "192.0.2.40"

    struct Client {
        let gateway: Gateway
        let device: WatchTestDevice

        func send(_ method: String, _ path: String, body: [UInt8] = [], token: String? = nil) async -> WatchHTTPResponse {
            let headers = token.map { ["Authorization": "Bearer \($0)"] } ?? [:]
            return await gateway.respondToWatch(WatchHTTPRequest(method: method, path: path, headers: headers, body: body,
                                                                 clientAddress: WatchGatewayTests.address))
                ?? WatchHTTPResponse(status: 0)
        }

        func connect(_ auth: ConnectAuth) async throws -> WatchHTTPResponse {
            let challenge = await send("GET", WatchDirectRules.challengePath).json
            let nonce = challenge?["nonce"]?.stringValue ?? ""
            let ts = challenge?["ts"]?.int64Value ?? 0
            return await send("POST", WatchDirectRules.connectPath, body: try WatchTestDevice.body(device.params(nonce: nonce, signedAtMs: ts, auth: auth)))
        }
    }

    static func started() async throws -> (Gateway, Client) {
        let gateway = try await Gateway.start(GatewayConfiguration())
        return (gateway, Client(gateway: gateway, device: try WatchTestDevice()))
    }

    @Test func aNodeSetupCodePairsTheWatchWhichThenAnswersInvokesThroughItsPolls() async throws {
        let (gateway, watch) = try await Self.started()
        let code = await gateway.issueSetupCode(profile: .nodeOnly)
        #expect(code.access == .node)
        let connected = try await watch.connect(ConnectAuth(bootstrapToken: code.code.bootstrapToken))
        #expect(connected.status == 200)
        let nodeId = watch.device.identity.deviceId
        #expect(connected.json?["nodeId"] == .string(nodeId))
        let deviceToken = try #require(connected.json?["deviceToken"]?.stringValue)
        let session = try #require(connected.json?["sessionToken"]?.stringValue)
        // Paired silently with the node role, and registered as a node.
        #expect(await gateway.pairedDevices().first { $0.deviceId == nodeId }?.roles == [.node])
        let node = try #require(await gateway.connectedNodes().first { $0.nodeId == nodeId })
        #expect(node.clientId == ClientID.watchOS.rawValue)
        #expect(node.commands == ["device.info", "system.notify"])

        // An invoke reaches the Watch's poll; the posted result answers it.
        let invoke = Task { await gateway.invoke(nodeId: nodeId, command: NodeCommandName.deviceInfo.rawValue, wait: .seconds(30)) }
        let polled = await watch.send("POST", WatchDirectRules.pollPath, token: session).json
        #expect(polled?["event"]?["event"] == .string(GatewayEventName.nodeInvokeRequest.rawValue))
        let invokeId = try #require(polled?["event"]?["payload"]?["id"]?.stringValue)
        let result = Array(#"{"id":"\#(invokeId)","ok":true,"payloadJSON":"{\"model\":\"Watch7,1\"}"}"#.utf8)
        #expect(await watch.send("POST", WatchDirectRules.resultPath, body: result, token: session).json == ["ok": true])
        guard case .result(let answer) = await invoke.value else { Issue.record("the invoke was not answered"); return }
        #expect(answer.ok)
        #expect(answer.payloadJSON == #"{"model":"Watch7,1"}"#)
        #expect(await watch.send("POST", WatchDirectRules.resultPath, body: result, token: session).json == ["ok": true, "ignored": true])

        // The bootstrap token is used up; the device token connects again.
        #expect(try await watch.connect(ConnectAuth(bootstrapToken: code.code.bootstrapToken)).status == 401)
        let again = try await watch.connect(ConnectAuth(deviceToken: deviceToken))
        #expect(again.status == 200)
        #expect(again.json?["deviceToken"] == .string(deviceToken))
        // The older session was replaced.
        #expect(await watch.send("POST", WatchDirectRules.pollPath, token: session).status == 401)
        await gateway.shutdown()
    }

    @Test func onlyTheNodeSetupProfilePairsAWatch() async throws {
        let (gateway, watch) = try await Self.started()
        let full = await gateway.issueSetupCode(profile: .full)
        #expect(try await watch.connect(ConnectAuth(bootstrapToken: full.code.bootstrapToken)).status == 401)
        #expect(try await watch.connect(ConnectAuth(deviceToken: "never-issued")).status == 401)
        #expect(await gateway.connectedNodes().isEmpty)
        #expect(await gateway.pairedDevices().isEmpty)
        await gateway.shutdown()
    }

    @Test func idleExpiryRemovalAndShutdownEndTheSession() async throws {
        let (gateway, watch) = try await Self.started()
        let nodeId = watch.device.identity.deviceId
        let code = await gateway.issueSetupCode(profile: .nodeOnly)
        let first = try await watch.connect(ConnectAuth(bootstrapToken: code.code.bootstrapToken))
        let deviceToken = try #require(first.json?["deviceToken"]?.stringValue)
        await gateway.advance(by: .seconds(75))
        #expect(await gateway.connectedNodes().isEmpty)
        #expect(await watch.send("POST", WatchDirectRules.pollPath, token: first.json?["sessionToken"]?.stringValue).status == 401)

        // A held poll is answered 401 when the device is removed.
        let second = try await watch.connect(ConnectAuth(deviceToken: deviceToken))
        let session = try #require(second.json?["sessionToken"]?.stringValue)
        #expect(await gateway.connectedNodes().map(\.nodeId) == [nodeId])
        let held = Task { await watch.send("POST", WatchDirectRules.pollPath, token: session) }
        try await gateway.removeDevice(nodeId)
        #expect(await held.value.status == 401)
        #expect(await gateway.connectedNodes().isEmpty)
        #expect(try await watch.connect(ConnectAuth(deviceToken: deviceToken)).status == 401)
        await gateway.shutdown()
        #expect(await watch.send("GET", WatchDirectRules.challengePath).status == 503)
    }

    /// A restart closes the Watch transport first, as upstream's close prelude does: the session
    /// ends (a held poll gets 401 `gateway shutting down`), every Watch route is 503 while the
    /// Gateway stays down, and after the restart a new transport knows no session while the
    /// device token connects again. Break tried: no `closeWatchSessions()` in
    /// `shutdownForRestart` (the held poll is not answered and the challenge while down is 200).
    @Test func aRestartEndsWatchSessionsAndAnswers503WhileDown() async throws {
        let (gateway, watch) = try await Self.started()
        let code = await gateway.issueSetupCode(profile: .nodeOnly)
        let first = try await watch.connect(ConnectAuth(bootstrapToken: code.code.bootstrapToken))
        let deviceToken = try #require(first.json?["deviceToken"]?.stringValue)
        let session = try #require(first.json?["sessionToken"]?.stringValue)
        // A poll held when the restart begins is answered 401 with the reason.
        let cursor = gateway.events.count
        let held = Task { await watch.send("POST", WatchDirectRules.pollPath, token: session) }
        _ = try #require(await gateway.waitForEvent(from: cursor, timeout: .seconds(10)) { event in
            if case .watchRequest(_, let path) = event { path == WatchDirectRules.pollPath } else { false }
        })
        await gateway.beginRestart()
        let answered = await gateway.waitForEvent(from: cursor, timeout: .seconds(10)) { event in
            if case .watchAnswered(let info) = event { info.path == WatchDirectRules.pollPath } else { false }
        }
        #expect(answered != nil, "the held poll was not answered")
        held.cancel()
        let answer = await held.value
        #expect(answer.status == 401)
        #expect(answer.json == ["ok": false, "reason": "gateway shutting down"])
        #expect(await gateway.connectedNodes().isEmpty)
        let down = await watch.send("GET", WatchDirectRules.challengePath)
        #expect(down.status == 503)
        #expect(down.json == ["ok": false, "error": "gateway shutting down"])
        #expect(await watch.send("POST", WatchDirectRules.pollPath, token: session).status == 503)
        await gateway.resumeAfterRestart()
        #expect(await watch.send("POST", WatchDirectRules.pollPath, token: session).status == 401)
        #expect(try await watch.connect(ConnectAuth(deviceToken: deviceToken)).status == 200)
        await gateway.shutdown()
    }
}
