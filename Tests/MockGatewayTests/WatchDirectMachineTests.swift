import Foundation
import GatewayProtocol
@testable import MockGateway
import Testing

/// A Watch client for the pure machine: signs ordinary connect params over a challenge nonce.
struct WatchTestDevice {
    let identity: DeviceIdentity

    init(seedByte: UInt8 = 7) throws {
        identity = try DeviceIdentity(seed: Data(repeating: seedByte, count: 32))
    }

    /// Canonical Watch connect params, signed with `version` over `nonce` at `signedAtMs`.
    func params(nonce: String, signedAtMs: Int64, auth: ConnectAuth = ConnectAuth(bootstrapToken: "boot"),
                version: DeviceAuthPayload.Version = .v3, edit: (inout ConnectParams) -> Void = { _ in }) -> ConnectParams {
        var params = ConnectParams(
            client: ClientInfo(id: .watchOS, displayName: "Wrist", version: "1.0", platform: "watchOS 11.2", deviceFamily: "Apple Watch", mode: .node),
            role: .node, caps: [], commands: ["device.info", "system.notify"], permissions: ["notifications": true], auth: auth,
            device: DeviceProof(id: identity.deviceId, publicKey: identity.publicKeyBase64URL, signature: "", signedAt: Int(signedAtMs), nonce: nonce))
        edit(&params)
        if let payload = DeviceAuthPayload.build(version, for: params, nonce: nonce) {
            params.device = identity.proof(payload: payload, signedAtMs: Int(signedAtMs), nonce: nonce)
        }
        return params
    }

    static func body(_ params: ConnectParams) throws -> [UInt8] {
        Array(try JSONValue(encoding: params).jsonString.utf8)
    }
}

/// Nonces and session tokens `fresh-N`, N the number of the harness's request.
struct NumberedWatchTokens: WatchTokenSource {
    var number: Int
    mutating func token(bytes: Int) -> String { "fresh-\(number)" }
}

/// What the machine did with one request, read from its effects.
enum WatchAction: Equatable {
    /// Not a Watch route: another handler answers.
    case notWatchRoute
    /// Answered now.
    case respond(WatchHTTPResponse)
    /// Held (a poll).
    case hold
}

/// Drives a ``WatchDirectMachine`` the way the Gateway glue does: a request in; the Gateway's
/// decisions (`admission`, `acceptResults`) fed back when the machine asks for them.
struct WatchHarness {
    var machine: WatchDirectMachine
    var nowMs: Int64 = 1_767_225_600_000
    var counter = 0
    var admission: WatchAdmission = .admitted(nodeId: "", connectionId: "watch-1", deviceToken: "device-token-1")
    var admitted: [WatchConnectCandidate] = []
    var delivered: [WatchInvokeResult] = []
    var acceptResults = true
    var effects: [WatchEffect] = []
    let address: String

    init(rateLimit: AuthRateLimitConfiguration = .upstreamDefault, address: String = "192.0.2.10") {
        machine = WatchDirectMachine(rateLimit: rateLimit)
        self.address = address
    }

    /// The request's own outcome is the last effect of the machine's answer to it (an answer, a
    /// hold, or a question to the Gateway whose answer goes back in); the effects before it are
    /// kept in ``effects``.
    mutating func send(_ method: String, _ path: String, body: [UInt8] = [], token: String? = nil, from: String? = nil,
                       requestId: Int = 0) -> WatchAction {
        counter += 1
        var tokens = NumberedWatchTokens(number: counter)
        var headers: [String: String] = [:]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        let request = WatchHTTPRequest(method: method, path: path, headers: headers, body: body, clientAddress: from ?? address)
        guard WatchDirectRules.isRoute(path) else { return .notWatchRoute }
        var output = machine.handle(.request(request, requestId: requestId, nowMs: nowMs), tokens: &tokens)
        while let last = output.popLast() {
            effects += output
            switch last {
            case .answer(_, let response):
                return .respond(response)
            case .hold:
                return .hold
            case .admit(let id, let candidate):
                admitted.append(candidate)
                var decision = admission
                if case .admitted(let node, let connection, let token) = admission, node.isEmpty {
                    decision = .admitted(nodeId: candidate.device.deviceId, connectionId: connection, deviceToken: token)
                }
                output = machine.handle(.admission(decision, requestId: id, nowMs: nowMs), tokens: &tokens)
            case .deliverResult(let id, let result):
                delivered.append(result)
                output = machine.handle(.resultTaken(matched: acceptResults, requestId: id), tokens: &tokens)
            case .sessionClosed:
                Issue.record("the request ended without an outcome: \(last)")
                effects.append(last)
                return .notWatchRoute
            }
        }
        Issue.record("no effects for \(method) \(path)")
        return .notWatchRoute
    }

    mutating func response(_ method: String, _ path: String, body: [UInt8] = [], token: String? = nil, from: String? = nil) -> WatchHTTPResponse {
        guard case .respond(let response) = send(method, path, body: body, token: token, from: from) else {
            Issue.record("expected an immediate answer")
            return WatchHTTPResponse(status: 0)
        }
        return response
    }

    mutating func challenge(from: String? = nil) -> String {
        response("GET", WatchDirectRules.challengePath, from: from).json?["nonce"]?.stringValue ?? ""
    }

    /// Challenge + connect; the session token.
    mutating func connect(_ device: WatchTestDevice) throws -> String {
        let nonce = challenge()
        let answer = response("POST", WatchDirectRules.connectPath, body: try WatchTestDevice.body(device.params(nonce: nonce, signedAtMs: nowMs)))
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        return answer.json?["sessionToken"]?.stringValue ?? ""
    }

    mutating func advance(_ ms: Int64) {
        nowMs += ms
        var tokens = NumberedWatchTokens(number: counter)
        effects += machine.handle(.clock(nowMs: nowMs), tokens: &tokens)
    }

    mutating func takeEffects() -> [WatchEffect] {
        defer { effects = [] }
        return effects
    }
}

@Suite("Watch direct mode: the pure machine")
struct WatchDirectMachineTests {
    @Test func challengeAnswersANonceWithItsTTL() {
        var watch = WatchHarness()
        let answer = watch.response("GET", WatchDirectRules.challengePath)
        #expect(answer.status == 200)
        #expect(answer.headers["Cache-Control"] == "no-store")
        #expect(answer.json == ["ok": true, "nonce": "fresh-1", "ts": .int(watch.nowMs), "expiresAtMs": .int(watch.nowMs + 60_000)])
        let post = watch.response("POST", WatchDirectRules.challengePath)
        #expect(post.status == 405)
        #expect(post.headers["Allow"] == "GET")
    }

    @Test func aConnectRedeemsOneNonceOnceWithinItsTTL() throws {
        let device = try WatchTestDevice()
        var watch = WatchHarness()
        let nonce = watch.challenge()
        let body = try WatchTestDevice.body(device.params(nonce: nonce, signedAtMs: watch.nowMs))
        let first = watch.response("POST", WatchDirectRules.connectPath, body: body)
        #expect(first.status == 200)
        #expect(first.json?["deviceToken"] == "device-token-1")
        #expect(first.json?["nodeId"] == .string(device.identity.deviceId))
        #expect(first.json?["protocol"] == 4)
        #expect(first.json?["pollTimeoutMs"] == 20_000)
        #expect(watch.admitted.first?.credential == .bootstrapToken("boot"))
        // The same nonce again: consumed.
        #expect(watch.response("POST", WatchDirectRules.connectPath, body: body).status == 401)

        // Expired at exactly 60 s.
        let late = watch.challenge()
        watch.nowMs += 60_000
        let lateBody = try WatchTestDevice.body(device.params(nonce: late, signedAtMs: watch.nowMs))
        #expect(watch.response("POST", WatchDirectRules.connectPath, body: lateBody) == .unauthorizedNoStore)
        // Redeemed from another address: refused (and consumed).
        let stolen = watch.challenge()
        let stolenBody = try WatchTestDevice.body(device.params(nonce: stolen, signedAtMs: watch.nowMs))
        #expect(watch.response("POST", WatchDirectRules.connectPath, body: stolenBody, from: "192.0.2.99").status == 401)
        #expect(watch.response("POST", WatchDirectRules.connectPath, body: stolenBody).status == 401)
    }

    @Test func aClientKeepsAtMostEightChallenges() throws {
        let device = try WatchTestDevice()
        var watch = WatchHarness()
        let nonces = (0..<9).map { _ in watch.challenge() }
        #expect(watch.machine.pendingChallengeCount(nowMs: watch.nowMs) == 8)
        let evicted = try WatchTestDevice.body(device.params(nonce: nonces[0], signedAtMs: watch.nowMs))
        #expect(watch.response("POST", WatchDirectRules.connectPath, body: evicted).status == 401)
        let kept = try WatchTestDevice.body(device.params(nonce: nonces[1], signedAtMs: watch.nowMs))
        #expect(watch.response("POST", WatchDirectRules.connectPath, body: kept).status == 200)
    }

    @Test func challengesAreRateLimitedAndASuccessfulConnectResetsTheCount() throws {
        let device = try WatchTestDevice()
        var watch = WatchHarness(rateLimit: AuthRateLimitConfiguration(maxAttempts: 3, exemptLoopback: false))
        let nonces = (0..<3).map { _ in watch.challenge() }
        let limited = watch.response("GET", WatchDirectRules.challengePath)
        #expect(limited.status == 429)
        #expect(limited.headers["Retry-After"] == "300")
        #expect(limited.json?["error"]?["type"] == "rate_limited")
        // The lockout ends after 5 minutes; a connect with a pending nonce is still possible
        // before that, and resets the count.
        let body = try WatchTestDevice.body(device.params(nonce: nonces[2], signedAtMs: watch.nowMs))
        #expect(watch.response("POST", WatchDirectRules.connectPath, body: body).status == 200)
        #expect(watch.response("GET", WatchDirectRules.challengePath).status == 200)
        // Loopback is exempt by default.
        var local = WatchHarness(rateLimit: AuthRateLimitConfiguration(maxAttempts: 1), address: "127.0.0.1")
        #expect(local.response("GET", WatchDirectRules.challengePath).status == 200)
        #expect(local.response("GET", WatchDirectRules.challengePath).status == 200)
    }

    @Test(arguments: [
        "client.id", "mode", "platform", "family", "role", "scopes", "protocol", "caps", "commands-empty", "commands-canvas", "permissions",
    ])
    func onlyACanonicalWatchMayConnect(rule: String) throws {
        let device = try WatchTestDevice()
        var watch = WatchHarness()
        let nonce = watch.challenge()
        let params = device.params(nonce: nonce, signedAtMs: watch.nowMs) { params in
            switch rule {
            case "client.id": params.client.id = .iOS
            case "mode": params.client.mode = .ui
            case "platform": params.client.platform = "iOS 18"
            case "family": params.client.deviceFamily = "iPhone"
            case "role": params.role = .operator
            case "scopes": params.scopes = ["operator.read"]
            case "protocol": params.minProtocol = 3; params.maxProtocol = 3
            case "caps": params.caps = ["canvas"]
            case "commands-empty": params.commands = []
            case "commands-canvas": params.commands = ["device.info", "canvas.present"]
            default: params.permissions = ["camera": true]
            }
        }
        let answer = watch.response("POST", WatchDirectRules.connectPath, body: try WatchTestDevice.body(params))
        #expect(answer.status == 400)
        #expect(answer.json?["error"]?["message"] == "unsupported watch node identity or capability surface")
        #expect(watch.admitted.isEmpty)
    }

    @Test func connectParamsGoThroughTheClosedSchema() throws {
        var watch = WatchHarness()
        var object = try JSONValue(encoding: WatchTestDevice().params(nonce: watch.challenge(), signedAtMs: watch.nowMs)).objectValue ?? [:]
        object["surprise"] = true
        let answer = watch.response("POST", WatchDirectRules.connectPath, body: Array(JSONValue.object(object).jsonString.utf8))
        #expect(answer.status == 400)
        #expect(answer.json?["error"]?["message"]?.stringValue?.hasPrefix("invalid connect params: ") == true)
        #expect(watch.response("POST", WatchDirectRules.connectPath, body: Array("{".utf8)).status == 400)
        #expect(watch.response("POST", WatchDirectRules.connectPath, body: [UInt8](repeating: 32, count: 64 * 1024 + 1)).status == 413)
        #expect(watch.response("GET", WatchDirectRules.connectPath).status == 405)
    }

    @Test(arguments: ["both", "neither", "shared", "blank", "extra"])
    func exactlyOneCredentialIsRequired(shape: String) throws {
        let device = try WatchTestDevice()
        var watch = WatchHarness()
        let auth: ConnectAuth = switch shape {
        case "both": ConnectAuth(bootstrapToken: "boot", deviceToken: "dev")
        case "neither": ConnectAuth()
        case "shared": ConnectAuth(token: "shared")
        case "blank": ConnectAuth(bootstrapToken: "  ")
        default: ConnectAuth(bootstrapToken: "boot", password: "pw")
        }
        let body = try WatchTestDevice.body(device.params(nonce: watch.challenge(), signedAtMs: watch.nowMs, auth: auth))
        #expect(watch.response("POST", WatchDirectRules.connectPath, body: body).status == 401)
        #expect(watch.admitted.isEmpty)
    }

    @Test func theProofIsCheckedOverTheConsumedNonceWithTheSkewLimit() throws {
        let device = try WatchTestDevice()
        var watch = WatchHarness()
        // v2 is accepted like v3.
        let v2 = try WatchTestDevice.body(device.params(nonce: watch.challenge(), signedAtMs: watch.nowMs, version: .v2))
        #expect(watch.response("POST", WatchDirectRules.connectPath, body: v2).status == 200)
        // Skew: 2 minutes is the limit.
        let edge = try WatchTestDevice.body(device.params(nonce: watch.challenge(), signedAtMs: watch.nowMs - 120_000))
        #expect(watch.response("POST", WatchDirectRules.connectPath, body: edge).status == 200)
        let stale = try WatchTestDevice.body(device.params(nonce: watch.challenge(), signedAtMs: watch.nowMs - 120_001))
        #expect(watch.response("POST", WatchDirectRules.connectPath, body: stale).status == 401)
        // A signature by another key under this device's id and key.
        let other = try WatchTestDevice(seedByte: 9)
        let nonce = watch.challenge()
        var forged = device.params(nonce: nonce, signedAtMs: watch.nowMs)
        forged.device?.signature = other.params(nonce: nonce, signedAtMs: watch.nowMs).device?.signature ?? ""
        #expect(watch.response("POST", WatchDirectRules.connectPath, body: try WatchTestDevice.body(forged)).status == 401)
        // The nonce was consumed by the failed attempt.
        #expect(watch.response("POST", WatchDirectRules.connectPath, body: try WatchTestDevice.body(device.params(nonce: nonce, signedAtMs: watch.nowMs))).status == 401)
    }

    @Test func theGatewaysCredentialDecisionIsTheAnswer() throws {
        let device = try WatchTestDevice()
        var watch = WatchHarness()
        watch.admission = .refused
        let refused = try WatchTestDevice.body(device.params(nonce: watch.challenge(), signedAtMs: watch.nowMs))
        #expect(watch.response("POST", WatchDirectRules.connectPath, body: refused).status == 401)
        watch.admission = .rateLimited(retryAfterMs: 1500)
        let limited = watch.response("POST", WatchDirectRules.connectPath,
                                     body: try WatchTestDevice.body(device.params(nonce: watch.challenge(), signedAtMs: watch.nowMs)))
        #expect(limited.status == 429)
        #expect(limited.headers["Retry-After"] == "2")
    }

    @Test func pollsWaitTwentySecondsAndASecondPollSupersedesTheFirst() throws {
        var watch = WatchHarness()
        let token = try watch.connect(WatchTestDevice())
        #expect(watch.send("POST", WatchDirectRules.pollPath, token: token, requestId: 1) == .hold)
        watch.advance(19_999)
        #expect(watch.takeEffects().isEmpty)
        #expect(watch.send("POST", WatchDirectRules.pollPath, token: token, requestId: 2) == .hold)
        let superseded = watch.takeEffects()
        #expect(superseded.count == 1)
        if case .answer(1, let answer) = superseded.first {
            #expect(answer.status == 409)
            #expect(answer.json == ["ok": false, "reason": "superseded poll"])
        } else {
            Issue.record("poll 1 was not superseded: \(superseded)")
        }
        watch.advance(20_000)
        guard case .answer(2, let empty) = watch.takeEffects().first else { Issue.record("poll 2 not answered"); return }
        #expect(empty.status == 200)
        #expect(empty.json == ["ok": true, "event": nil])
        #expect(watch.response("POST", WatchDirectRules.pollPath).status == 401)
        #expect(watch.response("POST", WatchDirectRules.pollPath, token: "not-a-session").status == 401)
        #expect(watch.response("GET", WatchDirectRules.pollPath, token: token).status == 405)
    }

    @Test func eventsGoToTheWaitingPollOrTheQueue() throws {
        var watch = WatchHarness()
        let device = try WatchTestDevice()
        let token = try watch.connect(device)
        let node = device.identity.deviceId
        #expect(watch.send("POST", WatchDirectRules.pollPath, token: token, requestId: 5) == .hold)
        let (delivered, effects) = watch.machine.enqueue(nodeId: node, event: "node.invoke.request", payload: ["id": "i1"])
        #expect(delivered)
        guard case .answer(5, let answer) = effects.first else { Issue.record("not delivered to the poll"); return }
        #expect(answer.json == ["ok": true, "event": ["event": "node.invoke.request", "payload": ["id": "i1"]]])
        // Queued while no poll waits, handed out one per poll.
        _ = watch.machine.enqueue(nodeId: node, event: "node.invoke.request", payload: ["id": "i2"])
        _ = watch.machine.enqueue(nodeId: node, event: "node.invoke.request", payload: ["id": "i3"])
        #expect(watch.response("POST", WatchDirectRules.pollPath, token: token).json?["event"]?["payload"]?["id"] == "i2")
        #expect(watch.response("POST", WatchDirectRules.pollPath, token: token).json?["event"]?["payload"]?["id"] == "i3")
        #expect(watch.send("POST", WatchDirectRules.pollPath, token: token) == .hold)
    }

    @Test func theQueueHoldsThirtyTwoEventsAndOverflowClosesTheSession() throws {
        var watch = WatchHarness()
        let device = try WatchTestDevice()
        let token = try watch.connect(device)
        let node = device.identity.deviceId
        for index in 0..<32 {
            #expect(watch.machine.enqueue(nodeId: node, event: "node.invoke.request", payload: ["id": .string("i\(index)")]).delivered)
        }
        let (delivered, effects) = watch.machine.enqueue(nodeId: node, event: "node.invoke.request", payload: ["id": "overflow"])
        #expect(!delivered)
        #expect(effects == [.sessionClosed(nodeId: node, connectionId: "watch-1", reason: "event queue overflow")])
        #expect(watch.response("POST", WatchDirectRules.pollPath, token: token).status == 401)
    }

    @Test func byteLimitsCloseTheSession() throws {
        var watch = WatchHarness()
        let device = try WatchTestDevice()
        _ = try watch.connect(device)
        let node = device.identity.deviceId
        let big = String(repeating: "x", count: 64 * 1024)
        #expect(watch.machine.enqueue(nodeId: node, event: "node.invoke.request", payload: .string(big)).effects
            == [.sessionClosed(nodeId: node, connectionId: "watch-1", reason: "event payload too large")])
        // 512 KiB in all: nine events of 60 KiB do not fit.
        _ = try watch.connect(device)
        let chunk = String(repeating: "y", count: 60 * 1024)
        var closed: [WatchEffect] = []
        for _ in 0..<9 { closed += watch.machine.enqueue(nodeId: node, event: "node.invoke.request", payload: .string(chunk)).effects }
        #expect(closed == [.sessionClosed(nodeId: node, connectionId: "watch-1", reason: "event queue overflow")])
    }

    @Test func aSessionIdlesOutAfterSeventyFiveSeconds() throws {
        var watch = WatchHarness()
        let device = try WatchTestDevice()
        let token = try watch.connect(device)
        watch.advance(74_999)
        #expect(watch.takeEffects().isEmpty)
        #expect(watch.machine.isReachable(nodeId: device.identity.deviceId, nowMs: watch.nowMs))
        // A poll touches the session.
        #expect(watch.send("POST", WatchDirectRules.pollPath, token: token, requestId: 1) == .hold)
        watch.advance(74_999)
        #expect(watch.takeEffects().count == 1)  // only the poll's empty answer
        watch.advance(1)
        #expect(watch.takeEffects() == [.sessionClosed(nodeId: device.identity.deviceId, connectionId: "watch-1", reason: "session expired")])
        #expect(watch.response("POST", WatchDirectRules.pollPath, token: token).status == 401)
    }

    @Test func resultsAreDeliveredOrIgnored() throws {
        var watch = WatchHarness()
        let device = try WatchTestDevice()
        let token = try watch.connect(device)
        let body = Array(#"{"id":"i1","ok":true,"payloadJSON":"{\"a\":1}"}"#.utf8)
        #expect(watch.response("POST", WatchDirectRules.resultPath, body: body, token: token).json == ["ok": true])
        #expect(watch.delivered.first?.payloadJSON == #"{"a":1}"#)
        #expect(watch.delivered.first?.nodeId == device.identity.deviceId)
        watch.acceptResults = false
        #expect(watch.response("POST", WatchDirectRules.resultPath, body: body, token: token).json == ["ok": true, "ignored": true])
        #expect(watch.response("POST", WatchDirectRules.resultPath, body: Array(#"{"id":1,"ok":true}"#.utf8), token: token).status == 400)
        #expect(watch.response("POST", WatchDirectRules.resultPath, body: body).status == 401)
    }

    @Test func disconnectReplacementAndShutdown() throws {
        var watch = WatchHarness()
        let device = try WatchTestDevice()
        let node = device.identity.deviceId
        let first = try watch.connect(device)
        #expect(watch.send("POST", WatchDirectRules.pollPath, token: first, requestId: 1) == .hold)
        // A newer session of the same node replaces the older one; its waiting poll is told 401.
        let second = try watch.connect(device)
        guard case .answer(1, let replaced) = watch.takeEffects().first else { Issue.record("old poll not answered"); return }
        #expect(replaced.status == 401)
        #expect(watch.response("POST", WatchDirectRules.pollPath, token: first).status == 401)
        #expect(watch.response("POST", WatchDirectRules.disconnectPath, token: second).json == ["ok": true])
        #expect(watch.takeEffects() == [.sessionClosed(nodeId: node, connectionId: "watch-1", reason: "watch disconnected")])
        let third = try watch.connect(device)
        #expect(watch.send("POST", WatchDirectRules.pollPath, token: third, requestId: 9) == .hold)
        let closing = watch.machine.close()
        #expect(closing.count == 2)
        #expect(watch.response("GET", WatchDirectRules.challengePath).status == 503)
        #expect(watch.response("POST", WatchDirectRules.pollPath, token: third).json == ["ok": false, "error": "gateway shutting down"])
    }

    /// The machine asks the Gateway instead of calling it back: a checked connect ends in
    /// `admit` with nothing answered yet, and the decision fed back is the answer. (Break
    /// tried: answering an `admission` whose request is not waiting fails this test.)
    @Test func aConnectWaitsForTheGatewaysDecisionFedBackAsAnInput() throws {
        var watch = WatchHarness()
        let device = try WatchTestDevice()
        let nonce = watch.challenge()
        var tokens = NumberedWatchTokens(number: 50)
        let request = WatchHTTPRequest(method: "POST", path: WatchDirectRules.connectPath, headers: [:],
                                       body: try WatchTestDevice.body(device.params(nonce: nonce, signedAtMs: watch.nowMs)),
                                       clientAddress: watch.address)
        let asked = watch.machine.handle(.request(request, requestId: 7, nowMs: watch.nowMs), tokens: &tokens)
        guard case .admit(7, let candidate)? = asked.last, asked.count == 1 else { Issue.record("no admit: \(asked)"); return }
        #expect(candidate.device.deviceId == device.identity.deviceId)
        #expect(candidate.credential == .bootstrapToken("boot"))
        // A decision for a request that is not waiting changes nothing.
        #expect(watch.machine.handle(.admission(.refused, requestId: 8, nowMs: watch.nowMs), tokens: &tokens).isEmpty)
        let admitted = WatchAdmission.admitted(nodeId: "n1", connectionId: "watch-1", deviceToken: "dt")
        let answered = watch.machine.handle(.admission(admitted, requestId: 7, nowMs: watch.nowMs), tokens: &tokens)
        guard case .answer(7, let response)? = answered.last, answered.count == 1 else { Issue.record("no answer: \(answered)"); return }
        #expect(response.status == 200)
        #expect(response.headers["Cache-Control"] == "no-store")
        #expect(response.json?["sessionToken"] == "fresh-50")
        #expect(response.json?["deviceToken"] == "dt")
        // Answered once: the same decision again is not an answer.
        #expect(watch.machine.handle(.admission(admitted, requestId: 7, nowMs: watch.nowMs), tokens: &tokens).isEmpty)
        #expect(watch.machine.connectedNodeIds == ["n1"])
    }

    /// A posted result goes to the Gateway as an effect; whether an invoke waited for it is fed
    /// back and answered.
    @Test func aPostedResultIsHandedOverAndItsVerdictAnswered() throws {
        var watch = WatchHarness()
        let token = try watch.connect(WatchTestDevice())
        var tokens = NumberedWatchTokens(number: 60)
        let request = WatchHTTPRequest(method: "POST", path: WatchDirectRules.resultPath, headers: ["Authorization": "Bearer \(token)"],
                                       body: Array(#"{"id":"i1","ok":true}"#.utf8), clientAddress: watch.address)
        let asked = watch.machine.handle(.request(request, requestId: 3, nowMs: watch.nowMs), tokens: &tokens)
        guard case .deliverResult(3, let posted)? = asked.last, asked.count == 1 else { Issue.record("not handed over: \(asked)"); return }
        #expect(posted.id == "i1")
        #expect(posted.connectionId == "watch-1")
        let ignored = watch.machine.handle(.resultTaken(matched: false, requestId: 3), tokens: &tokens)
        guard case .answer(3, let response)? = ignored.first else { Issue.record("no answer: \(ignored)"); return }
        #expect(response.json == ["ok": true, "ignored": true])
    }

    @Test func otherPaths() {
        var watch = WatchHarness()
        #expect(watch.send("GET", "/api/nodes/watch") == .notWatchRoute)
        #expect(watch.send("GET", "/healthz") == .notWatchRoute)
        #expect(watch.response("GET", "/api/nodes/watch/nope").status == 404)
    }
}

extension WatchHTTPResponse {
    /// The 401 as routes answer it.
    static var unauthorizedNoStore: WatchHTTPResponse {
        var response = WatchHTTPResponse.unauthorized
        response.headers["Cache-Control"] = "no-store"
        return response
    }
}
