import Foundation
import GatewayProtocol
import Testing
@testable import MockGateway

/// The method registry against the wire: for every profile and role, what `hello-ok` advertises
/// and how the Gateway answers each declared method must be what the registry entry says.
@Suite("Method registry against the wire")
struct MethodRegistryTests {
    /// One session's view of the Gateway: its advertised methods and its answer to every method.
    struct Observation: Sendable {
        let role: GatewayRole
        /// `nil`: an operator holding `operator.admin`; `[]`: an operator holding no scope.
        let scopes: [String]
        let advertised: Set<String>
        let answers: [String: ResponseFrame]
    }

    /// A method no entry declares (and no admin prefix covers).
    static let undeclared = "registry.undeclared"

    /// The differences between the registry's entries and what one session observed, one line each.
    static func mismatches(_ registry: MethodRegistry, profile: GatewayProfile, _ observed: Observation) -> [String] {
        var found: [String] = []
        let isNode = observed.role == .node
        let unknown = { (method: String) in MethodRegistry.unknownMethodError(method) }
        let roleRefusal = OperatorMethodPolicy.unauthorizedRoleError(observed.role)
        var expectedAdvertised: Set<String> = []
        for spec in registry.specs {
            let name = spec.name.rawValue
            guard let answer = observed.answers[name] else {
                found.append("\(name): not called")
                continue
            }
            let served = spec.isServed(by: profile)
            let callerSide = MethodRegistry.isCallerSide(spec.caller, of: observed.role)
            if served, callerSide, spec.advertised { expectedAdvertised.insert(name) }
            let expected: ErrorShape?
            switch (isNode, spec.caller) {
            case (true, .node): expected = served ? nil : unknown(name)
            case (true, .operator): expected = roleRefusal
            case (false, .node): expected = roleRefusal
            case (false, .operator(let requirement)):
                if !served {
                    expected = unknown(name)
                } else if observed.scopes.isEmpty {
                    expected = OperatorMethodPolicy.missingScopeError(requirement.scope, style: profile.missingScopeStyle)
                } else {
                    expected = nil
                }
            }
            if let expected {
                if answer.error != expected { found.append("\(name): answered \(describe(answer)), expected \(expected.code) \(expected.message)") }
            } else if let error = answer.error, error == unknown(name) || error == roleRefusal
                        || error.message.hasPrefix("missing scope:") {
                found.append("\(name): served, but answered \(error.code) \(error.message)")
            }
        }
        if observed.answers[undeclared]?.error != unknown(undeclared) {
            found.append("\(undeclared): answered \(observed.answers[undeclared].map(describe) ?? "nothing")")
        }
        for name in observed.advertised.subtracting(expectedAdvertised).sorted() { found.append("\(name): advertised") }
        for name in expectedAdvertised.subtracting(observed.advertised).sorted() { found.append("\(name): not advertised") }
        return found
    }

    static func describe(_ response: ResponseFrame) -> String {
        response.error.map { "\($0.code) \($0.message)" } ?? "ok"
    }

    /// Calls every declared method (and an undeclared one) with empty params on one session.
    static func observe(_ session: ConnectedSession, role: GatewayRole, scopes: [String]) async throws -> Observation {
        var answers: [String: ResponseFrame] = [:]
        for name in MethodRegistry.standard.specs.map(\.name.rawValue) + [undeclared] {
            answers[name] = try await session.client.request(name, params: [:])
        }
        return Observation(role: role, scopes: scopes, advertised: Set(session.hello.features.methods), answers: answers)
    }

    /// An admin operator, a scopeless operator and a node, each calling every method.
    static func observeAll(profile: GatewayProfile) async throws -> [Observation] {
        try await Gateway.withGateway(GatewayConfiguration(profile: profile)) { gateway in
            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x70),
                                                               scopes: [OperatorScope.admin.rawValue])
            let scopeless = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x71), scopes: [])
            let node = try await TestSessions.nodeSession(gateway, identity: try TestIdentities.make(0x72))
            return [
                try await observe(admin, role: .operator, scopes: [OperatorScope.admin.rawValue]),
                try await observe(scopeless, role: .operator, scopes: []),
                try await observe(node, role: .node, scopes: []),
            ]
        }
    }

    @Test("every entry is advertised, served, refused by role and scope exactly as declared", arguments: GatewayProfile.builtIn)
    func registryMatchesTheWire(profile: GatewayProfile) async throws {
        for observation in try await Self.observeAll(profile: profile) {
            let found = Self.mismatches(.standard, profile: profile, observation)
            #expect(found.isEmpty, "\(profile.name) \(observation.role) \(observation.scopes): \(found)")
        }
    }

    @Test("the walk catches a registry entry that disagrees with the Gateway")
    func brokenEntryIsCaught() async throws {
        // `node.pending.drain` declared for every profile: on the legacy Gateway the walk expects
        // it advertised to nodes and served, and the wire says `unknown method`.
        let broken = MethodRegistry(MethodRegistry.standard.specs.map { spec in
            guard spec.name == .nodePendingDrain else { return spec }
            return MethodSpec(name: spec.name, caller: spec.caller, availability: .always, advertised: spec.advertised,
                              handler: spec.handler)
        })
        let observations = try await Self.observeAll(profile: .legacy)
        let node = try #require(observations.first { $0.role == .node })
        #expect(Self.mismatches(.standard, profile: .legacy, node).isEmpty)
        let found = Self.mismatches(broken, profile: .legacy, node)
        #expect(found == ["node.pending.drain: served, but answered INVALID_REQUEST unknown method: node.pending.drain",
                          "node.pending.drain: not advertised"])
    }

    static func refusal(_ route: MethodRoute) -> ErrorShape? {
        if case .refuse(let error) = route { error } else { nil }
    }

    @Test("a worker session: refused by role where an operator is served, unknown method where no profile serves")
    func workerRole() {
        let registry = MethodRegistry.standard
        let worker = OperatorMethodPolicy.unauthorizedRoleError(.worker)
        #expect(Self.refusal(registry.route(method: GatewayMethod.nodeList.rawValue, role: .worker, scopes: [.admin],
                                            profile: .current)) == worker)
        #expect(Self.refusal(registry.route(method: GatewayMethod.nodeEvent.rawValue, role: .worker, scopes: [.admin],
                                            profile: .current)) == worker)
        #expect(Self.refusal(registry.route(method: GatewayMethod.questionList.rawValue, role: .worker, scopes: [.admin],
                                            profile: .legacy)) == MethodRegistry.unknownMethodError(GatewayMethod.questionList.rawValue))
        #expect(Self.refusal(registry.route(method: GatewayMethod.status.rawValue, role: .worker, scopes: [.admin],
                                            profile: .current)) == MethodRegistry.unknownMethodError(GatewayMethod.status.rawValue))
        // A node calling an admin-prefixed method that no entry declares is refused by role.
        #expect(Self.refusal(registry.route(method: "config.get", role: .node, scopes: [], profile: .current))
            == OperatorMethodPolicy.unauthorizedRoleError(.node))
    }

    @Test("each name is declared once, node entries are the node methods of Names, unserved entries have no handler")
    func entriesAreWellFormed() {
        let names = MethodRegistry.standard.specs.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(Set(MethodRegistry.standard.specs.filter { $0.caller == .node }.map(\.name)) == Set(GatewayMethod.nodeMethods))
        for spec in MethodRegistry.standard.specs {
            #expect((spec.handler == nil) == (spec.availability == .never), "\(spec.name)")
        }
    }
}
