import Foundation
import GatewayProtocol

/// The operator console of `harness serve`: takes one line, carries it out on a Gateway as an
/// all-powerful operator surface of its own (what it resolves counts as "another surface",
/// named `console`), and returns the reply as a typed value.
///
/// ```swift
/// let console = GatewayConsole(gateway: gateway)
/// let reply = await console.handle("approve latest")
/// print(reply?.rendered(.json) ?? "")
/// ```
///
/// `latest` is resolved from the Gateway's own event log when the command runs: the newest
/// still-pending pairing request, the most recently connected node that is still connected, the
/// most recently created approval or question.
public struct GatewayConsole: Sendable {
    /// The surface name the console resolves approvals and questions as.
    public static let surface = "console"

    /// The Gateway it drives.
    public let gateway: Gateway
    /// How long `invoke` waits for the node's answer, in real time.
    public var invokeWait: Duration
    /// The `timeoutMs` sent with `invoke` (the Gateway gives up after it on its clock).
    public var invokeTimeoutMs: Int
    /// Draws a setup code's QR code (and writes the PNG file when a path is given), or returns
    /// `nil` to issue the code without one; `nil` means no QR codes (`harness serve` installs one
    /// backed by libqrencode).
    public var qrRenderer: (@Sendable (_ text: String, _ pngFile: String?) throws -> SetupCodeQR?)?

    /// Creates a console for `gateway`.
    public init(gateway: Gateway, invokeWait: Duration = .seconds(30), invokeTimeoutMs: Int = 30_000,
                qrRenderer: (@Sendable (_ text: String, _ pngFile: String?) throws -> SetupCodeQR?)? = nil) {
        self.gateway = gateway
        self.invokeWait = invokeWait
        self.invokeTimeoutMs = invokeTimeoutMs
        self.qrRenderer = qrRenderer
    }

    /// Parses and runs one line.
    /// - Returns: the reply, or `nil` for a blank line or a `#` comment.
    public func handle(_ line: String) async -> ConsoleReply? {
        // The reply names the command as typed (`shutdown` stays `shutdown`, `exit` stays `exit`).
        let typed = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) ?? ""
        let command: ConsoleCommand
        do {
            guard let parsed = try ConsoleCommand.parse(line) else { return nil }
            command = parsed
        } catch {
            return ConsoleReply(command: typed, outcome: .failure(error))
        }
        return ConsoleReply(command: typed, outcome: await run(command))
    }

    /// Runs a parsed command with its spec's handler.
    public func run(_ command: ConsoleCommand) async -> Result<ConsoleResult, ConsoleError> {
        guard let spec = ConsoleCommandSpec.named(command.name) else {
            return .failure(ConsoleError("unknown command '\(command.name)' (type 'help' for the list)"))
        }
        do {
            return .success(try await spec.handler(command, self))
        } catch let error as ConsoleError {
            return .failure(error)
        } catch let error as GatewayError {
            return .failure(ConsoleError(error.description))
        } catch {
            return .failure(ConsoleError("\(command.name): \(error)"))
        }
    }

    /// `setup-code`: issues a code for `profile` (`nil`: `full`) and draws its QR code.
    func issueSetupCode(profile requested: String?, pngFile: String?) async throws(ConsoleError) -> ConsoleResult {
        let url = gateway.advertisedURL
        if SetupURLExposure(url: url) == .publicPlaintext {
            // As `openclaw qr`: no code at all for plain ws:// off the private networks.
            throw ConsoleError("""
                setup-code: \(url) is plain ws:// to an address that is neither loopback nor on a private network; \
                the real Gateway issues no setup code for it, since anyone on the way could read the bootstrap token. \
                Serve with --tls, or give --url with a LAN address (10.x, 172.16-31.x, 192.168.x or a .local name)
                """)
        }
        if pngFile != nil, qrRenderer == nil { throw ConsoleError("setup-code: this console cannot draw QR codes") }
        // No profile: `full`. On plain ws:// to a LAN address `full` (asked for or not) becomes
        // `limited`, and the reply says so (`accessDowngraded`), as `device.pair.setupCode` does.
        let name = requested ?? "full"
        let issued = await gateway.issueSetupCode(profile: BootstrapProfile.named(name))
        var qr: SetupCodeQR?
        if let qrRenderer {
            do {
                qr = try qrRenderer(issued.code.encoded, pngFile)
            } catch {
                throw ConsoleError("setup-code: the code was issued, but its QR code failed: \(error)")
            }
        }
        return .setupCode(issued, profile: issued.accessDowngraded ? "limited" : name, qr: qr)
    }

    // MARK: - latest

    /// `text` resolved among `candidates`: an exact id, or the one candidate it is a prefix of
    /// (the console prints long ids cut short with `…`, which is ignored). Unknown text is
    /// returned as typed, for the Gateway's own error.
    static func resolvePrefix(_ text: String, among candidates: [String], kind: String) throws(ConsoleError) -> String {
        var prefix = text
        while prefix.hasSuffix("…") { prefix.removeLast() }
        if candidates.contains(prefix) { return prefix }
        let matches = Set(candidates.filter { !prefix.isEmpty && $0.hasPrefix(prefix) }).sorted()
        if matches.count == 1 { return matches[0] }
        if matches.count > 1 {
            throw ConsoleError("'\(text)' matches \(matches.count) \(kind)s (\(matches.map(ConsoleText.short).joined(separator: ", "))); type more of it")
        }
        return prefix
    }

    /// The node pairing request `reference` names, `nil` when it names a device pairing request
    /// (or nothing pending): an id prefix of exactly one node request and of no device request; or,
    /// with no device request pending, `latest` (the newest node request) or nothing (the only one).
    func nodeSurfaceRequestId(_ reference: ConsoleReference?) async -> String? {
        let nodeRequests = await gateway.pendingNodeSurfaceRequests().map(\.requestId)
        guard !nodeRequests.isEmpty else { return nil }
        let deviceRequests = await gateway.pendingPairingRequests().map(\.requestId)
        switch reference {
        case .id(let id):
            let prefix = id.trimmingCharacters(in: CharacterSet(charactersIn: "…"))
            guard !prefix.isEmpty, !deviceRequests.contains(where: { $0.hasPrefix(prefix) }) else { return nil }
            let matches = nodeRequests.filter { $0.hasPrefix(prefix) }
            return matches.count == 1 ? matches[0] : nil
        case .latest:
            return deviceRequests.isEmpty ? nodeRequests.first : nil
        case nil:
            return deviceRequests.isEmpty && nodeRequests.count == 1 ? nodeRequests[0] : nil
        }
    }

    /// The request id: `latest` is the newest request still pending, nothing is the only one.
    func pairingRequestId(_ reference: ConsoleReference?, command: String = "approve") async throws(ConsoleError) -> String {
        let pending = await gateway.pendingPairingRequests()
        guard let reference else {
            switch pending.count {
            case 0: throw ConsoleError("no pending pairing request")
            case 1: return pending[0].requestId
            default:
                throw ConsoleError("\(pending.count) pairing requests are pending: \(command) one by id (see pending), or \(command) latest")
            }
        }
        if case .id(let id) = reference { return try Self.resolvePrefix(id, among: pending.map(\.requestId), kind: "pending request") }
        guard !pending.isEmpty else { throw ConsoleError("no pending pairing request") }
        var created: [String: Int] = [:]
        for (position, event) in gateway.events.all.enumerated() {
            switch event {
            case .pairingRequested(let info): created[info.requestId] = position
            case .pairingSuperseded(_, let newRequestId, _): created[newRequestId] = max(created[newRequestId] ?? -1, position)
            default: break
            }
        }
        // Pending requests come oldest first; the log position breaks ties between equal timestamps.
        let newest = pending.enumerated().max { lhs, rhs in
            (created[lhs.element.requestId] ?? -1, lhs.offset) < (created[rhs.element.requestId] ?? -1, rhs.offset)
        }
        return newest?.element.requestId ?? pending[pending.count - 1].requestId
    }

    /// A paired device id: a prefix of one, or `latest` for the most recently approved device.
    func deviceId(_ text: String) async throws(ConsoleError) -> String {
        let devices = await gateway.pairedDevices()
        if text == "latest" {
            guard let newest = devices.first else { throw ConsoleError("no paired devices") }
            return newest.deviceId
        }
        return try Self.resolvePrefix(text, among: devices.map(\.deviceId), kind: "device")
    }

    /// The node id, resolving `latest` to the most recently connected node that is still connected.
    func nodeId(_ reference: ConsoleReference) async throws(ConsoleError) -> String {
        let connected = Set(await gateway.connectedNodes().map(\.nodeId))
        if case .id(let id) = reference { return try Self.resolvePrefix(id, among: connected.sorted(), kind: "node") }
        for event in gateway.events.all.reversed() {
            if case .nodeConnected(let nodeId, _) = event, connected.contains(nodeId) { return nodeId }
        }
        throw ConsoleError("no connected node")
    }

    /// The node id of `wake`: a prefix of a node with a push registration, or `latest` for the
    /// node whose kept registration is the newest. Unknown text is returned as typed (the wake
    /// then reports that it has no registration).
    func pushNodeId(_ reference: ConsoleReference) async throws(ConsoleError) -> String {
        let registered = await gateway.pushRegisteredNodeIds()
        if case .id(let id) = reference { return try Self.resolvePrefix(id, among: registered, kind: "registered node") }
        for event in gateway.events.all.reversed() {
            if case .pushRegistered(let nodeId, _, true, _) = event, registered.contains(nodeId) { return nodeId }
        }
        throw ConsoleError("wake: no node has a push registration (a node registers with node.event push.apns.register)")
    }

    /// The connection id, resolving `latest` to the most recently opened connection still open.
    func connectionId(_ reference: ConsoleReference, command: String) async throws(ConsoleError) -> String {
        let open = await gateway.openConnections().filter { !$0.closing }.map(\.connectionId)
        if case .id(let id) = reference {
            let resolved = try Self.resolvePrefix(id, among: open, kind: "connection")
            guard open.contains(resolved) else { throw ConsoleError("\(command): no open connection '\(id)' (see connections)") }
            return resolved
        }
        guard let newest = open.last else { throw ConsoleError("\(command): no open connection") }
        return newest
    }

    /// Answers by question id: a plain list goes to the question's first item.
    func questionAnswers(_ answers: ConsoleAnswers, question id: String, command: String) async throws(ConsoleError) -> [String: [String]] {
        switch answers {
        case .byQuestion(let values):
            return values
        case .firstQuestion(let values):
            guard let first = await gateway.question(id: id)?.questions.first?.questionId else {
                throw ConsoleError("\(command): question '\(id)' was not found")
            }
            return [first: values]
        }
    }

    /// The record id, resolving `latest` to the most recently created approval or question.
    func recordId(_ reference: ConsoleReference, kind: OperatorRecordKind) throws(ConsoleError) -> String {
        if case .id(let id) = reference { return id }
        for event in gateway.events.all.reversed() {
            if case .operatorRecord(let record) = event, record.kind == kind, record.action == .requested { return record.id }
        }
        throw ConsoleError("no \(kind) has been created yet")
    }
}
