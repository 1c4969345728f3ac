import Conformance
import GatewayProtocol
import MockGateway

/// Acme's own command, checked like a catalogue requirement. User scenario IDs start with `X-`
/// and the owner (`X-ACME-001`), so they never collide with the built-in catalogue.
let xAcme001 = Scenario(
    "X-ACME-001", .must,
    title: "acme.weather answers for the city it was asked about, and refuses a request without one",
    requirement: "acme.weather {city} is answered with ok:true and a payload naming that city with a numeric temperatureC; without a city it is answered with ok:false and error code INVALID_REQUEST.",
    source: "Acme node command reference",
    discussion: """
        Pairs the client automatically, requires it to declare acme.weather, invokes it for \
        Lisbon and then without params, and checks both results.
        """,
    tags: ["invoke", "acme"],
    profiles: .all,
    options: Scenario.Options(needsCommands: [["acme.weather"]], configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.requireDeclared("acme.weather")
    let nodeId = try await run.nodeId()

    let forecast = await run.gateway.invoke(nodeId: nodeId, command: "acme.weather", params: ["city": "Lisbon"],
                                            wait: run.stepTimeout)
    guard case .result(let result) = forecast else {
        try run.fail("acme.weather for Lisbon got no result", expected: "a node.invoke.result", actual: "\(forecast)")
    }
    try run.expectEqual(result.ok, true, "ok of acme.weather for Lisbon")
    let payload = try result.resolvedPayloadJSON.map { try JSONValue(parsing: $0) }
    try run.expectEqual(payload?["city"]?.stringValue, "Lisbon", "the city of the forecast")
    try run.expect(payload?["temperatureC"]?.doubleValue != nil, "the forecast carries a numeric temperatureC",
                   expected: "temperatureC: a number", actual: String((result.resolvedPayloadJSON ?? "no payload").prefix(200)))

    let refusal = await run.gateway.invoke(nodeId: nodeId, command: "acme.weather", wait: run.stepTimeout)
    guard case .result(let refused) = refusal else {
        try run.fail("acme.weather without a city got no result", expected: "a node.invoke.result", actual: "\(refusal)")
    }
    try run.expectEqual(refused.ok, false, "ok of acme.weather without a city")
    try run.expectEqual(refused.error?.code, "INVALID_REQUEST", "the error code of acme.weather without a city")
}
