import Conformance
import GatewayProtocol
import MockGateway

let hs002 = Scenario(
    "HS-002", .must,
    title: "connect offers a protocol range the Gateway can accept",
    requirement: "The connect request's minProtocol..maxProtocol contains 4, or, for a node (role and client.mode both \"node\"), contains 3.",
    source: "docs/protocol.md §3.6",
    discussion: "Waits for the client's first connect request and checks its minProtocol/maxProtocol against the Gateway's negotiation rule: the range must contain protocol 4, or contain 3 when role and client.mode are both \"node\" (the legacy N-1 window). A client outside both windows gets PROTOCOL_MISMATCH and close 1002 from a real Gateway.",
    tags: ["handshake"],
    profiles: .all,
    // Judges the handshake itself: it runs even when the client never gets a session.
    options: Scenario.Options(needsSession: false)
) { run in
    let request = try await run.waitForEvent(.request(.connect).named("the client's first connect request")).request
    guard let minimum = request.params?["minProtocol"]?.int64Value, let maximum = request.params?["maxProtocol"]?.int64Value else {
        try run.fail("connect carries no integer minProtocol/maxProtocol", expected: "integers minProtocol and maxProtocol",
                     actual: "minProtocol \(request.params?["minProtocol"]?.jsonString ?? "absent"), maxProtocol \(request.params?["maxProtocol"]?.jsonString ?? "absent")")
    }
    let role = request.params?["role"]?.stringValue ?? GatewayRole.operator.rawValue
    let mode = request.params?["client"]?["mode"]?.stringValue ?? ""
    let isLegacyEligibleNode = role == GatewayRole.node.rawValue && mode == "node"
    let offersCurrent = minimum <= 4 && 4 <= maximum
    let offersLegacy = isLegacyEligibleNode && minimum <= 3 && 3 <= maximum
    try run.expect(
        offersCurrent || offersLegacy, "the offered protocol range contains neither 4 nor (for a node) 3",
        expected: isLegacyEligibleNode ? "minProtocol <= 4 <= maxProtocol, or minProtocol <= 3 <= maxProtocol"
                                       : "minProtocol <= 4 <= maxProtocol (role \(role), client.mode \(mode) gets no legacy window)",
        actual: "minProtocol \(minimum), maxProtocol \(maximum)")
}
