import Foundation
import GatewayProtocol
import WebSocketTransport

/// The effect runner: the one place where what the rules decided (``GatewayEffect``) passes the
/// fault layer and reaches sockets, the event log, the transcript and the state directory.
extension GatewayCore {
    /// Runs effects in order, each rewritten by the fault layer first. A `send` to a connection
    /// that is gone or closing is skipped before the layer sees it (no one-off fault is used up
    /// on it).
    func perform(_ effects: [GatewayEffect]) {
        for effect in effects { perform(effect) }
    }

    /// Runs one effect, rewritten by the fault layer first, as the list form runs each;
    /// the rules' shorthands below call this, so that a frame builds no array of effects.
    func perform(_ effect: GatewayEffect) {
        if case .send(_, let connectionId, _) = effect, !connectionTable.isOpen(connectionId) { return }
        guard let rewritten = faultLayer.rewritten(effect) else { return execute(effect) }
        for effect in rewritten { execute(effect) }
    }

    /// Runs one effect after the fault layer.
    private func execute(_ effect: GatewayEffect) {
        switch effect {
        case .send(let frame, let connectionId, let wire):
            write(frame, to: connectionId, wire: wire)
        case .respond(let response, let method, let connectionId, let wire):
            events.append(.requestHandled(connectionId: connectionId, method: method, ok: response.ok, errorCode: response.error?.code))
            write(.response(response), to: connectionId, wire: wire)
        case .respondJSON(let json, let method, let errorCode, let connectionId, let wire):
            events.append(.requestHandled(connectionId: connectionId, method: method, ok: false, errorCode: errorCode))
            writeJSON(json, to: connectionId, fault: wire.fault)
        case .sendJSON(let json, let connectionId):
            writeJSON(json, to: connectionId, fault: nil)
        case .dropResponse(let response, let method, let connectionId):
            events.append(.requestHandled(connectionId: connectionId, method: method, ok: response.ok, errorCode: response.error?.code))
            transcript.record(TranscriptEntry(monotonicMs: transcript.elapsedMs, gatewayMs: nowMs, connectionId: connectionId,
                                              kind: .dropped, message: Frame.response(response).json,
                                              text: "response to \(method) dropped (fault)",
                                              wire: TranscriptWire(frameKind: .text), fault: TranscriptFault(dropped: true)))
        case .loseAnswer(let method, let connectionId, let text):
            events.append(.requestHandled(connectionId: connectionId, method: method, ok: false, errorCode: nil))
            transcript.record(TranscriptEntry(monotonicMs: transcript.elapsedMs, gatewayMs: nowMs, connectionId: connectionId,
                                              kind: .dropped, text: text, wire: TranscriptWire(frameKind: .text),
                                              fault: TranscriptFault(dropped: true)))
            events.append(.faultInjected(description: text))
        case .close(let connectionId, let code, let reason):
            guard let state = connectionTable.beginClosing(connectionId) else { return }
            state.outbox.yield(.close(WebSocketCloseCode(UInt16(clamping: code)), CloseReason.truncate(reason)))
        case .abort(let connectionId):
            guard let state = connectionTable.beginClosing(connectionId) else { return }
            state.outbox.yield(.abort)
        case .broadcast(let event, let payload, let stateVersion):
            for (connectionId, state) in connectionTable.byId.sorted(by: { $0.key < $1.key }) {
                guard let session = state.session, !state.closing else { continue }
                guard EventScopeGate.allows(event: event, role: session.role, scopes: session.scopes) else { continue }
                sendSequenced(event: event, payload: payload, stateVersion: stateVersion, to: connectionId)
            }
        case .sendSequenced(let event, let payload, let connectionId):
            guard let state = connectionTable.byId[connectionId], state.session != nil, !state.closing else { return }
            sendSequenced(event: event, payload: payload, to: connectionId)
        case .log(let event):
            events.append(event)
        case .note(let text, let connectionId):
            transcript.record(TranscriptEntry(monotonicMs: transcript.elapsedMs, gatewayMs: nowMs, connectionId: connectionId,
                                              kind: .note, text: text))
        case .noteFault(let text, let connectionId):
            transcript.record(TranscriptEntry(monotonicMs: transcript.elapsedMs, gatewayMs: nowMs, connectionId: connectionId,
                                              kind: .fault, text: text))
            events.append(.faultInjected(description: text))
        case .persist:
            persistState()
        case .endWatchSession(let nodeId, let reason):
            handleWatch(.disconnect(nodeId: nodeId, reason: reason))
        case .sendTargeted(let event, let payload, let connectionId):
            sendTargeted(event: event, payload: payload, to: connectionId)
        case .finishInvoke(let id, let outcome, _):
            nodeState.invokeWaiters.removeValue(forKey: id)?.resume(returning: outcome)
        case .sendPush(let push):
            let delivery = sendPush(nodeId: push.nodeId, registration: push.registration, pushType: push.pushType,
                                    payload: push.payload)
            handleNodes(.pushAnswered(push, delivery, nowMs: nowMs))
        case .answerScriptedInvoke(let requestId, let answer):
            nodeState.invokeWake.scriptedAnswers.removeValue(forKey: requestId)?.resume(returning: answer)
        case .persistLastSeen(let write):
            // The pairing store answers whether the record is still there; this store cannot fail.
            let stored: Bool? = access.pairing.recordLastSeen(deviceId: write.deviceId, atMs: write.atMs, reason: write.reason) ? true : nil
            handleNodes(.lastSeenPersisted(write, stored: stored))
        }
    }


    /// Queues a frame on a connection and records it.
    private func write(_ frame: Frame, to connectionId: String, wire treatment: WireTreatment) {
        guard let state = connectionTable.byId[connectionId], !state.closing else { return }
        let fault = treatment.fault
        let wire = TranscriptWire(frameKind: treatment.binary ? .binary : .text, frameCount: max(1, fault?.fragmentCount ?? 1))
        // Built once for the transcript and the wire (`Frame.encoded()` is `json.encoded()`).
        let json = frame.json
        transcript.record(TranscriptEntry(monotonicMs: transcript.elapsedMs, gatewayMs: nowMs, connectionId: connectionId,
                                          kind: fault?.drop == true ? .dropped : .outbound, message: json,
                                          wire: wire, fault: Self.transcriptFault(fault, binary: treatment.binary)))
        events.append(.frameOut(connectionId: connectionId, frame: frame))
        // Text straight from the serialized bytes (no `Data` in between).
        let message: WebSocketMessage = treatment.binary ? .binary(Array(json.encoded())) : .text(json.jsonString)
        state.outbox.yield(.message(message, fault))
    }

    /// Queues a JSON document that is not a well-formed frame and records it.
    private func writeJSON(_ json: JSONValue, to connectionId: String, fault: SendFault?) {
        guard let state = connectionTable.byId[connectionId], !state.closing else { return }
        transcript.record(TranscriptEntry(monotonicMs: transcript.elapsedMs, gatewayMs: nowMs, connectionId: connectionId,
                                          kind: .outbound, message: json, wire: TranscriptWire(frameKind: .text, frameCount: 1),
                                          fault: fault.map { Self.transcriptFault($0, binary: false) }))
        state.outbox.yield(.message(.text(json.jsonString), fault))
    }

    /// What the transcript says about a send fault (every outbound binary message is a fault:
    /// the Gateway sends text).
    static func transcriptFault(_ fault: SendFault?, binary: Bool) -> TranscriptFault {
        let fragments = fault.map(\.fragmentCount) ?? 1
        return TranscriptFault(dropped: fault?.drop ?? false, delayMs: fault?.delay.map(\.milliseconds),
                               fragmentedInto: fragments > 1 ? fragments : nil,
                               pingsBetween: fragments > 1 && fault?.interleavedPings == true, binary: binary)
    }

    // MARK: - The rules' shorthand for one effect

    /// Sends a frame on a connection.
    func send(_ frame: Frame, to connectionId: String) {
        perform(.send(frame, to: connectionId))
    }

    /// Sends an event that carries the connection's next `seq` (a gap armed by a fault is the
    /// fault layer's).
    func sendSequenced(event: String, payload: JSONValue?, stateVersion: StateVersion? = nil, to connectionId: String) {
        guard let seq = connectionTable.nextSeq(connectionId) else { return }
        send(.event(EventFrame(event: event, payload: payload, seq: seq, stateVersion: stateVersion)), to: connectionId)
    }

    /// Sends a targeted event without `seq` (docs/protocol.md §2.5: `node.invoke.request`
    /// carried none in the protocol 3 era; clients tolerate both).
    func sendTargeted(event: String, payload: JSONValue?, to connectionId: String) {
        if WatchGlueState.isWatchConnection(connectionId) { return sendToWatch(event: event, payload: payload, connectionId: connectionId) }
        send(.event(EventFrame(event: event, payload: payload)), to: connectionId)
    }

    /// Answers a request.
    /// - Returns: whether the answer was sent (`false` when a fault dropped or lost it).
    @discardableResult
    func respond(_ response: ResponseFrame, method: String, to connectionId: String) -> Bool {
        let answer = GatewayEffect.respond(response, method: method, to: connectionId)
        guard let effects = faultLayer.rewritten(answer) else {
            execute(answer)
            return true
        }
        for effect in effects { execute(effect) }
        return !effects.contains {
            switch $0 {
            case .dropResponse, .loseAnswer: true
            default: false
            }
        }
    }

    /// Answers with an error.
    func fail(_ requestId: String, method: String, _ error: ErrorShape, to connectionId: String) {
        respond(.failure(id: requestId, error: error), method: method, to: connectionId)
    }

    /// Sends a JSON document that is not a well-formed frame (a response echoing a numeric id).
    func sendJSON(_ json: JSONValue, to connectionId: String) {
        perform(.sendJSON(json, to: connectionId))
    }

    /// Answers with a JSON document that is not a well-formed frame, as ``respond(_:method:to:)``
    /// answers a frame: logged as `request.handled` and delayed by `delayResponses`.
    func respondJSON(_ json: JSONValue, method: String, error: ErrorShape, to connectionId: String) {
        perform(.respondJSON(json, method: method, errorCode: error.code, to: connectionId))
    }

    /// Closes a connection with a close frame after what is already queued.
    func close(_ connectionId: String, code: Int, reason: String) {
        perform(.close(connectionId, code: code, reason: reason))
    }

    /// Drops a connection without a close frame (TCP reset), after what is already queued.
    func abort(_ connectionId: String) {
        perform(.abort(connectionId))
    }

    /// Sends an event to every session allowed to see it (docs/protocol.md §2.6).
    func broadcast(event: String, payload: JSONValue?, stateVersion: StateVersion? = nil) {
        perform(.broadcast(event: event, payload: payload, stateVersion: stateVersion))
    }

    /// Records an injected fault: a `fault` transcript line (on `connectionId`, or `-` for the
    /// whole Gateway) and a `faultInjected` event.
    func noteFault(_ description: String, on connectionId: String = "-") {
        perform(.noteFault(description, on: connectionId))
    }

    /// Arms a fault in the fault layer and announces it.
    func arm(_ fault: FaultArm) {
        perform(faultLayer.arm(fault))
    }
}
