import Foundation
import GatewayProtocol
import WebSocketTransport

/// The Gateway's bootstrap-token and device-token stores and its rate limiter, as the admission
/// of one connect sees them.
struct GatewayCredentials: ConnectCredentialVerifier {
    var pairing: PairingStore
    var bootstrap: BootstrapTokenStore
    var limiter: AuthRateLimiter
    let remoteAddress: String
    let sharedAuthGeneration: Int
    let nowMs: Int64
    var bootstrapGrant: BootstrapGrant?
    var deviceToken: DeviceToken?

    mutating func verifyBootstrapToken(_ token: String, for request: ConnectCredentialRequest) -> ConnectCredentialVerdict {
        switch bootstrap.verify(token, deviceId: request.deviceId, publicKey: request.publicKey, role: request.role,
                                scopes: request.scopes, nowMs: nowMs) {
        case .success(let grant):
            bootstrapGrant = grant
            return .valid
        case .failure(let failure):
            return .invalid(failure.authFailureReason)
        }
    }

    mutating func verifyDeviceToken(_ candidate: DeviceTokenCandidate, for request: ConnectCredentialRequest) -> ConnectCredentialVerdict {
        switch pairing.verifyDeviceToken(candidate.value, deviceId: request.deviceId, role: request.role,
                                         scopes: request.scopes, sharedAuthGeneration: sharedAuthGeneration, nowMs: nowMs) {
        case .success(let token):
            deviceToken = token
            return .valid
        case .failure(let failure):
            return .invalid(failure.authFailureReason(for: candidate.source))
        }
    }

    mutating func rateLimitRetryAfterMs(_ scope: AuthRateLimitScope) -> Int? {
        let check = limiter.check(remoteAddress, scope: scope, nowMs: nowMs)
        return check.allowed ? nil : Int(check.retryAfterMs)
    }

    mutating func recordAuthFailure(_ scope: AuthRateLimitScope) {
        limiter.recordFailure(remoteAddress, scope: scope, nowMs: nowMs)
    }

    mutating func resetAuthFailures(_ scope: AuthRateLimitScope) {
        limiter.reset(remoteAddress, scope: scope)
    }
}

/// An admission decision and the bootstrap grant and device token it used.
struct HandshakeDecision: Sendable {
    var decision: ConnectAdmission.Decision
    var bootstrapGrant: BootstrapGrant?
    var deviceToken: DeviceToken?

    var rejection: ConnectAdmission.Rejection? { decision.rejection }
}

extension GatewayCore {
    /// Decides on the first message of a connection: admission (docs/protocol.md §3.7);
    /// the token stores and the rate limiter are updated, nothing is sent yet.
    /// - Parameter parsed: `bytes` already parsed (`nil` when they are not JSON or were not
    ///   parsed because they are over the pre-auth limit): the admission does not parse them again.
    func decideHandshake(_ bytes: Data, parsed: JSONValue?, on connectionId: String) -> HandshakeDecision? {
        guard let state = connectionTable.byId[connectionId] else { return nil }
        // Starting up is the fault layer's: it sets the admission's start-up input.
        var admissionConfiguration = faultLayer.admission(ConnectAdmission.Configuration(
            auth: sharedAuth, profile: profile, isStartingUp: false,
            maxPreauthPayloadBytes: configuration.maxPreauthPayloadBytes))
        admissionConfiguration.connection = connectionFacts(state)
        // Rate limits and token checks are done on the Gateway clock; `signedAt` on the clients'
        // time line (see `GatewayClock.peerNowMs`).
        var credentials = GatewayCredentials(pairing: pairingStore, bootstrap: bootstrapTokens, limiter: authRateLimiter,
                                             remoteAddress: state.remoteAddress, sharedAuthGeneration: sharedAuthGeneration,
                                             nowMs: nowMs)
        let decision = if let parsed, bytes.count <= admissionConfiguration.maxPreauthPayloadBytes {
            // What `evaluate(message:)` does after its size check and parse.
            ConnectAdmission.evaluate(json: parsed, nonce: state.nonce, nowMs: Int(clock.peerNowMs),
                                      configuration: admissionConfiguration, credentials: &credentials)
        } else {
            ConnectAdmission.evaluate(message: bytes, nonce: state.nonce, nowMs: Int(clock.peerNowMs),
                                      configuration: admissionConfiguration, credentials: &credentials)
        }
        pairingStore = credentials.pairing
        bootstrapTokens = credentials.bootstrap
        authRateLimiter = credentials.limiter
        return HandshakeDecision(decision: decision, bootstrapGrant: credentials.bootstrapGrant,
                                 deviceToken: credentials.deviceToken)
    }

    /// What the admission needs to know about the socket: loopback, Host, proxy headers, Origin.
    func connectionFacts(_ state: ConnectionState) -> ConnectAdmission.ConnectionFacts {
        let headers = state.socket.requestHeaders
        return ConnectAdmission.ConnectionFacts(
            isLoopback: state.isLoopback,
            host: headers["Host"], hasProxyHeaders: headers["X-Forwarded-For"] != nil || headers["X-Real-IP"] != nil
                || headers["Forwarded"] != nil,
            hasBrowserOrigin: !(headers["Origin"]?.trimmingCharacters(in: .whitespaces).isEmpty ?? true))
    }

    /// Applies a handshake decision: pairing (docs/protocol.md §5.7) and `hello-ok` (docs/protocol.md §4), or the rejection.
    func applyHandshake(_ handshake: HandshakeDecision, on connectionId: String) {
        switch handshake.decision {
        case .rejected(let rejection):
            reject(connectionId, response: rejection.response, error: rejection.error,
                   closeCode: Int(rejection.closeCode.rawValue), closeReason: rejection.closeReason)
        case .admitted(let admitted):
            completeConnect(admitted, bootstrapGrant: handshake.bootstrapGrant, deviceToken: handshake.deviceToken,
                            on: connectionId)
        }
    }

    /// Sends the failed connect response (when there is an id to answer) and closes.
    func reject(_ connectionId: String, response: JSONValue?, error: ErrorShape, closeCode: Int, closeReason: String) {
        if let response {
            // A refusal is a response like any other: logged as `request.handled` and held back
            // by `delayResponses` (the close follows it on the same queue).
            if let frame = try? Frame(json: response), case .response(let answer) = frame {
                respond(answer, method: GatewayMethod.connect.rawValue, to: connectionId)
            } else if let frame = try? Frame(json: response) {
                send(frame, to: connectionId)
            } else {
                respondJSON(response, method: GatewayMethod.connect.rawValue, error: error, to: connectionId)
            }
        }
        events.append(.handshakeRejected(connectionId: connectionId, error: error, closeCode: closeCode))
        close(connectionId, code: closeCode, reason: closeReason)
    }

    func completeConnect(_ admitted: ConnectAdmission.Admitted, bootstrapGrant: BootstrapGrant?, deviceToken: DeviceToken?,
                         on connectionId: String) {
        guard let state = connectionTable.byId[connectionId] else { return }
        let params = admitted.params
        let requestedScopes = params.scopes ?? []
        let sharedGeneration = sessionSharedAuthGeneration(admitted.authMethod, deviceToken: deviceToken)
        guard let device = admitted.device else {
            // An operator without a device identity (a CLI with the shared token, a local
            // backend): no pairing; the requested scopes for this session only, and only where
            // the admission keeps them (ConnectAdmission+MissingDevice.swift).
            let scopes = admitted.role == .node || !admitted.keepsUnboundScopes ? [] : requestedScopes
            let grant = HelloAuthGrant(role: admitted.role, scopes: scopes)
            establish(connectionId, admitted: admitted, deviceId: nil, publicKey: nil, grant: grant,
                      sharedAuthGeneration: sharedGeneration)
            return
        }
        let remote = state.remoteAddress
        let isLoopback = state.isLoopback
        let origin = state.socket.requestHeaders["Origin"]
        let attempt = PairingAttempt(params: params, deviceId: device.deviceId, publicKey: device.publicKey,
                                     remoteIp: remote, isLoopback: isLoopback, hasBrowserOrigin: origin != nil, origin: origin)
        switch access.admitDevice(attempt, policy: configuration.autoApproval, bootstrap: bootstrapGrant,
                                  style: profile.pairingMessageStyle, nowMs: nowMs, to: operatorListeners) {
        case .refused(let error, let closeReason, let effects):
            perform(effects)
            reject(connectionId, response: Frame.response(.failure(id: admitted.requestID, error: error)).json, error: error,
                   closeCode: Int(PairingRequiredRejection.closeCode.rawValue), closeReason: closeReason)
        case .admitted(let admittedDevice, let effects):
            perform(effects)
            if admitted.role == .node, !admitNodeSurface(device: device, admitted: admitted, remote: remote, on: connectionId) {
                return
            }
            let (grant, grantEffects) = access.grantSession(
                attempt, role: admitted.role, scopes: requestedScopes, handOff: admittedDevice.bootstrapHandOff,
                presentedBoundToken: deviceToken?.sharedAuthGeneration != nil, dependsOnSharedSecret: sharedGeneration != nil,
                reportTokenScopes: profile.helloReportsTokenScopes, nowMs: nowMs)
            perform(grantEffects)
            let delivered = establish(connectionId, admitted: admitted, deviceId: device.deviceId, publicKey: device.publicKey,
                                      grant: grant, sharedAuthGeneration: sharedGeneration)
            if let bootstrapGrant {
                finishSetup(bootstrapGrant, deviceId: device.deviceId, deviceName: params.client.displayName, delivered: delivered)
            }
        }
    }

    /// The shared-secret generation a session of `method` depends on (4001 when it changes).
    func sessionSharedAuthGeneration(_ method: ConnectAdmission.AuthMethod, deviceToken: DeviceToken?) -> Int? {
        switch method {
        case .sharedToken, .password: sharedAuthGeneration
        case .deviceToken: deviceToken?.sharedAuthGeneration
        case .none, .bootstrapToken: nil
        }
    }

    /// The node-pairing rate limit of a device's first node session: the request for its
    /// capability surface counts per client address, and a locked-out address is refused with
    /// `AUTH_RATE_LIMITED` (upstream `requestNodePairingFromConnect`, connect-node-session.ts
    /// @eb43e943c9f52eb9076fcea3919c62d736b1053a: every request of a node without a paired
    /// surface is counted; paired reconnects are not). The fake approves a capability surface at
    /// once, so the one counted request per device is its first node session.
    /// - Returns: `false` when the connect was refused.
    func admitNodeSurface(device: VerifiedDevice, admitted: ConnectAdmission.Admitted, remote: String,
                          on connectionId: String) -> Bool {
        guard let retryAfterMs = access.countNodeSurfaceRequest(deviceId: device.deviceId, publicKey: device.publicKey,
                                                                remote: remote, nowMs: nowMs) else { return true }
        let rejection = ConnectAdmission.authRejection(
            reason: .rateLimited, params: admitted.params, mode: sharedAuth, retryAfterMs: Int(retryAfterMs), hasDevice: true)
        reject(connectionId, response: Frame.response(.failure(id: admitted.requestID, error: rejection.error)).json,
               error: rejection.error, closeCode: Int(rejection.closeCode.rawValue), closeReason: rejection.closeReason)
        return false
    }

    /// Uses up a setup code's bootstrap token after its `hello-ok` and records and announces
    /// the setup's outcome: `device.pair.setup.completed`, or `device.pair.setup.deliveryUncertain`
    /// when the `hello-ok` could not be delivered (the connection went away, or a fault dropped
    /// the response).
    /// - Parameter delivered: whether the `hello-ok` went out (no fault dropped it).
    func finishSetup(_ grant: BootstrapGrant, deviceId: String, deviceName: String?, delivered: Bool) {
        handleAccess(.setupFinished(grant, deviceId: deviceId, deviceName: deviceName, delivered: delivered, nowMs: nowMs))
    }

    /// Sends `hello-ok`, registers the session (and the node), starts ticking.
    /// - Returns: whether the `hello-ok` went out (`false` when a fault dropped it).
    @discardableResult
    func establish(_ connectionId: String, admitted: ConnectAdmission.Admitted, deviceId: String?, publicKey: String?,
                   grant: HelloAuthGrant, sharedAuthGeneration: Int?) -> Bool {
        guard let state = connectionTable.byId[connectionId] else { return false }
        let params = admitted.params
        let role = admitted.role
        let nodeId = role == .node ? (deviceId ?? params.client.id.rawValue) : nil
        let authMethod: String
        var presentedToken: String?
        switch admitted.authMethod {
        case .none: authMethod = "none"
        case .sharedToken: authMethod = "token"; presentedToken = params.auth?.token
        case .password: authMethod = "password"
        case .bootstrapToken(let token): authMethod = "bootstrap-token"; presentedToken = token
        case .deviceToken(let candidate): authMethod = "device-token"; presentedToken = candidate.value
        }
        if presentedToken == nil { presentedToken = params.auth.map(\.signatureToken).flatMap { $0.isEmpty ? nil : $0 } }
        var session = Session(role: role.rawValue, scopes: grant.scopes, deviceId: deviceId, publicKey: publicKey, nodeId: nodeId,
                              client: params.client, protocolVersion: admitted.negotiatedProtocol, authMethod: authMethod,
                              deviceToken: grant.deviceToken?.token, sharedAuthGeneration: sharedAuthGeneration)
        session.pairingGeneration = role == .node ? deviceId.flatMap(pairingGeneration(deviceId:)) : nil
        // The first session starts the tick schedule.
        handleConnections(.established(connectionId, session, nowMs: nowMs))
        state.socket.setMaxMessageSize(configuration.maxPayloadBytes)

        // The current Gateway always announces its own protocol version (connect-hello.ts
        // @6eec7e0ec17433b40821fac09f7808d1d8e0345e), even to a node that offered only 3.
        let helloProtocol = profile.announcesCurrentProtocol ? profile.protocolVersion : admitted.negotiatedProtocol
        let canvas = helloCanvasFields(role: role, offeredMaxProtocol: params.maxProtocol, connectionId: connectionId,
                                       nodeId: nodeId)
        handleConnections(.pluginSurfacesGranted(connectionId, Set(canvas.pluginSurfaceUrls?.keys ?? [:].keys)))
        let hello = HelloOK(
            protocol: helloProtocol,
            server: HelloServerInfo(version: profile.serverVersion, connId: connectionId),
            features: HelloFeatures(methods: advertisedMethods(role: role), events: advertisedEvents(role: role),
                                    capabilities: profile.serverCapabilities.isEmpty ? nil : profile.serverCapabilities),
            snapshot: HelloSnapshot(presence: presenceEntries(), health: [:],
                               stateVersion: StateVersion(presence: nodeState.presenceVersion, health: 1),
                               uptimeMs: Int(max(0, nowMs - startedAtMs)), sessionDefaults: SessionDefaults(),
                               authMode: sharedAuth.name),
            auth: grant.helloAuth,
            policy: HelloPolicy(maxPayload: configuration.maxPayloadBytes, maxBufferedBytes: configuration.maxBufferedBytes,
                                tickIntervalMs: configuration.tickIntervalMs),
            pluginSurfaceUrls: canvas.pluginSurfaceUrls, canvasHostUrl: canvas.canvasHostUrl)
        let delivered = respond(.success(id: admitted.requestID, payload: (try? hello.json()) ?? .null),
                method: GatewayMethod.connect.rawValue, to: connectionId)
        events.append(.sessionOpened(SessionInfo(
            connectionId: connectionId, role: role, scopes: grant.scopes, deviceId: deviceId,
            clientId: params.client.id.rawValue, clientMode: params.client.mode.rawValue,
            protocolVersion: helloProtocol, authMethod: authMethod,
            signatureVersion: admitted.device.map { $0.payloadVersion.rawValue }, presentedToken: presentedToken,
            issuedDeviceToken: grant.deviceToken?.token)))

        guard let nodeId else { return delivered }
        let surface = reconcileNodeSurface(nodeId: nodeId, params: params, remoteIp: state.remoteAddress)
        // Registered: a node.invoke waiting for this node after a wake dispatches now
        // (NodeState+Wake.swift).
        handleNodes(.registered(RegisteredNode(
            nodeId: nodeId, connectionId: connectionId, clientId: params.client.id.rawValue,
            clientMode: params.client.mode.rawValue, displayName: params.client.displayName, platform: params.client.platform,
            version: params.client.version, deviceFamily: params.client.deviceFamily,
            modelIdentifier: params.client.modelIdentifier, caps: params.caps ?? [], commands: surface,
            permissions: params.permissions ?? [:], pathEnv: params.pathEnv, remoteIp: state.remoteAddress,
            connectedAtMs: nowMs), voiceWake: appSurfaces.voiceWake.getResult, nowMs: nowMs))
        return delivered
    }

    /// Changes the shared secret: the generation moves on, every session that depends on the
    /// old one is closed with 4001 "gateway auth changed", and device tokens bound to it stop
    /// verifying (upstream `disconnectStaleSharedGatewayAuthClients`, ws-shared-generation.ts).
    /// Failed-attempt counters of the shared secret start over.
    func changeSharedSecret(_ mode: GatewayAuthMode) {
        // The new secret is redacted by value from now on, as the configured one is.
        if let secret = mode.secret { transcript.redactor.pin(secret) }
        sharedAuth = mode
        sharedAuthGeneration += 1
        noteFault("shared secret changed to \(mode.name) (generation \(sharedAuthGeneration))")
        handleConnections(.sharedSecretChanged(generation: sharedAuthGeneration))
    }

    /// Moves pairing and tokens (``AccessState/handle(_:to:)``) and runs its effects.
    func handleAccess(_ input: AccessState.Input) {
        perform(access.handle(input, to: operatorListeners))
    }
}
