import Testing
@testable import WebSocketTransport

/// Every transition of the closing handshake, without sockets (RFC 6455 sections 5.5.1, 7, 8).
@Suite("Close state machine")
struct CloseStateMachineTests {
    typealias Machine = WebSocketCloseStateMachine

    static func server(timer: Bool = true) -> Machine { Machine(isClient: false, usesCloseTimer: timer) }
    static func client(timer: Bool = true) -> Machine { Machine(isClient: true, usesCloseTimer: timer) }

    /// The body of a close frame as it travels.
    static func body(_ code: UInt16, _ reason: String = "") -> [UInt8] {
        [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8)
    }

    static func frame(_ code: UInt16?, _ reason: String = "") -> WebSocketCloseFrame {
        WebSocketCloseFrame(code: code.map { WebSocketCloseCode($0) }, reason: reason)
    }

    // MARK: - Local close

    @Test func aLocalCloseSendsItsFrameAndStartsTheTimer() {
        var machine = Self.server()
        #expect(machine.stateName == "open")
        #expect(machine.canSendMessages && machine.canSendRaw && machine.deliversMessages)
        let actions = machine.closeRequested(code: .normal, reason: "bye")
        #expect(actions == [.sendCloseFrame(Self.frame(1000, "bye")), .startCloseTimer])
        #expect(machine.stateName == "closeSent")
        // No more messages, pings or pongs after the close frame; raw bytes and received
        // messages still pass until the peer answers.
        #expect(!machine.canSendMessages)
        #expect(machine.canSendRaw)
        #expect(machine.deliversMessages)
        #expect(machine.closeInfo == nil)
    }

    @Test func aSecondLocalCloseChangesNothing() {
        var machine = Self.client()
        _ = machine.closeRequested(code: .normal, reason: "first")
        #expect(machine.closeRequested(code: .goingAway, reason: "second") == [])
        #expect(machine.stateName == "closeSent")
        _ = machine.closeFrameReceived(payload: Self.body(1000, "first"))
        #expect(machine.closeRequested(code: .goingAway, reason: "third") == [])
        _ = machine.streamEnded()
        #expect(machine.closeRequested(code: .goingAway, reason: "fourth") == [])
        #expect(machine.closeInfo?.sent == Self.frame(1000, "first"))
    }

    @Test func code1005SendsAnEmptyBody() {
        var machine = Self.server()
        let actions = machine.closeRequested(code: .noStatus, reason: "dropped with the code")
        #expect(actions == [.sendCloseFrame(Self.frame(nil)), .startCloseTimer])
        #expect(machine.closeRequested(code: nil, reason: "") == [])
        var bare = Self.server()
        #expect(bare.closeRequested(code: nil, reason: "x") == [.sendCloseFrame(Self.frame(nil)), .startCloseTimer])
    }

    @Test func aLongReasonIsTrimmedTo123BytesOnACodePointBoundary() {
        var machine = Self.server()
        // 121 ASCII bytes, then a 4-byte scalar that does not fit: 121 bytes remain.
        let reason = String(repeating: "a", count: 121) + "😀" + "tail"
        guard case .sendCloseFrame(let frame)? = machine.closeRequested(code: .normal, reason: reason).first else {
            Issue.record("no close frame")
            return
        }
        #expect(frame.reason == String(repeating: "a", count: 121))
        #expect(WebSocketFrame.closePayload(code: frame.code, reason: frame.reason).count <= 125)
        #expect(Machine.trimmedReason(String(repeating: "b", count: 123)).utf8.count == 123)
        #expect(Machine.trimmedReason(String(repeating: "b", count: 124)).utf8.count == 123)
        // A combining mark is a code point of its own: the cut may fall between it and its base.
        let combining = String(repeating: "c", count: 122) + "e\u{301}"
        #expect(Array(Machine.trimmedReason(combining).unicodeScalars).count == 123)
        #expect(Machine.trimmedReason("short") == "short")
    }

    // MARK: - Both close frames

    @Test func aClientThatClosesWaitsForTheServerToCloseTCP() {
        var machine = Self.client()
        _ = machine.closeRequested(code: .normal, reason: "done")
        // The timer already runs: the answer starts nothing.
        #expect(machine.closeFrameReceived(payload: Self.body(1000, "done")) == [])
        #expect(machine.stateName == "closeReceived")
        #expect(!machine.deliversMessages)
        // A client never half-closes.
        #expect(!machine.isWriteShutdownDue)
        #expect(machine.outboundDrained() == [])
        #expect(machine.stateName == "awaitingEOF")
        let info = WebSocketCloseInfo(sent: Self.frame(1000, "done"), received: Self.frame(1000, "done"), initiatedLocally: true)
        #expect(machine.streamEnded() == [.cancelCloseTimer, .closeConnection(info, reset: false)])
        #expect(machine.stateName == "closed")
        #expect(machine.closeInfo == info)
        #expect(info.wasClean)
    }

    @Test func aServerHalfClosesOnceBothFramesHavePassed() {
        var machine = Self.server()
        _ = machine.closeRequested(code: WebSocketCloseCode(4000), reason: "tick timeout")
        #expect(machine.closeFrameReceived(payload: Self.body(4000, "tick timeout")) == [])
        #expect(machine.isWriteShutdownDue)
        #expect(machine.outboundDrained() == [.shutDownWriteSide])
        #expect(machine.stateName == "awaitingEOF")
        #expect(!machine.canSendRaw)
        // Only once.
        #expect(machine.outboundDrained() == [])
        #expect(!machine.isWriteShutdownDue)
        let actions = machine.streamEnded()
        #expect(actions.first == .cancelCloseTimer)
        #expect(machine.closeInfo?.code == WebSocketCloseCode(4000))
        #expect(machine.closeInfo?.initiatedLocally == true)
    }

    @Test func theReceivedCodeAndReasonAreEchoed() {
        var server = Self.server()
        let actions = server.closeFrameReceived(payload: Self.body(4000, "tick timeout"))
        #expect(actions == [.sendCloseFrame(Self.frame(4000, "tick timeout")), .startCloseTimer])
        #expect(server.stateName == "closeReceived")
        #expect(!server.canSendMessages)
        #expect(server.outboundDrained() == [.shutDownWriteSide])
        _ = server.streamEnded()
        let info = server.closeInfo
        #expect(info?.code == WebSocketCloseCode(4000))
        #expect(info?.reason == "tick timeout")
        #expect(info?.initiatedLocally == false)
        #expect(info?.wasClean == true)

        var client = Self.client()
        let longest = String(repeating: "r", count: 123)
        #expect(client.closeFrameReceived(payload: Self.body(1001, longest))
            == [.sendCloseFrame(Self.frame(1001, longest)), .startCloseTimer])
        #expect(client.outboundDrained() == [])
        #expect(client.stateName == "awaitingEOF")
    }

    @Test func anEmptyCloseFrameIsAnsweredWithAnEmptyOneAndReadAs1005() {
        var machine = Self.client()
        #expect(machine.closeFrameReceived(payload: []) == [.sendCloseFrame(Self.frame(nil)), .startCloseTimer])
        _ = machine.closeTimerFired()
        #expect(machine.closeInfo?.code == .noStatus)
        #expect(machine.closeInfo?.received == Self.frame(nil))
    }

    @Test func simultaneousClosesCompleteWithoutASecondFrame() {
        var client = Self.client()
        var server = Self.server()
        // Both send a close frame before either sees the other's.
        let clientActions = client.closeRequested(code: .normal, reason: "client leaves")
        let serverActions = server.closeRequested(code: .goingAway, reason: "server leaves")
        #expect(clientActions.first == .sendCloseFrame(Self.frame(1000, "client leaves")))
        #expect(serverActions.first == .sendCloseFrame(Self.frame(1001, "server leaves")))
        // Each then receives the other's: no echo, the handshake is complete.
        #expect(client.closeFrameReceived(payload: Self.body(1001, "server leaves")) == [])
        #expect(server.closeFrameReceived(payload: Self.body(1000, "client leaves")) == [])
        #expect(server.outboundDrained() == [.shutDownWriteSide])
        #expect(client.outboundDrained() == [])
        _ = server.streamEnded()
        _ = client.streamEnded()
        // Both initiated; each reports its own code and saw a clean close.
        #expect(client.closeInfo == WebSocketCloseInfo(
            sent: Self.frame(1000, "client leaves"), received: Self.frame(1001, "server leaves"), initiatedLocally: true))
        #expect(server.closeInfo == WebSocketCloseInfo(
            sent: Self.frame(1001, "server leaves"), received: Self.frame(1000, "client leaves"), initiatedLocally: true))
        #expect(client.closeInfo?.code == .normal)
        #expect(server.closeInfo?.code == .goingAway)
    }

    // MARK: - Ends without a complete handshake

    @Test func theCloseTimeoutDropsTheConnection() {
        var machine = Self.client()
        _ = machine.closeRequested(code: .normal, reason: "")
        // The timer fired, so it is not cancelled.
        let info = WebSocketCloseInfo(sent: Self.frame(1000), received: nil, initiatedLocally: true)
        #expect(machine.closeTimerFired() == [.closeConnection(info, reset: false)])
        #expect(machine.stateName == "closed")
        #expect(!info.wasClean)
        // A late EOF or timer changes nothing.
        #expect(machine.streamEnded() == [])
        #expect(machine.closeTimerFired() == [])
    }

    @Test func eofBeforeACloseFrameIsAnAbnormalEnd() {
        var machine = Self.server()
        let info = WebSocketCloseInfo(sent: nil, received: nil, initiatedLocally: false)
        #expect(machine.streamEnded() == [.closeConnection(info, reset: false)])
        #expect(machine.closeInfo?.code == .abnormal)
        #expect(!machine.canSendRaw)
        #expect(!machine.deliversMessages)
        // After the local close frame, EOF still ends it: 1006 from the peer's view, our code here.
        var closing = Self.server()
        _ = closing.closeRequested(code: .normal, reason: "x")
        #expect(closing.streamEnded().first == .cancelCloseTimer)
        #expect(closing.closeInfo?.code == .normal)
        #expect(closing.closeInfo?.received == nil)
    }

    @Test func framesAfterTheCloseAreIgnored() {
        var machine = Self.server()
        _ = machine.closeFrameReceived(payload: Self.body(1000))
        // Nothing after the peer's close frame is delivered or answered.
        #expect(!machine.deliversMessages)
        #expect(machine.closeFrameReceived(payload: Self.body(1001, "again")) == [])
        #expect(machine.closeFrameReceived(payload: [0x03]) == [])
        #expect(machine.closeInfo == nil)
        _ = machine.outboundDrained()
        _ = machine.streamEnded()
        #expect(machine.closeFrameReceived(payload: Self.body(1000)) == [])
        #expect(machine.protocolViolation(code: .protocolError, reason: "late") == [])
        #expect(machine.outboundDrained() == [])
        #expect(machine.abortRequested() == [])
        #expect(machine.eventLoopStopping() == [])
        #expect(machine.closeInfo?.received == Self.frame(1000))
    }

    // MARK: - Invalid close frames and protocol violations

    static let invalidBodies: [(String, [UInt8], WebSocketCloseCode)] = [
        ("1-byte body", [0x03], .protocolError),
        ("code 999", body(999), .protocolError),
        ("code 1004 (reserved)", body(1004), .protocolError),
        ("code 1005 (never on the wire)", body(1005), .protocolError),
        ("code 1006 (never on the wire)", body(1006), .protocolError),
        ("code 1015 (never on the wire)", body(1015), .protocolError),
        ("code 2000", body(2000), .protocolError),
        ("code 5000", body(5000), .protocolError),
        ("reason not UTF-8", body(1000) + [0xFF], .invalidPayload),
        ("reason with a truncated code point", body(1000) + [0xC3], .invalidPayload),
    ]

    @Test(arguments: invalidBodies)
    func anInvalidCloseFrameFailsTheConnection(_ name: String, _ payload: [UInt8], _ code: WebSocketCloseCode) {
        for isClient in [false, true] {
            var machine = Machine(isClient: isClient, usesCloseTimer: true)
            guard case .sendCloseFrame(let frame)? = machine.closeFrameReceived(payload: payload).first else {
                Issue.record("\(name): no close frame")
                continue
            }
            #expect(frame.code == code, "\(name)")
            #expect(machine.stateName == "awaitingEOF", "\(name)")
            // Either role half-closes after failing the connection.
            #expect(machine.outboundDrained() == [.shutDownWriteSide], "\(name)")
            _ = machine.streamEnded()
            #expect(machine.closeInfo?.code == code, "\(name)")
            #expect(machine.closeInfo?.initiatedLocally == true, "\(name)")
            #expect(machine.closeInfo?.received == nil, "\(name)")
        }
    }

    @Test(arguments: [UInt16(1000), 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 4000, 4999])
    func everyValidCodeIsEchoed(_ code: UInt16) {
        var machine = Self.server()
        #expect(machine.closeFrameReceived(payload: Self.body(code, "é")).first == .sendCloseFrame(Self.frame(code, "é")))
    }

    @Test func aViolationInTheOpenStateSendsItsCode() {
        var machine = Self.client()
        let actions = machine.protocolViolation(code: .messageTooBig, reason: "preauth payload too large")
        #expect(actions == [.sendCloseFrame(Self.frame(1009, "preauth payload too large")), .startCloseTimer])
        #expect(!machine.deliversMessages)
        #expect(!machine.canSendMessages)
        #expect(machine.canSendRaw)
        #expect(machine.outboundDrained() == [.shutDownWriteSide])
        #expect(!machine.canSendRaw)
    }

    @Test func aViolationAfterTheLocalCloseSendsNoSecondFrame() {
        var machine = Self.client()
        _ = machine.closeRequested(code: .normal, reason: "")
        #expect(machine.protocolViolation(code: .protocolError, reason: "reserved bits set") == [])
        #expect(machine.stateName == "awaitingEOF")
        #expect(machine.outboundDrained() == [.shutDownWriteSide])
        _ = machine.streamEnded()
        #expect(machine.closeInfo?.sent == Self.frame(1000))
    }

    // MARK: - Abort, event loop stop, in-memory connections

    @Test func anAbortResetsTheConnection() {
        var machine = Self.server()
        let info = WebSocketCloseInfo(sent: nil, received: nil, initiatedLocally: true)
        #expect(machine.abortRequested() == [.closeConnection(info, reset: true)])
        #expect(machine.closeInfo?.code == .abnormal)
        // After the peer started the close, an abort does not make this side the initiator.
        var answering = Self.server()
        _ = answering.closeFrameReceived(payload: Self.body(1000))
        let actions = answering.abortRequested()
        #expect(actions.first == .cancelCloseTimer)
        #expect(answering.closeInfo?.initiatedLocally == false)
        #expect(answering.closeInfo?.code == .normal)
    }

    @Test func aStoppingEventLoopSays1001ThenCloses() {
        var machine = Self.server()
        let info = WebSocketCloseInfo(sent: Self.frame(1001, "server shutting down"), received: nil, initiatedLocally: true)
        #expect(machine.eventLoopStopping() == [
            .sendCloseFrame(Self.frame(1001, "server shutting down")), .closeConnection(info, reset: false),
        ])
        // A connection already closing gets no second frame.
        var closing = Self.server()
        _ = closing.closeRequested(code: .normal, reason: "")
        let actions = closing.eventLoopStopping()
        #expect(actions.count == 2)
        #expect(actions.first == .cancelCloseTimer)
        #expect(closing.closeInfo?.sent == Self.frame(1000))
    }

    @Test func withoutACloseTimerNoneIsStartedOrCancelled() {
        var client = Self.client(timer: false)
        var server = Self.server(timer: false)
        #expect(client.closeRequested(code: .normal, reason: "") == [.sendCloseFrame(Self.frame(1000))])
        #expect(server.closeFrameReceived(payload: Self.body(1000)) == [.sendCloseFrame(Self.frame(1000))])
        #expect(server.outboundDrained() == [.shutDownWriteSide])
        let info = WebSocketCloseInfo(sent: Self.frame(1000), received: Self.frame(1000), initiatedLocally: false)
        #expect(server.streamEnded() == [.closeConnection(info, reset: false)])
    }

    @Test func closeBodiesDecodeAsSent() throws {
        #expect(try Machine.decodeClosePayload([]).get() == Self.frame(nil))
        #expect(try Machine.decodeClosePayload(Self.body(4000, "tick timeout")).get() == Self.frame(4000, "tick timeout"))
        #expect(throws: Machine.Violation(code: .protocolError, reason: "invalid close code 1005")) {
            try Machine.decodeClosePayload(Self.body(1005)).get()
        }
    }
}
