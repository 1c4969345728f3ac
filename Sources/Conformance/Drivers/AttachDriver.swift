import Foundation
import Locking

/// The terminal a person answers attach-mode prompts on.
public protocol AttachConsole: Sendable {
    /// Shows `text` and waits for one line of input.
    /// - Returns: the line without its newline, or `nil` at end of input.
    func ask(_ text: String) async -> String?
}

/// Drives a client that a person runs (`--attach`): the client connects from outside to the
/// Gateway's address, and every stimulus becomes a prompt. Pressing Enter confirms; typing
/// `skip` makes it unsupported; typing `error` followed by text reports that the client failed.
public struct AttachDriver: ClientDriver {
    private let console: any AttachConsole

    /// Creates a driver that prompts on `console`.
    public init(console: any AttachConsole = TerminalAttachConsole.shared) {
        self.console = console
    }

    /// `attached client`.
    public var summary: String { "attached client" }

    /// A person follows one run at a time.
    public var maximumParallelRuns: Int? { 1 }

    /// A session that prompts on the console.
    public func makeSession(_ context: ClientSessionContext) async throws -> any ClientSession {
        AttachSession(console: console, runKey: context.runKey)
    }

    /// What the person is asked to do for `stimulus`.
    public static func instruction(for stimulus: Stimulus) -> String {
        let params = stimulus.params
        func value(_ key: String) -> String { params[key].map { $0.stringValue ?? $0.jsonString } ?? "?" }
        switch stimulus.kind {
        case .connect: return "Make the client connect now."
        case .disconnect: return "Disconnect the client and keep it disconnected."
        case .restart: return "Quit the client and start it again (keep its data)."
        case .resetIdentity: return "Reinstall the client: delete its identity and stored tokens."
        case .backgroundWake where params["push"] != nil:
            return "The Gateway sent the client a silent push (no real APNs is contacted, so it does not arrive by itself): "
                + "wake the client in the background as that push would (trigger: \(value("trigger")))."
        case .backgroundWake: return "Wake the client in the background (trigger: \(value("trigger")))."
        case .enterBackground: return "Put the client in the background."
        case .enterForeground: return "Bring the client to the foreground."
        case .requestScopes: return "Make the client ask for the operator scopes \(value("scopes"))."
        case .pushRegister: return "Make the client register for push (transport: \(value("transport")))."
        case .switchGateway: return "Point the client at the Gateway \(value("url"))\(params["token"] != nil ? " (token: \(value("token")))" : "")."
        case .resolveApproval: return "Resolve approval \(value("id")) with the decision \"\(value("decision"))\"."
        case .answerQuestion: return "Answer question \(value("id")) with \(value("answer"))."
        case .setupCode: return "Pair the client with the setup code \(value("code"))."
        case .browseWorkspace:
            return "Open the Files view at the workspace folder \"\(params["path"]?.stringValue ?? "")\" and load every page of it."
        case .openWorkspaceFile:
            return "Open the workspace file \"\(value("path"))\" in the Files preview; if it shows no content, type error and what it shows."
        case .setVoiceWakeTriggers: return "Set the voice wake trigger words to \(value("triggers")) in the settings."
        case .invokeNode:
            return "Run the node command \"\(value("command"))\" on node \(value("nodeId")) once from the client; "
                + "if it reports a failure, type error and what it shows."
        case .expectVoiceWakeTriggers:
            return "Check that the voice wake settings show exactly \(value("triggers")); if not, type error and what they show."
        case .expectSessions:
            return "Check that the session list shows exactly the sessions \(value("keys")); if not, type error and what it shows."
        default: return "Do \"\(stimulus.kind)\" with \(JSONValueDescription.of(params))."
        }
    }
}

private enum JSONValueDescription {
    static func of(_ params: [String: some Sendable]) -> String {
        params.isEmpty ? "no parameters" : params.keys.sorted().joined(separator: ", ")
    }
}

final class AttachSession: ClientSession {
    private let console: any AttachConsole
    private let runKey: String

    init(console: any AttachConsole, runKey: String) {
        self.console = console
        self.runKey = runKey
    }

    func start(_ configuration: NodeConfiguration) async throws -> Set<StimulusKind> {
        var text = "[\(runKey)] Connect the client to \(configuration.gatewayURL)"
        if let token = configuration.sharedToken { text += " with the token \(token)" }
        text += ". Press Enter when it is connecting (or type skip): "
        let answer = await console.ask(text)
        try Self.interpret(answer, for: "connect")
        return Set(StimulusKind.documented)
    }

    func apply(_ stimulus: Stimulus, timeout: Duration) async throws -> StimulusReply {
        let text = "[\(runKey)] \(AttachDriver.instruction(for: stimulus)) Press Enter when done, type skip if the client cannot, or error TEXT: "
        let answer = await console.ask(text)
        if let answer, answer.lowercased().hasPrefix("error") {
            let message = answer.dropFirst(5).trimmingCharacters(in: .whitespaces)
            return .error(message.isEmpty ? "reported by the operator" : message)
        }
        try Self.interpret(answer, for: stimulus.kind.rawValue)
        return .ok
    }

    func restart(timeout: Duration) async throws -> Set<StimulusKind> {
        _ = try await apply(.restart, timeout: timeout)
        return Set(StimulusKind.documented)
    }

    func stop() async {}

    func diagnostics() -> ClientDiagnostics { ClientDiagnostics() }

    private static func interpret(_ answer: String?, for what: String) throws {
        guard let answer else { throw HarnessError("end of input while waiting for the operator (\(what))") }
        if answer.trimmingCharacters(in: .whitespaces).lowercased() == "skip" {
            throw ScenarioUnsupported("the operator skipped \"\(what)\"")
        }
    }
}

/// Prompts on stderr and reads lines from stdin.
public final class TerminalAttachConsole: AttachConsole {
    private struct State {
        var lines: [String] = []
        var waiters: [CheckedContinuation<String?, Never>] = []
        var finished = false
        var readerStarted = false
    }

    /// The process's terminal.
    public static let shared = TerminalAttachConsole()

    // All state is behind the lock; continuations are resumed outside of it.
    private let state = Locked(State())

    private init() {}

    /// Prints `text` on stderr and returns the next line of stdin.
    public func ask(_ text: String) async -> String? {
        FileHandle.standardError.write(Data(text.utf8))
        startReaderOnce()
        return await withCheckedContinuation { continuation in
            let ready: String?? = state.withLock { state in
                if !state.lines.isEmpty { return .some(state.lines.removeFirst()) }
                if state.finished { return .some(nil) }
                state.waiters.append(continuation)
                return .none
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func startReaderOnce() {
        let start = state.withLock { state in
            defer { state.readerStarted = true }
            return !state.readerStarted
        }
        guard start else { return }
        // stdin is read only once somebody asks, so non-attach runs never touch it.
        let reader = Thread { [self] in
            while let line = readLine(strippingNewline: true) { deliver(line) }
            finish()
        }
        reader.name = "openclaw-attach-stdin"
        reader.start()
    }

    private func deliver(_ line: String) {
        let waiter = state.withLock { state -> CheckedContinuation<String?, Never>? in
            if state.waiters.isEmpty {
                state.lines.append(line)
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.resume(returning: line)
    }

    private func finish() {
        let waiters = state.withLock { state -> [CheckedContinuation<String?, Never>] in
            state.finished = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }
}
