import Foundation
import GatewayProtocol
import Testing
@testable import MockGateway

/// The event registry against the wire: for every profile, what a live Gateway's `hello-ok`
/// lists in `features.events` for an operator and for a node must be what the registry
/// declares, and the registry must declare each `GatewayEventName` once.
@Suite("Event registry against the wire")
struct EventRegistryTests {
    /// The `features.events` of an operator session and of a node session of a live Gateway.
    static func observed(profile: GatewayProfile) async throws -> [GatewayRole: Set<String>] {
        try await Gateway.withGateway(GatewayConfiguration(profile: profile)) { gateway in
            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x73),
                                                               scopes: [OperatorScope.admin.rawValue])
            let node = try await TestSessions.nodeSession(gateway, identity: try TestIdentities.make(0x74))
            return [.operator: Set(admin.hello.features.events), .node: Set(node.hello.features.events)]
        }
    }

    /// The differences between `registry` and what the sessions of `profile` were told, one line each.
    static func mismatches(_ registry: EventRegistry, profile: GatewayProfile, _ observed: [GatewayRole: Set<String>]) -> [String] {
        var found: [String] = []
        for role in [GatewayRole.operator, .node] {
            let expected = Set(registry.advertised(role: role, profile: profile))
            let seen = observed[role] ?? []
            for name in seen.subtracting(expected).sorted() { found.append("\(role) \(name): advertised") }
            for name in expected.subtracting(seen).sorted() { found.append("\(role) \(name): not advertised") }
        }
        return found
    }

    @Test("features.events of each role is what the registry declares", arguments: GatewayProfile.builtIn)
    func registryMatchesTheWire(profile: GatewayProfile) async throws {
        let observed = try await Self.observed(profile: profile)
        #expect(Self.mismatches(.standard, profile: profile, observed).isEmpty, "\(profile.name)")
        // Independently of the registry: what each generation lists (docs/protocol.md §2.6, §7).
        let common: Set<String> = ["tick", "presence", "health", "heartbeat", "shutdown"]
        #expect(observed[.node] == common.union([GatewayEventName.nodeInvokeRequest.rawValue, GatewayEventName.voicewakeChanged.rawValue]))
        let newest: [GatewayEventName] = [.sessionApproval, .questionRequested, .questionResolved, .nodePresence,
                                          .devicePairSetupCompleted, .devicePairSetupDeliveryUncertain]
        for name in newest {
            #expect(observed[.operator]?.contains(name.rawValue) == (profile == .current), "\(profile.name) \(name)")
        }
        for name in [GatewayEventName.devicePairRequested, .execApprovalResolved, .chat, .sessionMessage] {
            #expect(observed[.operator]?.contains(name.rawValue) == true, "\(profile.name) \(name)")
        }
        #expect(observed[.operator]?.contains(GatewayEventName.connectChallenge.rawValue) == false)
    }

    @Test("the walk catches a registry entry that disagrees with the Gateway")
    func brokenEntryIsCaught() async throws {
        // `session.approval` declared for every profile: the legacy Gateway does not list it.
        let broken = EventRegistry(EventRegistry.standard.specs.map { spec in
            guard spec.name == .sessionApproval else { return spec }
            return EventSpec(name: spec.name, audience: spec.audience, availability: .always, advertised: true)
        })
        let observed = try await Self.observed(profile: .legacy)
        #expect(Self.mismatches(.standard, profile: .legacy, observed).isEmpty)
        #expect(Self.mismatches(broken, profile: .legacy, observed) == ["operator session.approval: not advertised"])
    }

    @Test("each GatewayEventName of Names.swift is declared once")
    func everyEventIsDeclaredOnce() throws {
        let names = EventRegistry.standard.specs.map(\.name)
        #expect(Set(names).count == names.count)
        // The constants of `GatewayEventName`, read from the file that spells them.
        let namesFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/GatewayProtocol/Names.swift")
        let text = try String(contentsOf: namesFile, encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"public static let `?(\w+)`?: GatewayEventName = "([^"]+)""#)
        let declared = pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            Range(match.range(at: 2), in: text).map { String(text[$0]) }
        }
        #expect(declared.count > 25, "Names.swift was read")
        #expect(Set(declared) == Set(names.map(\.rawValue)))
    }
}
