import Foundation
import GatewayProtocol
import WebSocketTransport

/// The Gateway's bootstrap-token and device-token stores as the admission sees them.
struct GatewayCredentials: ConnectCredentialVerifier {
    var pairing: PairingStore
    var bootstrap: BootstrapTokenStore
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
                                         scopes: request.scopes, nowMs: nowMs) {
        case .success(let token):
            deviceToken = token
            return .valid
        case .failure(let failure):
            return .invalid(failure.authFailureReason(for: candidate.source))
        }
    }
}

/// An admission decision and the bootstrap grant it used.
struct HandshakeDecision: Sendable {
    var decision: ConnectAdmission.Decision
    var bootstrapGrant: BootstrapGrant?

    var rejection: ConnectAdmission.Rejection? { decision.rejection }
}

extension GatewayCore {
    /// Decides on the first message of a connection: admission (gateway-protocol.md §3.5);
    /// the token stores are updated, nothing is sent yet.
    func decideHandshake(_ bytes: Data, on connectionId: String) -> HandshakeDecision? {
        guard let state = connections[connectionId] else { return nil }
        var admissionConfiguration = ConnectAdmission.Configuration(
            auth: configuration.auth, profile: profile, isStartingUp: startingUp,
            maxPreauthPayloadBytes: configuration.maxPreauthPayloadBytes)
        admissionConfiguration.connection = connectionFacts(state)
        var credentials = GatewayCredentials(pairing: pairingStore, bootstrap: bootstrapTokens, nowMs: nowMs)
        // `signedAt` is judged on the clients' time line (see `GatewayClock.peerNowMs`).
        let decision = ConnectAdmission.evaluate(message: bytes, nonce: state.nonce, nowMs: Int(clock.peerNowMs),
                                                 configuration: admissionConfiguration, credentials: &credentials)
        pairingStore = credentials.pairing
        bootstrapTokens = credentials.bootstrap
        return HandshakeDecision(decision: decision, bootstrapGrant: credentials.bootstrapGrant)
    }

    /// What the admission needs to know about the socket: loopback, Host, proxy headers, Origin.
    func connectionFacts(_ state: ConnectionState) -> ConnectAdmission.ConnectionFacts {
        let headers = state.socket.requestHeaders
        return ConnectAdmission.ConnectionFacts(
            isLoopback: (try? IPAddress(parsing: state.remoteAddress))?.isLoopback ?? false,
            host: headers["Host"], hasProxyHeaders: headers["X-Forwarded-For"] != nil || headers["X-Real-IP"] != nil
                || headers["Forwarded"] != nil,
            hasBrowserOrigin: !(headers["Origin"]?.trimmingCharacters(in: .whitespaces).isEmpty ?? true))
    }

    /// Applies a handshake decision: pairing (§6) and `hello-ok` (§3.6), or the rejection.
    func applyHandshake(_ handshake: HandshakeDecision, on connectionId: String) {
        switch handshake.decision {
        case .rejected(let rejection):
            reject(connectionId, response: rejection.response, error: rejection.error,
                   closeCode: Int(rejection.closeCode.rawValue), closeReason: rejection.closeReason)
        case .admitted(let admitted):
            completeConnect(admitted, bootstrapGrant: handshake.bootstrapGrant, on: connectionId)
        }
    }

    /// Sends the failed connect response (when there is an id to answer) and closes.
    func reject(_ connectionId: String, response: JSONValue?, error: ErrorShape, closeCode: Int, closeReason: String) {
        if let response {
            if let frame = try? Frame(json: response) {
                send(frame, to: connectionId)
            } else {
                sendJSON(response, to: connectionId)
            }
        }
        events.append(.handshakeRejected(connectionId: connectionId, error: error, closeCode: closeCode))
        close(connectionId, code: closeCode, reason: closeReason)
    }

    /// Sends a JSON document that is not a well-formed frame (a response echoing a numeric id).
    func sendJSON(_ json: JSONValue, to connectionId: String) {
        guard let state = connections[connectionId], !state.closing else { return }
        transcript.record(TranscriptEntry(monotonicMs: transcript.elapsedMs, gatewayMs: nowMs, connectionId: connectionId,
                                          kind: .outbound, message: json, wire: TranscriptWire(frameKind: .text, frameCount: 1)))
        state.outbox.yield(.message(.text(json.jsonString), nil))
    }

    func completeConnect(_ admitted: ConnectAdmission.Admitted, bootstrapGrant: BootstrapGrant?, on connectionId: String) {
        guard let state = connections[connectionId] else { return }
        let params = admitted.params
        let requestedScopes = params.scopes ?? []
        guard let device = admitted.device else {
            // An operator without a device identity (a CLI with the shared token, a local
            // backend): no pairing; the requested scopes for this session only, and only where
            // the admission keeps them (ConnectAdmission+MissingDevice.swift).
            let scopes = admitted.role == .node || !admitted.keepsUnboundScopes ? [] : requestedScopes
            let grant = HelloAuthGrant(role: admitted.role, scopes: scopes)
            establish(connectionId, admitted: admitted, deviceId: nil, publicKey: nil, grant: grant)
            return
        }
        let remote = state.remoteAddress
        let isLoopback = (try? IPAddress(parsing: remote))?.isLoopback ?? false
        let hasOrigin = state.socket.requestHeaders["Origin"] != nil
        let attempt = PairingAttempt(params: params, deviceId: device.deviceId, publicKey: device.publicKey,
                                     remoteIp: remote, isLoopback: isLoopback, hasBrowserOrigin: hasOrigin)
        switch pairingStore.admit(attempt, policy: configuration.autoApproval, bootstrap: bootstrapGrant, nowMs: nowMs) {
        case .rejected(let rejection, _, let effects):
            applyPairingEffects(effects)
            let error = rejection.errorShape(style: profile.pairingMessageStyle)
            reject(connectionId, response: Frame.response(.failure(id: admitted.requestID, error: error)).json, error: error,
                   closeCode: Int(PairingRequiredRejection.closeCode.rawValue),
                   closeReason: rejection.closeReason(style: profile.pairingMessageStyle))
        case .admitted(let admittedDevice, let effects):
            applyPairingEffects(effects)
            pairingStore.recordConnect(attempt, nowMs: nowMs)
            let grant = pairingStore.grantHelloAuth(deviceId: device.deviceId, role: admitted.role, scopes: requestedScopes,
                                                    handOff: admittedDevice.bootstrapHandOff, nowMs: nowMs)
            if let bootstrapGrant { _ = bootstrapTokens.consume(bootstrapGrant.token, nowMs: nowMs) }
            if let token = grant.deviceToken {
                events.append(.deviceToken(deviceId: device.deviceId, role: admitted.role.rawValue, action: "issued"))
                _ = token
            }
            establish(connectionId, admitted: admitted, deviceId: device.deviceId, publicKey: device.publicKey, grant: grant)
        }
    }

    /// Sends `hello-ok`, registers the session (and the node), starts ticking.
    func establish(_ connectionId: String, admitted: ConnectAdmission.Admitted, deviceId: String?, publicKey: String?,
                   grant: HelloAuthGrant) {
        guard var state = connections[connectionId] else { return }
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
        let session = Session(role: role.rawValue, scopes: grant.scopes, deviceId: deviceId, publicKey: publicKey, nodeId: nodeId,
                              client: params.client, protocolVersion: admitted.negotiatedProtocol, authMethod: authMethod,
                              deviceToken: grant.deviceToken?.token)
        state.session = session
        state.handshakeDeadlineMs = nil
        connections[connectionId] = state
        state.socket.setMaxMessageSize(configuration.maxPayloadBytes)

        let hello = HelloOK(
            protocol: admitted.negotiatedProtocol,
            server: HelloServerInfo(version: profile.serverVersion, connId: connectionId),
            features: HelloFeatures(methods: advertisedMethods(role: role), events: advertisedEvents(role: role)),
            snapshot: HelloSnapshot(presence: presenceEntries(), health: [:],
                               stateVersion: StateVersion(presence: presenceVersion, health: 1),
                               uptimeMs: Int(max(0, nowMs - startedAtMs)), sessionDefaults: SessionDefaults(),
                               authMode: configuration.auth.name),
            auth: grant.helloAuth,
            policy: HelloPolicy(maxPayload: configuration.maxPayloadBytes, maxBufferedBytes: configuration.maxBufferedBytes,
                                tickIntervalMs: configuration.tickIntervalMs),
            pluginSurfaceUrls: profile.hasNewerNodeMethods && role == .node ? ["canvas": canvasURL] : nil,
            canvasHostUrl: !profile.hasNewerNodeMethods && role == .node ? canvasURL : nil)
        respond(.success(id: admitted.requestID, payload: (try? JSONValue(encoding: hello)) ?? .null),
                method: GatewayMethod.connect.rawValue, to: connectionId)
        events.append(.sessionOpened(SessionInfo(
            connectionId: connectionId, role: role.rawValue, scopes: grant.scopes, deviceId: deviceId,
            clientId: params.client.id.rawValue, clientMode: params.client.mode.rawValue,
            protocolVersion: admitted.negotiatedProtocol, authMethod: authMethod,
            signatureVersion: admitted.device.map { $0.payloadVersion.rawValue }, presentedToken: presentedToken,
            issuedDeviceToken: grant.deviceToken?.token)))
        if !connections.values.contains(where: { $0.session != nil && $0.id != connectionId }) {
            // The first session starts the tick schedule.
            nextTickMs = nowMs + Int64(configuration.tickIntervalMs)
        }

        guard let nodeId else { return }
        let replaced = nodes.register(RegisteredNode(
            nodeId: nodeId, connectionId: connectionId, clientId: params.client.id.rawValue,
            clientMode: params.client.mode.rawValue, displayName: params.client.displayName, platform: params.client.platform,
            version: params.client.version, deviceFamily: params.client.deviceFamily,
            modelIdentifier: params.client.modelIdentifier, caps: params.caps ?? [], commands: params.commands ?? [],
            permissions: params.permissions ?? [:], pathEnv: params.pathEnv, remoteIp: state.remoteAddress,
            connectedAtMs: nowMs))
        if let replaced {
            // The older socket stays open but is no longer the node's routing target.
            events.append(.nodeDisconnected(nodeId: nodeId, connectionId: replaced))
        }
        events.append(.nodeConnected(nodeId: nodeId, connectionId: connectionId))
        let triggers = (try? JSONValue(encoding: VoiceWakeChangedEvent(triggers: configuration.voiceWakeTriggers))) ?? .null
        sendTargeted(event: "voicewake.changed", payload: triggers, to: connectionId)
        broadcastPresence()
    }

    /// Applies what the pairing store decided: broadcasts, event-log entries, disconnects.
    func applyPairingEffects(_ effects: [PairingEffect]) {
        for effect in effects {
            switch effect {
            case .requested(let request):
                broadcast(event: PairingEventName.requested, payload: request.eventPayload)
                events.append(.pairingRequested(PairingRequestInfo(request)))
            case .refreshed(let request):
                events.append(.pairingRefreshed(PairingRequestInfo(request)))
            case .superseded(let old, let new):
                let deviceId = pairingStore.pendingRequest(new, nowMs: nowMs)?.deviceId ?? ""
                events.append(.pairingSuperseded(oldRequestIds: old, newRequestId: new, deviceId: deviceId))
            case .resolved(let resolution):
                broadcast(event: PairingEventName.resolved, payload: resolution.eventPayload)
                events.append(.pairingResolved(requestId: resolution.requestId, deviceId: resolution.deviceId,
                                               decision: resolution.decision.rawValue))
            case .expired(let request):
                events.append(.pairingExpired(requestId: request.requestId, deviceId: request.deviceId))
            case .withdrawn(let request):
                events.append(.pairingResolved(requestId: request.requestId, deviceId: request.deviceId, decision: "withdrawn"))
            case .disconnect(let deviceId, let role, let reason):
                for (connectionId, state) in connections.sorted(by: { $0.key < $1.key }) {
                    guard let session = state.session, session.deviceId == deviceId else { continue }
                    if let role, session.role != role.rawValue { continue }
                    close(connectionId, code: 1008, reason: reason.rawValue)
                }
            }
        }
    }

    /// Runs pairing expiry (5 minutes after the last retry).
    func expirePairingRequests(nowMs: Int64) {
        let expired = pairingStore.expire(nowMs: nowMs)
        applyPairingEffects(expired.map(PairingEffect.expired))
    }
}
