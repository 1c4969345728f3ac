import Foundation
import GatewayProtocol

/// The limits and bounded surface of the Apple Watch direct mode (docs/protocol.md §13), as
/// upstream's `src/gateway/watch-node-http.ts` @2432998cc475ff3e91432bd627c6021a01e861d9 sets them.
public enum WatchDirectRules {
    /// The routes' common prefix.
    public static let basePath = "/api/nodes/watch"
    /// `GET` a challenge.
    public static let challengePath = basePath + "/challenge"
    /// `POST` ordinary connect params.
    public static let connectPath = basePath + "/connect"
    /// `POST` to wait for the next event.
    public static let pollPath = basePath + "/poll"
    /// `POST` an invoke result.
    public static let resultPath = basePath + "/result"
    /// `POST` to end the session.
    public static let disconnectPath = basePath + "/disconnect"
    /// Whether `path` is under the Watch routes (another handler answers the others).
    public static func isRoute(_ path: String) -> Bool { path.hasPrefix(basePath + "/") }
    /// How long a challenge nonce can be redeemed.
    public static let challengeTTLMs: Int64 = 60_000
    /// The largest `|now − device.signedAt|`.
    public static let signatureSkewMs: Int64 = 120_000
    /// How long a poll is held before it answers `event: null`.
    public static let pollTimeoutMs: Int64 = 20_000
    /// How long a session lives without a request.
    public static let sessionIdleMs: Int64 = 75_000
    /// The largest request body.
    public static let maxBodyBytes = 64 * 1024
    /// The largest queued event.
    public static let maxQueuedEventBytes = 64 * 1024
    /// The most bytes queued for one session.
    public static let maxQueuedBytes = 512 * 1024
    /// Random bytes in a challenge nonce (base64url on the wire).
    public static let nonceBytes = 24
    /// Random bytes in a session token (base64url on the wire).
    public static let sessionTokenBytes = 32
    /// The most events queued for one session.
    public static let maxQueuedEvents = 32
    /// The most pending challenges in all.
    public static let maxPendingChallenges = 4096
    /// The most pending challenges of one client.
    public static let maxPendingChallengesPerClient = 8
    /// The commands a Watch may declare (at least one).
    public static let commands: Set<String> = [
        NodeCommandName.deviceInfo.rawValue, NodeCommandName.deviceStatus.rawValue, NodeCommandName.systemNotify.rawValue,
    ]
    /// The permissions a Watch may declare.
    public static let permissions: Set<String> = ["notifications"]

    /// Whether `params` describe a canonical Watch node: `openclaw-watchos` in `node` mode on a
    /// `watchOS…` platform with the `Apple Watch` family, role `node` with no scopes, a protocol
    /// range containing the current version, no caps, a non-empty command set inside
    /// ``commands`` and permissions inside ``permissions``.
    public static func isCanonicalWatch(_ params: ConnectParams) -> Bool {
        let platform = params.client.platform.trimmingASCIIWhitespace().lowercased()
        let family = params.client.deviceFamily?.trimmingASCIIWhitespace().lowercased()
        return params.minProtocol <= ProtocolVersion.current && params.maxProtocol >= ProtocolVersion.current
            && params.role == .node && (params.scopes ?? []).isEmpty
            && params.client.id == .watchOS && params.client.mode == .node
            && platform.hasPrefix("watchos") && family == "apple watch"
            && hasBoundedSurface(params)
    }

    /// Whether the declared surface stays inside the Watch's bounds.
    public static func hasBoundedSurface(_ params: ConnectParams) -> Bool {
        let commands = params.commands ?? []
        return (params.caps ?? []).isEmpty && !commands.isEmpty && commands.allSatisfy(Self.commands.contains)
            && (params.permissions ?? [:]).keys.allSatisfy(Self.permissions.contains)
    }
}

/// A Watch connect that passed every check the transport makes (schema, canonical Watch,
/// exactly one credential, the consumed challenge, the device proof): what remains is the
/// credential and pairing decision, which the Gateway makes with its pairing store.
public struct WatchConnectCandidate: Sendable, Hashable {
    /// The schema-valid params.
    public var params: ConnectParams
    /// The device whose proof verified.
    public var device: VerifiedDevice
    /// The one credential sent.
    public var credential: Credential
    /// The client's address.
    public var clientAddress: String

    /// The credential of a Watch connect.
    public enum Credential: Sendable, Hashable {
        /// A setup code's bootstrap token (first pairing).
        case bootstrapToken(String)
        /// The device token a previous connect returned.
        case deviceToken(String)
    }
}

/// The Gateway's answer to a ``WatchConnectCandidate``.
public enum WatchAdmission: Sendable, Hashable {
    /// Admitted as node `nodeId` on connection `connectionId`; `deviceToken` is returned to the Watch.
    case admitted(nodeId: String, connectionId: String, deviceToken: String)
    /// Refused: 401.
    case refused
    /// Refused by a rate limit: 429.
    case rateLimited(retryAfterMs: Int64)
}

/// An invoke result posted by a Watch.
public struct WatchInvokeResult: Sendable, Hashable {
    /// The invoke id.
    public var id: String
    /// Whether the command succeeded.
    public var ok: Bool
    /// `payload`, if sent.
    public var payload: JSONValue?
    /// `payloadJSON`, if sent as a string.
    public var payloadJSON: String?
    /// `error.code`, if sent.
    public var errorCode: String?
    /// `error.message`, if sent.
    public var errorMessage: String?
    /// The node that posted it.
    public var nodeId: String
    /// The session's connection id.
    public var connectionId: String
}

/// Something the Gateway must do after the machine changed state.
public enum WatchEffect: Sendable, Hashable {
    /// Answer request `requestId`: the request being handled now, or a held poll.
    case answer(requestId: Int, WatchHTTPResponse)
    /// Hold request `requestId` (a poll); a later ``answer(requestId:_:)`` answers it.
    case hold(requestId: Int)
    /// The Gateway's credential and pairing decision on a checked connect is needed: it goes back
    /// in as ``WatchDirectMachine/Input/admission(_:requestId:nowMs:)``.
    case admit(requestId: Int, WatchConnectCandidate)
    /// An invoke result posted by a Watch, for the Gateway; whether an invoke waited for it goes
    /// back in as ``WatchDirectMachine/Input/resultTaken(matched:requestId:)``.
    case deliverResult(requestId: Int, WatchInvokeResult)
    /// A session ended: the node `nodeId` of connection `connectionId` is disconnected.
    case sessionClosed(nodeId: String, connectionId: String, reason: String)
}

/// Where the machine's challenge nonces and session tokens come from.
public protocol WatchTokenSource {
    /// A new random token (base64url) of `bytes` random bytes.
    mutating func token(bytes: Int) -> String
}

/// The Apple Watch direct mode as a transport-independent state machine (docs/protocol.md §13):
/// challenges, connect checks, sessions, long polls and their queues, on the clock it is given.
/// Touches no socket and no pairing store and calls nothing back: everything the Gateway must do
/// or decide is a ``WatchEffect`` (answers, held polls, closed sessions, the connect's credential
/// decision and a posted invoke result), and the Gateway's decisions come back as inputs.
public struct WatchDirectMachine: Sendable {
    struct Challenge: Sendable, Hashable {
        var clientKey: String
        var expiresAtMs: Int64
        var sequence: Int
    }

    struct Session: Sendable, Hashable {
        var token: String
        var nodeId: String
        var connectionId: String
        var lastSeenAtMs: Int64
        var queue: [String] = []
        var queuedBytes = 0
        var waiter: (requestId: Int, deadlineMs: Int64)?
        var invalidatedReason: String?

        static func == (lhs: Session, rhs: Session) -> Bool { lhs.token == rhs.token }
        func hash(into hasher: inout Hasher) { hasher.combine(token) }
    }

    private var challenges: [String: Challenge] = [:]
    private var challengeSequence = 0
    private var sessions: [String: Session] = [:]
    private var tokenByNode: [String: String] = [:]
    private var rateLimiter: AuthRateLimiter
    /// Connects waiting for the Gateway's credential decision: the client address, by request id.
    private var awaitingAdmission: [Int: String] = [:]
    private var proofVerifier = DeviceProofVerifier()
    /// Whether the Gateway is shutting down (every route answers 503).
    public private(set) var isClosed = false

    /// A machine whose challenge rate limit follows `rateLimit`.
    public init(rateLimit: AuthRateLimitConfiguration = .upstreamDefault) {
        rateLimiter = AuthRateLimiter(configuration: rateLimit)
    }

    /// The node ids with an open session.
    public var connectedNodeIds: [String] { sessions.values.map(\.nodeId).sorted() }

    /// The number of challenges not yet redeemed or expired at `nowMs`.
    public func pendingChallengeCount(nowMs: Int64) -> Int { challenges.values.filter { $0.expiresAtMs > nowMs }.count }

    /// The earliest time ``advance(nowMs:)`` has something to do (a poll timeout or an idle expiry).
    /// Read in place, no array built (the Gateway's timer asks after every frame).
    public var nextDeadlineMs: Int64? {
        var earliest: Int64?
        for session in sessions.values {
            let idle = session.lastSeenAtMs + WatchDirectRules.sessionIdleMs
            let due = session.waiter.map { min($0.deadlineMs, idle) } ?? idle
            if earliest.map({ due < $0 }) ?? true { earliest = due }
        }
        return earliest
    }

    // MARK: Inputs

    /// What moves the Watch direct mode.
    public enum Input: Sendable, Hashable {
        /// A request on a Watch route (``WatchDirectRules/isRoute(_:)``); `requestId` is the
        /// transport's id of it (to answer a held poll later).
        case request(WatchHTTPRequest, requestId: Int, nowMs: Int64)
        /// The Gateway's decision on the connect ``WatchEffect/admit(requestId:_:)`` asked about.
        case admission(WatchAdmission, requestId: Int, nowMs: Int64)
        /// Whether an invoke waited for the result ``WatchEffect/deliverResult(requestId:_:)`` handed over.
        case resultTaken(matched: Bool, requestId: Int)
        /// An event for node `nodeId`'s session (``enqueue(nodeId:event:payload:)``).
        case event(nodeId: String, event: String, payload: JSONValue?)
        /// The clock reached `nowMs` (``advance(nowMs:)``).
        case clock(nowMs: Int64)
        /// The client of held poll `requestId` went away (``pollAbandoned(requestId:)``).
        case pollAbandoned(requestId: Int)
        /// Node `nodeId`'s session ends now with `reason` (its pairing or token went away).
        case disconnect(nodeId: String, reason: String)
        /// The Gateway shuts down (``close()``).
        case shutdown
    }

    /// Applies an input; `tokens` gives the nonces and session tokens it needs. Every answer,
    /// hold and question to the Gateway is an effect (no callbacks).
    public mutating func handle(_ input: Input, tokens: inout some WatchTokenSource) -> [WatchEffect] {
        switch input {
        case .request(let request, let requestId, let nowMs):
            return self.request(request, requestId: requestId, nowMs: nowMs, tokens: &tokens)
        case .admission(let admission, let requestId, let nowMs):
            guard let clientAddress = awaitingAdmission.removeValue(forKey: requestId) else { return [] }
            var effects: [WatchEffect] = []
            let response = admitted(admission, clientAddress: clientAddress, nowMs: nowMs, tokens: &tokens, effects: &effects)
            return effects + [.answer(requestId: requestId, Self.noStore(response))]
        case .resultTaken(let matched, let requestId):
            let response: WatchHTTPResponse = matched ? .json(200, ["ok": true]) : .json(200, ["ok": true, "ignored": true])
            return [.answer(requestId: requestId, Self.noStore(response))]
        case .event(let nodeId, let event, let payload):
            return enqueue(nodeId: nodeId, event: event, payload: payload).effects
        case .clock(let nowMs):
            return advance(nowMs: nowMs)
        case .pollAbandoned(let requestId):
            return pollAbandoned(requestId: requestId)
        case .disconnect(let nodeId, let reason):
            return disconnect(nodeId: nodeId, reason: reason)
        case .shutdown:
            return close()
        }
    }

    // MARK: Requests

    /// Handles one request: its answer, its hold, or a question to the Gateway (the effects
    /// before it first).
    private mutating func request(_ request: WatchHTTPRequest, requestId: Int, nowMs: Int64,
                                  tokens: inout some WatchTokenSource) -> [WatchEffect] {
        guard WatchDirectRules.isRoute(request.path) else { return [.answer(requestId: requestId, Self.noStore(.notFound))] }
        // (The 503 of a closed transport goes out without `Cache-Control`, as it always did.)
        guard !isClosed else { return [.answer(requestId: requestId, .shuttingDown)] }
        var effects: [WatchEffect] = []
        let response: WatchHTTPResponse
        switch request.path {
        case WatchDirectRules.challengePath:
            response = challenge(request, nowMs: nowMs, tokens: &tokens)
        case WatchDirectRules.connectPath:
            switch connect(request, nowMs: nowMs) {
            case .success(let candidate):
                awaitingAdmission[requestId] = request.clientAddress
                return [.admit(requestId: requestId, candidate)]
            case .failure(let refusal):
                response = refusal
            }
        case WatchDirectRules.pollPath:
            guard let answer = poll(request, requestId: requestId, nowMs: nowMs, effects: &effects) else {
                return effects + [.hold(requestId: requestId)]
            }
            response = answer
        case WatchDirectRules.resultPath:
            switch result(request, nowMs: nowMs, effects: &effects) {
            case .success(let posted):
                return effects + [.deliverResult(requestId: requestId, posted)]
            case .failure(let refusal):
                response = refusal
            }
        case WatchDirectRules.disconnectPath:
            response = disconnect(request, nowMs: nowMs, effects: &effects)
        default:
            response = .notFound
        }
        return effects + [.answer(requestId: requestId, Self.noStore(response))]
    }

    private mutating func challenge(_ request: WatchHTTPRequest, nowMs: Int64, tokens: inout some WatchTokenSource) -> WatchHTTPResponse {
        guard request.method.uppercased() == "GET" else { return .methodNotAllowed(allow: "GET") }
        let key = request.clientAddress
        let check = rateLimiter.check(key, scope: .watchChallenge, nowMs: nowMs)
        guard check.allowed else { return .rateLimited(retryAfterMs: check.retryAfterMs) }
        rateLimiter.recordFailure(key, scope: .watchChallenge, nowMs: nowMs)
        challenges = challenges.filter { $0.value.expiresAtMs > nowMs }
        var own = challenges.filter { $0.value.clientKey == key }.sorted { $0.value.sequence < $1.value.sequence }
        while own.count >= WatchDirectRules.maxPendingChallengesPerClient {
            challenges[own.removeFirst().key] = nil
        }
        while challenges.count >= WatchDirectRules.maxPendingChallenges,
              let oldest = challenges.min(by: { $0.value.sequence < $1.value.sequence }) {
            challenges[oldest.key] = nil
        }
        let nonce = tokens.token(bytes: WatchDirectRules.nonceBytes)
        challengeSequence += 1
        let expires = nowMs + WatchDirectRules.challengeTTLMs
        challenges[nonce] = Challenge(clientKey: key, expiresAtMs: expires, sequence: challengeSequence)
        return .json(200, ["ok": true, "nonce": .string(nonce), "ts": .int(nowMs), "expiresAtMs": .int(expires)])
    }

    /// The checks of a connect before the Gateway's credential decision: the candidate, or the
    /// refusal to answer.
    private mutating func connect(_ request: WatchHTTPRequest, nowMs: Int64) -> Result<WatchConnectCandidate, WatchHTTPResponse> {
        guard request.method.uppercased() == "POST" else { return .failure(.methodNotAllowed(allow: "POST")) }
        let body: JSONValue
        switch Self.readJSON(request.body) {
        case .success(let value): body = value
        case .failure(let response): return .failure(response)
        }
        let params: ConnectParams
        switch ConnectParams.validate(body) {
        case .success(let valid): params = valid
        case .failure(let error): return .failure(.invalidRequest("invalid connect params: \(error.message)"))
        }
        guard WatchDirectRules.isCanonicalWatch(params) else {
            return .failure(.invalidRequest("unsupported watch node identity or capability surface"))
        }
        // Exactly one credential member, and it must be the one that is set.
        let bootstrap = params.auth?.bootstrapToken?.trimmingASCIIWhitespace()
        let deviceToken = params.auth?.deviceToken?.trimmingASCIIWhitespace()
        let credential: WatchConnectCandidate.Credential? =
            if let bootstrap, !bootstrap.isEmpty { .bootstrapToken(bootstrap) }
            else if let deviceToken, !deviceToken.isEmpty { .deviceToken(deviceToken) }
            else { nil }
        let members = body.objectValue?["auth"]?.objectValue.map { Array($0.keys) } ?? []
        let expectedMember: String? = switch credential {
        case .bootstrapToken: "bootstrapToken"
        case .deviceToken: "deviceToken"
        case nil: nil
        }
        guard let credential, let expectedMember, members == [expectedMember], let device = params.device else { return .failure(.unauthorized) }
        // The nonce is consumed whatever happens next.
        let nonce = device.nonce ?? ""
        let challenge = challenges.removeValue(forKey: nonce)
        guard let challenge, challenge.clientKey == request.clientAddress, challenge.expiresAtMs > nowMs,
              abs(nowMs - Int64(device.signedAt)) <= WatchDirectRules.signatureSkewMs
        else { return .failure(.unauthorized) }
        guard case .verified(let verified) = proofVerifier.verify(params, expectedNonce: nonce, nowMs: Int(nowMs)) else {
            return .failure(.unauthorized)
        }
        return .success(WatchConnectCandidate(params: params, device: verified, credential: credential, clientAddress: request.clientAddress))
    }

    /// A connect after the Gateway's credential decision: a new session (replacing the node's
    /// older one), or the refusal.
    private mutating func admitted(_ admission: WatchAdmission, clientAddress: String, nowMs: Int64,
                                   tokens: inout some WatchTokenSource, effects: inout [WatchEffect]) -> WatchHTTPResponse {
        switch admission {
        case .refused:
            return .unauthorized
        case .rateLimited(let retryAfterMs):
            return .rateLimited(retryAfterMs: retryAfterMs)
        case .admitted(let nodeId, let connectionId, let issuedToken):
            if let previous = tokenByNode[nodeId] {
                effects += closeSession(previous, reason: "replaced by a newer watch session", announce: false)
            }
            let token = tokens.token(bytes: WatchDirectRules.sessionTokenBytes)
            sessions[token] = Session(token: token, nodeId: nodeId, connectionId: connectionId, lastSeenAtMs: nowMs)
            tokenByNode[nodeId] = token
            rateLimiter.reset(clientAddress, scope: .watchChallenge)
            return .json(200, [
                "ok": true, "sessionToken": .string(token), "deviceToken": .string(issuedToken), "nodeId": .string(nodeId),
                "protocol": .int(Int64(ProtocolVersion.current)), "pollTimeoutMs": .int(WatchDirectRules.pollTimeoutMs),
            ])
        }
    }

    /// The session of the request's bearer token, touched; or the 401 to answer.
    private mutating func currentSession(_ request: WatchHTTPRequest, nowMs: Int64, touch: Bool, effects: inout [WatchEffect])
        -> Result<String, WatchHTTPResponse>
    {
        guard let token = request.bearerToken, let session = sessions[token] else { return .failure(.unauthorized) }
        if let reason = session.invalidatedReason {
            effects += closeSession(token, reason: reason)
            return .failure(.unauthorized)
        }
        if touch { sessions[token]?.lastSeenAtMs = nowMs }
        return .success(token)
    }

    /// A poll: its answer now (a queued event, a refusal), or `nil` when it is held.
    private mutating func poll(_ request: WatchHTTPRequest, requestId: Int, nowMs: Int64, effects: inout [WatchEffect]) -> WatchHTTPResponse? {
        guard request.method.uppercased() == "POST" else { return .methodNotAllowed(allow: "POST") }
        let token: String
        switch currentSession(request, nowMs: nowMs, touch: true, effects: &effects) {
        case .success(let current): token = current
        case .failure(let response): return response
        }
        guard var session = sessions[token] else { return .unauthorized }
        if !session.queue.isEmpty {
            let event = session.queue.removeFirst()
            session.queuedBytes -= event.utf8.count
            sessions[token] = session
            return .rawJSON(200, "{\"ok\":true,\"event\":\(event)}")
        }
        if let waiter = session.waiter {
            effects.append(.answer(requestId: waiter.requestId, Self.noStore(.json(409, ["ok": false, "reason": "superseded poll"]))))
        }
        session.waiter = (requestId, nowMs + WatchDirectRules.pollTimeoutMs)
        sessions[token] = session
        return nil
    }

    /// A posted invoke result for the Gateway, or the refusal to answer.
    private mutating func result(_ request: WatchHTTPRequest, nowMs: Int64,
                                 effects: inout [WatchEffect]) -> Result<WatchInvokeResult, WatchHTTPResponse> {
        guard request.method.uppercased() == "POST" else { return .failure(.methodNotAllowed(allow: "POST")) }
        if case .failure(let response) = currentSession(request, nowMs: nowMs, touch: false, effects: &effects) { return .failure(response) }
        let body: JSONValue
        switch Self.readJSON(request.body) {
        case .success(let value): body = value
        case .failure(let response): return .failure(response)
        }
        guard let object = body.objectValue, let id = object["id"]?.stringValue, let ok = object["ok"]?.boolValue else {
            return .failure(.invalidRequest("invalid node invoke result"))
        }
        let token: String
        switch currentSession(request, nowMs: nowMs, touch: true, effects: &effects) {
        case .success(let current): token = current
        case .failure(let response): return .failure(response)
        }
        guard let session = sessions[token] else { return .failure(.unauthorized) }
        let error = object["error"]?.objectValue
        return .success(WatchInvokeResult(
            id: id, ok: ok, payload: object["payload"], payloadJSON: object["payloadJSON"]?.stringValue,
            errorCode: error?["code"]?.stringValue, errorMessage: error?["message"]?.stringValue,
            nodeId: session.nodeId, connectionId: session.connectionId))
    }

    private mutating func disconnect(_ request: WatchHTTPRequest, nowMs: Int64, effects: inout [WatchEffect]) -> WatchHTTPResponse {
        guard request.method.uppercased() == "POST" else { return .methodNotAllowed(allow: "POST") }
        switch currentSession(request, nowMs: nowMs, touch: true, effects: &effects) {
        case .success(let token):
            effects += closeSession(token, reason: "watch disconnected")
            return .json(200, ["ok": true])
        case .failure(let response):
            return response
        }
    }

    // MARK: Gateway side

    /// Queues `event` with `payload` for node `nodeId`, or hands it to its waiting poll.
    /// An event over 64 KiB, or one that overflows the queue (32 events, 512 KiB), closes the
    /// session instead.
    /// - Returns: whether the event was queued or delivered, and the effects.
    public mutating func enqueue(nodeId: String, event: String, payload: JSONValue?) -> (delivered: Bool, effects: [WatchEffect]) {
        guard let token = tokenByNode[nodeId], var session = sessions[token], session.invalidatedReason == nil else { return (false, []) }
        var object: [String: JSONValue] = ["event": .string(event)]
        if let payload { object["payload"] = payload }
        let json = JSONValue.object(object).jsonString
        let size = json.utf8.count
        guard size <= WatchDirectRules.maxQueuedEventBytes else {
            return (false, closeSession(token, reason: "event payload too large"))
        }
        if let waiter = session.waiter {
            session.waiter = nil
            sessions[token] = session
            return (true, [.answer(requestId: waiter.requestId, Self.noStore(.rawJSON(200, "{\"ok\":true,\"event\":\(json)}")))])
        }
        guard session.queue.count < WatchDirectRules.maxQueuedEvents, session.queuedBytes + size <= WatchDirectRules.maxQueuedBytes else {
            return (false, closeSession(token, reason: "event queue overflow"))
        }
        session.queue.append(json)
        session.queuedBytes += size
        sessions[token] = session
        return (true, [])
    }

    /// Whether node `nodeId` has an open session polled within the idle timeout.
    public func isReachable(nodeId: String, nowMs: Int64) -> Bool {
        guard let token = tokenByNode[nodeId], let session = sessions[token], session.invalidatedReason == nil else { return false }
        return nowMs - session.lastSeenAtMs < WatchDirectRules.sessionIdleMs
    }

    /// Answers polls whose 20 s are up (`{ok: true, event: null}`) and closes sessions idle for 75 s.
    public mutating func advance(nowMs: Int64) -> [WatchEffect] {
        var effects: [WatchEffect] = []
        for token in sessions.keys.sorted() {
            guard var session = sessions[token] else { continue }
            if nowMs >= session.lastSeenAtMs + WatchDirectRules.sessionIdleMs {
                effects += closeSession(token, reason: "session expired")
                continue
            }
            if let waiter = session.waiter, nowMs >= waiter.deadlineMs {
                session.waiter = nil
                sessions[token] = session
                effects.append(.answer(requestId: waiter.requestId, Self.noStore(.json(200, ["ok": true, "event": .null]))))
            }
        }
        return effects
    }

    /// The client of held poll `requestId` went away before its answer: the session closes.
    public mutating func pollAbandoned(requestId: Int) -> [WatchEffect] {
        guard let token = sessions.first(where: { $0.value.waiter?.requestId == requestId })?.key else { return [] }
        sessions[token]?.waiter = nil
        return closeSession(token, reason: "poll connection closed")
    }

    /// Marks node `nodeId`'s session invalid (device removed, token revoked): its next request
    /// closes it with a 401.
    public mutating func invalidate(nodeId: String, reason: String) {
        guard let token = tokenByNode[nodeId] else { return }
        sessions[token]?.invalidatedReason = reason
    }

    /// Closes node `nodeId`'s session now.
    public mutating func disconnect(nodeId: String, reason: String) -> [WatchEffect] {
        guard let token = tokenByNode[nodeId] else { return [] }
        return closeSession(token, reason: reason)
    }

    /// Shuts down: every session closes, challenges are forgotten, and every later request is 503.
    public mutating func close() -> [WatchEffect] {
        isClosed = true
        challenges = [:]
        return sessions.keys.sorted().flatMap { closeSession($0, reason: "gateway shutting down") }
    }

    private mutating func closeSession(_ token: String, reason: String, announce: Bool = true) -> [WatchEffect] {
        guard let session = sessions.removeValue(forKey: token) else { return [] }
        if tokenByNode[session.nodeId] == token { tokenByNode[session.nodeId] = nil }
        var effects: [WatchEffect] = []
        if let waiter = session.waiter {
            effects.append(.answer(requestId: waiter.requestId, Self.noStore(.json(401, ["ok": false, "reason": .string(reason)]))))
        }
        if announce { effects.append(.sessionClosed(nodeId: session.nodeId, connectionId: session.connectionId, reason: reason)) }
        return effects
    }

    private static func noStore(_ response: WatchHTTPResponse) -> WatchHTTPResponse {
        var response = response
        response.headers["Cache-Control"] = "no-store"
        return response
    }

    /// The body as JSON, or the 413/400 to answer; an empty body reads as `{}` (upstream
    /// `readJsonBody` in src/gateway/hooks.ts@005dfd0d passes `emptyObjectOnEmpty: true`). The
    /// transport has already decoded a chunked body, so the limit counts its decoded bytes.
    static func readJSON(_ body: [UInt8]) -> Result<JSONValue, WatchHTTPResponse> {
        guard body.count <= WatchDirectRules.maxBodyBytes else { return .failure(.payloadTooLarge) }
        if body.isEmpty { return .success(.object([:])) }
        guard let value = try? JSONValue(parsing: Data(body)) else { return .failure(.invalidRequest("invalid JSON body")) }
        return .success(value)
    }
}
