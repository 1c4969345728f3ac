import Foundation
import GatewayProtocol
import MockGateway
import Testing
import WebSocketTransport

/// The fault-injection API seen from a client over real sockets.
@Suite("Gateway faults end to end")
struct GatewayFaultTests {
    static func operatorSession(_ gateway: Gateway, _ seed: UInt8) async throws -> ConnectedSession {
        let session = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(seed), scopes: ["operator.read"])
        _ = try await session.client.barrier()
        return session
    }

    /// Waits until the Gateway has answered `method` on `connectionId` (from `cursor` on).
    static func handled(_ gateway: Gateway, method: String, on connectionId: String, from cursor: Int) async -> Bool {
        await gateway.waitForEvent(from: cursor, timeout: .seconds(10)) { event in
            if case .requestHandled(let id, let handled, _, _) = event { return id == connectionId && handled == method }
            return false
        } != nil
    }

    // MARK: - Ticks and seq

    @Test func stoppedTicksAreNotSentUntilResumed() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.operatorSession(gateway, 0x90)
            await gateway.stopTicks()
            await gateway.advance(by: .seconds(90))
            #expect(TestClient.events("tick", in: try await session.client.barrier()).isEmpty)

            await gateway.resumeTicks()
            await gateway.advance(by: .seconds(30))
            let ticks = TestClient.events("tick", in: try await session.client.barrier())
            #expect(ticks.map { $0.payload?["ts"]?.int64Value } == [gateway.clock.nowMs])
        }
    }

    @Test func skippedSequenceNumbersLeaveOneGap() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.operatorSession(gateway, 0x91)
            await gateway.sendEvent("test.first", payload: nil, to: session.connectionId)
            await gateway.skipSequenceNumbers(5)
            await gateway.sendEvent("test.second", payload: nil, to: session.connectionId)
            await gateway.sendEvent("test.third", payload: nil, to: session.connectionId)
            let frames = try await session.client.barrier()
            let seqs = ["test.first", "test.second", "test.third"].map { TestClient.events($0, in: frames).first?.seq }
            let first = try #require(seqs[0])
            #expect(seqs == [first, first + 6, first + 7], "one gap of five, then contiguous again")
        }
    }

    @Test func sequenceNumbersAreContiguousPerConnection() async throws {
        try await Gateway.withGateway { gateway in
            let one = try await Self.operatorSession(gateway, 0x92)
            let two = try await Self.operatorSession(gateway, 0x93)
            for index in 0..<5 {
                await gateway.broadcastEvent("tick", payload: ["ts": .int(Int64(index))])
            }
            for session in [one, two] {
                let seqs = TestClient.events("tick", in: try await session.client.barrier()).compactMap(\.seq)
                #expect(seqs.count == 5)
                #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $1 == $0 + 1 })
            }
        }
    }

    // MARK: - Message shapes

    @Test func eventsCanBeSentAsBinaryMessages() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.operatorSession(gateway, 0x94)
            await gateway.sendNextEventsAsBinary(1)
            await gateway.sendEvent("test.binary", payload: ["n": 1], to: session.connectionId)
            await gateway.sendEvent("test.text", payload: ["n": 2], to: session.connectionId)

            guard case .binary(let bytes)? = try await session.client.nextMessage() else {
                Issue.record("the first event was not a binary message")
                return
            }
            guard case .event(let binaryEvent) = try Frame(decoding: Data(bytes)) else {
                Issue.record("the binary message is not an event frame")
                return
            }
            #expect(binaryEvent.event == "test.binary")
            guard case .text(let text)? = try await session.client.nextMessage() else {
                Issue.record("the second event was not a text message")
                return
            }
            #expect(text.contains("test.text"))
        }
    }

    @Test func fragmentedEventsArriveReassembled() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.operatorSession(gateway, 0x95)
            let payload: JSONValue = ["text": .string(String(repeating: "fragment ", count: 200))]
            await gateway.fragmentNextEvents(2)
            await gateway.sendEvent("test.fragmented", payload: payload, to: session.connectionId)
            await gateway.sendEvent("test.fragmented", payload: payload, to: session.connectionId)
            for _ in 0..<2 {
                guard case .text(let text)? = try await session.client.nextMessage() else {
                    Issue.record("no reassembled text message")
                    return
                }
                guard case .event(let event) = try Frame(decoding: Data(text.utf8)) else {
                    Issue.record("the reassembled message is not an event")
                    return
                }
                #expect(event.event == "test.fragmented")
                #expect(event.payload == payload)
            }
            // The session goes on normally.
            #expect(try await session.client.request("node.list", params: nil).ok)
        }
    }

    @Test func delayedResponsesStillArriveInOrder() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.operatorSession(gateway, 0x96)
            await gateway.delayResponses(by: .milliseconds(200))
            let cursor = gateway.events.count
            try await session.client.sendRequest("node.list", params: nil, id: "delayed")
            #expect(await Self.handled(gateway, method: "node.list", on: session.connectionId, from: cursor))
            // Queued after the (held back) response: it must not overtake it.
            await gateway.sendEvent("test.after", payload: nil, to: session.connectionId)

            let first = try #require(try await session.client.nextFrame())
            guard case .response(let response) = first else {
                Issue.record("the event overtook the delayed response: \(first)")
                return
            }
            #expect(response.id == "delayed")
            #expect(response.ok)
            let second = try #require(try await session.client.nextFrame())
            #expect(TestClient.eventNames([second]) == ["test.after"])

            await gateway.delayResponses(by: nil)
            #expect(try await session.client.request("node.list", params: nil).ok)
        }
    }

    // MARK: - Closing

    @Test func closeByConnectionIdSendsTheCodeAndReason() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.operatorSession(gateway, 0x97)
            await gateway.close(connectionId: session.connectionId, code: 4000, reason: "tick timeout")
            let info = try await session.client.closed()
            #expect(info.code.rawValue == 4000)
            #expect(info.reason == "tick timeout")
            let connectionId = session.connectionId
            let logged = await gateway.waitForEvent(timeout: .seconds(10)) { event in
                if case .connectionClosed(let id, let code, _) = event { return id == connectionId && code == 4000 }
                return false
            }
            #expect(logged != nil)
        }
    }

    @Test func resetDropsTheConnectionWithoutACloseFrame() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.operatorSession(gateway, 0x98)
            let other = try await Self.operatorSession(gateway, 0x99)
            await gateway.reset(connectionId: session.connectionId)
            let info = try await session.client.closed()
            #expect(info.code == .abnormal)
            #expect(info.received == nil)
            #expect(try await other.client.request("node.list", params: nil).ok, "other connections are untouched")
        }
    }

    @Test func droppedResponseWithoutCutKeepsTheConnection() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.operatorSession(gateway, 0x9A)
            await gateway.dropNextResponse(to: "node.list", cutConnection: false)
            try await session.client.sendRequest("node.list", params: nil, id: "dropped")
            // The next request is answered; the dropped one never is.
            let (next, before) = try await session.client.requestCollecting("node.list", params: nil, id: "answered")
            #expect(next.ok)
            #expect(!before.contains { if case .response(let response) = $0 { response.id == "dropped" } else { false } })
            let dropped = gateway.transcript.entries.filter { $0.kind == .dropped }
            #expect(dropped.count == 1)
            #expect(dropped.first?.message?["id"] == "dropped")
        }
    }

    // MARK: - What the transcript says about the wire

    @Test func theTranscriptRecordsFrameKindFragmentsCompressionAndFaults() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.operatorSession(gateway, 0x9B)
            let id = session.connectionId
            await gateway.sendNextEventsAsBinary(1)
            await gateway.sendEvent("test.binary", payload: ["n": 1], to: id)
            await gateway.fragmentNextEvents(1)
            await gateway.sendEvent("test.fragmented", payload: ["n": 2], to: id)
            await gateway.sendEvent("test.plain", payload: ["n": 3], to: id)
            await gateway.dropNextResponse(to: "node.list", cutConnection: false)
            try await session.client.sendRequest("node.list", params: nil, id: "lost")
            // The client sends a request in four frames, as binary.
            let request = Frame.request(RequestFrame(id: "in-pieces", method: "node.list", params: nil))
            try await session.client.connection.send(.binary(Array(request.encoded())), fault: .fragmented(into: 4))
            _ = try await session.client.response(to: "in-pieces")

            let entries = gateway.transcript.entries.filter { $0.connectionId == id }
            func outbound(_ event: String) throws -> TranscriptEntry {
                try #require(entries.first { $0.kind == .outbound && $0.message?["event"]?.stringValue == event })
            }
            let binary = try outbound("test.binary")
            #expect(binary.wire == TranscriptWire(frameKind: .binary, frameCount: 1))
            #expect(binary.fault == TranscriptFault(binary: true))
            let fragmented = try outbound("test.fragmented")
            #expect(fragmented.wire == TranscriptWire(frameKind: .text, frameCount: 3))
            #expect(fragmented.fault == TranscriptFault(fragmentedInto: 3, pingsBetween: true))
            #expect(fragmented.json["fragmented"] == true)
            #expect(fragmented.json["fault"]?["fragmentedInto"] == 3)
            let plain = try outbound("test.plain")
            #expect(plain.wire == TranscriptWire(frameKind: .text, frameCount: 1))
            #expect(plain.fault == nil)
            #expect(plain.json["compression"] == "none")
            #expect(plain.json["fragmented"] == false)
            #expect(plain.json["fault"] == nil)

            let dropped = try #require(entries.first { $0.kind == .dropped })
            #expect(dropped.fault == TranscriptFault(dropped: true))
            #expect(dropped.json["fault"]?["dropped"] == true)

            let inbound = try #require(entries.first { $0.kind == .inbound && $0.message?["id"] == "in-pieces" })
            #expect(inbound.wire == TranscriptWire(frameKind: .binary, frameCount: 4))
            #expect(inbound.json["frames"] == 4)
            #expect(inbound.json["fragmented"] == true)
            let connect = try #require(entries.first { $0.kind == .inbound && $0.message?["method"] == "connect" })
            #expect(connect.wire?.frameCount == 1)
            #expect(connect.wire?.isFragmented == false)

            // Injected faults are `fault` lines, Gateway-wide ones on `-`.
            let faults = gateway.transcript.entries.filter { $0.kind == .fault }.compactMap(\.text)
            #expect(faults.contains { $0.contains("as binary") })
            #expect(faults.contains { $0.contains("fragment the next 1 event") })
            #expect(faults.contains { $0.hasPrefix("drop the next response to node.list") })
        }
    }

    @Test func closeAndResetFaultsNameTheirConnection() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.operatorSession(gateway, 0x9C)
            await gateway.close(connectionId: session.connectionId, code: 4001, reason: "bye")
            _ = try await session.client.closed()
            let fault = try #require(gateway.transcript.entries.first { $0.kind == .fault })
            #expect(fault.connectionId == session.connectionId)
            #expect(fault.text == "close \(session.connectionId) with 4001")
        }
    }

    @Test func transcriptLinesThatCannotBeReadSayWhy() throws {
        #expect(throws: TranscriptEntry.DecodingError.self) { try TranscriptEntry(json: [1, 2]) }
        do {
            _ = try TranscriptEntry(json: ["kind": "sideways", "t": 1])
            Issue.record("an unknown kind was accepted")
        } catch {
            #expect(error.description.hasPrefix("unknown kind \"sideways\""))
        }
        do {
            _ = try TranscriptEntry(json: ["kind": "in"])
            Issue.record("a line without t was accepted")
        } catch {
            #expect(error.description == "no integer \"t\"")
        }
        let minimal = try TranscriptEntry(json: ["kind": "note", "t": 5, "text": "hello", "future": true])
        #expect(minimal.text == "hello")
        #expect(minimal.connectionId == "")
    }
}
