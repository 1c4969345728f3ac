import GatewayProtocol
import Simulation

// The apps' Files view and voice wake settings of the reference client, on the operator session
// (rules: Operator/WorkspaceView.swift, Operator/VoiceWakeBook.swift; docs/protocol.md §9.4-9.5).
extension ReferenceClient {
    // MARK: - Files view

    /// `browse-workspace`: lists the folder page by page until every entry is shown.
    func browseWorkspace(path: String, agentId: String?) async -> StimulusOutcome {
        guard let connection = await connection(for: .operator) else { return .error("operator session not connected") }
        workspace.open(folder: path, agentId: agentId ?? WorkspaceView.defaultAgentId)
        var offset = 0
        for _ in 0..<WorkspaceView.maxPages {
            let params = workspace.listParams(offset: offset, configuration: configuration)
            switch await Self.result(of: connection, GatewayMethod.agentsWorkspaceList.rawValue, params) {
            case .success(let payload):
                let next = workspace.applyPage(payload)
                let shown = workspace.folder?.entries.count ?? 0
                observations.append(.workspaceChanged("folder \"\(path)\" shows \(shown) of \(workspace.folder?.totalEntries ?? shown)"))
                guard let next else { return .ok }
                offset = next
            case .failure(let failure):
                return .error("the folder cannot be shown: \(failure)")
            }
        }
        return .error("the folder did not end after \(WorkspaceView.maxPages) pages")
    }

    /// `open-workspace-file`: asks for the preview once; `ok` when the content is shown, else
    /// `error` with what the preview shows instead (too large, unsupported, missing).
    func openWorkspaceFile(path: String, agentId: String?) async -> StimulusOutcome {
        previewRetry?.cancel()
        previewRetry = nil
        workspace.closePreview()
        guard let connection = await connection(for: .operator) else { return .error("operator session not connected") }
        let agent = agentId ?? WorkspaceView.defaultAgentId
        let params = WorkspaceView.getParams(path: path, agentId: agent)
        let result = await Self.result(of: connection, GatewayMethod.agentsWorkspaceGet.rawValue, params)
        let preview = workspace.applyPreview(path: path, result: result)
        observations.append(.workspaceChanged("preview \"\(path)\": \(preview.refusal ?? "shown")"))
        guard let refusal = preview.refusal else { return .ok }
        if case .tooLarge = preview, configuration.has(.retryOversizedPreview) {
            // The mutant takes the refusal for a passing failure and loads the preview again
            // every second while it is open.
            previewRetry = spawnTask { [weak self] in await self?.reloadPreview(path: path, params: params, on: connection) }
        }
        return .error(refusal)
    }

    /// The `retry-oversized-preview` mutant's loop: while the preview of `path` is open and
    /// refused, ask again every second (client clock).
    private func reloadPreview(path: String, params: JSONValue, on connection: GatewayConnection) async {
        for _ in 0..<WorkspaceView.maxPages {
            do { try await configuration.clock.sleep(untilMs: configuration.clock.nowMs + 1_000) } catch { return }
            guard !Task.isCancelled, !connection.isEnded, workspace.preview?.path == path, workspace.preview?.refusal != nil else { return }
            let result = await Self.result(of: connection, GatewayMethod.agentsWorkspaceGet.rawValue, params)
            guard !Task.isCancelled, workspace.preview?.path == path else { return }
            workspace.applyPreview(path: path, result: result)
        }
    }

    // MARK: - Voice wake settings

    /// `set-voice-wake-triggers`: the edit is shown at once and saved with `voicewake.set`; `ok`
    /// once the Gateway stored it (the settings then show the stored, normalised list).
    func setVoiceWakeTriggers(_ triggers: [String]) async -> StimulusOutcome {
        guard let connection = await connection(for: .operator) else { return .error("operator session not connected") }
        voiceWake.edit(triggers)
        observations.append(.voiceWakeChanged(triggers: voiceWake.triggers))
        switch await Self.result(of: connection, GatewayMethod.voicewakeSet.rawValue, VoiceWakeBook.setParams(triggers)) {
        case .success(let payload):
            if voiceWake.adopt(answer: payload) { observations.append(.voiceWakeChanged(triggers: voiceWake.triggers)) }
            return .ok
        case .failure(let failure):
            return .error("the trigger words were not saved: \(failure)")
        }
    }

    /// `expect-voice-wake-triggers`: `ok` as soon as the settings show exactly `expected`
    /// (waiting up to ``VoiceWakeBook/settleTimeout`` of client time for a change in flight),
    /// else `error` with what they show.
    func expectVoiceWakeTriggers(_ expected: [String]) async -> StimulusOutcome {
        if voiceWake.triggers == expected { return .ok }
        let cursor = observations.count
        let seen = await observations.first(from: cursor, timeout: VoiceWakeBook.settleTimeout, on: configuration.clock.waitTimeline) { observation in
            if case .voiceWakeChanged(let triggers) = observation { return triggers == expected }
            return false
        }
        if seen != nil, voiceWake.triggers == expected { return .ok }
        return .error("the voice wake settings show \(Self.wordList(voiceWake.triggers)), not \(Self.wordList(expected))")
    }

    private static func wordList(_ words: [String]) -> String {
        JSONValue.array(words.map(JSONValue.string)).jsonString
    }

    /// After every operator (re)connect: read the Gateway's list (`voicewake.get`).
    func refreshVoiceWake(on connection: GatewayConnection, methods: Set<String>) async {
        guard methods.contains(GatewayMethod.voicewakeGet.rawValue),
              case .success(let payload) = await Self.result(of: connection, GatewayMethod.voicewakeGet.rawValue, [:]) else { return }
        if voiceWake.adopt(answer: payload) { observations.append(.voiceWakeChanged(triggers: voiceWake.triggers)) }
    }

    /// A `voicewake.changed` on the operator session: the Gateway's list replaces the local one.
    func applyVoiceWakeEvent(_ event: EventFrame, on connection: GatewayConnection) {
        guard event.event == GatewayEventName.voicewakeChanged.rawValue else { return }
        switch voiceWake.applyChanged(event.payload, configuration: configuration) {
        case .adopted(let triggers):
            observations.append(.voiceWakeChanged(triggers: triggers))
        case .unchanged:
            break
        case .writeBack(let triggers):
            spawnTask {
                _ = await Self.result(of: connection, GatewayMethod.voicewakeSet.rawValue, VoiceWakeBook.setParams(triggers))
            }
        }
    }

    /// Stops what the Files view still has running (the client stops or resets).
    func stopAppSurfaces() {
        previewRetry?.cancel()
        previewRetry = nil
    }
}
