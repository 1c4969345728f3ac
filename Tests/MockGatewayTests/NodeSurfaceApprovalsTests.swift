import MockGateway
import Testing

/// The surface-approval rule (docs/protocol.md §6.7) against upstream's
/// `reconcileNodePairingOnConnect` and node pairing store. Tried breaks: effective = declared on a
/// widened reconnect fails `widenedSurfaceKeepsTheApprovedCommandsAndOpensOneRequest`; a new request
/// per reconnect fails `aReconnectWhilePendingReusesTheRequest`; approve leaving the request
/// pending fails `approveMakesTheSurfaceEffective`.
@Suite("Node surface approvals")
struct NodeSurfaceApprovalsTests {
    static let allowlist: Set<String> = ["device.info", "location.get", "camera.snap", "contacts.search"]
    static let meta = NodeSurfaceApprovals.Metadata(platform: "ios", deviceFamily: "iPhone")

    @Test func firstConnectApprovesTheAllowlistedDeclaredSurface() {
        var approvals = NodeSurfaceApprovals()
        let result = approvals.connect([" device.info", "device.info", "system.run", ""], at: 1000, requestId: "r1")
        #expect(result.declared == ["device.info"])
        #expect(result.effective == ["device.info"])
        #expect(result.withheld.isEmpty)
        #expect(result.pending == nil && !result.created)
        #expect(approvals.pendingRequests(nowMs: 1000).isEmpty)
        #expect(approvals.approvedCommands(nodeId: "n1", allowlist: Self.allowlist) == ["device.info"])
    }

    @Test func sameOrNarrowerSurfaceIsAdmittedAsDeclared() {
        var approvals = NodeSurfaceApprovals()
        _ = approvals.connect(["device.info", "location.get"], at: 1000, requestId: "r1")
        let narrower = approvals.connect(["location.get"], at: 2000, requestId: "r2")
        #expect(narrower.effective == ["location.get"])
        #expect(narrower.pending == nil)
        // A command outside the allowlist is no widening: it is cut before the comparison.
        let notAllowed = approvals.connect(["device.info", "health.summary"], at: 3000, requestId: "r3")
        #expect(notAllowed.effective == ["device.info"])
        #expect(notAllowed.pending == nil)
    }

    @Test func widenedSurfaceKeepsTheApprovedCommandsAndOpensOneRequest() throws {
        var approvals = NodeSurfaceApprovals()
        _ = approvals.connect(["device.info"], at: 1000, requestId: "r1")
        let widened = approvals.connect(["device.info", "camera.snap", "health.summary"], at: 2000, requestId: "r2")
        #expect(widened.declared == ["device.info", "camera.snap"])
        #expect(widened.effective == ["device.info"])
        #expect(widened.withheld == ["camera.snap"])
        #expect(widened.created)
        let request = try #require(widened.pending)
        #expect(request.requestId == "r2" && request.nodeId == "n1" && request.isRepair)
        #expect(request.commands == ["device.info", "camera.snap"])
        #expect(approvals.pendingRequests(nowMs: 2000).map(\.requestId) == ["r2"])
    }

    @Test func aReconnectWhilePendingReusesTheRequest() {
        var approvals = NodeSurfaceApprovals()
        _ = approvals.connect(["device.info"], at: 1000, requestId: "r1")
        _ = approvals.connect(["device.info", "camera.snap"], at: 2000, requestId: "r2")
        let again = approvals.connect(["device.info", "camera.snap"], at: 3000, requestId: "r3")
        #expect(!again.created)
        #expect(again.pending?.requestId == "r2")
        #expect(again.effective == ["device.info"])
        #expect(approvals.pendingRequests(nowMs: 3000).count == 1)
    }

    @Test func approveMakesTheSurfaceEffective() throws {
        var approvals = NodeSurfaceApprovals()
        _ = approvals.connect(["device.info"], at: 1000, requestId: "r1")
        _ = approvals.connect(["device.info", "camera.snap"], at: 2000, requestId: "r2")
        let unknown = approvals.approve("nope", nowMs: 2500)
        #expect(unknown == nil)
        let outcome = approvals.approve("r2", nowMs: 3000)
        let approved = try #require(outcome)
        #expect(approved.node.commands == ["device.info", "camera.snap"])
        #expect(approved.node.createdAtMs == 1000 && approved.node.approvedAtMs == 3000)
        #expect(approvals.pendingRequests(nowMs: 3000).isEmpty)
        let twice = approvals.approve("r2", nowMs: 3000)
        #expect(twice == nil)
        let next = approvals.connect(["device.info", "camera.snap"], at: 4000, requestId: "r3")
        #expect(next.effective == ["device.info", "camera.snap"])
        #expect(next.pending == nil)
    }

    @Test func rejectKeepsTheApprovedSurfaceAndTheNextReconnectAsksAgain() {
        var approvals = NodeSurfaceApprovals()
        _ = approvals.connect(["device.info"], at: 1000, requestId: "r1")
        _ = approvals.connect(["device.info", "camera.snap"], at: 2000, requestId: "r2")
        let rejected = approvals.reject("r2", nowMs: 2500)
        #expect(rejected?.nodeId == "n1")
        let again2 = approvals.reject("r2", nowMs: 2500)
        #expect(again2 == nil)
        #expect(approvals.approvedCommands(nodeId: "n1", allowlist: Self.allowlist) == ["device.info"])
        let again = approvals.connect(["device.info", "camera.snap"], at: 3000, requestId: "r3")
        #expect(again.created && again.pending?.requestId == "r3")
    }

    @Test func pendingRequestsExpireAfterFiveMinutes() {
        var approvals = NodeSurfaceApprovals()
        _ = approvals.connect(["device.info"], at: 0, requestId: "r1")
        _ = approvals.connect(["device.info", "camera.snap"], at: 1000, requestId: "r2")
        #expect(approvals.pending("r2", nowMs: 1000 + NodeSurfaceApprovals.pendingTimeToLiveMs) != nil)
        #expect(approvals.pending("r2", nowMs: 1001 + NodeSurfaceApprovals.pendingTimeToLiveMs) == nil)
        let late = approvals.approve("r2", nowMs: 1001 + NodeSurfaceApprovals.pendingTimeToLiveMs)
        #expect(late == nil)
    }
    /// Supersession as upstream's node pairing store does it (`requestNodePairing` /
    /// `reconcilePendingPairingRequests`): another widened surface drops the waiting request and
    /// opens one with a new id. Tried break: reusing the waiting request whatever the surface
    /// (the rule before) fails every expectation below.
    @Test func aDifferentWidenedSurfaceSupersedesTheWaitingRequest() throws {
        var approvals = NodeSurfaceApprovals()
        _ = approvals.connect(["device.info"], at: 1000, requestId: "r1")
        _ = approvals.connect(["device.info", "camera.snap"], at: 2000, requestId: "r2")
        let wider = approvals.connect(["device.info", "camera.snap", "location.get"], at: 3000, requestId: "r3")
        #expect(wider.created)
        #expect(wider.pending?.requestId == "r3")
        #expect(wider.pending?.commands == ["device.info", "camera.snap", "location.get"])
        #expect(wider.superseded.map(\.requestId) == ["r2"])
        #expect(wider.effective == ["device.info"])
        #expect(approvals.pendingRequests(nowMs: 3000).map(\.requestId) == ["r3"])
        #expect(approvals.approve("r2", nowMs: 3100) == nil, "a superseded request can no longer be approved")
    }

    /// The same surface in another order with new metadata keeps the request (its id) and
    /// refreshes its metadata and `ts`; caps are part of the surface.
    @Test func theSameSurfaceKeepsTheRequestAndNewCapsSupersedeIt() throws {
        var approvals = NodeSurfaceApprovals()
        _ = approvals.connect(["device.info"], at: 1000, requestId: "r1")
        _ = approvals.connect(["device.info", "camera.snap"], at: 2000, requestId: "r2")
        var renamed = Self.meta
        renamed.displayName = "Renamed"
        let refreshed = approvals.connect(["camera.snap", "device.info"], at: 3000, requestId: "r3", metadata: renamed)
        #expect(!refreshed.created && refreshed.superseded.isEmpty)
        #expect(refreshed.pending?.requestId == "r2")
        #expect(refreshed.pending?.ts == 3000)
        #expect(refreshed.pending?.metadata.displayName == "Renamed")
        var withCamera = renamed
        withCamera.caps = ["camera"]
        let newCaps = approvals.connect(["device.info", "camera.snap"], at: 4000, requestId: "r4", metadata: withCamera)
        #expect(newCaps.created && newCaps.pending?.requestId == "r4")
        #expect(newCaps.superseded.map(\.requestId) == ["r2"])
    }

    /// A reconnect within the approved surface clears what waited (upstream's cleanup claim,
    /// finalized after hello). Tried break: keeping the request fails both expectations.
    @Test func aReconnectWithinTheApprovedSurfaceClearsTheWaitingRequest() {
        var approvals = NodeSurfaceApprovals()
        _ = approvals.connect(["device.info"], at: 1000, requestId: "r1")
        _ = approvals.connect(["device.info", "camera.snap"], at: 2000, requestId: "r2")
        let back = approvals.connect(["device.info"], at: 3000, requestId: "r3")
        #expect(back.pending == nil && !back.created)
        #expect(back.superseded.map(\.requestId) == ["r2"])
        #expect(approvals.pendingRequests(nowMs: 3000).isEmpty)
    }
}

private extension NodeSurfaceApprovals {
    /// A connect of node `n1` declaring `declared` at `nowMs`, with the suite's allowlist (and
    /// metadata unless given); a request it opens gets `requestId`.
    @discardableResult
    mutating func connect(_ declared: [String], at nowMs: Int64, requestId: String,
                          metadata: Metadata = NodeSurfaceApprovalsTests.meta) -> Reconciliation {
        reconcile(nodeId: "n1", declared: declared, allowlist: NodeSurfaceApprovalsTests.allowlist, metadata: metadata,
                  nowMs: nowMs, newRequestId: { requestId })
    }
}
