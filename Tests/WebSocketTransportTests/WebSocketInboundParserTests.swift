import Testing
@testable import WebSocketTransport

struct WebSocketInboundParserTests {
    private func serverParser(max: Int = 1 << 20) -> WebSocketInboundParser {
        WebSocketInboundParser(role: .server, maxMessageSize: max)
    }

    /// Feeds `bytes` in pieces of `chunk` bytes.
    private func parse(_ bytes: [UInt8], chunk: Int, parser: inout WebSocketInboundParser) -> [WebSocketInboundEvent] {
        var events: [WebSocketInboundEvent] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + chunk)
            events += parser.parse(Array(bytes[start..<end]))
            start = end
        }
        return events
    }

    @Test(arguments: [0, 1, 125, 126, 127, 65535, 65536, 200_000])
    func decodesMaskedMessagesOfEveryLengthEncoding(length: Int) {
        var parser = serverParser()
        let payload = pattern(length)
        let result1 = parser.parse(maskedFrame(.binary, payload))
        #expect(result1 == [.message(.binary(payload))])
    }

    @Test(arguments: [1, 2, 3, 7, 13, 1000])
    func decodesTheSameWhateverTheReadBoundaries(chunk: Int) {
        var parser = serverParser()
        let text = "héllo wörld 🎉 " + String(repeating: "x", count: 300)
        let bytes = maskedFrame(.text, Array(text.utf8)) + maskedFrame(.ping, [1, 2]) + maskedFrame(.binary, pattern(70_000))
        #expect(parse(bytes, chunk: chunk, parser: &parser) == [.message(.text(text)), .ping([1, 2]), .message(.binary(pattern(70_000)))])
    }

    @Test func clientRoleDecodesUnmaskedServerFrames() {
        var parser = WebSocketInboundParser(role: .client, maxMessageSize: 1000)
        let result2 = parser.parse(WebSocketFrame(opcode: .text, payload: Array("hi".utf8)).encoded())
        #expect(result2 == [.message(.text("hi"))])
    }

    @Test func reassemblesFragmentsWithInterleavedControlFrames() {
        var parser = serverParser()
        let bytes = maskedFrame(.text, Array("Hel".utf8), fin: false)
            + maskedFrame(.ping, Array("p".utf8))
            + maskedFrame(.continuation, Array("lo ".utf8), fin: false)
            + maskedFrame(.pong, [])
            + maskedFrame(.continuation, Array("world".utf8))
        let result3 = parser.parse(bytes)
        // Three data frames; the control frames between them are not counted.
        #expect(result3 == [.ping(Array("p".utf8)), .pong([]), .message(.text("Hello world"), frames: 3)])
    }

    @Test func countsTheFramesOfEachMessageAfresh() {
        var parser = serverParser()
        let bytes = maskedFrame(.binary, [1], fin: false) + maskedFrame(.continuation, [2])
            + maskedFrame(.text, Array("one".utf8))
        #expect(parser.parse(bytes) == [.message(.binary([1, 2]), frames: 2), .message(.text("one"), frames: 1)])
    }

    @Test func validatesUTF8SplitAcrossFragments() {
        var parser = serverParser()
        let euro = Array("€".utf8)  // E2 82 AC
        let bytes = maskedFrame(.text, [0x61, euro[0]], fin: false)
            + maskedFrame(.continuation, [euro[1]], fin: false)
            + maskedFrame(.continuation, [euro[2], 0x62])
        let result4 = parser.parse(bytes)
        #expect(result4 == [.message(.text("a€b"), frames: 3)])
    }

    @Test func rejectsInvalidUTF8InsideAFragmentBeforeTheMessageEnds() {
        var parser = serverParser()
        let events = parser.parse(maskedFrame(.text, [0x61, 0xF4], fin: false) + maskedFrame(.continuation, [0x90], fin: false))
        #expect(events == [.protocolViolation(.invalidPayload, reason: "invalid UTF-8 in text message")])
        #expect(parser.isDone)
    }

    @Test func rejectsATextMessageThatEndsInsideACodePoint() {
        var parser = serverParser()
        let events = parser.parse(maskedFrame(.text, [0x61, 0xE2, 0x82]))
        #expect(events == [.protocolViolation(.invalidPayload, reason: "invalid UTF-8 in text message")])
    }

    @Test func binaryMessagesAreNotUTF8Checked() {
        var parser = serverParser()
        let result5 = parser.parse(maskedFrame(.binary, [0xFF, 0xC0]))
        #expect(result5 == [.message(.binary([0xFF, 0xC0]))])
    }

    static let protocolErrors: [(String, [UInt8], WebSocketCloseCode)] = [
        ("reserved bits", maskedFrame(.text, [], reservedBits: 4), .protocolError),
        ("reserved bit 3", maskedFrame(.binary, [1], reservedBits: 1), .protocolError),
        ("opcode 3", maskedFrame(WebSocketOpcode(rawValue: 3), []), .protocolError),
        ("opcode 0xB", maskedFrame(WebSocketOpcode(rawValue: 0xB), []), .protocolError),
        ("fragmented ping", maskedFrame(.ping, [], fin: false), .protocolError),
        ("fragmented close", maskedFrame(.close, [], fin: false), .protocolError),
        ("ping over 125 bytes", maskedFrame(.ping, pattern(126)), .protocolError),
        ("unmasked client frame", WebSocketFrame(opcode: .text, payload: [0x61]).encoded(), .protocolError),
        ("continuation without start", maskedFrame(.continuation, [1]), .protocolError),
        ("new message inside a fragmented one", maskedFrame(.text, [0x61], fin: false) + maskedFrame(.binary, [1]), .protocolError),
        ("text not UTF-8", maskedFrame(.text, [0xC0, 0x80]), .invalidPayload),
        ("64-bit length with the top bit", [0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4], .protocolError),
    ]

    @Test(arguments: protocolErrors)
    func failsEachProtocolErrorWithItsCloseCode(_ name: String, _ bytes: [UInt8], _ code: WebSocketCloseCode) {
        var parser = serverParser()
        let events = parser.parse(bytes + maskedFrame(.text, Array("after".utf8)))
        guard case .protocolViolation(let received, _) = events.last else {
            Issue.record("\(name): no violation in \(events)")
            return
        }
        #expect(received == code, "\(name)")
        #expect(events.count == 1, "\(name): \(events)")
        #expect(!events.contains(.message(.text("after"))), "\(name): parsing must stop")
        #expect(parser.isDone)
    }

    @Test func clientRoleRejectsMaskedServerFrames() {
        var parser = WebSocketInboundParser(role: .client, maxMessageSize: 1000)
        let result6 = parser.parse(maskedFrame(.text, [0x61]))
        #expect(result6 == [.protocolViolation(.protocolError, reason: "masked server frame")])
    }

    @Test func enforcesTheMessageSizeLimitFromTheFrameHeader() {
        var parser = WebSocketInboundParser(role: .server, maxMessageSize: 100, messageTooBigReason: "preauth payload too large")
        // Only the header of a 101-byte frame: rejected before any payload arrives.
        let header = Array(maskedFrame(.binary, pattern(101)).prefix(6))
        let result7 = parser.parse(header)
        #expect(result7 == [.protocolViolation(.messageTooBig, reason: "preauth payload too large")])
    }

    @Test func enforcesTheMessageSizeLimitAcrossFragments() {
        var parser = serverParser(max: 100)
        let events = parser.parse(maskedFrame(.binary, pattern(60), fin: false) + maskedFrame(.continuation, pattern(41)))
        #expect(events == [.protocolViolation(.messageTooBig, reason: "message too big")])
    }

    @Test func acceptsAMessageOfExactlyTheLimit() {
        var parser = serverParser(max: 100)
        let result8 = parser.parse(maskedFrame(.binary, pattern(100)))
        #expect(result8 == [.message(.binary(pattern(100)))])
    }

    @Test func aChangedLimitAppliesToTheNextFrame() {
        var parser = serverParser(max: 10)
        let result9 = parser.parse(maskedFrame(.binary, pattern(10)))
        #expect(result9 == [.message(.binary(pattern(10)))])
        parser.maxMessageSize = 1000
        let result10 = parser.parse(maskedFrame(.binary, pattern(500)))
        #expect(result10 == [.message(.binary(pattern(500)))])
        parser.maxMessageSize = 20
        let result11 = parser.parse(maskedFrame(.binary, pattern(21)))
        #expect(result11 == [.protocolViolation(.messageTooBig, reason: "message too big")])
    }

    @Test func parsesCloseFramesAndStops() {
        var parser = serverParser()
        let events = parser.parse(maskedFrame(.close, [0x0F, 0xA0] + Array("tick timeout".utf8)) + maskedFrame(.text, [0x61]))
        #expect(events == [.close([0x0F, 0xA0] + Array("tick timeout".utf8))])
        #expect(parser.isDone)
        var empty = serverParser()
        let result12 = empty.parse(maskedFrame(.close, []))
        #expect(result12 == [.close([])])
        // The body is judged by the close state machine; the parser stops after it either way.
        var invalid = serverParser()
        let result13 = invalid.parse(maskedFrame(.close, [0x03]) + maskedFrame(.text, [0x61]))
        #expect(result13 == [.close([0x03])])
        #expect(invalid.isDone)
    }

    @Test func controlFramesOfExactly125BytesAreAccepted() {
        var parser = serverParser()
        let result13 = parser.parse(maskedFrame(.ping, pattern(125)))
        #expect(result13 == [.ping(pattern(125))])
    }
}
