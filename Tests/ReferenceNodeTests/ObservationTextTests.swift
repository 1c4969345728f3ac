import GatewayProtocol
import Testing
@testable import ReferenceNode

/// Client-log lines are written by ``ClientObservation/description``: the observation's name and
/// `key=value` fields, values bare when they are plain tokens and quoted and escaped otherwise,
/// so that a line is always one observation whatever text a Gateway or a client produced.
struct ObservationTextTests {
    @Test func everyObservationPrintsAsOneLineOfNamedFields() {
        let odd = "q\"uo\\te\n\t\u{7}é😀\u{0}"
        let oddQuoted = #""q\"uo\\te\n\t\u{07}é😀\0""#
        let refusedWithDetail = ErrorShape(code: "A", message: "m", details: ["code": "B"])
        let cases: [(ClientObservation, String)] = [
            (.attemptStarted(role: "node"), "attemptStarted role=node"),
            (.attemptStarted(role: odd), "attemptStarted role=\(oddQuoted)"),
            (.connected(role: "operator", generation: -3), "connected role=operator generation=-3"),
            (.ended(role: "node", end: .transportFailure("x \"y\""), decision: .retry(afterMs: 545)),
             #"ended role=node end="no session: x \"y\"" decision="retry after 545 ms""#),
            (.ended(role: "node", end: .rejected(refusedWithDetail), decision: .pairingWait(afterMs: 1000, requestId: "r-1")),
             #"ended role=node end="refused: A (B) m" decision="wait for pairing, retry after 1000 ms (request r-1)""#),
            (.ended(role: "node", end: .ended(closeCode: 1006, reason: ""), decision: .pause(reason: "")),
             #"ended role=node end="ended with close 1006" decision=pause"#),
            (.ended(role: "operator", end: .stoppedByClient, decision: .idle), #"ended role=operator end="stopped by the client" decision=idle"#),
            (.pairingPending(role: "node", requestId: "abc"), "pairingPending role=node requestId=abc"),
            (.pairingPending(role: "node", requestId: nil), "pairingPending role=node"),
            (.invokeAnswered(id: odd, ok: false), "invokeAnswered id=\(oddQuoted) ok=false"),
            (.beaconReplied(durable: true, reason: "persisted"), "beaconReplied durable=true reason=persisted"),
            (.beaconReplied(durable: false, reason: nil), "beaconReplied durable=false"),
            (.beaconSkipped, "beaconSkipped"),
            (.pushRegistered(transport: "relay", gatewayDeviceId: nil), "pushRegistered transport=relay"),
            (.chatChanged("history main"), #"chatChanged what="history main""#),
            (.chatChanged(""), #"chatChanged what="""#),
        ]
        for (observation, expected) in cases {
            #expect("\(observation)" == expected)
            #expect(!"\(observation)".contains("\n"), "one line")
        }
    }
}
