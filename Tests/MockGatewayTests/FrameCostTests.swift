import GatewayProtocol
import Testing

@testable import MockGateway

/// The event log's budget costs a frame member by member (`Frame.approximateJSONByteCount`);
/// that must be exactly the cost of the frame's JSON, so that what the log keeps and compacts
/// does not change.
@Suite("Frame cost without building its JSON")
struct FrameCostTests {
    static let long = String(repeating: "x", count: 40)

    static let frames: [Frame] = [
        .request(RequestFrame(id: "1", method: "connect")),
        .request(RequestFrame(id: long, method: "node.invoke.result", params: ["id": .string(long), "ok": true, "n": 2.5],
                              traceparent: "00-\(long)-01")),
        .request(RequestFrame(id: "r", method: "m", params: .null, traceparent: "short")),
        .response(.success(id: "r1", payload: nil)),
        .response(.success(id: long, payload: ["list": [1, "two", [:], [["deep": .string(long)]]]])),
        .response(.failure(id: "r2", error: ErrorShape(code: "NOT_PAIRED", message: "pairing required"))),
        .response(.failure(id: "r3", error: ErrorShape(code: "UNAVAILABLE", message: long, details: ["code": "X", "after": 2.0],
                                                       retryable: true, retryAfterMs: 500))),
        .response(.failure(id: "r4", error: ErrorShape(code: "A", message: "m", details: ["x": .double(.infinity)]))),
        .event(EventFrame(event: "tick")),
        .event(EventFrame(event: "presence", payload: ["presence": [["ts": 1]]], seq: 7,
                          stateVersion: StateVersion(presence: 2, health: 1))),
        .event(EventFrame(event: "node.invoke.request.with.a.long.name", payload: .string(long), seq: nil,
                          stateVersion: StateVersion(presence: 1, health: 1))),
        .cancel(CancelFrame(id: "c")),
        .cancel(CancelFrame(id: long)),
    ]

    @Test(arguments: frames)
    func theCostIsTheCostOfTheFramesJSON(_ frame: Frame) {
        #expect(frame.approximateJSONByteCount == frame.json.approximateByteCount)
    }

    @Test func eventsCostTheirFramesAsBefore() {
        for frame in Self.frames {
            #expect(GatewayEvent.frameOut(connectionId: "c", frame: frame).retainedByteCount == 160 + frame.json.approximateByteCount)
            #expect(GatewayEvent.frameIn(connectionId: "c", frame: frame, binary: false).retainedByteCount
                        == 160 + frame.json.approximateByteCount)
        }
        #expect(GatewayEvent.frameIn(connectionId: "c", frame: nil, binary: true).retainedByteCount == 160)
    }
}
