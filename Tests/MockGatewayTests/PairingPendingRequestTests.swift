import GatewayProtocol
@testable import MockGateway
import Testing

@Suite("Pending requests: creation, refresh, supersede, expiry (docs/protocol.md §5.9)")
struct PairingPendingRequestTests {
    typealias F = PairingFixtures

    @Test func aFailedConnectCreatesAnAnnouncedRequest() {
        var store = F.store()
        let outcome = store.requestPairing(for: F.iosNode(), nowMs: F.t0)
        #expect(outcome.created)
        #expect(outcome.request.ts == F.t0)
        #expect(outcome.request.roles == ["node"])
        #expect(outcome.request.scopes.isEmpty)
        #expect(outcome.request.isRepair == false)
        #expect(outcome.effects == [.requested(outcome.request)])
        #expect(store.pendingRequests(nowMs: F.t0) == [outcome.request])
    }

    @Test func anIdenticalRetryRefreshesInPlaceWithoutAnAnnouncement() {
        var store = F.store()
        let first = store.requestPairing(for: F.iosNode(), nowMs: F.t0)
        let retry = store.requestPairing(for: F.iosNode(remoteIp: "192.168.1.99", displayName: "Renamed"), nowMs: F.t0 + 5 * F.second)
        #expect(retry.created == false)
        #expect(retry.request.requestId == first.request.requestId)
        #expect(retry.request.ts == F.t0)
        #expect(retry.request.refreshedAtMs == F.t0 + 5 * F.second)
        #expect(retry.request.displayName == "Renamed")
        #expect(retry.request.remoteIp == "192.168.1.99")
        #expect(retry.effects == [.refreshed(retry.request)])
        #expect(store.pendingRequests(nowMs: F.t0).count == 1)
    }

    @Test func aChangedRoleSupersedesWithMergedRolesAndRejectedAnnouncements() {
        var store = F.store()
        let node = store.requestPairing(for: F.iosNode(), nowMs: F.t0)
        let operatorAsk = store.requestPairing(for: F.iosOperator(), nowMs: F.t0 + F.second)
        #expect(operatorAsk.created)
        #expect(operatorAsk.request.requestId != node.request.requestId)
        #expect(operatorAsk.request.roles == ["node", "operator"])
        #expect(operatorAsk.request.scopes == ["operator.read", "operator.write"])
        #expect(operatorAsk.request.ts == F.t0 + F.second)
        #expect(operatorAsk.effects == [
            .superseded(old: [node.request.requestId], by: operatorAsk.request.requestId),
            .resolved(PairingResolution(requestId: node.request.requestId, deviceId: F.deviceId, decision: .rejected, ts: F.t0 + F.second)),
            .requested(operatorAsk.request),
        ])
        #expect(store.pendingRequests(nowMs: F.t0 + F.second).map(\.requestId) == [operatorAsk.request.requestId])
    }

    /// requestDevicePairingInWorker (id 68307933387): an in-place refresh needs the same primary
    /// role, so a device whose node and operator connections alternate gets a new request id on
    /// every alternation; each replaced id is announced rejected, and the merged roles and scopes
    /// carry over.
    @Test func alternatingRolesChurnRequestIdsOnTheCurrentGateway() {
        var store = F.store()
        let node = store.requestPairing(for: F.iosNode(), nowMs: F.t0)
        let merged = store.requestPairing(for: F.iosOperator(), nowMs: F.t0 + F.second)
        let nodeRetry = store.requestPairing(for: F.iosNode(), nowMs: F.t0 + 2 * F.second)
        #expect(merged.created && nodeRetry.created)
        #expect(Set([node.request.requestId, merged.request.requestId, nodeRetry.request.requestId]).count == 3)
        #expect(nodeRetry.request.role == "node")
        #expect(nodeRetry.request.roles == ["node", "operator"])
        #expect(nodeRetry.request.scopes == ["operator.read", "operator.write"])
        #expect(nodeRetry.effects.contains(.resolved(PairingResolution(requestId: merged.request.requestId, deviceId: F.deviceId,
                                                                         decision: .rejected, ts: F.t0 + 2 * F.second))))
        // The same role again, with an ask the merged request covers: refreshed in place.
        let again = store.requestPairing(for: F.iosNode(), nowMs: F.t0 + 3 * F.second)
        #expect(!again.created)
        #expect(again.request.requestId == nodeRetry.request.requestId)
        #expect(store.pendingRequests(nowMs: F.t0 + 3 * F.second).count == 1)
    }

    @Test func aRetryTheMergedRequestCoversRefreshesItOnTheLegacyRule() {
        var store = PairingStore(random: SeededRandom(seed: 7), supersessionComparesRole: false)
        _ = store.requestPairing(for: F.iosNode(), nowMs: F.t0)
        let merged = store.requestPairing(for: F.iosOperator(), nowMs: F.t0 + F.second)
        // The node and the operator connection keep retrying: both asks are covered, so the id stays.
        let nodeRetry = store.requestPairing(for: F.iosNode(), nowMs: F.t0 + 2 * F.second)
        let operatorRetry = store.requestPairing(for: F.iosOperator(scopes: [PairingScope.read]), nowMs: F.t0 + 3 * F.second)
        #expect(nodeRetry.created == false)
        #expect(operatorRetry.created == false)
        #expect(nodeRetry.request.requestId == merged.request.requestId)
        #expect(operatorRetry.request.requestId == merged.request.requestId)
        #expect(operatorRetry.request.roles == ["node", "operator"])
        #expect(operatorRetry.request.scopes == ["operator.read", "operator.write"])
    }

    @Test func aWiderScopeAskSupersedesWithMergedScopes() {
        var store = F.store()
        let first = store.requestPairing(for: F.iosOperator(scopes: [PairingScope.read]), nowMs: F.t0)
        let wider = store.requestPairing(for: F.iosOperator(scopes: [PairingScope.approvals]), nowMs: F.t0 + F.second)
        #expect(wider.created)
        #expect(wider.request.requestId != first.request.requestId)
        #expect(wider.request.scopes == ["operator.read", "operator.approvals"])
        #expect(F.wireEffects(wider.effects).count == 2)
    }

    @Test func aChangedPublicKeySupersedes() {
        var store = F.store()
        let first = store.requestPairing(for: F.iosNode(), nowMs: F.t0)
        let rekeyed = store.requestPairing(for: F.iosNode(publicKey: F.otherKey), nowMs: F.t0 + F.second)
        #expect(rekeyed.created)
        #expect(rekeyed.request.requestId != first.request.requestId)
        #expect(rekeyed.request.publicKey == F.otherKey)
    }

    @Test func requestsOfOtherDevicesAreLeftAlone() {
        var store = F.store()
        let ios = store.requestPairing(for: F.iosNode(), nowMs: F.t0)
        let host = store.requestPairing(for: F.nodeHost(), nowMs: F.t0 + F.second)
        #expect(host.created)
        #expect(host.effects == [.requested(host.request)])
        #expect(store.pendingRequest(ios.request.requestId, nowMs: F.t0 + F.second) != nil)
    }

    @Test func aRequestExpiresFiveMinutesAfterTheLastRetry() {
        var store = F.store()
        let first = store.requestPairing(for: F.iosNode(), nowMs: F.t0)
        // A retry at 4:59 keeps it alive for another five minutes.
        let retryAt = F.t0 + 4 * F.minute + 59 * F.second
        let retry = store.requestPairing(for: F.iosNode(), nowMs: retryAt)
        #expect(retry.request.requestId == first.request.requestId)
        #expect(store.expire(nowMs: F.t0 + 6 * F.minute).isEmpty)
        #expect(store.pendingRequest(first.request.requestId, nowMs: retryAt + 5 * F.minute) != nil)
        let expired = store.expire(nowMs: retryAt + 5 * F.minute + 1)
        #expect(expired.map(\.requestId) == [first.request.requestId])
        #expect(store.pendingRequests(nowMs: retryAt + 5 * F.minute + 1).isEmpty)
    }

    @Test func withoutRetriesARequestExpiresFiveMinutesAfterCreation() {
        var store = F.store()
        let request = store.requestPairing(for: F.iosNode(), nowMs: F.t0).request
        #expect(request.expiresAtMs == F.t0 + 5 * F.minute)
        #expect(store.pendingRequest(request.requestId, nowMs: F.t0 + 5 * F.minute) != nil)
        #expect(store.pendingRequest(request.requestId, nowMs: F.t0 + 5 * F.minute + 1) == nil)
    }

    @Test func anExpiredRequestIsNeverResurrected() {
        var store = F.store()
        let old = store.requestPairing(for: F.iosNode(), nowMs: F.t0).request
        let later = F.t0 + 6 * F.minute
        let retry = store.requestPairing(for: F.iosNode(), nowMs: later)
        #expect(retry.created)
        #expect(retry.request.requestId != old.requestId)
        #expect(retry.request.ts == later)
        #expect(retry.effects == [.expired(old), .requested(retry.request)])
        #expect(throws: PairingError.unknownRequest(old.requestId)) {
            _ = try store.approve(requestId: old.requestId, nowMs: later)
        }
    }

    @Test func approvingASupersededRequestFailsAndTheNewOneAdmitsEverySession() throws {
        var store = F.store()
        let first = store.requestPairing(for: F.iosNode(), nowMs: F.t0).request
        let second = store.requestPairing(for: F.iosOperator(), nowMs: F.t0 + F.second).request
        let error = #expect(throws: PairingError.self) {
            _ = try store.approve(requestId: first.requestId, nowMs: F.t0 + 2 * F.second)
        }
        #expect(error?.code == .unknownRequest)
        _ = try store.approve(requestId: second.requestId, nowMs: F.t0 + 2 * F.second)
        let device = try #require(store.pairedDevice(F.deviceId))
        #expect(store.evaluate(F.iosNode()) == .paired(device))
        #expect(store.evaluate(F.iosOperator()) == .paired(device))
    }

    @Test func anUpgradeRequestIsMarkedAsARepair() throws {
        var store = try F.paired([F.iosNode()])
        let upgrade = store.requestPairing(for: F.iosOperator(), nowMs: F.t0 + F.second)
        #expect(upgrade.request.isRepair)
        #expect(upgrade.request.roles == ["operator"])
    }

    /// Requests of the same millisecond expire in id order: not in the dictionary's order, which
    /// Swift's per-process hash seed changes, so a run replayed with its seed in another process
    /// would see the expiries (and what follows from them) in another order.
    @Test func requestsOfOneMillisecondExpireInIdOrder() {
        var store = F.store()
        let created = (0..<24).map { index in
            store.requestPairing(for: F.iosNode(deviceId: "device-\(index)", publicKey: "key-\(index)"), nowMs: F.t0).request
        }
        let expired = store.expire(nowMs: F.t0 + 6 * F.minute)
        #expect(expired.count == created.count)
        #expect(expired.map(\.requestId) == created.map(\.requestId).sorted())
    }

    @Test func theNextExpiryIsJustAfterTheEarliestDeadline() {
        var store = F.store()
        #expect(store.nextExpiryMs == nil)
        _ = store.requestPairing(for: F.iosNode(), nowMs: F.t0)
        _ = store.requestPairing(for: F.nodeHost(), nowMs: F.t0 + F.minute)
        #expect(store.nextExpiryMs == F.t0 + 5 * F.minute + 1)
        _ = store.expire(nowMs: F.t0 + 5 * F.minute + 1)
        #expect(store.nextExpiryMs == F.t0 + 6 * F.minute + 1)
    }
}
