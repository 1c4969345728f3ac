import Conformance
import GatewayProtocol
import MockGateway

let pair008 = Scenario(
    "PAIR-008", .must,
    title: "after a reinstall the client pairs again as a new device, without the old tokens",
    requirement: "After a reinstall (identity and tokens wiped) the client connects with a new device identity, asks for pairing as a new device and never presents a device token of its old identity with the new key.",
    source: "docs/protocol.md §5.14, §5.4",
    discussion: """
        Pairs the client and notes every device token issued to its identity, sends reset-identity, \
        then requires every later connect to carry a new device.id and none of the old tokens, a \
        pairing request for the new device, and, after approving it, a node session with a new token.
        """,
    tags: ["pairing", "identity", "tokens"],
    needs: [.resetIdentity],
    profiles: .all
) { run in
    let oldDevice = try run.deviceId(of: try await run.pairClient())
    let cursor = try await run.mark { try await run.client.stimulate(.resetIdentity) }
    // Connections opened once the reinstall is done are the client's new life; a connect that
    // was already on the wire while it reinstalled may still arrive after the mark.
    let afterReset = run.mark()
    let request = try await run.untilClient(.pairingRequest().filter { $0.deviceId != oldDevice }
        .named("a pairing request of a new device after the reinstall"), from: cursor)
    try await run.approveNewest(deviceId: request.deviceId)
    let newSession = try await run.sessionWithConnectFallback(device: request.deviceId, from: cursor)

    // Every token the old identity ever got (an operator session may have got its own just
    // before the reinstall).
    let oldTokens = Set(run.sessions(deviceId: oldDevice).compactMap(\.issuedDeviceToken))
    let openedAfterReset = Set(run.matches(.connectionOpened, from: afterReset).map(\.connectionId))
    for connect in run.connects(from: cursor) where openedAfterReset.contains(connect.connectionId) {
        try run.expect(connect.deviceId != oldDevice, "no connect after the reinstall uses the old identity",
                       expected: "a new device.id", actual: "\(oldDevice) on \(connect.connectionId)")
        let stale = connect.presentedTokens.filter(oldTokens.contains)
        try run.expect(stale.isEmpty, "no connect after the reinstall presents a token of the old identity",
                       expected: "no token issued to \(oldDevice)",
                       actual: "\(connect.role) connect \(connect.connectionId) presents one with device \(connect.deviceId ?? "none")")
    }
    try run.expect(newSession.issuedDeviceToken.map { !oldTokens.contains($0) } ?? false,
                   "the new device gets a new node token", expected: "a token not issued before", actual: newSession.issuedDeviceToken ?? "none")
}
