import Conformance
import GatewayProtocol
import MockGateway

let pair012 = Scenario(
    "PAIR-012", .must,
    title: "an expired pending request is not resurrected; the client's next retry asks anew",
    requirement: "A pending pairing request expires 5 minutes after the device's last retry and is gone for good: the client keeps retrying with the same identity, and its next retry creates a new request with a new requestId.",
    source: "gateway-protocol.md §6.3, §9.4",
    discussion: """
        Lets the client's first pairing round settle, moves the Gateway clock 301 s ahead (no retry \
        in between, so the request expires), then lets the client's time pass without any stimulus \
        and requires a new pairing request of the same device whose requestId differs from every \
        earlier one, and no refresh of an expired request.
        """,
    tags: ["pairing", "expiry"],
    profiles: .all
) { run in
    let deviceId = try await PairingSteps.firstRequest(run).deviceId
    await PairingSteps.pass(run, .seconds(2))
    let earlier = PairingSteps.requestIds(run, deviceId: deviceId)

    let cursor = run.mark()
    await run.advance(by: .seconds(301))
    let expired = try await run.waitForEvent("the expiry of the device's pending request", from: cursor) { event in
        if case .pairingExpired(let requestId, let device) = event, device == deviceId { requestId } else { nil }
    }
    let request = try await PairingSteps.awaitClient(run, "a new pairing request of \(deviceId) after the expiry",
                                                     from: cursor, connectFallback: false) { event in
        if case .pairingRequested(let request) = event, request.deviceId == deviceId { request } else { nil }
    }
    try run.expect(!earlier.contains(request.requestId), "the retry after the expiry gets a new requestId",
                   expected: "none of \(earlier.sorted())", actual: request.requestId)
    let resurrected = run.gateway.events.elements(from: cursor.position).contains { event in
        if case .pairingRefreshed(let info) = event { earlier.contains(info.requestId) } else { false }
    }
    try run.expect(!resurrected, "the expired request \(expired) is not refreshed again", expected: "no refresh", actual: "refreshed")
}
