import GatewayProtocol

/// The Gateway actor's glue for the apps' surfaces (``AppSurfaces``): the handlers are pure
/// (``AgentWorkspaceBrowser``, ``AgentRoster``, ``VoiceWakeSettings``); this applies their
/// effects.
extension GatewayCore {
    /// The apps' surfaces, made from the configuration on first use.
    var appSurfaces: AppSurfaces {
        get { appSurfacesState ?? AppSurfaces(configuration: configuration) }
        set { appSurfacesState = newValue }
    }

    /// `voicewake.set`: replaces the triggers; on success every operator with `operator.read`
    /// and every node gets `voicewake.changed {triggers}` (the caller included).
    func voicewakeSet(_ call: MethodCall) {
        let result = appSurfaces.voiceWake.set(call.params)
        answer(call, result)
        if case .success = result { broadcastVoiceWakeChanged() }
    }

    /// Replaces the triggers from the scripting API or the console, with the same broadcast.
    func setVoiceWakeTriggers(_ triggers: [String]) -> [String] {
        appSurfaces.voiceWake.replace(with: triggers)
        broadcastVoiceWakeChanged()
        return appSurfaces.voiceWake.triggers
    }

    /// `voicewake.changed {triggers}` to every session the scope gate admits.
    func broadcastVoiceWakeChanged() {
        broadcast(event: GatewayEventName.voicewakeChanged.rawValue, payload: appSurfaces.voiceWake.getResult)
    }

    /// Logs `GatewayEvent.methodUnserved` the first time a client calls `method` and gets
    /// `unknown method`.
    func noteUnservedMethod(_ method: String, on connectionId: String) {
        guard appSurfaces.shouldReportUnserved(method) else { return }
        events.append(.methodUnserved(method: method, connectionId: connectionId))
    }
}
