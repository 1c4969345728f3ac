import Conformance
import MockGateway
import Testing

/// The note `harness run` adds to a run's result when the client called methods the fake
/// Gateway does not serve (`Runner` appends `UnservedMethodNote.note(events:)` of the run's
/// Gateways). Break tried: listing every call (the duplicate appears twice).
@Suite("Unserved-method note of a run")
struct UnservedMethodNoteTests {
    @Test("each method once, in the order first called; no note without one")
    func note() {
        let events: [GatewayEvent] = [
            .methodUnserved(method: "tasks.list", connectionId: "c1"), .shutdown,
            .methodUnserved(method: "health", connectionId: "c2"),
            .methodUnserved(method: "tasks.list", connectionId: "c3"),
        ]
        #expect(UnservedMethodNote.note(events: events)
            == #"client called methods the fake Gateway does not serve (answered "unknown method"): tasks.list, health"#)
        #expect(UnservedMethodNote.note(events: [.shutdown]) == nil)
    }
}
