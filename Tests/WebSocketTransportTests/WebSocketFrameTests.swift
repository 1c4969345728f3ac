import Testing
@testable import WebSocketTransport

struct WebSocketFrameTests {
    @Test(arguments: [(0, 2), (125, 2), (126, 4), (65535, 4), (65536, 10), (70000, 10)])
    func usesTheShortestLengthEncoding(payloadLength: Int, headerLength: Int) {
        let frame = WebSocketFrame(opcode: .binary, payload: [UInt8](repeating: 1, count: payloadLength))
        let bytes = frame.encoded()
        #expect(bytes.count == headerLength + payloadLength)
        #expect(bytes[0] == 0x82)
        switch headerLength {
        case 2: #expect(Int(bytes[1]) == payloadLength)
        case 4:
            #expect(bytes[1] == 126)
            #expect(Int(bytes[2]) << 8 | Int(bytes[3]) == payloadLength)
        default:
            #expect(bytes[1] == 127)
            #expect(bytes[2..<10].reduce(0) { $0 << 8 | Int($1) } == payloadLength)
        }
    }

    /// The test payload generator copies one 256-byte cycle; it must equal the byte formula.
    @Test func testPatternsAreTheirFormula() {
        for (count, seed) in [(0, 7), (1, 7), (255, 3), (256, 7), (1000, 200)] as [(Int, UInt8)] {
            #expect(pattern(count, seed: seed) == (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
        }
    }

    @Test func masksThePayloadWithTheKey() {
        // RFC 6455 section 5.7: a masked "Hello".
        let bytes = WebSocketFrame(opcode: .text, payload: Array("Hello".utf8)).encoded(maskingKey: [0x37, 0xFA, 0x21, 0x3D])
        #expect(bytes == [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
    }

    @Test func encodesTheRFCExampleFrames() {
        #expect(WebSocketFrame(opcode: .text, payload: Array("Hello".utf8)).encoded() == [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        #expect(WebSocketFrame(fin: false, opcode: .text, payload: Array("Hel".utf8)).encoded() == [0x01, 0x03, 0x48, 0x65, 0x6C])
        #expect(WebSocketFrame(opcode: .continuation, payload: Array("lo".utf8)).encoded() == [0x80, 0x02, 0x6C, 0x6F])
        #expect(WebSocketFrame.close(code: .normal, reason: "ok").encoded() == [0x88, 0x04, 0x03, 0xE8, 0x6F, 0x6B])
        #expect(WebSocketFrame(reservedBits: 4, opcode: .binary).encoded() == [0xC2, 0x00])
    }

    @Test func maskingInPiecesEqualsMaskingAtOnce() {
        let payload = pattern(1000)
        let key = WebSocketMasking.key([1, 2, 3, 4])
        var whole = payload
        whole.withUnsafeMutableBytes { _ = WebSocketMasking.apply(key: key, offset: 0, to: $0) }
        for cut in [1, 3, 7, 8, 9, 500, 999] {
            var pieces = payload
            pieces.withUnsafeMutableBytes { raw in
                let next = WebSocketMasking.apply(key: key, offset: 0, to: UnsafeMutableRawBufferPointer(rebasing: raw[..<cut]))
                _ = WebSocketMasking.apply(key: key, offset: next, to: UnsafeMutableRawBufferPointer(rebasing: raw[cut...]))
            }
            #expect(pieces == whole)
        }
    }

    @Test func closeCodesKnowWhichMayTravelOnTheWire() {
        for code: UInt16 in [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 4000, 4999] {
            #expect(WebSocketCloseCode(code).isValidOnTheWire, "\(code)")
        }
        for code: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999, 5000, 65535] {
            #expect(!WebSocketCloseCode(code).isValidOnTheWire, "\(code)")
        }
    }

    @Test func closeInfoNamesTheCodeOfWhoeverStartedTheClose() {
        let local = WebSocketCloseInfo(sent: .init(code: .policyViolation, reason: "slow consumer"), received: .init(code: .policyViolation), initiatedLocally: true)
        #expect(local.code == .policyViolation)
        #expect(local.reason == "slow consumer")
        #expect(local.wasClean)
        let remote = WebSocketCloseInfo(sent: .init(code: nil), received: .init(code: nil), initiatedLocally: false)
        #expect(remote.code == .noStatus)
        let reset = WebSocketCloseInfo(sent: nil, received: nil, initiatedLocally: false)
        #expect(reset.code == .abnormal)
        #expect(!reset.wasClean)
    }

    @Test func closeReasonsAreCutAtACodePointBoundary() {
        let reason = String(repeating: "é", count: 100)  // 200 bytes
        let cut = WebSocketCloseStateMachine.trimmedReason(reason)
        #expect(cut.utf8.count == 122)
        #expect(WebSocketCloseStateMachine.trimmedReason("short") == "short")
    }
}
