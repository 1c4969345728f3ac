import GatewayProtocol

/// The area a scenario belongs to: the `AREA` part of an `AREA-NNN` identifier.
///
/// Areas group the terminal report and name the JUnit `classname`.
public struct ScenarioArea: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The prefix as written in identifiers (`PAIR`).
    public let code: String
    /// A short human name (`pairing`).
    public let name: String

    /// Creates an area.
    public init(code: String, name: String) {
        self.code = code
        self.name = name
    }

    /// `HS`: the connect handshake.
    public static let handshake = ScenarioArea(code: "HS", name: "handshake")
    /// `PAIR`: device pairing.
    public static let pairing = ScenarioArea(code: "PAIR", name: "pairing")
    /// `TOKEN`: device tokens.
    public static let token = ScenarioArea(code: "TOKEN", name: "device tokens")
    /// `INV`: `node.invoke`.
    public static let invoke = ScenarioArea(code: "INV", name: GatewayMethod.nodeInvoke.rawValue)
    /// `PRES`: presence beacons.
    public static let presence = ScenarioArea(code: "PRES", name: "presence beacons")
    /// `PUSH`: push registration.
    public static let push = ScenarioArea(code: "PUSH", name: "push registration")
    /// `APPR`: approvals.
    public static let approvals = ScenarioArea(code: "APPR", name: "approvals")
    /// `QUES`: agent questions.
    public static let questions = ScenarioArea(code: "QUES", name: "questions")
    /// `LIFE`: connection lifecycle.
    public static let lifecycle = ScenarioArea(code: "LIFE", name: "connection lifecycle")
    /// `OUTBOX`: the chat outbox (offline messages, ambiguous sends, retirement, limit).
    public static let outbox = ScenarioArea(code: "OUTBOX", name: "chat outbox")
    /// `CACHE`: the chat transcript cache (cold start, reset).
    public static let cache = ScenarioArea(code: "CACHE", name: "transcript cache")
    /// `WATCH`: the Apple Watch direct mode (HTTP long polls instead of a WebSocket).
    public static let watch = ScenarioArea(code: "WATCH", name: "Apple Watch direct mode")
    /// `WS`: the agent workspace browser (the apps' Files card).
    public static let workspace = ScenarioArea(code: "WS", name: "workspace browsing")
    /// `VW`: the voice wake triggers (the apps' voice settings).
    public static let voiceWake = ScenarioArea(code: "VW", name: "voice wake")
    /// `SESS`: the session list and `sessions.changed`.
    public static let sessions = ScenarioArea(code: "SESS", name: "sessions")

    /// The known areas, in report order.
    public static let known: [ScenarioArea] = [
        .handshake, .pairing, .token, .invoke, .presence, .push, .approvals, .questions, .lifecycle, .outbox, .cache,
        .workspace, .voiceWake, .sessions, .watch,
    ]

    /// The known area whose code is `code`, if any.
    public static func named(_ code: String) -> ScenarioArea? {
        known.first { $0.code == code }
    }

    /// Known areas sort in catalogue order, unknown ones after them by code.
    public static func < (lhs: ScenarioArea, rhs: ScenarioArea) -> Bool {
        let left = known.firstIndex(of: lhs) ?? known.count
        let right = known.firstIndex(of: rhs) ?? known.count
        return left != right ? left < right : lhs.code < rhs.code
    }

    /// The code.
    public var description: String { code }
}

/// A scenario identifier such as `PAIR-006`: stable API, never renumbered, never reused.
public struct ScenarioID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The identifier as written.
    public let rawValue: String

    /// Wraps an identifier; use `isWellFormed` (or `ScenarioCatalogue.problems`) to check it.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// The prefix of identifiers of scenarios written outside this package: `X-<OWNER>-NNN`
    /// (`X-ACME-001`). Built-in areas never start with it, so a user scenario can never take,
    /// or shadow, a built-in ID.
    public static let userPrefix = "X-"

    /// Whether the identifier is in the namespace of scenarios written outside this package
    /// (``userPrefix``).
    public var isUserDefined: Bool { rawValue.hasPrefix(Self.userPrefix) }

    /// The text before the last dash (`PAIR`, `X-ACME`), or the whole identifier when there is no
    /// dash.
    public var areaCode: String {
        guard let dash = rawValue.lastIndex(of: "-") else { return rawValue }
        return String(rawValue[..<dash])
    }

    /// The area, known or not (an unknown code becomes an area named after itself; a user area
    /// `X-ACME` is named `acme`).
    public var area: ScenarioArea {
        if let known = ScenarioArea.named(areaCode) { return known }
        let code = areaCode
        let name = isUserDefined ? String(code.dropFirst(Self.userPrefix.count)).lowercased() : code.lowercased()
        return ScenarioArea(code: code, name: name)
    }

    /// The number after the last dash, if it is one.
    public var number: Int? {
        guard let dash = rawValue.lastIndex(of: "-") else { return nil }
        return Int(rawValue[rawValue.index(after: dash)...])
    }

    /// `true` for `AREA-NNN` with a known area and exactly three digits, or for a user
    /// identifier `X-OWNER-NNN` (`OWNER`: 1 to 16 upper-case letters or digits).
    public var isWellFormed: Bool {
        guard let dash = rawValue.lastIndex(of: "-") else { return false }
        let digits = rawValue[rawValue.index(after: dash)...]
        guard digits.count == 3, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
        if isUserDefined {
            let owner = areaCode.dropFirst(Self.userPrefix.count)
            return (1...16).contains(owner.count) && owner.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) }
        }
        return ScenarioArea.named(areaCode) != nil
    }

    /// Sorts by area (catalogue order), then number, then text.
    public static func < (lhs: ScenarioID, rhs: ScenarioID) -> Bool {
        if lhs.area != rhs.area { return lhs.area < rhs.area }
        if let left = lhs.number, let right = rhs.number, left != right { return left < right }
        return lhs.rawValue < rhs.rawValue
    }

    /// The identifier as written.
    public var description: String { rawValue }
}

extension ScenarioID: ExpressibleByStringLiteral {
    /// Creates an identifier from a literal.
    public init(stringLiteral value: String) {
        self.init(value)
    }
}
