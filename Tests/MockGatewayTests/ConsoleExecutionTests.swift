import Foundation
import GatewayProtocol
import MockGateway
import Testing

/// The console carrying out commands on a Gateway (manual clock, real sockets for clients).
@Suite("Console execution")
struct ConsoleExecutionTests {
    /// A node that connects once and is refused; returns its request id.
    private func requestPairing(_ gateway: Gateway, identityByte: UInt8) async throws -> String {
        let client = try await TestClient.open(gateway.url, identity: try TestIdentities.make(identityByte))
        let response = try await client.connect(client.connectParams())
        return try #require(response.error?.details?["requestId"]?.stringValue)
    }

    private func result(_ console: GatewayConsole, _ line: String) async throws -> ConsoleResult {
        let reply = try #require(await console.handle(line), "no reply to \(line)")
        if let message = reply.errorMessage { Issue.record("\(line) failed: \(message)") }
        return try #require(reply.result)
    }

    private func error(_ console: GatewayConsole, _ line: String) async -> String? {
        await console.handle(line)?.errorMessage
    }

    @Test func approveLatestApprovesTheNewestPendingRequest() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            #expect(await error(console, "approve latest") == "no pending pairing request")
            let older = try await requestPairing(gateway, identityByte: 0x31)
            let newer = try await requestPairing(gateway, identityByte: 0x32)
            guard case .pending(let requests) = try await result(console, "pending") else {
                Issue.record("pending did not list requests")
                return
            }
            #expect(requests.map(\.requestId) == [older, newer])
            guard case .approved(let requestId, let device) = try await result(console, "approve latest") else {
                Issue.record("approve did not approve")
                return
            }
            #expect(requestId == newer)
            #expect(device.deviceId == (try TestIdentities.make(0x32)).deviceId)
            // The next `latest` is the newest request still pending.
            guard case .rejected(let rejected, let deviceId) = try await result(console, "reject latest") else {
                Issue.record("reject did not reject")
                return
            }
            #expect(rejected == older)
            #expect(deviceId == (try TestIdentities.make(0x31)).deviceId)
            #expect(await gateway.pendingPairingRequests().isEmpty)
            #expect(await error(console, "approve \(older)")?.contains("unknown requestId") == true)
        }
    }

    @Test func devicesRemoveAndRevoke() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            let requestId = try await requestPairing(gateway, identityByte: 0x33)
            _ = try await result(console, "approve \(requestId)")
            let deviceId = try TestIdentities.make(0x33).deviceId
            guard case .devices(let devices, let connected) = try await result(console, "devices") else {
                Issue.record("devices did not list devices")
                return
            }
            #expect(devices.map(\.deviceId) == [deviceId])
            #expect(connected.isEmpty)
            #expect(await error(console, "revoke \(deviceId) node")?.isEmpty == false, "no token was issued yet")
            let client = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0x33))
            #expect(try await client.connect(client.connectParams()).ok)
            #expect(try await result(console, "revoke \(deviceId) node") == .revoked(deviceId: deviceId, role: "node"))
            #expect(try await result(console, "remove \(deviceId)") == .removed(deviceId: deviceId))
            #expect(await gateway.pairedDevices().isEmpty)
            #expect(await error(console, "remove \(deviceId)")?.isEmpty == false)
        }
    }

    @Test func invokeLatestWaitsForTheNodesAnswer() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let console = GatewayConsole(gateway: gateway)
            #expect(await error(console, "invoke latest device.info") == "no connected node")
            let identity = try TestIdentities.make(0x34)
            let client = try await TestClient.open(gateway.url, identity: identity)
            #expect(try await client.connect(client.connectParams()).ok)

            async let reply = console.handle(#"invoke latest device.info {"verbose":true}"#)
            let request = try await client.event("node.invoke.request")
            let invoke = try #require(try request.payload?.decode(as: NodeInvokeRequest.self))
            #expect(invoke.paramsJSON == #"{"verbose":true}"#)
            _ = try await client.request("node.invoke.result", params: try JSONValue(encoding: NodeInvokeResult(
                id: invoke.id, nodeId: identity.deviceId, ok: false,
                error: NodeInvokeError(code: "NODE_BACKGROUND_UNAVAILABLE", message: "app is in the background"))))
            let answered = await reply
            guard case .invoked(let nodeId, let command, let result)? = answered?.result else {
                Issue.record("invoke did not report a result: \(String(describing: answered))")
                return
            }
            #expect(nodeId == identity.deviceId)
            #expect(command == "device.info")
            #expect(result.id == invoke.id)
            #expect(result.ok == false, "a node's ok:false is still a result")
            #expect(result.error?.code == "NODE_BACKGROUND_UNAVAILABLE")
            #expect(await error(console, "invoke someone-else device.info")?.contains("not connected") == true)
        }
    }

    @Test func invokeThatIsNeverAnsweredTimesOutAsAnError() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let console = GatewayConsole(gateway: gateway, invokeWait: .milliseconds(200))
            let client = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0x35))
            #expect(try await client.connect(client.connectParams()).ok)
            let message = await error(console, "invoke latest device.info")
            #expect(message?.contains("timed out") == true)
        }
    }

    @Test func setupCodeAdvanceAndShutdown() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            guard case .setupCode(let issued, let profile, _) = try await result(console, "setup-code") else {
                Issue.record("setup-code did not issue a code")
                return
            }
            let code = issued.code
            #expect(try SetupCode(decoding: code.encoded) == code)
            #expect(code.url == gateway.url)
            #expect(profile == "full", "a loopback URL gets upstream's full profile by default")
            #expect(issued.access == .full)
            #expect(code.expiresAtMs == gateway.clock.nowMs + 600_000)
            #expect(code.expiresAtMs == issued.expiresAtMs)
            guard case .setupCode(let limited, _, _) = try await result(console, "setup-code --profile limited") else {
                Issue.record("setup-code --profile limited did not issue a code")
                return
            }
            #expect(limited.access == .limited)

            let before = gateway.clock.nowMs
            #expect(try await result(console, "advance 1.5") == .advanced(seconds: 1.5, nowMs: before + 1_500))

            let cursor = gateway.events.count
            #expect(try await result(console, "shutdown") == .restarted)
            let events = gateway.events.elements(from: cursor)
            #expect(events.contains(.shutdown))
            #expect(events.contains(.restarted))
            // Accepting again: a new connection gets its challenge.
            _ = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0x36))
        }
    }

    @Test func approvalsAreCreatedAndResolvedAsTheConsoleSurface() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            #expect(await error(console, "resolve-approval latest deny") == "no approval has been created yet")
            guard case .approvalCreated(let first) = try await result(console, #"approval "rm -rf /tmp/x" --expires-in 60"#),
                  case .approvalCreated(let second) = try await result(console, "approval ls --decisions allow-once")
            else {
                Issue.record("approval did not create records")
                return
            }
            #expect(first.expiresAtMs - first.createdAtMs == 60_000)
            #expect(second.allowedDecisions == [.allowOnce, .deny], "deny is always offered")
            // latest: the most recently created one.
            guard case .approvalResolved(let applied, let record) = try await result(console, "resolve-approval latest deny") else {
                Issue.record("resolve-approval did not resolve")
                return
            }
            #expect(applied)
            #expect(record.id == second.id)
            #expect(record.status == .denied)
            #expect(record.resolvedBy == GatewayConsole.surface)
            guard case .approvalResolved(let again, let winner) = try await result(console, "resolve-approval \(second.id) allow-once")
            else {
                Issue.record("resolve-approval did not answer")
                return
            }
            #expect(!again, "the first answer won")
            #expect(winner.decision == .deny)
            #expect(await error(console, "resolve-approval nope deny") == "resolve-approval: approval 'nope' not found")
            #expect(await gateway.approval(id: first.id)?.status == .pending)
        }
    }

    @Test func questionsAreAnsweredCancelledAndExpire() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            #expect(await error(console, "cancel-question latest") == "no question has been created yet")
            guard case .questionCreated(let deploy) = try await result(console, #"question "Deploy to?" --options staging,production"#)
            else {
                Issue.record("question did not create a record")
                return
            }
            #expect(deploy.questions.first?.options.map(\.label) == ["staging", "production"])
            guard case .questionResolved(let answered) = try await result(console, #"answer-question latest ["staging"]"#) else {
                Issue.record("answer-question did not answer")
                return
            }
            #expect(answered.id == deploy.id)
            #expect(answered.status == .answered)
            #expect(answered.answers == ["q1": ["staging"]])

            guard case .questionCreated(let other) = try await result(console, "question Anything else? --other"),
                  case .questionResolved(let cancelled) = try await result(console, "cancel-question latest") else {
                Issue.record("question / cancel-question failed")
                return
            }
            #expect(cancelled.id == other.id)
            #expect(cancelled.status == .cancelled)

            guard case .questionCreated(let expiring) = try await result(console, "question Still there? --options yes,no --expires-in 900")
            else {
                Issue.record("question did not create a record")
                return
            }
            _ = try await result(console, "advance 901")
            #expect(await gateway.question(id: expiring.id)?.status == .expired)
            let late = await error(console, #"answer-question latest {"q1":["yes"]}"#)
            #expect(late == "INVALID_REQUEST: question '\(expiring.id)' is already expired")
            #expect(await error(console, #"answer-question nope ["x"]"#) == "answer-question: question 'nope' was not found")
        }
    }

    @Test func helpQuitAndErrorsNameTheCommand() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            #expect(try await result(console, "help") == .help(ConsoleCommandHelp.all))
            #expect(try await result(console, "quit") == .quitting)
            #expect(await console.handle("  ") == nil)
            let unknown = try #require(await console.handle("frobnicate now"))
            #expect(unknown.command == "frobnicate")
            let unbalanced = try #require(await console.handle(#"approval "rm"#))
            #expect(unbalanced.command == "approval")
            #expect(unbalanced.errorMessage != nil)
        }
    }

    /// `change-auth`: the shared secret changes on the running Gateway; a session of the old
    /// secret is closed with 4001 "gateway auth changed", the old secret is refused and the new
    /// one accepted, and the new secret is redacted by value like the configured one. A bad
    /// argument is refused without repeating it.
    @Test func changeAuthClosesSessionsOfTheOldSecretWith4001() async throws {
        let configuration = GatewayConfiguration(auth: .token("old-shared-secret"), autoApproval: .auto)
        try await Gateway.withGateway(configuration) { gateway in
            let console = GatewayConsole(gateway: gateway)
            let client = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0x51))
            #expect(try await client.connect(token: "old-shared-secret").ok)
            guard case .faultArmed(let summary) = try await result(console, "change-auth token:new-shared-secret") else {
                Issue.record("change-auth did not answer with what it did")
                return
            }
            #expect(!summary.contains("new-shared-secret"))
            let closed = try await client.closed()
            #expect(closed.received?.code?.rawValue == 4001)
            #expect(closed.received?.reason == "gateway auth changed")

            let stale = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0x51))
            #expect(try await stale.connect(token: "old-shared-secret").error?.detailCode == "AUTH_TOKEN_MISMATCH")
            let fresh = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0x51))
            #expect(try await fresh.connect(token: "new-shared-secret").ok)
            #expect(gateway.transcript.redactor.redact(text: "secret new-shared-secret here") == "secret <redacted> here")

            let usage = "change-auth: usage: change-auth <none|token:SECRET|password:SECRET>"
            #expect(await error(console, "change-auth open-sesame") == usage)
            #expect(await error(console, "change-auth") == usage)
        }
    }
}
