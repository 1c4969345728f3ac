import GatewayProtocol

/// The name of something the harness asks the client under test to do, as written on the
/// adapter protocol (`background-wake`). Open for extension: unknown names travel unchanged.
public struct StimulusKind: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The wire name.
    public let rawValue: String

    /// Wraps a wire name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Wraps a wire name given as a literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// Connect to the Gateway now (for example after a pairing approval, when the client does
    /// not reconnect by itself).
    public static let connect: StimulusKind = "connect"
    /// Close the connection and stay disconnected until `connect`.
    public static let disconnect: StimulusKind = "disconnect"
    /// Stop and start the client, keeping its state directory (an app relaunch).
    public static let restart: StimulusKind = "restart"

    /// The stimuli the harness provides for every client, whatever it announces: it can always
    /// restart a client (stop it and start it again with the same state), so no scenario needs
    /// the client's support for them.
    public static let providedByHarness: Set<StimulusKind> = [.restart]
    /// Forget the device identity and stored tokens (a reinstall).
    public static let resetIdentity: StimulusKind = "reset-identity"
    /// Wake in the background for `trigger` (`silent_push`, `bg_app_refresh`, ...).
    public static let backgroundWake: StimulusKind = "background-wake"
    /// Move to the background.
    public static let enterBackground: StimulusKind = "enter-background"
    /// Move to the foreground.
    public static let enterForeground: StimulusKind = "enter-foreground"
    /// Ask the Gateway for more operator scopes (a new connect with a changed scope set).
    public static let requestScopes: StimulusKind = "request-scopes"
    /// Register for push notifications over `transport` (`relay` or `direct`).
    public static let pushRegister: StimulusKind = "push-register"
    /// Forget the current Gateway and connect to another one.
    public static let switchGateway: StimulusKind = "switch-gateway"
    /// Resolve an approval prompt with a decision (as a person tapping a button would).
    public static let resolveApproval: StimulusKind = "resolve-approval"
    /// Answer an agent question (as a person would).
    public static let answerQuestion: StimulusKind = "answer-question"
    /// Pair with a setup code.
    public static let setupCode: StimulusKind = "setup-code"
    /// Pair as an Apple Watch in direct mode with a `node` setup code: the client then talks to
    /// the Gateway only through its HTTP routes `/api/nodes/watch/*` (docs/protocol.md §13). A
    /// client announces it only if it is such a Watch client; the `WATCH-*` scenarios need it.
    public static let watchPair: StimulusKind = "watch-pair"
    /// Write a chat message as the user (queued in the outbox while offline).
    public static let sendMessage: StimulusKind = "send-message"
    /// Lose the network: close every session and stay offline until `go-online`.
    public static let goOffline: StimulusKind = "go-offline"
    /// Get the network back: reconnect, reconcile the chat with history, flush the outbox.
    public static let goOnline: StimulusKind = "go-online"
    /// Kill the app and launch it again from its state directory (optionally without network).
    public static let coldStart: StimulusKind = "cold-start"
    /// Answer `ok` only if the chat view shows exactly these transcript texts.
    public static let expectTranscript: StimulusKind = "expect-transcript"
    /// Answer `ok` only if the chat view shows exactly these queued or unconfirmed bubbles.
    public static let expectOutbox: StimulusKind = "expect-outbox"
    /// Open a folder of the agent workspace in the Files view (every page of it).
    public static let browseWorkspace: StimulusKind = "browse-workspace"
    /// Open a file of the agent workspace in the Files view's preview.
    public static let openWorkspaceFile: StimulusKind = "open-workspace-file"
    /// Edit the voice wake trigger words in the settings (saved to the Gateway).
    public static let setVoiceWakeTriggers: StimulusKind = "set-voice-wake-triggers"
    /// Answer `ok` only if the voice wake settings show exactly these trigger words.
    public static let expectVoiceWakeTriggers: StimulusKind = "expect-voice-wake-triggers"
    /// As an operator, run a command on a node (`node.invoke`), as a person running a node
    /// command from the client would; answer `ok` when the node answered, `error` otherwise.
    public static let invokeNode: StimulusKind = "invoke-node"
    /// Answer `ok` only if the session list shows exactly these session keys (in any order).
    public static let expectSessions: StimulusKind = "expect-sessions"

    /// The stimuli named by the adapter protocol for a client with WebSocket sessions, in
    /// documentation order: what a client that can do everything announces (an attached client
    /// driven by a person). ``watchPair`` is not among them: only an Apple Watch client in direct
    /// mode announces it, and it then has no WebSocket session.
    public static let documented: [StimulusKind] = [
        .connect, .disconnect, .restart, .resetIdentity, .backgroundWake, .enterBackground, .enterForeground,
        .requestScopes, .pushRegister, .switchGateway, .resolveApproval, .answerQuestion, .setupCode,
        .sendMessage, .goOffline, .goOnline, .coldStart, .expectTranscript, .expectOutbox,
        .browseWorkspace, .openWorkspaceFile, .setVoiceWakeTriggers, .expectVoiceWakeTriggers, .invokeNode,
        .expectSessions,
    ]

    /// Sorts by wire name.
    public static func < (lhs: StimulusKind, rhs: StimulusKind) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The wire name.
    public var description: String { rawValue }
}

/// One request to the client under test: a kind plus its parameters (`params` on the adapter
/// protocol).
public struct Stimulus: Sendable, Hashable, CustomStringConvertible {
    /// What to do.
    public var kind: StimulusKind
    /// The parameters, as sent in the adapter protocol's `params` object.
    public var params: [String: JSONValue]

    /// Creates a stimulus.
    public init(_ kind: StimulusKind, params: [String: JSONValue] = [:]) {
        self.kind = kind
        self.params = params
    }

    /// Connect now.
    public static let connect = Stimulus(.connect)
    /// Disconnect and stay disconnected.
    public static let disconnect = Stimulus(.disconnect)
    /// Relaunch, keeping state.
    public static let restart = Stimulus(.restart)
    /// Forget the identity and tokens (reinstall).
    public static let resetIdentity = Stimulus(.resetIdentity)
    /// Go to the background.
    public static let enterBackground = Stimulus(.enterBackground)
    /// Come to the foreground.
    public static let enterForeground = Stimulus(.enterForeground)

    /// Wake in the background.
    /// - Parameter trigger: the wake reason as the presence beacon names it (`background`,
    ///   `silent_push`, `bg_app_refresh`, `significant_location`, `manual`, `connect`).
    public static func backgroundWake(trigger: String) -> Stimulus {
        Stimulus(.backgroundWake, params: ["trigger": .string(trigger)])
    }

    /// Wake in the background because a silent push arrived: trigger `silent_push`, with the
    /// push's APNs payload as `push` (`{aps:{"content-available":1}, openclaw:{kind:"node.wake",
    /// nodeId, ts, reason}}`), as the app would receive it.
    public static func pushWake(payload: JSONValue) -> Stimulus {
        Stimulus(.backgroundWake, params: ["trigger": "silent_push", "push": payload])
    }

    /// Ask for operator scopes.
    public static func requestScopes(_ scopes: [String]) -> Stimulus {
        Stimulus(.requestScopes, params: ["scopes": .array(scopes.map(JSONValue.string))])
    }

    /// Register for push.
    /// - Parameters:
    ///   - transport: `relay` or `direct`.
    ///   - environment: `sandbox` or `production`, when it matters.
    public static func pushRegister(transport: String, environment: String? = nil) -> Stimulus {
        var params: [String: JSONValue] = ["transport": .string(transport)]
        if let environment { params["environment"] = .string(environment) }
        return Stimulus(.pushRegister, params: params)
    }

    /// Switch to another Gateway.
    public static func switchGateway(url: String, token: String? = nil) -> Stimulus {
        var params: [String: JSONValue] = ["url": .string(url)]
        if let token { params["token"] = .string(token) }
        return Stimulus(.switchGateway, params: params)
    }

    /// Resolve approval `id` with `decision` (one of its `allowedDecisions`).
    public static func resolveApproval(id: String, decision: String) -> Stimulus {
        Stimulus(.resolveApproval, params: ["id": .string(id), "decision": .string(decision)])
    }

    /// Answer question `id`. `answer` is the answer as the question's shape wants it (a string,
    /// an array of option ids, or an object with free text).
    public static func answerQuestion(id: String, answer: JSONValue) -> Stimulus {
        Stimulus(.answerQuestion, params: ["id": .string(id), "answer": answer])
    }

    /// Pair with `code`.
    public static func setupCode(_ code: String) -> Stimulus {
        Stimulus(.setupCode, params: ["code": .string(code)])
    }

    /// Pair as an Apple Watch in direct mode with the `node` setup code `code`.
    public static func watchPair(_ code: String) -> Stimulus {
        Stimulus(.watchPair, params: ["code": .string(code)])
    }

    /// Lose the network.
    public static let goOffline = Stimulus(.goOffline)
    /// Get the network back (reconnect, reconcile, flush).
    public static let goOnline = Stimulus(.goOnline)

    /// Write `text` in the chat view (session `sessionKey`, the client's default when `nil`).
    public static func sendMessage(_ text: String, sessionKey: String? = nil) -> Stimulus {
        var params: [String: JSONValue] = ["text": .string(text)]
        if let sessionKey { params["sessionKey"] = .string(sessionKey) }
        return Stimulus(.sendMessage, params: params)
    }

    /// Kill and relaunch the app; `offline`: it comes up without network.
    public static func coldStart(offline: Bool) -> Stimulus {
        Stimulus(.coldStart, params: ["offline": .bool(offline)])
    }

    /// Ask whether the chat view shows exactly `texts` as its transcript (oldest first).
    public static func expectTranscript(_ texts: [String], sessionKey: String? = nil) -> Stimulus {
        var params: [String: JSONValue] = ["texts": .array(texts.map(JSONValue.string))]
        if let sessionKey { params["sessionKey"] = .string(sessionKey) }
        return Stimulus(.expectTranscript, params: params)
    }

    /// Ask whether the chat view shows exactly `texts` as outbox bubbles (oldest first).
    public static func expectOutbox(_ texts: [String]) -> Stimulus {
        Stimulus(.expectOutbox, params: ["texts": .array(texts.map(JSONValue.string))])
    }

    /// Open the workspace folder `path` (the root when `nil`) of agent `agentId` (the client's
    /// default agent when `nil`) in the Files view, with every page of it.
    public static func browseWorkspace(path: String? = nil, agentId: String? = nil) -> Stimulus {
        var params: [String: JSONValue] = [:]
        if let path { params["path"] = .string(path) }
        if let agentId { params["agentId"] = .string(agentId) }
        return Stimulus(.browseWorkspace, params: params)
    }

    /// Open the workspace file `path` of agent `agentId` (the client's default agent when `nil`)
    /// in the preview.
    public static func openWorkspaceFile(_ path: String, agentId: String? = nil) -> Stimulus {
        var params: [String: JSONValue] = ["path": .string(path)]
        if let agentId { params["agentId"] = .string(agentId) }
        return Stimulus(.openWorkspaceFile, params: params)
    }

    /// The user replaces the voice wake trigger words with `triggers` in the settings.
    public static func setVoiceWakeTriggers(_ triggers: [String]) -> Stimulus {
        Stimulus(.setVoiceWakeTriggers, params: ["triggers": .array(triggers.map(JSONValue.string))])
    }

    /// Ask whether the voice wake settings show exactly `triggers`, in order.
    public static func expectVoiceWakeTriggers(_ triggers: [String]) -> Stimulus {
        Stimulus(.expectVoiceWakeTriggers, params: ["triggers": .array(triggers.map(JSONValue.string))])
    }

    /// As an operator, invoke `command` on node `nodeId` once (`node.invoke` with `params` when
    /// given and `timeoutMs`, docs/protocol.md §6.9).
    public static func invokeNode(nodeId: String, command: String, params: JSONValue? = nil, timeoutMs: Int? = nil) -> Stimulus {
        var values: [String: JSONValue] = ["nodeId": .string(nodeId), "command": .string(command)]
        if let params { values["params"] = params }
        if let timeoutMs { values["timeoutMs"] = .int(Int64(timeoutMs)) }
        return Stimulus(.invokeNode, params: values)
    }

    /// Ask whether the session list shows exactly the sessions `keys` (in any order).
    public static func expectSessions(_ keys: [String]) -> Stimulus {
        Stimulus(.expectSessions, params: ["keys": .array(keys.map(JSONValue.string))])
    }

    /// `kind` plus its parameters as compact JSON, for reports and transcripts.
    public var description: String {
        params.isEmpty ? kind.rawValue : "\(kind.rawValue) \(JSONValue.object(params).jsonString)"
    }
}

/// How a client answered a stimulus that it supports.
public enum StimulusReply: Sendable, Hashable {
    /// Done.
    case ok
    /// The client tried and reported an error (which may be the correct behaviour, for example
    /// refusing to answer an expired question).
    case error(String)

    /// `true` for `.ok`.
    public var isOK: Bool { self == .ok }
}
