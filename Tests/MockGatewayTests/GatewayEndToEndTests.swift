import Foundation
import GatewayProtocol
import MockGateway
import Testing
import WebSocketTransport

/// The node flow over real sockets: challenge, pairing, approval, token, invoke, presence.
@Suite("Gateway end to end")
struct GatewayEndToEndTests {
    @Test func unpairedNodeGetsPairingRequiredThenHelloAfterApproval() async throws {
        try await Gateway.withGateway { gateway in
            let identity = try TestIdentities.make(1)
            let first = try await TestClient.open(gateway.url, identity: identity)
            let rejected = try await first.connect(first.connectParams())
            #expect(rejected.ok == false)
            #expect(rejected.error?.code == "NOT_PAIRED")
            #expect(rejected.error?.message == "pairing required: device is not approved yet")
            #expect(rejected.error?.detailCode == "PAIRING_REQUIRED")
            let info = await first.connection.waitUntilClosed()
            #expect(info.code.rawValue == 1008)
            let requestId = try #require(rejected.error?.details?["requestId"]?.stringValue)
            #expect(info.reason == "pairing required: device is not approved yet (requestId: \(requestId))")

            let pending = await gateway.pendingPairingRequests()
            #expect(pending.map(\.requestId) == [requestId])
            try await gateway.approve(requestId: requestId)

            let second = try await TestClient.open(gateway.url, identity: identity)
            let hello = try await second.connect(second.connectParams())
            #expect(hello.ok)
            let helloOK = try #require(try hello.payload?.decode(as: HelloOK.self))
            #expect(helloOK.auth.role == .node)
            #expect(helloOK.auth.scopes.isEmpty)
            let token = try #require(helloOK.auth.deviceToken)
            #expect(token.count == 43)
            _ = try await second.event("voicewake.changed")
            await second.close()

            // The token is reused on the next connect.
            let third = try await TestClient.open(gateway.url, identity: identity)
            let again = try await third.connect(third.connectParams(token: token))
            let helloAgain = try #require(try again.payload?.decode(as: HelloOK.self))
            #expect(helloAgain.auth.deviceToken == token)
            await third.close()
        }
    }

    @Test func operatorActionsAreTranscriptEntriesBeforeWhatTheyCause() async throws {
        try await Gateway.withGateway { gateway in
            let identity = try TestIdentities.make(4)
            let first = try await TestClient.open(gateway.url, identity: identity)
            let rejected = try await first.connect(first.connectParams())
            let requestId = try #require(rejected.error?.details?["requestId"]?.stringValue)
            _ = await first.connection.waitUntilClosed()
            try await gateway.approve(requestId: requestId)
            await #expect(throws: GatewayError.self) { try await gateway.reject(requestId: "no-such-request") }
            let entries = gateway.transcript.entries
            let actions = entries.filter { $0.kind == .operatorAction }
            #expect(actions.map(\.text) == ["approve \(requestId)", "reject no-such-request"], "a refused action is recorded too")
            #expect(actions.allSatisfy { $0.connectionId == "-" })
            // It reads back from JSON Lines as the same entry, and comes before the session it let in.
            let approveAt = try #require(entries.firstIndex { $0.kind == .operatorAction })
            #expect(entries[approveAt].json["kind"] == "operator")
            #expect(try TranscriptEntry(json: entries[approveAt].json) == entries[approveAt])
            let second = try await TestClient.open(gateway.url, identity: identity)
            #expect(try await second.connect(second.connectParams()).ok)
            let helloAt = try #require(gateway.transcript.entries.lastIndex { $0.message?["payload"]?["type"] == "hello-ok" })
            #expect(approveAt < helloAt)
            await second.close()
        }
    }

    @Test func identicalRetryRefreshesOneRequestAndChangedRetrySupersedesIt() async throws {
        try await Gateway.withGateway { gateway in
            let identity = try TestIdentities.make(2)
            var ids: [String] = []
            for _ in 0..<3 {
                let client = try await TestClient.open(gateway.url, identity: identity)
                let response = try await client.connect(client.connectParams())
                ids.append(try #require(response.error?.details?["requestId"]?.stringValue))
            }
            #expect(Set(ids).count == 1, "an identical retry keeps one requestId")
            let operatorClient = try await TestClient.open(gateway.url, identity: identity)
            let operatorResponse = try await operatorClient.connect(operatorClient.connectParams(
                role: "operator", scopes: ["operator.read"], mode: "ui", minProtocol: 4))
            let newId = try #require(operatorResponse.error?.details?["requestId"]?.stringValue)
            #expect(newId != ids[0])
            let firstId = ids[0]
            let superseded = await gateway.waitForEvent(timeout: .seconds(5)) { event in
                if case .pairingSuperseded(let old, let new, _) = event { return old == [firstId] && new == newId }
                return false
            }
            #expect(superseded != nil)
            await #expect(throws: GatewayError.self) { try await gateway.approve(requestId: ids[0]) }
            let approved = try await gateway.approve(requestId: newId)
            #expect(Set(approved.roles.map(\.rawValue)) == ["node", "operator"])
        }
    }

    @Test func invokeRoundTripAndPresenceBeacon() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let identity = try TestIdentities.make(3)
            let client = try await TestClient.open(gateway.url, identity: identity)
            let hello = try await client.connect(client.connectParams(), binary: true)
            #expect(hello.ok, "auto approval admits the node in the same connect")

            async let outcome = gateway.invoke(nodeId: identity.deviceId, command: "device.info", params: ["verbose": true])
            let (invoke, ack) = try await client.answerNextInvoke(nodeId: identity.deviceId, ok: true,
                                                                  payloadJSON: #"{"model":"iPhone17,1"}"#)
            #expect(invoke.command == "device.info")
            #expect(invoke.paramsJSON == #"{"verbose":true}"#)
            #expect(ack.payload == ["ok": true])
            guard case .result(let result) = await outcome else {
                Issue.record("the invoke did not complete with a result")
                return
            }
            #expect(result.payloadJSON == #"{"model":"iPhone17,1"}"#)

            // A late duplicate is acknowledged but ignored.
            let duplicate = try await client.request("node.invoke.result", params: try JSONValue(encoding: NodeInvokeResult(
                id: invoke.id, nodeId: identity.deviceId, ok: true)))
            #expect(duplicate.payload == ["ok": true, "ignored": true])
            let mismatch = try await client.request("node.invoke.result", params: try JSONValue(encoding: NodeInvokeResult(
                id: invoke.id, nodeId: "someone-else", ok: true)))
            #expect(mismatch.error?.message == "nodeId mismatch")

            let beacon: JSONValue = ["event": "node.presence.alive", "payloadJSON": #"{"trigger":"silent_push"}"#]
            let persisted = try await client.request("node.event", params: beacon)
            #expect(persisted.payload == ["ok": true, "event": "node.presence.alive", "handled": true, "reason": "persisted"])
            let throttled = try await client.request("node.event", params: beacon)
            #expect(throttled.payload?["reason"] == "throttled")
            await gateway.advance(by: .seconds(61))
            let again = try await client.request("node.event", params: beacon)
            #expect(again.payload?["reason"] == "persisted")
            let device = try #require(await gateway.pairedDevices().first { $0.deviceId == identity.deviceId })
            #expect(device.lastSeenReason == "silent_push")
            #expect(device.lastSeenAtMs == gateway.clock.nowMs)

            let unknown = try await client.request("no.such.method", params: nil)
            #expect(unknown.error?.message == "unknown method: no.such.method")
        }
    }

    @Test func legacyProfileAnswersNodeEventWithBareOK() async throws {
        try await Gateway.withGateway(GatewayConfiguration(profile: .legacy, autoApproval: .auto)) { gateway in
            let identity = try TestIdentities.make(4)
            let client = try await TestClient.open(gateway.url, identity: identity)
            let hello = try await client.connect(client.connectParams(minProtocol: 3, maxProtocol: 3))
            let helloOK = try #require(try hello.payload?.decode(as: HelloOK.self))
            #expect(helloOK.protocol == 3)
            let reply = try await client.request("node.event", params: [
                "event": "node.presence.alive", "payloadJSON": #"{"trigger":"background"}"#,
            ])
            #expect(reply.payload == ["ok": true])
        }
    }

    @Test func ticksFollowTheInjectedClock() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto, tickIntervalMs: 30_000)) { gateway in
            let client = try await TestClient.open(gateway.url, identity: try TestIdentities.make(5))
            _ = try await client.connect(client.connectParams())
            await gateway.advance(by: .seconds(30))
            let tick = try await client.event("tick")
            #expect(tick.payload?["ts"]?.int64Value == gateway.clock.nowMs)
            #expect(tick.seq != nil)
        }
    }
}

/// A Gateway on the wall clock whose time was skipped (`advance`, `serve`'s `advance 301`) keeps
/// admitting clients that sign with their own wall clock: `signedAt` is judged on the clients'
/// time line, and the challenge `ts` is on it too.
@Suite("Clock jumps and device signatures")
struct ClockJumpTests {
    private static func wallNowMs() -> Int { Int((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    @Test func aClientSigningWithItsOwnClockIsAdmittedAfterTheGatewayClockJumped() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto, clock: .system())) { gateway in
            await gateway.advance(by: .seconds(301))
            #expect(gateway.clock.nowMs - gateway.clock.peerNowMs >= 301_000, "the Gateway's rules run 301 s ahead")
            let client = try await TestClient.open(gateway.url, identity: try TestIdentities.make(7))
            // A Date.now()-style client: it ignores the challenge ts and signs with its own clock.
            let hello = try await client.connect(client.connectParams(signedAt: Self.wallNowMs()))
            #expect(hello.ok, "\(hello.error.map { "\($0.code) \($0.detailCode ?? "")" } ?? "")")
            await client.close()
        }
    }

    @Test func theChallengeTimestampIsOnTheClientsTimeLine() async throws {
        try await Gateway.withGateway(GatewayConfiguration(clock: .system())) { gateway in
            await gateway.advance(by: .seconds(600))
            let before = Self.wallNowMs()
            let client = try await TestClient.open(gateway.url, identity: try TestIdentities.make(8))
            let ts = Int64(try #require(client.challenge?.ts))
            #expect(ts >= Int64(before) && ts <= Int64(Self.wallNowMs()), "ts \(ts) is wall time, not the skipped Gateway time")
            await client.close()
        }
    }

    @Test func aSignatureTooFarFromTheClientsTimeLineIsStillRefused() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto, clock: .system())) { gateway in
            await gateway.advance(by: .seconds(301))
            let client = try await TestClient.open(gateway.url, identity: try TestIdentities.make(9))
            // Signed with the Gateway's skipped time: 301 s in the client's future.
            let refused = try await client.connect(client.connectParams(signedAt: Int(gateway.clock.nowMs)))
            #expect(refused.error?.detailCode == "DEVICE_AUTH_SIGNATURE_EXPIRED")
        }
    }
}
