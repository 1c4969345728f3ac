import Foundation
import GatewayProtocol
import WebSocketTransport

extension GatewayCore {
    /// Takes one inbound WebSocket message. Text and binary are both JSON (Swift clients send
    /// binary, gateway-protocol.md §1).
    func receive(_ message: WebSocketMessage, frames: Int? = nil, on connectionId: String) {
        guard let state = connections[connectionId] else { return }
        let bytes = message.payload
        let isBinary: Bool
        if case .binary = message { isBinary = true } else { isBinary = false }
        let decoded = try? JSONValue(parsing: Data(bytes))
        let recorded: JSONValue = decoded ?? (isBinary
            ? ["binaryBase64": .string(Data(bytes).base64EncodedString())]
            : ["text": .string(String(decoding: bytes, as: UTF8.self))])
        transcript.record(TranscriptEntry(monotonicMs: transcript.elapsedMs, gatewayMs: nowMs, connectionId: connectionId,
                                          kind: .inbound, message: recorded,
                                          wire: TranscriptWire(frameKind: isBinary ? .binary : .text, frameCount: frames)))
        let frame = decoded.flatMap { try? Frame(json: $0) }
        events.append(.frameIn(connectionId: connectionId, frame: frame, binary: isBinary))
        guard !state.closing else { return }

        guard state.session != nil else {
            handleHandshakeMessage(Data(bytes), on: connectionId)
            return
        }
        switch frame {
        case .request(let request):
            dispatch(request, on: connectionId)
        case .cancel:
            // Newest protocol only; the fake Gateway may ignore cancel frames (§2.4).
            break
        case .response, .event:
            noteInvalidFrame(on: connectionId, why: "clients send only req and cancel frames")
        case nil:
            // A response needs an id; a frame too broken to carry one gets none. Whether the
            // newest Gateway closes after three malformed frames is unconfirmed (§2.7), so the
            // tolerant choice is to keep the connection and record the problem.
            if let id = decoded?["id"]?.stringValue, !id.isEmpty {
                fail(id, method: decoded?["method"]?.stringValue ?? "",
                     ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "invalid request frame"), to: connectionId)
            }
            noteInvalidFrame(on: connectionId, why: decoded == nil ? "not JSON" : "not a valid frame")
        }
    }

    func noteInvalidFrame(on connectionId: String, why: String) {
        guard var state = connections[connectionId] else { return }
        state.invalidFrames += 1
        connections[connectionId] = state
        transcript.record(TranscriptEntry(monotonicMs: transcript.elapsedMs, gatewayMs: nowMs, connectionId: connectionId,
                                          kind: .note, text: "invalid frame ignored: \(why)"))
    }

    /// Routes a request of an authenticated session.
    func dispatch(_ request: RequestFrame, on connectionId: String) {
        guard let session = connections[connectionId]?.session else { return }
        // A session of a stale shared-secret generation is closed, not answered (upstream
        // `authenticated-request-dispatch.ts`: 4001 "gateway auth changed").
        if let generation = session.sharedAuthGeneration, generation != sharedAuthGeneration {
            close(connectionId, code: Int(GatewayCloseCode.gatewayAuthChanged.rawValue), reason: Self.gatewayAuthChangedReason)
            return
        }
        if request.method == GatewayMethod.connect.rawValue {
            fail(request.id, method: request.method,
                 ConnectAdmission.connectAfterHandshakeError, to: connectionId)
            return
        }
        if session.isNode {
            handleNodeRequest(request, session: session, on: connectionId)
        } else {
            handleOperatorRequest(request, session: session, on: connectionId)
        }
    }

    /// `unknown method: X` (gateway-protocol.md §7.2).
    func unknownMethod(_ request: RequestFrame, on connectionId: String) {
        fail(request.id, method: request.method,
             ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "unknown method: \(request.method)"), to: connectionId)
    }

    // MARK: - Fault setters

    func setDropNextResponse(method: String, cut: Bool) {
        faults.dropNextResponse[method] = cut
        noteFault("drop the next response to \(method)\(cut ? " and cut the connection" : "")")
    }

    func setResponseDelay(_ delay: Duration?) {
        faults.responseDelay = delay
        noteFault(delay.map { "delay responses by \($0)" } ?? "respond without delay")
    }

    func setTicksStopped(_ stopped: Bool) {
        faults.ticksStopped = stopped
        if !stopped { nextTickMs = nowMs + Int64(configuration.tickIntervalMs) }
        noteFault(stopped ? "ticks stopped" : "ticks resumed")
    }

    /// One gap per connection: the skip is consumed by each connection's next sequenced event.
    func setSeqSkip(_ count: Int) {
        for connectionId in connections.keys.sorted() {
            connections[connectionId]?.pendingSeqSkip = max(0, count)
        }
        noteFault("skip \(count) seq numbers")
    }

    func setNextEventsAsBinary(_ count: Int) {
        faults.nextEventsAsBinary = max(0, count)
        noteFault("send the next \(count) event\(count == 1 ? "" : "s") as binary messages")
    }

    func setNextEventsFragmented(_ count: Int) {
        faults.nextEventsFragmented = max(0, count)
        noteFault("fragment the next \(count) event\(count == 1 ? "" : "s") into 3 frames with pings between")
    }

    func setChallengesWithoutTs(_ count: Int) {
        faults.challengesWithoutTs = max(0, count)
        noteFault("send the next \(count) connect.challenge\(count == 1 ? "" : "s") without ts")
    }

    func setStartingUp(_ on: Bool) {
        startingUp = on
        noteFault(on ? "starting up (UNAVAILABLE, 1013)" : "started")
    }

    func setAccepting(_ on: Bool) { accepting = on }

    /// Records an injected fault: a `fault` transcript line (on `connectionId`, or `-` for the
    /// whole Gateway) and a `faultInjected` event.
    func noteFault(_ description: String, on connectionId: String = "-") {
        transcript.record(TranscriptEntry(monotonicMs: transcript.elapsedMs, gatewayMs: nowMs, connectionId: connectionId,
                                          kind: .fault, text: description))
        events.append(.faultInjected(description: description))
    }

    func sendCustomEvent(_ event: String, payload: JSONValue?, to connectionId: String, sequenced: Bool) {
        if sequenced {
            sendSequenced(event: event, payload: payload, to: connectionId)
        } else {
            sendTargeted(event: event, payload: payload, to: connectionId)
        }
    }

    /// `shutdown`, then close 1012 "service restart" on every socket; new sockets are refused
    /// until accepting resumes.
    func shutdownForRestart(restartExpectedMs: Int?) {
        accepting = false
        let payload = (try? JSONValue(encoding: ShutdownEvent(restartExpectedMs: restartExpectedMs))) ?? .null
        broadcast(event: GatewayEventName.shutdown.rawValue, payload: payload)
        for connectionId in connections.keys.sorted() {
            close(connectionId, code: 1012, reason: "service restart")
        }
        // The new process epoch: durable approvals still pending become `cancelled`
        // (`gateway-restart`, approvals-and-questions.md A.8); questions live in memory only
        // (B.4), so they are gone, and nobody is left waiting on either.
        applyOperatorEffects(operatorState.approvals.cancelAllPendingForRestart(nowMs: nowMs))
        operatorState.questions = QuestionStore(random: SeededRandom(seed: random.next()))
        operatorWaiters = []
    }

    /// Resumes every waiter at shutdown so nothing hangs.
    func finishWaiters() {
        for (_, waiter) in invokeWaiters.sorted(by: { $0.key < $1.key }) { waiter.resume(returning: .nodeDisconnected) }
        invokeWaiters = [:]
        finishOperatorWaiters()
    }
}
