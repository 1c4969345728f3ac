import Foundation
import GatewayProtocol

/// The Gateway's node command policy (docs/protocol.md §6.7): which commands an operator may
/// invoke on a node, decided before anything is sent to the node.
///
/// A command passes when it is on the node's allowlist (its platform's defaults, the Canvas
/// defaults on macOS, the Talk push-to-talk commands for a Talk-capable node, the Watch relay
/// commands on an iPhone, plus `allow`, minus `deny`, never a dangerous command unless `allow`
/// names it) **and** the node declared it in `connect.commands`. `deny` always wins.
///
/// Upstream (read for facts, nothing copied): `resolveNodeCommandAllowlist` and
/// `isNodeCommandAllowed` in src/gateway/node-command-policy.ts, the command names in
/// src/infra/node-commands.ts, the refusal text in `buildNodeCommandRejectionHint` and the
/// order of checks in src/gateway/server-methods/nodes.invoke.ts (docs/fidelity.md cites the
/// revisions). Plugin-registered commands other than Canvas are not modelled.
///
/// Every function is pure: the invoke path calls ``preflight(command:)`` before it
/// looks for the node (and before any wake) and ``refusal(command:node:)`` right before dispatch.
public struct NodeCommandPolicy: Sendable, Hashable {
    /// `gateway.nodes.commands.allow`: commands added to every node's allowlist, dangerous ones
    /// included (the only way to opt in to a dangerous command).
    public var allow: [String]
    /// `gateway.nodes.commands.deny`: commands removed from every node's allowlist; wins over
    /// `allow`.
    public var deny: [String]

    /// A policy with these lists (both empty by default: the platform defaults only).
    public init(allow: [String] = [], deny: [String] = []) {
        self.allow = allow
        self.deny = deny
    }

    // MARK: - Platforms

    /// The platform class a node's `client.platform` and `client.deviceFamily` resolve to.
    public enum Platform: String, Sendable, Hashable, CaseIterable {
        /// iPhone and iPad.
        case ios
        /// Apple Watch (direct mode).
        case watchos
        /// Android.
        case android
        /// macOS.
        case macos
        /// Windows.
        case windows
        /// Linux.
        case linux
        /// Anything else, or metadata that does not agree with itself (fail-safe defaults).
        case unknown
    }

    /// One classification rule: the platform id, the device-family tokens, the shape of a native
    /// platform label (`iOS 18.4`, `Android 15 (SDK 35)`), and whether an empty family is enough.
    private struct PlatformRule: Sendable {
        let platform: Platform
        let tokens: [String]
        let nativeLabel: (@Sendable (String) -> Bool)?
        let allowsEmptyFamily: Bool
    }

    private static let platformRules: [PlatformRule] = [
        PlatformRule(platform: .ios, tokens: ["iphone", "ipad", "ios"],
                     nativeLabel: { isVersionLabel($0, prefixes: ["ios ", "ipados "]) }, allowsEmptyFamily: true),
        PlatformRule(platform: .watchos, tokens: ["apple watch", "watchos"],
                     nativeLabel: { isVersionLabel($0, prefixes: ["watchos "]) }, allowsEmptyFamily: false),
        PlatformRule(platform: .android, tokens: ["android"], nativeLabel: isAndroidLabel, allowsEmptyFamily: true),
        PlatformRule(platform: .macos, tokens: ["mac"],
                     nativeLabel: { isVersionLabel($0, prefixes: ["macos "]) }, allowsEmptyFamily: false),
        PlatformRule(platform: .windows, tokens: ["windows"], nativeLabel: nil, allowsEmptyFamily: false),
        PlatformRule(platform: .linux, tokens: ["linux"], nativeLabel: nil, allowsEmptyFamily: false),
    ]

    /// Classifies a node: an exact platform id (`ios`, `macos`, …) needs a matching device
    /// family (or none, for iOS and Android); a native label (`iOS 18.4.0`) needs a matching
    /// family; without a platform the family alone decides. Compatibility forms and accents are
    /// folded first (NFKD, marks removed, lower case).
    public static func platform(platform: String?, deviceFamily: String?) -> Platform {
        let raw = normalizedMetadata(platform)
        let family = normalizedMetadata(deviceFamily)
        if !raw.isEmpty {
            if let rule = platformRules.first(where: { $0.platform.rawValue == raw }) {
                return rule.tokens.contains(family) || (family.isEmpty && rule.allowsEmptyFamily) ? rule.platform : .unknown
            }
            return platformRules.first(where: { rule in
                (rule.nativeLabel?(raw) ?? false) && rule.tokens.contains(family)
            })?.platform ?? .unknown
        }
        return platformRules.first(where: { rule in rule.tokens.contains(where: { family.contains($0) }) })?.platform ?? .unknown
    }

    static func normalizedMetadata(_ value: String?) -> String {
        guard let trimmed = value?.trimmingWhitespacesAndNewlines(), !trimmed.isEmpty else { return "" }
        // ASCII is its own NFKD form and holds no marks: only the case changes.
        if trimmed.utf8.allSatisfy({ $0 < 0x80 }) { return trimmed.lowercased() }
        let folded = trimmed.decomposedStringWithCompatibilityMapping.unicodeScalars.filter { scalar in
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark: false
            default: true
            }
        }
        return String(String.UnicodeScalarView(folded)).lowercased()
    }

    /// `<prefix><digits>(.<digits>){0,2}`.
    static func isVersionLabel(_ label: String, prefixes: [String]) -> Bool {
        guard let prefix = prefixes.first(where: { label.hasPrefix($0) }) else { return false }
        let parts = label.dropFirst(prefix.count).split(separator: ".", omittingEmptySubsequences: false)
        return (1...3).contains(parts.count) && parts.allSatisfy(isDigits)
    }

    /// `android <digits>` with an optional ` (sdk <digits>)`.
    static func isAndroidLabel(_ label: String) -> Bool {
        guard label.hasPrefix("android ") else { return false }
        let rest = label.dropFirst("android ".count)
        guard let space = rest.firstIndex(of: " ") else { return isDigits(rest) }
        let sdk = rest[rest.index(after: space)...]
        guard isDigits(rest[..<space]), sdk.hasPrefix("(sdk "), sdk.hasSuffix(")") else { return false }
        return isDigits(sdk.dropFirst("(sdk ".count).dropLast())
    }

    private static func isDigits(_ text: Substring) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isASCII && $0.isNumber }
    }

    // MARK: - Command tables

    private typealias C = NodeCommandName

    private static func names(_ commands: [NodeCommandName]) -> [String] { commands.map(\.rawValue) }

    /// The commands of `system.run` (`system.run.prepare`, `system.run`, `system.which`).
    public static let systemRunCommands = names([C.systemRunPrepare, .systemRun, .systemWhich])
    /// `system.execApprovals.get/set`: never invocable through `node.invoke`.
    public static let execApprovalsCommands = names([C.systemExecApprovalsGet, .systemExecApprovalsSet])
    /// The file commands of a desktop node host.
    public static let fileCommands = names([C.fsListDir, .terminalUpload])
    /// The browser proxy commands.
    public static let browserProxyCommands = names([C.browserProxy, .browserProxyUploadV1])
    /// Commands only an operator with `operator.admin` may invoke directly.
    public static let adminOnlyCommands: Set<String> = Set(browserProxyCommands + fileCommands)
    /// Private worker controls: never part of an invocable surface.
    public static let privateWorkerCommands: Set<String> = Set(names(NodeCommandName.privateWorkerControls))
    /// Talk push-to-talk commands, allowed for a node that advertises the `talk` capability or
    /// declares any `talk.*` command.
    public static let talkPushToTalkCommands = names([C.talkPttStart, .talkPttStop, .talkPttCancel, .talkPttOnce])
    /// The Watch relay commands an iPhone node owns.
    public static let watchRelayCommands = names([C.watchStatus, .watchNotify])
    /// The Canvas plugin's node commands; its defaults apply to macOS nodes only.
    public static let canvasCommands = names([C.canvasPresent, .canvasHide, .canvasNavigate])
    /// Dangerous (privacy-heavy) commands: declarable, but invocable only when `allow` names them.
    public static let dangerousCommands = names([
        C.cameraSnap, .cameraClip, .cameraPtzControl, .screenRecord, .contactsAdd, .calendarAdd, .remindersAdd,
        .smsSend, .smsSearch, .healthSummary,
    ])
    /// ``dangerousCommands`` as a set, built once (every allowlist reads it).
    private static let dangerousSet = Set(dangerousCommands)

    private static let location = names([C.locationGet])
    private static let device = names([C.deviceInfo, .deviceStatus])
    private static let notify = names([C.systemNotify])
    private static let cameraList = names([C.cameraList])
    private static let desktopScreen = names([C.screenSnapshot, .desktopStream])
    private static let computer = names([C.computerAct])
    private static let personal = names([C.contactsSearch, .calendarEvents, .remindersList, .photosLatest,
                                         .motionActivity, .motionPedometer])
    private static let hostExtras = names([C.mcpToolsCallV1, .agentCliClaudeRunV1])
    private static let systemCommands = systemRunCommands + execApprovalsCommands + fileCommands + notify
        + browserProxyCommands + hostExtras
    /// The host commands of a desktop node: on its allowlist only once approved (at invoke
    /// time: part of its approved command surface).
    static let desktopHostCommands: Set<String> = Set(systemRunCommands + execApprovalsCommands + fileCommands
        + browserProxyCommands + hostExtras + desktopScreen)

    /// The built-in default allowlist of a platform (before Canvas, Talk, Watch relay, `allow`
    /// and `deny`).
    public static func platformDefaults(_ platform: Platform) -> [String] {
        switch platform {
        case .ios:
            cameraList + location + device + personal + notify
        case .watchos:
            device + notify
        case .android:
            cameraList + location + names([C.notificationsList, .notificationsActions]) + notify
                + device + names([C.devicePermissions, .deviceHealth, .deviceApps])
                + names([C.contactsSearch, .calendarEvents, .callLogSearch, .remindersList, .photosLatest,
                         .motionActivity, .motionPedometer, .mobileUiObserve, .mobileUiAct])
        case .macos:
            cameraList + names([C.cameraPtzStatus]) + location + device + names([C.deviceApps]) + personal
                + systemCommands + desktopScreen + computer
        case .linux:
            systemCommands + desktopScreen + computer
        case .windows:
            cameraList + location + device + systemCommands + desktopScreen + computer
        case .unknown:
            cameraList + location + notify
        }
    }

    // MARK: - The allowlist

    /// What the policy reads about a node session.
    public struct Node: Sendable, Hashable {
        /// The node id (its device id).
        public var nodeId: String
        /// `client.platform`.
        public var platform: String?
        /// `client.deviceFamily`.
        public var deviceFamily: String?
        /// `connect.caps`.
        public var caps: [String]
        /// The commands the node declared in `connect.commands`.
        public var declaredCommands: [String]
        /// The commands in effect (declared and approved); equal to ``declaredCommands`` when
        /// the whole declared surface is approved.
        public var effectiveCommands: [String]

        /// A node; `effectiveCommands` defaults to the declared ones.
        public init(nodeId: String, platform: String?, deviceFamily: String?, caps: [String], declaredCommands: [String],
                    effectiveCommands: [String]? = nil) {
            self.nodeId = nodeId
            self.platform = platform
            self.deviceFamily = deviceFamily
            self.caps = caps
            self.declaredCommands = declaredCommands
            self.effectiveCommands = effectiveCommands ?? declaredCommands
        }

        /// Advertises the `talk` capability or has a `talk.*` command in effect.
        var hasTalkSurface: Bool {
            caps.contains { $0.lowercased() == "talk" } || effectiveCommands.contains { $0.lowercased().hasPrefix("talk.") }
        }
    }

    /// The commands `node` may be asked to run at invoke time (its approved surface is its
    /// effective commands).
    public func allowlist(for node: Node) -> Set<String> {
        let platform = Self.platform(platform: node.platform, deviceFamily: node.deviceFamily)
        let desktop = platform == .macos || platform == .windows || platform == .linux
        let base = Self.platformDefaults(platform).filter { !desktop || !Self.desktopHostCommands.contains($0) }
        let watchRelay = platform == .ios && Self.normalizedMetadata(node.deviceFamily) == "iphone" ? Self.watchRelayCommands : []
        let talk = node.hasTalkSurface ? Self.talkPushToTalkCommands : []
        let canvas = platform == .macos ? Self.canvasCommands : []
        let approved = desktop ? node.effectiveCommands.filter { Self.desktopHostCommands.contains(trimmed($0)) } : []
        var result = Set((base + watchRelay + talk + canvas + approved).map(trimmed).filter { !$0.isEmpty && !Self.dangerousSet.contains($0) })
        for command in allow.map(trimmed) where !command.isEmpty { result.insert(command) }
        for command in deny.map(trimmed) where !command.isEmpty { result.remove(command) }
        result.subtract(Self.privateWorkerCommands)
        return result
    }

    // MARK: - Decisions

    /// Why a command is not allowed (`details.reason` of the refusal).
    public enum Reason: String, Sendable, Hashable, CaseIterable {
        /// An empty command.
        case commandRequired = "command required"
        /// Not on the node's allowlist (including a private worker control).
        case notAllowlisted = "command not allowlisted"
        /// On the allowlist but not among the node's commands.
        case notDeclared = "command not declared by node"
        /// The node has no commands at all.
        case noDeclaredCommands = "node did not declare commands"
    }

    /// `isNodeCommandAllowed`: `nil` when `command` may be sent to `node`.
    public func evaluate(command rawCommand: String, node: Node) -> Reason? {
        let command = trimmed(rawCommand)
        guard !command.isEmpty else { return .commandRequired }
        if Self.privateWorkerCommands.contains(command) || !allowlist(for: node).contains(command) { return .notAllowlisted }
        guard !node.effectiveCommands.isEmpty else { return .noDeclaredCommands }
        return node.effectiveCommands.contains(command) ? nil : .notDeclared
    }

    /// The refusal of `command` on `node` at dispatch: `INVALID_REQUEST` with the explanatory
    /// message and `details {reason, command}`, or `nil` when the command may be sent.
    public func refusal(command rawCommand: String, node: Node) -> ErrorShape? {
        let command = trimmed(rawCommand)
        guard let reason = evaluate(command: command, node: node) else { return nil }
        let details: JSONValue = ["reason": .string(reason.rawValue), "command": .string(command)]
        return ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: message(reason, command: command, node: node),
                          details: details)
    }

    /// The explanation upstream gives for `reason` (`buildNodeCommandRejectionHint`).
    func message(_ reason: Reason, command: String, node: Node) -> String {
        let target = "node command not allowed: \"\(command)\" on node \"\(node.nodeId)\" (platform: \(node.platform ?? "unknown"))"
        switch reason {
        case .notDeclared, .noDeclaredCommands:
            if node.declaredCommands.contains(command) {
                return "\(target) is pending approval; run `openclaw nodes pending`, then `openclaw nodes approve <requestId>`"
            }
            return "\(target) does not support this command; check that its plugin or device runtime is installed and enabled "
                + "on the device, then reconnect and approve the node's commands"
        case .commandRequired:
            return "\(target): command required"
        case .notAllowlisted:
            let explanation: String
            if command.hasPrefix("talk.") {
                explanation = "requires a trusted Talk-capable node"
            } else if deny.contains(where: { trimmed($0) == command }) {
                explanation = "is blocked by gateway.nodes.commands.deny"
            } else if Self.dangerousCommands.contains(command) {
                explanation = "requires explicit gateway.nodes.commands.allow opt-in"
            } else {
                explanation = "is not in the Gateway allowlist"
            }
            return "\(target) \(explanation); review gateway.nodes.commands.allow and gateway.nodes.commands.deny (deny overrides allow)"
        }
    }

    /// The checks `node.invoke` makes before it looks for the node (and before any wake):
    /// private worker controls and `system.execApprovals.*` are never invocable, and the
    /// admin-only host commands need `operator.admin` (``requiresAdmin(_:)``, checked by the
    /// caller, which knows the scopes).
    public static func preflight(command rawCommand: String) -> ErrorShape? {
        let command = rawCommand.trimmingWhitespacesAndNewlines()
        let details: JSONValue = ["command": .string(command)]
        if privateWorkerCommands.contains(command) {
            return ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "node.invoke does not allow private node controls",
                              details: details)
        }
        if execApprovalsCommands.contains(command) {
            return ErrorShape(code: ErrorCode.invalidRequest.rawValue,
                              message: "node.invoke does not allow system.execApprovals.*; use exec.approvals.node.*",
                              details: details)
        }
        return nil
    }

    /// Whether `command` needs `operator.admin` when invoked directly.
    public static func requiresAdmin(_ command: String) -> Bool {
        adminOnlyCommands.contains(command)
    }
}

private func trimmed(_ text: String) -> String {
    text.trimmingWhitespacesAndNewlines()
}
