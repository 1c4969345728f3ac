import Foundation
import GatewayProtocol
import WebSocketTransport

extension GatewayCore {
    /// The largest number of JSON values a frame may hold to be parsed at all: a 25 MiB frame
    /// of `[0,0,0,…]` would take about 40 times its size as parsed values. Fake-specific
    /// (upstream parses whatever `JSON.parse` accepts); such a frame gets `INVALID_REQUEST`.
    static let maximumFrameValues = 1_000_000

    /// The nesting limit of `JSONValue(parsing:)` (Foundation's JSON parser).
    static let maximumFrameDepth = 512

    /// Takes one inbound WebSocket message. Text and binary are both JSON (Swift clients send
    /// binary, docs/protocol.md §1). The message is read in place: a 25 MiB frame is not
    /// copied before it is parsed.
    func receive(_ message: WebSocketMessage, frames: Int? = nil, on connectionId: String) {
        guard connectionTable.byId[connectionId] != nil else { return }
        switch message {
        case .text(var text):
            text.withUTF8 { receive(bytes: $0, binary: false, frames: frames, on: connectionId) }
        case .binary(let bytes):
            bytes.withUnsafeBufferPointer { receive(bytes: $0, binary: true, frames: frames, on: connectionId) }
        }
    }

    private func receive(bytes: UnsafeBufferPointer<UInt8>, binary isBinary: Bool, frames: Int?, on connectionId: String) {
        guard let state = connectionTable.byId[connectionId] else { return }
        let wire = TranscriptWire(frameKind: isBinary ? .binary : .text, frameCount: frames)
        guard state.session != nil else {
            receiveFirstFrame(Array(bytes), binary: isBinary, wire: wire, closing: state.closing, on: connectionId)
            return
        }

        // Large frames are looked at before parsing, so that a frame of millions of tiny values
        // is refused without building them.
        let inspection = bytes.count > 64 * 1024 ? RawFrameInspection(buffer: bytes) : nil
        let decoded: JSONValue?
        if let inspection, inspection.valueCount > Self.maximumFrameValues {
            decoded = nil
        } else {
            decoded = try? JSONValue(parsingBytes: bytes)
        }
        transcript.recordInbound(connectionId: connectionId, gatewayMs: nowMs, bytes: bytes, binary: isBinary, wire: wire,
                                 parsed: decoded, refused: false)
        let frame = decoded.flatMap { try? Frame(json: $0) }
        events.append(.frameIn(connectionId: connectionId, frame: frame, binary: isBinary))
        guard !state.closing else { return }

        switch frame {
        case .request(let request):
            dispatch(request, on: connectionId)
        case .cancel:
            // Newest protocol only; the fake Gateway may ignore cancel frames (docs/protocol.md §2.4).
            break
        case .response, .event, nil:
            answerInvalidFrame(bytes, decoded: decoded, inspection: inspection, on: connectionId)
        }
    }

    /// Answers a frame after `hello-ok` that is not a request: `INVALID_REQUEST` with the frame's
    /// id, or `"invalid"` when it has none, and the connection stays open.
    ///
    /// - A frame that parses but is not a request frame: upstream answers exactly so
    ///   (`res` with `id: parsed.id ?? "invalid"`, `"invalid request frame: …"`;
    ///   src/gateway/server/ws-connection/authenticated-request-dispatch.ts@7831c47f).
    /// - JSON the Gateway cannot parse (cut off, or not JSON): upstream logs a parse error and
    ///   sends nothing (src/gateway/server/ws-connection/message-handler.ts, the catch around
    ///   `JSON.parse`), so its client waits forever. The fake answers instead, with the id when a
    ///   top-level `"id"` can still be read: a deliberate difference (docs/fidelity.md).
    /// - JSON nested deeper than 512 levels or with over a million values: upstream's parser
    ///   takes it and the method answers; the fake's parser does not, so it answers
    ///   `INVALID_REQUEST` with the id (unconfirmed how every upstream method treats such
    ///   params; answering with the id is what keeps a client from waiting).
    ///
    /// Whether the newest Gateway closes after several malformed frames is unconfirmed (one
    /// stored variant closes 1008 "too many invalid frames" after three); the tolerant choice is
    /// to keep the connection.
    func answerInvalidFrame(_ bytes: UnsafeBufferPointer<UInt8>, decoded: JSONValue?, inspection: RawFrameInspection?,
                            on connectionId: String) {
        let id: JSONValue
        let method: String
        let why: String
        if let decoded {
            id = decoded["id"] ?? "invalid"
            method = decoded["method"]?.stringValue ?? ""
            do {
                _ = try Frame(json: decoded)
                why = "clients send only req and cancel frames"
            } catch let error as FrameDecodingError {
                why = error.description
            } catch {
                why = "not a frame"
            }
        } else {
            let facts = inspection ?? RawFrameInspection(buffer: bytes)
            id = facts.id ?? "invalid"
            method = facts.method ?? ""
            if facts.valueCount > Self.maximumFrameValues {
                why = "more than \(Self.maximumFrameValues) JSON values"
            } else if facts.isComplete && facts.maxDepth > Self.maximumFrameDepth {
                why = "JSON nested deeper than \(Self.maximumFrameDepth) levels"
            } else if facts.byteCount == 0 {
                why = "empty message"
            } else {
                why = "not valid JSON"
            }
        }
        handleConnections(.invalidFrame(connectionId, why: why))
        let error = ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "invalid request frame: \(why)")
        if let text = id.stringValue {
            fail(text, method: method, error, to: connectionId)
        } else {
            // A number (or another JSON value) as id is echoed verbatim, as upstream does.
            events.append(.requestHandled(connectionId: connectionId, method: method, ok: false, errorCode: error.code))
            var response: [String: JSONValue] = ["type": "res", "id": id, "ok": false]
            response["error"] = try? error.json()
            sendJSON(.object(response), to: connectionId)
        }
    }

    /// The first message of a connection: decided, recorded (as a summary when it was refused
    /// and is large), then applied.
    func receiveFirstFrame(_ bytes: [UInt8], binary: Bool, wire: TranscriptWire, closing: Bool, on connectionId: String) {
        let message = Data(bytes)
        let decoded = bytes.count <= configuration.maxPreauthPayloadBytes ? try? JSONValue(parsing: message) : nil
        let decision = closing ? nil : decideHandshake(message, parsed: decoded, on: connectionId)
        let refused = decision?.rejection != nil || closing
        bytes.withUnsafeBufferPointer { buffer in
            transcript.recordInbound(connectionId: connectionId, gatewayMs: nowMs, bytes: buffer, binary: binary, wire: wire,
                                     parsed: decoded, refused: refused)
        }
        var frame = decoded.flatMap { try? Frame(json: $0) }
        if refused, bytes.count > transcript.budget.refusedFrameBytes { frame = frame?.trimmed(bytes: bytes.count) }
        events.append(.frameIn(connectionId: connectionId, frame: frame, binary: binary))
        if let decision { applyHandshake(decision, on: connectionId) }
    }

    /// Routes a request of an authenticated session.
    func dispatch(_ request: RequestFrame, on connectionId: String) {
        guard let session = connectionTable.byId[connectionId]?.session else { return }
        // A session of a stale shared-secret generation is closed, not answered (upstream
        // `authenticated-request-dispatch.ts`: 4001 "gateway auth changed").
        if let generation = session.sharedAuthGeneration, generation != sharedAuthGeneration {
            close(connectionId, code: Int(GatewayCloseCode.gatewayAuthChanged.rawValue), reason: ConnectionTable.gatewayAuthChangedReason)
            return
        }
        if request.method == GatewayMethod.connect.rawValue {
            fail(request.id, method: request.method,
                 ConnectAdmission.connectAfterHandshakeError, to: connectionId)
            return
        }
        // A drain refuses new work (FaultLayer).
        if let refusal = faultLayer.intercept(request, on: connectionId) {
            perform(refusal)
            return
        }
        handleMethodRequest(request, session: session, on: connectionId)
    }

    /// `unknown method: X` (docs/protocol.md §6.2).
    func unknownMethod(_ request: RequestFrame, on connectionId: String) {
        fail(request.id, method: request.method, MethodRegistry.unknownMethodError(request.method), to: connectionId)
    }

    // MARK: - Fault setters

    func setDropNextResponse(method: String, cut: Bool) {
        arm(.dropNextResponse(method: method, cut: cut))
    }

    func setResponseDelay(_ delay: Duration?) {
        arm(.responseDelay(delay))
    }

    func setTicksStopped(_ stopped: Bool) {
        arm(.ticksStopped(stopped))
        if !stopped { handleConnections(.ticksResumed(nowMs: nowMs)) }
    }

    /// One gap per connection: the skip is consumed by each connection's next sequenced event.
    func setSeqSkip(_ count: Int) {
        arm(.seqSkip(count, connections: connectionTable.byId.keys.sorted()))
    }

    func setNextEventsAsBinary(_ count: Int) {
        arm(.eventsAsBinary(count))
    }

    func setNextEventsFragmented(_ count: Int) {
        arm(.eventsFragmented(count))
    }

    func setChallengesWithoutTs(_ count: Int) {
        arm(.challengesWithoutTs(count))
    }

    func setStartingUp(_ on: Bool) {
        arm(.startingUp(on))
    }

    func setAccepting(_ on: Bool) {
        handleConnections(.accepting(on))
        if on { reopenWatchRoutes() }
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
        let shutdown = connectionTable.handle(.restarting(restartExpectedMs: restartExpectedMs))
        // Upstream's close prelude closes the Watch transport first (`watchNodeHttpRuntime.close()`):
        // Watch sessions end (a held poll gets 401 "gateway shutting down") and the Watch routes
        // answer 503 until accepting resumes with a new, empty Watch transport.
        closeWatchSessions()
        perform(shutdown)
        // The new process epoch: durable approvals still pending become `cancelled`
        // (`gateway-restart`, docs/protocol.md §7.5); questions live in memory only
        // (B.4), so they are gone, and nobody is left waiting on either.
        handleOperator(.restart(nowMs: nowMs, questionRandom: SeededRandom(seed: random.next())))
    }

    /// Resumes every waiter at shutdown so nothing hangs.
    func finishWaiters() {
        for (_, waiter) in nodeState.invokeWaiters.sorted(by: { $0.key < $1.key }) { waiter.resume(returning: .nodeDisconnected) }
        nodeState.invokeWaiters = [:]
        finishOperatorWaiters()
    }
}
