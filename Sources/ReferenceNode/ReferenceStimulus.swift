import Foundation
import GatewayProtocol

/// Something the harness asks the reference client to do, with the wire names of the adapter
/// protocol (`docs/adapter-protocol.md`).
public enum ReferenceStimulus: Sendable, Hashable {
    /// Connect now (also resumes a paused or waiting session).
    case connect
    /// Close both sessions and stay disconnected until `connect`.
    case disconnect
    /// Stop and start again with the same state directory (an app relaunch).
    case restart
    /// Wipe the identity and every token (a reinstall), then start again.
    case resetIdentity
    /// A background wake for `trigger`: reconnect if needed and send the presence beacon.
    /// `push` is the APNs payload when a silent push from the Gateway caused the wake.
    case backgroundWake(trigger: String, push: JSONValue? = nil)
    /// Move to the background.
    case enterBackground
    /// Move to the foreground.
    case enterForeground
    /// Ask for additional operator scopes (reconnects the operator session).
    case requestScopes([String])
    /// Register for push (`relay` or `direct`).
    case pushRegister(transport: String, environment: String?)
    /// Switch to another Gateway.
    case switchGateway(url: String, token: String?)
    /// Resolve approval `id` with `decision`.
    case resolveApproval(id: String, decision: String)
    /// Answer question `id`.
    case answerQuestion(id: String, answer: JSONValue)
    /// Pair with a setup code (base64url JSON `{url, bootstrapToken}`).
    case setupCode(String)
    /// Pair as an Apple Watch in direct mode with a `node` setup code (Watch mode only).
    case watchPair(String)
    /// The user writes `text` in the chat view (queued in the outbox, sent when online).
    case sendMessage(text: String, sessionKey: String?)
    /// The network goes away: both sessions close and stay closed until `go-online`.
    case goOffline
    /// The network is back: reconnect, reconcile with history and flush the outbox.
    case goOnline
    /// The app is killed and launched again from its state directory (offline: without network).
    case coldStart(offline: Bool)
    /// Report whether the chat view shows exactly these transcript texts, in order.
    case expectTranscript(texts: [String], sessionKey: String?)
    /// Report whether the chat view shows exactly these outbox bubbles, in order.
    case expectOutbox(texts: [String])
    /// Open the workspace folder `path` (`""`: the root) of agent `agentId` (the default agent
    /// when `nil`) in the Files view, with every page of it.
    case browseWorkspace(path: String, agentId: String?)
    /// Open the workspace file `path` of agent `agentId` in the Files preview.
    case openWorkspaceFile(path: String, agentId: String?)
    /// The user replaces the voice wake trigger words in the settings (`voicewake.set`).
    case setVoiceWakeTriggers([String])
    /// Report whether the voice wake settings show exactly these trigger words, in order.
    case expectVoiceWakeTriggers([String])
    /// As an operator, run `command` on node `nodeId` once (`node.invoke`).
    case invokeNode(nodeId: String, command: String, params: JSONValue?, timeoutMs: Int?)
    /// Report whether the session list shows exactly these session keys (in any order).
    case expectSessions([String])

    /// Every wire name, in documentation order.
    public static let allNames = [
        "connect", "disconnect", "restart", "reset-identity", "background-wake", "enter-background", "enter-foreground",
        "request-scopes", "push-register", "switch-gateway", "resolve-approval", "answer-question", "setup-code",
    ] + chatNames + appNames + operatorToolNames

    /// The stimuli of the Apple Watch direct mode (``ReferenceTransport/watchDirect``): the only
    /// ones it acts on, and the ones the WebSocket client does not announce.
    public static let watchNames = ["watch-pair"]

    /// The stimuli of the chat view (outbox and transcript cache).
    public static let chatNames = ["send-message", "go-offline", "go-online", "cold-start", "expect-transcript", "expect-outbox"]

    /// The stimuli of the apps' Files view and voice wake settings.
    public static let appNames = ["browse-workspace", "open-workspace-file", "set-voice-wake-triggers", "expect-voice-wake-triggers",
                                  "expect-sessions"]

    /// The stimuli of an operator that drives other nodes (`node.invoke`).
    public static let operatorToolNames = ["invoke-node"]

    /// The stimuli that need the operator session.
    static let operatorNames: Set<String> = Set([
        "request-scopes", "resolve-approval", "answer-question", "send-message", "expect-transcript", "expect-outbox",
    ] + appNames + operatorToolNames)

    /// The wire name.
    public var name: String {
        switch self {
        case .connect: "connect"
        case .disconnect: "disconnect"
        case .restart: "restart"
        case .resetIdentity: "reset-identity"
        case .backgroundWake: "background-wake"
        case .enterBackground: "enter-background"
        case .enterForeground: "enter-foreground"
        case .requestScopes: "request-scopes"
        case .pushRegister: "push-register"
        case .switchGateway: "switch-gateway"
        case .resolveApproval: "resolve-approval"
        case .answerQuestion: "answer-question"
        case .setupCode: "setup-code"
        case .watchPair: "watch-pair"
        case .sendMessage: "send-message"
        case .goOffline: "go-offline"
        case .goOnline: "go-online"
        case .coldStart: "cold-start"
        case .expectTranscript: "expect-transcript"
        case .expectOutbox: "expect-outbox"
        case .browseWorkspace: "browse-workspace"
        case .openWorkspaceFile: "open-workspace-file"
        case .setVoiceWakeTriggers: "set-voice-wake-triggers"
        case .expectVoiceWakeTriggers: "expect-voice-wake-triggers"
        case .invokeNode: "invoke-node"
        case .expectSessions: "expect-sessions"
        }
    }

    /// Reads a stimulus from its wire name and `params` object.
    /// - Throws: `StimulusParseError` for an unknown name or missing parameters.
    public init(name: String, params: [String: JSONValue] = [:]) throws {
        func string(_ key: String) throws -> String {
            guard let value = params[key]?.stringValue, !value.isEmpty else {
                throw StimulusParseError("\(name) needs a string \"\(key)\"")
            }
            return value
        }
        switch name {
        case "connect": self = .connect
        case "disconnect": self = .disconnect
        case "restart": self = .restart
        case "reset-identity": self = .resetIdentity
        case "background-wake":
            let push = params["push"].flatMap { $0.objectValue == nil ? nil : $0 }
            self = .backgroundWake(trigger: params["trigger"]?.stringValue ?? "background", push: push)
        case "enter-background": self = .enterBackground
        case "enter-foreground": self = .enterForeground
        case "request-scopes":
            let scopes = params["scopes"]?.arrayValue?.compactMap(\.stringValue) ?? []
            guard !scopes.isEmpty else { throw StimulusParseError("request-scopes needs a non-empty \"scopes\" array") }
            self = .requestScopes(scopes)
        case "push-register":
            self = .pushRegister(transport: params["transport"]?.stringValue ?? "relay", environment: params["environment"]?.stringValue)
        case "switch-gateway": self = .switchGateway(url: try string("url"), token: params["token"]?.stringValue)
        case "resolve-approval": self = .resolveApproval(id: try string("id"), decision: try string("decision"))
        case "answer-question":
            guard let answer = params["answer"] else { throw StimulusParseError("answer-question needs \"answer\"") }
            self = .answerQuestion(id: try string("id"), answer: answer)
        case "setup-code": self = .setupCode(try string("code"))
        case "watch-pair": self = .watchPair(try string("code"))
        case "send-message":
            guard let text = params["text"]?.stringValue else { throw StimulusParseError("send-message needs a string \"text\"") }
            self = .sendMessage(text: text, sessionKey: params["sessionKey"]?.stringValue)
        case "go-offline": self = .goOffline
        case "go-online": self = .goOnline
        case "cold-start": self = .coldStart(offline: params["offline"]?.boolValue ?? false)
        case "expect-transcript", "expect-outbox":
            guard let items = params["texts"]?.arrayValue else { throw StimulusParseError("\(name) needs a \"texts\" array") }
            let texts = items.compactMap(\.stringValue)
            guard texts.count == items.count else { throw StimulusParseError("\(name): \"texts\" must hold strings only") }
            self = name == "expect-outbox" ? .expectOutbox(texts: texts) : .expectTranscript(texts: texts, sessionKey: params["sessionKey"]?.stringValue)
        case "browse-workspace":
            self = .browseWorkspace(path: params["path"]?.stringValue ?? "", agentId: params["agentId"]?.stringValue)
        case "open-workspace-file": self = .openWorkspaceFile(path: try string("path"), agentId: params["agentId"]?.stringValue)
        case "set-voice-wake-triggers", "expect-voice-wake-triggers":
            guard let items = params["triggers"]?.arrayValue else { throw StimulusParseError("\(name) needs a \"triggers\" array") }
            let triggers = items.compactMap(\.stringValue)
            guard triggers.count == items.count else { throw StimulusParseError("\(name): \"triggers\" must hold strings only") }
            self = name == "set-voice-wake-triggers" ? .setVoiceWakeTriggers(triggers) : .expectVoiceWakeTriggers(triggers)
        case "invoke-node":
            let timeoutMs = params["timeoutMs"]?.int64Value.map { Int(clamping: $0) }
            self = .invokeNode(nodeId: try string("nodeId"), command: try string("command"), params: params["params"], timeoutMs: timeoutMs)
        case "expect-sessions":
            guard let items = params["keys"]?.arrayValue else { throw StimulusParseError("\(name) needs a \"keys\" array") }
            let keys = items.compactMap(\.stringValue)
            guard keys.count == items.count else { throw StimulusParseError("\(name): \"keys\" must hold strings only") }
            self = .expectSessions(keys)
        default: throw StimulusParseError("unknown stimulus \"\(name)\"")
        }
    }
}

/// A stimulus that could not be read.
public struct StimulusParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public var description: String
    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

/// How the reference client answered a stimulus.
public enum StimulusOutcome: Sendable, Hashable {
    /// Done.
    case ok
    /// Tried and refused or failed (which may be the correct behaviour, e.g. refusing to answer
    /// an expired question).
    case error(String)
    /// This client cannot act on the stimulus.
    case unsupported(String)

    /// `true` for `.ok`.
    public var isOK: Bool { self == .ok }
}

/// A decoded setup code (docs/protocol.md §5.13): base64url of `{url, urls?, bootstrapToken}`,
/// optionally as an `oc-pair://` link.
public struct SetupCodePayload: Sendable, Hashable {
    /// The Gateway URL.
    public var url: String?
    /// The single-use bootstrap token.
    public var bootstrapToken: String

    /// Decodes `code`.
    /// - Throws: `StimulusParseError` when it is not base64url JSON with a `bootstrapToken`.
    public init(decoding code: String) throws {
        var text = code.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("oc-pair://") { text.removeFirst("oc-pair://".count) }
        guard let data = Base64URL.decode(text), let json = try? JSONValue(parsing: data),
              let token = json["bootstrapToken"]?.stringValue, !token.isEmpty else {
            throw StimulusParseError("not a setup code")
        }
        bootstrapToken = token
        url = json["url"]?.stringValue ?? json["urls"]?.arrayValue?.first?.stringValue
    }

    /// Encodes a setup code (for tests and tools).
    public static func encode(url: String, bootstrapToken: String) -> String {
        let json: JSONValue = ["url": .string(url), "bootstrapToken": .string(bootstrapToken)]
        return Base64URL.encode(json.encoded())
    }
}
