import ArgumentParsing
import Foundation
import GatewayProtocol

// The console's commands, one spec each (see `ConsoleCommandSpec`). The order of the lists is
// the order of `help` and of the command table in docs/harness-serve.md.

extension ConsoleCommandSpec {
    /// Listings, pairing, node commands, setup codes, the clock and restarts.
    static let pairingCommands: [ConsoleCommandSpec] = [
        ConsoleCommandSpec("status", summary: "one line: devices, nodes, pending requests, connections, armed faults",
                           example: "status") { _, console in
            let gateway = console.gateway
            return .status(ConsoleStatus(
                url: gateway.url, devices: await gateway.pairedDevices().count, nodes: await gateway.connectedNodes().count,
                pending: await gateway.pendingPairingRequests().count, connections: await gateway.openConnections().count,
                faults: await gateway.faultStatus()))
        },
        ConsoleCommandSpec("pending", summary: "list the pending pairing requests, one line each", example: "pending") { _, console in
            .pending(await console.gateway.pendingPairingRequests())
        },
        ConsoleCommandSpec("devices", summary: "list the paired devices, one line each", example: "devices") { _, console in
            let connected = Set(await console.gateway.connectedNodes().map(\.nodeId))
            return .devices(await console.gateway.pairedDevices(), connectedNodeIds: connected)
        },
        ConsoleCommandSpec("nodes", summary: "list the connected nodes, one line each", example: "nodes") { _, console in
            .nodes(await console.gateway.connectedNodes())
        },
        ConsoleCommandSpec("connections", summary: "list the open connections, one line each", example: "connections") { _, console in
            .connections(await console.gateway.openConnections())
        },
        ConsoleCommandSpec(
            "approve", arguments: [PositionalSpec("requestId|latest", ConsoleReference.self, help: "the request", optional: true)],
            summary: "approve a pairing request (latest: the newest pending one; nothing: the only one)", example: "approve"
        ) { command, console in
            let requestId = try await console.pairingRequestId(command.argument(0, as: ConsoleReference.self), command: "approve")
            return .approved(requestId: requestId, device: try await console.gateway.approve(requestId: requestId))
        },
        ConsoleCommandSpec(
            "reject", arguments: [PositionalSpec("requestId|latest", ConsoleReference.self, help: "the request", optional: true)],
            summary: "reject a pairing request", example: "reject latest"
        ) { command, console in
            let requestId = try await console.pairingRequestId(command.argument(0, as: ConsoleReference.self), command: "reject")
            let deviceId = await console.gateway.pendingPairingRequests().first { $0.requestId == requestId }?.deviceId
            try await console.gateway.reject(requestId: requestId)
            return .rejected(requestId: requestId, deviceId: deviceId)
        },
        ConsoleCommandSpec(
            "remove", arguments: [PositionalSpec("deviceId|latest", help: "the device")],
            summary: "remove a paired device and close its sessions", example: "remove 56475aa75463"
        ) { command, console in
            let deviceId = try await console.deviceId(command.text(0))
            try await console.gateway.removeDevice(deviceId)
            return .removed(deviceId: deviceId)
        },
        ConsoleCommandSpec(
            "revoke", arguments: [PositionalSpec("deviceId|latest", help: "the device"), PositionalSpec("role", help: "the role")],
            summary: "revoke a device's token for a role", example: "revoke 56475aa75463 node"
        ) { command, console in
            let deviceId = try await console.deviceId(command.text(0))
            let role = try command.text(1)
            try await console.gateway.revokeToken(deviceId: deviceId, role: role)
            return .revoked(deviceId: deviceId, role: role)
        },
        ConsoleCommandSpec(
            "invoke",
            arguments: [PositionalSpec("nodeId|latest", ConsoleReference.self, help: "the node"),
                        PositionalSpec("command", help: "the node command"),
                        PositionalSpec("paramsJSON", JSONArgument.self, help: "the params", optional: true)],
            restOfLine: true,
            summary: "invoke a node command and wait for its result (latest: the most recently connected node)",
            example: #"invoke latest location.get {"desiredAccuracy":"balanced"}"#
        ) { command, console in
            let nodeId = try await console.nodeId(command.required(0, as: ConsoleReference.self))
            let name = try command.text(1)
            let params = command.argument(2, as: JSONArgument.self)?.value
            switch await console.gateway.invokeAndWait(nodeId: nodeId, command: name, params: params,
                                                       timeoutMs: console.invokeTimeoutMs, wait: console.invokeWait) {
            case .result(let result):
                return .invoked(nodeId: nodeId, command: name, result: result)
            case .timedOut:
                throw ConsoleError("invoke: \(name) on \(nodeId) timed out without a result")
            case .nodeDisconnected:
                throw ConsoleError("invoke: node \(nodeId) is not connected (or disconnected before answering)")
            }
        },
        ConsoleCommandSpec(
            "setup-code",
            options: [.option("--profile", ProfileName.self, help: "the hand-off profile (default full)"),
                      .option("--qr-png", "FILE", help: "also write the QR code as a PNG file"),
                      .flag("--full-access", help: "the older spelling of --profile full")],
            summary: "issue a setup code (single-use bootstrap token, 10 minutes; default profile full, lowered to limited on plain ws:// to a LAN), shown as a QR code",
            example: "setup-code --profile limited", hiddenOptions: ["--full-access"],
            check: { command throws(ConsoleError) in
                if command.isSet("--full-access"), let profile = command.option("--profile", as: ProfileName.self)?.name,
                   profile != "full" {
                    throw ConsoleError("setup-code: --full-access is --profile full; it cannot go with --profile \(profile)")
                }
            }
        ) { command, console in
            try await console.issueSetupCode(profile: command.option("--profile", as: ProfileName.self)?.name,
                                             pngFile: command.arguments.value("--qr-png"))
        },
        ConsoleCommandSpec(
            "advance", arguments: [PositionalSpec("seconds", ClockStep.self, help: "how far")],
            summary: "move the Gateway clock forward and run what became due", example: "advance 901"
        ) { command, console in
            let seconds = try command.required(0, as: ClockStep.self).seconds
            await console.gateway.advance(by: .milliseconds(Int64((seconds * 1000).rounded())))
            return .advanced(seconds: seconds, nowMs: console.gateway.clock.nowMs)
        },
        ConsoleCommandSpec(
            "restart", aliases: ["shutdown"],
            options: [.flag("--stay-down", help: "stay down until resume"),
                      .option("--expected-ms", Milliseconds.self, help: "restartExpectedMs of the shutdown event (default 1000)")],
            summary: "restart: send shutdown, close every connection with 1012, accept again (also: shutdown); --stay-down: stay down until resume",
            example: "restart --stay-down --expected-ms 5000",
            check: { command throws(ConsoleError) in
                if command.isSet("--expected-ms"), !command.isSet("--stay-down") {
                    throw ConsoleError("restart: --expected-ms goes with --stay-down (a restart without --stay-down comes straight back)")
                }
            }
        ) { command, console in
            guard command.isSet("--stay-down") else {
                await console.gateway.restart()
                return .restarted
            }
            let expectedMs = command.option("--expected-ms", as: Milliseconds.self)?.value ?? 1000
            await console.gateway.beginRestart(restartExpectedMs: expectedMs)
            return .faultArmed("down after a restart (shutdown with restartExpectedMs \(expectedMs), 1012); new connections are dropped until resume")
        },
        ConsoleCommandSpec("resume", summary: "accept connections again after restart --stay-down", example: "resume") { _, console in
            await console.gateway.resumeAfterRestart()
            return .faultArmed("accepting connections again")
        },
    ]

    /// Exec approvals and questions, answered by the console as a surface of its own.
    static let operatorCommands: [ConsoleCommandSpec] = [
        ConsoleCommandSpec(
            "approval", arguments: [PositionalSpec("command text", help: "the command to approve", variadic: true)],
            options: [.option("--decisions", DecisionList.self, help: "the decisions offered"),
                      .option("--expires-in", ConsoleSeconds.self, help: "the lifetime")],
            summary: "create an exec approval", example: #"approval "rm -rf /tmp/x" --expires-in 60"#
        ) { command, console in
            .approvalCreated(try await console.gateway.createApproval(
                command: command.words(from: 0),
                allowedDecisions: command.option("--decisions", as: DecisionList.self)?.decisions ?? ApprovalDecision.allCases,
                expiresIn: command.option("--expires-in", as: ConsoleSeconds.self)?.duration))
        },
        ConsoleCommandSpec(
            "resolve-approval",
            arguments: [PositionalSpec("id|latest", ConsoleReference.self, help: "the approval"),
                        PositionalSpec(ApprovalDecision.placeholder, ApprovalDecision.self, help: "the decision")],
            summary: "resolve an approval from the console (another surface)", example: "resolve-approval latest deny"
        ) { command, console in
            let id = try console.recordId(command.required(0, as: ConsoleReference.self), kind: "approval")
            switch await console.gateway.resolveApproval(id: id, decision: try command.required(1, as: ApprovalDecision.self),
                                                         surface: GatewayConsole.surface) {
            case .applied(let record): return .approvalResolved(applied: true, record: record)
            case .alreadyTerminal(let record): return .approvalResolved(applied: false, record: record)
            case .notFound: throw ConsoleError("resolve-approval: approval '\(id)' not found")
            }
        },
        ConsoleCommandSpec(
            "expire-approval", arguments: [PositionalSpec("id|latest", ConsoleReference.self, help: "the approval")],
            summary: "expire a pending approval now", example: "expire-approval latest"
        ) { command, console in
            let id = try console.recordId(command.required(0, as: ConsoleReference.self), kind: "approval")
            try await console.gateway.expireApproval(id: id)
            guard let record = await console.gateway.approval(id: id) else {
                throw ConsoleError("expire-approval: approval '\(id)' not found")
            }
            return .approvalResolved(applied: true, record: record)
        },
        ConsoleCommandSpec(
            "race-approval",
            arguments: [PositionalSpec("id|latest", ConsoleReference.self, help: "the approval"),
                        PositionalSpec("decision", ApprovalDecision.self, help: "the other surface's decision")],
            options: [.flag("--client-first", help: "the other surface answers right after the client"),
                      .option("--surface", "NAME", help: "the other surface (default watch)")],
            summary: "when the client resolves the approval, another surface answers first (or right after)",
            example: "race-approval latest deny"
        ) { command, console in
            let id = try console.recordId(command.required(0, as: ConsoleReference.self), kind: "approval")
            let decision = try command.required(1, as: ApprovalDecision.self)
            let clientFirst = command.isSet("--client-first")
            let surface = command.arguments.value("--surface") ?? "watch"
            await console.gateway.raceApproval(id: id, surfaceDecision: decision, order: clientFirst ? .clientFirst : .surfaceFirst,
                                               surface: surface)
            return .faultArmed("when the client resolves approval \(id), \(surface) answers \(decision.rawValue) "
                + (clientFirst ? "right after it" : "just before it"))
        },
        ConsoleCommandSpec(
            "question", arguments: [PositionalSpec("prompt", help: "the question", variadic: true)],
            options: [.option("--options", CommaList.self, help: "the options offered"),
                      .flag("--multi", help: "more than one option may be chosen"),
                      .flag("--other", help: "a free-text answer is allowed"),
                      .option("--expires-in", ConsoleSeconds.self, help: "the lifetime")],
            summary: "ask a question with one item (question id q1)",
            example: #"question "Deploy to?" --options staging,production --expires-in 900"#
        ) { command, console in
            .questionCreated(try await console.gateway.createQuestion(
                command.words(from: 0), options: command.option("--options", as: CommaList.self)?.items ?? [],
                multiSelect: command.isSet("--multi"), allowOther: command.isSet("--other"),
                expiresIn: command.option("--expires-in", as: ConsoleSeconds.self)?.duration))
        },
        ConsoleCommandSpec(
            "answer-question",
            arguments: [PositionalSpec("id|latest", ConsoleReference.self, help: "the question"),
                        PositionalSpec("json", ConsoleAnswers.self, help: "the answers")],
            restOfLine: true,
            summary: #"answer a question from the console: {"q1":["a"]} or ["a"]"#, example: #"answer-question latest ["staging"]"#
        ) { command, console in
            let id = try console.recordId(command.required(0, as: ConsoleReference.self), kind: "question")
            let answers = try await console.questionAnswers(command.required(1, as: ConsoleAnswers.self), question: id,
                                                            command: "answer-question")
            return .questionResolved(try await console.gateway.answerQuestion(id: id, answers: answers, surface: GatewayConsole.surface))
        },
        ConsoleCommandSpec(
            "cancel-question", arguments: [PositionalSpec("id|latest", ConsoleReference.self, help: "the question")],
            summary: "cancel a question from the console", example: "cancel-question latest"
        ) { command, console in
            let id = try console.recordId(command.required(0, as: ConsoleReference.self), kind: "question")
            return .questionResolved(try await console.gateway.cancelQuestion(id: id, surface: GatewayConsole.surface))
        },
        ConsoleCommandSpec(
            "expire-question", arguments: [PositionalSpec("id|latest", ConsoleReference.self, help: "the question")],
            summary: "expire a pending question now", example: "expire-question latest"
        ) { command, console in
            let id = try console.recordId(command.required(0, as: ConsoleReference.self), kind: "question")
            return .questionResolved(try await console.gateway.expireQuestion(id: id))
        },
        ConsoleCommandSpec(
            "race-question",
            arguments: [PositionalSpec("id|latest", ConsoleReference.self, help: "the question"),
                        PositionalSpec("answersJSON", ConsoleAnswers.self, help: "the other surface's answers")],
            options: [.flag("--client-first", help: "the other surface answers right after the client"),
                      .option("--surface", "NAME", help: "the other surface (default watch)")],
            summary: #"when the client resolves the question, another surface answers first (or right after); answers as in answer-question, without spaces"#,
            example: #"race-question latest ["Production"]"#
        ) { command, console in
            let id = try console.recordId(command.required(0, as: ConsoleReference.self), kind: "question")
            let answers = try await console.questionAnswers(command.required(1, as: ConsoleAnswers.self), question: id,
                                                            command: "race-question")
            let clientFirst = command.isSet("--client-first")
            let surface = command.arguments.value("--surface") ?? "watch"
            await console.gateway.raceQuestion(id: id, surfaceAnswers: answers, order: clientFirst ? .clientFirst : .surfaceFirst,
                                               surface: surface)
            let shown = answers.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.joined(separator: ","))" }.joined(separator: " ")
            return .faultArmed("when the client resolves question \(id), \(surface) answers \(shown) "
                + (clientFirst ? "right after it" : "just before it"))
        },
    ]

    /// Transport and protocol faults, and events of your own.
    static let faultCommands: [ConsoleCommandSpec] = [
        ConsoleCommandSpec(
            "drop-next", arguments: [PositionalSpec("method", help: "the method")],
            options: [.flag("--keep-connection", help: "do not cut the connection")],
            summary: "fault: the next response to METHOD is lost (the request still applies), then the connection is cut",
            example: "drop-next approval.resolve"
        ) { command, console in
            let method = try command.text(0)
            let keep = command.isSet("--keep-connection")
            await console.gateway.dropNextResponse(to: method, cutConnection: !keep)
            return .faultArmed("the next response to \(method) is dropped" + (keep ? "" : ", then its connection is cut"))
        },
        ConsoleCommandSpec(
            "delay", arguments: [PositionalSpec(ResponseDelay.placeholder, ResponseDelay.self, help: "the delay")],
            summary: "fault: delay every response", example: "delay 2000"
        ) { command, console in
            let milliseconds = try command.required(0, as: ResponseDelay.self).milliseconds
            await console.gateway.delayResponses(by: milliseconds.map { .milliseconds($0) })
            return .faultArmed(milliseconds.map { "every response is delayed by \($0) ms" } ?? "responses are no longer delayed")
        },
        ConsoleCommandSpec("stop-ticks", summary: "fault: stop sending tick (client watchdogs)", example: "stop-ticks") { _, console in
            await console.gateway.stopTicks()
            return .faultArmed("ticks stopped")
        },
        ConsoleCommandSpec("resume-ticks", summary: "send tick again", example: "resume-ticks") { _, console in
            await console.gateway.resumeTicks()
            return .faultArmed("ticks resumed")
        },
        ConsoleCommandSpec(
            "skip-seq", arguments: [PositionalSpec("N", ConsoleCount.self, help: "the gap")],
            summary: "fault: one gap of N numbers in every connection's seq", example: "skip-seq 3"
        ) { command, console in
            let count = try command.required(0, as: ConsoleCount.self).value
            await console.gateway.skipSequenceNumbers(count)
            return .faultArmed("the next seq of every open connection skips \(count)")
        },
        ConsoleCommandSpec(
            "starting", arguments: [PositionalSpec("on|off", OnOff.self, help: "on or off")],
            summary: "fault: answer connects with UNAVAILABLE and close 1013", example: "starting on"
        ) { command, console in
            let on = try command.required(0, as: OnOff.self).on
            await console.gateway.setStartingUp(on)
            return .faultArmed(on ? "connects are answered UNAVAILABLE and closed with 1013" : "connects are accepted again")
        },
        ConsoleCommandSpec(
            "reset", arguments: [PositionalSpec("connectionId|latest", ConsoleReference.self, help: "the connection")],
            summary: "fault: drop a connection without a close frame", example: "reset latest"
        ) { command, console in
            let connectionId = try await console.connectionId(command.required(0, as: ConsoleReference.self), command: "reset")
            await console.gateway.reset(connectionId: connectionId)
            return .faultArmed("connection \(connectionId) reset")
        },
        ConsoleCommandSpec(
            "close",
            arguments: [PositionalSpec("connectionId|latest", ConsoleReference.self, help: "the connection"),
                        PositionalSpec("code", CloseCode.self, help: "the close code"),
                        PositionalSpec("reason", help: "the close reason", optional: true)],
            summary: "close a connection with CODE", example: #"close latest 4000 "bye""#
        ) { command, console in
            let connectionId = try await console.connectionId(command.required(0, as: ConsoleReference.self), command: "close")
            let code = try command.required(1, as: CloseCode.self).value
            await console.gateway.close(connectionId: connectionId, code: code, reason: (try? command.text(2)) ?? "")
            return .faultArmed("connection \(connectionId) closed with \(code)")
        },
        ConsoleCommandSpec(
            "expire-canvas", arguments: [PositionalSpec("nodeId", help: "the node (default: every session)", optional: true)],
            summary: "expire canvas capabilities now: the canvas host answers 401 until the node refreshes",
            example: "expire-canvas"
        ) { command, console in
            let nodeId = try? command.text(0)
            let count = await console.gateway.expireCanvasCapabilities(nodeId: nodeId)
            return .faultArmed("\(count) canvas capabilit\(count == 1 ? "y" : "ies") expired\(nodeId.map { " for \($0)" } ?? "")")
        },
        ConsoleCommandSpec(
            "send-binary", arguments: [PositionalSpec("N", ConsoleCount.self, help: "how many event frames")],
            summary: "fault: send the next N event frames as binary messages", example: "send-binary 1"
        ) { command, console in
            let count = try command.required(0, as: ConsoleCount.self).value
            await console.gateway.sendNextEventsAsBinary(count)
            return .faultArmed("the next \(count) event frames go as binary messages")
        },
        ConsoleCommandSpec(
            "fragment", arguments: [PositionalSpec("N", ConsoleCount.self, help: "how many event frames")],
            summary: "fault: send the next N event frames in three fragments with pings between them", example: "fragment 1"
        ) { command, console in
            let count = try command.required(0, as: ConsoleCount.self).value
            await console.gateway.fragmentNextEvents(count)
            return .faultArmed("the next \(count) event frames go in three fragments with pings between them")
        },
        ConsoleCommandSpec(
            "presence-reply",
            arguments: [PositionalSpec("true|false", Handled.self, help: "handled"), PositionalSpec("reason", help: "the reason")],
            summary: "fault: the reply to the next node.presence.alive", example: "presence-reply false persist_failed"
        ) { command, console in
            let handled = try command.required(0, as: Handled.self).value
            let reason = try command.text(1)
            await console.gateway.forceNextPresenceReply(handled: handled, reason: reason)
            return .faultArmed("the next node.presence.alive is answered handled:\(handled) reason:\(reason)")
        },
        ConsoleCommandSpec(
            "event",
            arguments: [PositionalSpec(ConsoleEventTarget.placeholder, ConsoleEventTarget.self, help: "the connection"),
                        PositionalSpec("name", help: "the event name"),
                        PositionalSpec("payloadJSON", JSONArgument.self, help: "the payload", optional: true)],
            restOfLine: true,
            summary: "send an event of your own (all: every session allowed to see it)",
            example: #"event latest voicewake.changed {"triggers":["hey"]}"#
        ) { command, console in
            let name = try command.text(1)
            let payload = command.argument(2, as: JSONArgument.self)?.value
            if let reference = try command.required(0, as: ConsoleEventTarget.self).connection {
                let connectionId = try await console.connectionId(reference, command: "event")
                await console.gateway.sendEvent(name, payload: payload, to: connectionId)
                return .eventSent(name: name, connectionIds: [connectionId])
            }
            let sessions = await console.gateway.openConnections().filter { $0.role != nil && !$0.closing }.map(\.connectionId)
            await console.gateway.broadcastEvent(name, payload: payload)
            return .eventSent(name: name, connectionIds: sessions)
        },
        ConsoleCommandSpec(
            "drain", arguments: [PositionalSpec(DrainArgument.placeholder, DrainArgument.self, help: "the drain, or off")],
            summary: "refuse new requests with UNAVAILABLE (reason gateway-restarting, -suspending or -closing; retryAfterMs 1000) until 'drain off'",
            example: "drain restarting"
        ) { command, console in
            let drain = try command.required(0, as: DrainArgument.self).drain
            if let drain { await console.gateway.beginDrain(drain) } else { await console.gateway.endDrain() }
            return .drained(drain)
        },
        ConsoleCommandSpec(
            "wake", arguments: [PositionalSpec("nodeId|latest", ConsoleReference.self, help: "the node")],
            options: [.option("--reason", NonEmptyText.self, help: "the wake reason (default node.invoke)")],
            summary: "send a silent wake push (background, priority 5) through the node's push registration (latest: the node that registered last); no real APNs is contacted",
            example: "wake latest"
        ) { command, console in
            let nodeId = try await console.pushNodeId(command.required(0, as: ConsoleReference.self))
            let reason = command.option("--reason", as: NonEmptyText.self)?.text ?? PushRelay.defaultWakeReason
            let attempt = await console.gateway.wakeNode(nodeId: nodeId, reason: reason)
            guard attempt.delivery != nil else { throw ConsoleError("wake: \(attempt.summary)") }
            return .woken(attempt)
        },
        ConsoleCommandSpec(
            "change-auth",
            arguments: [PositionalSpec(GatewayAuthMode.placeholder, GatewayAuthMode.self, help: "the new shared secret", secret: true)],
            summary: "change the shared secret; sessions of the old one (and device tokens bound to it) are closed with 4001",
            example: "change-auth token:new-secret"
        ) { command, console in
            // The value is a secret: the reply names its mode only.
            let mode = try command.required(0, as: GatewayAuthMode.self)
            await console.gateway.changeSharedSecret(mode)
            return .faultArmed("the shared secret changed (mode \(mode.name)); sessions that depended on the old one "
                + "were closed with 4001 gateway auth changed")
        },
    ]

    /// The console's own commands.
    static let consoleCommands: [ConsoleCommandSpec] = [
        ConsoleCommandSpec(
            "help", arguments: [PositionalSpec("command", help: "a command", optional: true)],
            summary: "show this list, or one command in full", example: "help drop-next"
        ) { command, _ in
            guard let name = try? command.text(0) else { return .help(ConsoleCommandHelp.all) }
            guard let entry = ConsoleCommandHelp.named(name) else {
                throw ConsoleError("help: unknown command '\(name)' (type 'help' for the list)")
            }
            return .helpCommand(entry)
        },
        ConsoleCommandSpec("quit", aliases: ["exit"], summary: "stop the server", example: "quit") { _, _ in .quitting },
    ]
}
