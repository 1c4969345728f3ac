import GatewayProtocol

/// The Gateway actor's side of the method registry: routing a request to its entry's handler, and
/// the answers handlers use.
extension GatewayCore {
    /// The methods this Gateway knows (``MethodRegistry/standard``).
    var methodRegistry: MethodRegistry { .standard }

    /// The methods `hello-ok.features.methods` advertises: exactly what this profile serves to
    /// this role and marks as advertised (``MethodRegistry/advertised(role:profile:)``).
    func advertisedMethods(role: GatewayRole) -> [String] {
        methodRegistry.advertised(role: role, profile: profile)
    }

    /// Answers a request of an authenticated session: the registry routes it (role, profile,
    /// scope), then the method's handler runs.
    func handleMethodRequest(_ request: RequestFrame, session: Session, on connectionId: String) {
        let route = methodRegistry.route(method: request.method, role: GatewayRole(rawValue: session.role),
                                         scopes: Set(wire: session.scopes), profile: profile)
        switch route {
        case .refuse(let error):
            if error == MethodRegistry.unknownMethodError(request.method) {
                noteUnservedMethod(request.method, on: connectionId)
            }
            fail(request.id, method: request.method, error, to: connectionId)
        case .serve(let spec):
            let call = MethodCall(request: request, session: session, connectionId: connectionId)
            // A scripted answer armed by a fault replaces the handler (FaultLayer).
            if let scripted = faultLayer.answerInstead(of: call, profile: profile) {
                perform(scripted)
                return
            }
            switch spec.handler {
            case .core(let handler)?:
                handler(self, call)
            case .operatorState(let handler)?:
                runOperatorCore(handler, call)
            case nil:
                // `route` serves only specs with a handler.
                unknownMethod(request, on: connectionId)
            }
        }
    }

    /// Runs a pure operator-core handler and applies its outcome, with the other surface's side of
    /// an armed race (`Gateway.armRace`) before or after it.
    func runOperatorCore(_ handler: @Sendable (inout OperatorState, OperatorCall) -> OperatorOutcome, _ call: MethodCall) {
        let race = takeRace(for: call.request)
        if let race, race.surfaceFirst { runSurfaceSide(of: race.arm) }
        let outcome = handler(&operatorSurface.state, OperatorCall(params: call.params, caller: call.operatorCaller,
                                                           route: .approvalClient, nowMs: nowMs))
        apply(outcome, to: call.request, on: call.connectionId)
        if let race, !race.surfaceFirst { runSurfaceSide(of: race.arm) }
    }

    /// Answers `call` with success.
    func reply(_ call: MethodCall, _ payload: JSONValue) {
        respond(.success(id: call.request.id, payload: payload), method: call.method, to: call.connectionId)
    }

    /// Answers `call` with an error.
    func fail(_ call: MethodCall, _ error: ErrorShape) {
        fail(call.request.id, method: call.method, error, to: call.connectionId)
    }

    /// Answers `call` with a pure handler's result.
    func answer(_ call: MethodCall, _ result: Result<JSONValue, GatewayError>) {
        switch result {
        case .success(let payload): reply(call, payload)
        case .failure(let error): fail(call, error.shape)
        }
    }

    /// Answers `call` with `invalid <method> params: <detail>`.
    func invalid(_ call: MethodCall, _ detail: String) {
        fail(call, call.invalidParams(detail))
    }
}
