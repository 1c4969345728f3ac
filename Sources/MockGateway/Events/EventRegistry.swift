import GatewayProtocol

/// Which sessions receive an event: the side of the role split whose `hello-ok.features.events`
/// lists it.
enum EventAudience: Sendable, Hashable {
    /// Every session, node or operator.
    case everyone
    /// `role:"node"` sessions only.
    case node
    /// Every session that is not a node (operators; scopes filter broadcasts further,
    /// ``EventScopeGate``).
    case `operator`

    /// Whether a session of `role` is in the audience.
    func includes(_ role: GatewayRole) -> Bool {
        switch self {
        case .everyone: true
        case .node: role == .node
        case .operator: role != .node
        }
    }
}

/// One Gateway event, declared once: who receives it, which Gateway generations emit it (the
/// predicate methods use, ``MethodAvailability``), and whether `hello-ok.features.events`
/// lists it.
struct EventSpec: Sendable, Hashable {
    /// The wire name.
    let name: GatewayEventName
    /// Who receives it.
    let audience: EventAudience
    /// Which profiles emit it.
    let availability: MethodAvailability
    /// Whether `features.events` lists it where it is emitted.
    let advertised: Bool

    /// An entry `features.events` lists for `audience` on the profiles of `availability`.
    static func advertised(_ name: GatewayEventName, _ audience: EventAudience,
                           _ availability: MethodAvailability = .always) -> EventSpec {
        EventSpec(name: name, audience: audience, availability: availability, advertised: true)
    }

    /// An entry emitted (or, with `.never`, only known) but not listed in `features.events`.
    static func unlisted(_ name: GatewayEventName, _ audience: EventAudience,
                         _ availability: MethodAvailability = .always) -> EventSpec {
        EventSpec(name: name, audience: audience, availability: availability, advertised: false)
    }
}

/// Every Gateway event, each declared once (``EventSpec``); `hello-ok.features.events` derives
/// from it as `features.methods` derives from ``MethodRegistry``.
struct EventRegistry: Sendable {
    /// The entries, in declaration order.
    let specs: [EventSpec]
    /// The entries sorted by name, once: `hello-ok` lists a filter of them on every connect.
    private let sortedByName: [EventSpec]

    /// The events `hello-ok.features.events` lists for a session of `role` on `profile`, sorted.
    func advertised(role: GatewayRole, profile: GatewayProfile) -> [String] {
        sortedByName.filter { spec in
            spec.advertised && spec.availability.admits(profile) && spec.audience.includes(role)
        }.map(\.name.rawValue)
    }

    /// The Gateway's events (docs/protocol.md §2.6, §5, §7).
    static let standard = EventRegistry([
        // Every session.
        .unlisted(.connectChallenge, .everyone),  // sent before hello-ok, so never listed in it
        .advertised(.tick, .everyone), .advertised(.presence, .everyone), .advertised(.health, .everyone),
        .advertised(.heartbeat, .everyone), .advertised(.shutdown, .everyone),
        .unlisted(.updateAvailable, .everyone, .never),
        // Nodes.
        .advertised(.nodeInvokeRequest, .node), .advertised(.voicewakeChanged, .node),
        .unlisted(.nodeInvokeCancel, .node, .newerNodeMethods), .unlisted(.nodeInvokeInput, .node, .newerNodeMethods),
        // Operators: pairing.
        .advertised(.devicePairRequested, .operator), .advertised(.devicePairResolved, .operator),
        .advertised(.devicePairSetupCompleted, .operator, .setupCodeLifecycle),
        .advertised(.devicePairSetupDeliveryUncertain, .operator, .setupCodeLifecycle),
        .advertised(.nodePairRequested, .operator), .advertised(.nodePairResolved, .operator),
        // Operators: approvals and questions.
        .advertised(.execApprovalRequested, .operator), .advertised(.execApprovalResolved, .operator),
        .advertised(.sessionApproval, .operator, .unifiedApprovals),
        .unlisted(.pluginApprovalRequested, .operator, .unifiedApprovals),
        .unlisted(.pluginApprovalResolved, .operator, .unifiedApprovals),
        .unlisted(.openclawApprovalResolved, .operator, .unifiedApprovals),
        .advertised(.questionRequested, .operator, .questions), .advertised(.questionResolved, .operator, .questions),
        .unlisted(.questionPending, .operator, .questions), .unlisted(.questionExpired, .operator, .questions),
        // Operators: nodes, chat, talk. `node.presence` comes with the structured
        // `node.presence.activity` handler.
        .advertised(.nodePresence, .operator, .structuredNodeEvents),
        .advertised(.chat, .operator), .advertised(.sessionMessage, .operator), .advertised(.sessionsChanged, .operator),
        .unlisted(.talkMode, .operator), .unlisted(.talkEvent, .operator),
    ])

    /// A registry of `specs`.
    init(_ specs: [EventSpec]) {
        self.specs = specs
        sortedByName = specs.sorted { $0.name.rawValue < $1.name.rawValue }
    }
}
