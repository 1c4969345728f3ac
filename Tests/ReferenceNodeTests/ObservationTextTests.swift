import GatewayProtocol
import Testing
@testable import ReferenceNode

/// Client-log lines are written by ``ClientObservation/description``; it must print exactly what
/// Swift's reflection-based default formatting printed before it existed, because client logs,
/// report tails and transcripts carry that text. The expected lines below are that reflection
/// output (the same enums formatted without a description), one per case and optional state,
/// with a string that needs every kind of escaping.
struct ObservationTextTests {
    @Test func everyObservationPrintsAsTheDefaultFormattingDid() {
        let odd = "q\"uo\\te\n\t\u{7}é😀\u{0}"
        let refusedWithDetail = ErrorShape(code: "A", message: "m", details: ["code": "B"])
        let refused = ErrorShape(code: "A", message: "m")
        let cases: [(ClientObservation, String)] = [
            (.attemptStarted(role: "node"), #"attemptStarted(role: "node")"#),
            (.attemptStarted(role: odd), #"attemptStarted(role: "q\"uo\\te\n\t\u{07}é😀\0")"#),
            (.connected(role: "operator", generation: -3), #"connected(role: "operator", generation: -3)"#),
            (.ended(role: "node", end: .transportFailure("x \"y\""), decision: .retry(afterMs: 545)), #"ended(role: "node", end: no session: x "y", decision: ReferenceNode.ReconnectDecision.retry(afterMs: 545))"#),
            (.ended(role: "node", end: .rejected(refusedWithDetail), decision: .pairingWait(afterMs: 1000, requestId: "r-1")), #"ended(role: "node", end: refused: A (B) m, decision: ReferenceNode.ReconnectDecision.pairingWait(afterMs: 1000, requestId: Optional("r-1")))"#),
            (.ended(role: "node", end: .rejected(refused), decision: .pairingWait(afterMs: 0, requestId: nil)), #"ended(role: "node", end: refused: A m, decision: ReferenceNode.ReconnectDecision.pairingWait(afterMs: 0, requestId: nil))"#),
            (.ended(role: odd, end: .ended(closeCode: 1006, reason: ""), decision: .pause(reason: odd)), #"ended(role: "q\"uo\\te\n\t\u{07}é😀\0", end: ended with close 1006, decision: ReferenceNode.ReconnectDecision.pause(reason: "q\"uo\\te\n\t\u{07}é😀\0"))"#),
            (.ended(role: "operator", end: .droppedByClient(reason: "tick"), decision: .idle), #"ended(role: "operator", end: dropped by the client: tick, decision: ReferenceNode.ReconnectDecision.idle)"#),
            (.ended(role: "operator", end: .stoppedByClient, decision: .pause(reason: "")), #"ended(role: "operator", end: stopped by the client, decision: ReferenceNode.ReconnectDecision.pause(reason: ""))"#),
            (.pairingPending(role: "node", requestId: "abc"), #"pairingPending(role: "node", requestId: Optional("abc"))"#),
            (.pairingPending(role: "node", requestId: nil), #"pairingPending(role: "node", requestId: nil)"#),
            (.pairingPending(role: "node", requestId: odd), #"pairingPending(role: "node", requestId: Optional("q\"uo\\te\n\t\u{07}é😀\0"))"#),
            (.invokeAnswered(id: "i", ok: true), #"invokeAnswered(id: "i", ok: true)"#),
            (.invokeAnswered(id: odd, ok: false), #"invokeAnswered(id: "q\"uo\\te\n\t\u{07}é😀\0", ok: false)"#),
            (.invokeDiscarded(id: "i", reason: "socket replaced"), #"invokeDiscarded(id: "i", reason: "socket replaced")"#),
            (.beaconSent(trigger: "silent_push"), #"beaconSent(trigger: "silent_push")"#),
            (.beaconReplied(durable: true, reason: "persisted"), #"beaconReplied(durable: true, reason: Optional("persisted"))"#),
            (.beaconReplied(durable: false, reason: nil), #"beaconReplied(durable: false, reason: nil)"#),
            (.beaconSkipped, #"beaconSkipped"#),
            (.pushRegistered(transport: "relay", gatewayDeviceId: "dev"), #"pushRegistered(transport: "relay", gatewayDeviceId: Optional("dev"))"#),
            (.pushRegistered(transport: "relay", gatewayDeviceId: nil), #"pushRegistered(transport: "relay", gatewayDeviceId: nil)"#),
            (.approvalChanged(id: "a"), #"approvalChanged(id: "a")"#),
            (.approvalReadBack(id: "b"), #"approvalReadBack(id: "b")"#),
            (.questionChanged(id: "c"), #"questionChanged(id: "c")"#),
            (.questionsReloaded, #"questionsReloaded"#),
            (.seqGap(role: "node"), #"seqGap(role: "node")"#),
            (.chatChanged("history main"), #"chatChanged("history main")"#),
            (.chatChanged(odd), #"chatChanged("q\"uo\\te\n\t\u{07}é😀\0")"#),
            (.chatChanged(""), #"chatChanged("")"#),
        ]
        for (observation, expected) in cases {
            #expect("\(observation)" == expected)
            #expect(String(describing: observation) == expected)
        }
    }
}
