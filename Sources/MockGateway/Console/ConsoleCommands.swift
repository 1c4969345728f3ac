import ArgumentParsing
import Foundation
import GatewayProtocol

// The console's commands, one spec each (see `ConsoleCommandSpec`), each list followed by the
// reply types its commands render (`ConsoleRendering`). The order of the lists is the order of
// `help` and of the command table in docs/harness-serve.md.

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
            summary: "approve a pairing request, device or node surface (latest: the newest pending one; nothing: the only one)",
            example: "approve"
        ) { command, console in
            let reference = command.argument(0, as: ConsoleReference.self)
            if let nodeRequestId = await console.nodeSurfaceRequestId(reference),
               let node = await console.gateway.approveNodeSurface(requestId: nodeRequestId) {
                return .nodeSurfaceApproved(requestId: nodeRequestId, nodeId: node.nodeId, commands: node.commands)
            }
            let requestId = try await console.pairingRequestId(command.argument(0, as: ConsoleReference.self), command: "approve")
            return .approved(requestId: requestId, device: try await console.gateway.approve(requestId: requestId))
        },
        ConsoleCommandSpec(
            "reject", arguments: [PositionalSpec("requestId|latest", ConsoleReference.self, help: "the request", optional: true)],
            summary: "reject a pairing request, device or node surface (latest: the newest pending one; nothing: the only one)",
            example: "reject latest"
        ) { command, console in
            let reference = command.argument(0, as: ConsoleReference.self)
            if let nodeRequestId = await console.nodeSurfaceRequestId(reference),
               let request = await console.gateway.rejectNodeSurface(requestId: nodeRequestId) {
                return .nodeSurfaceRejected(requestId: nodeRequestId, nodeId: request.nodeId, commands: request.commands)
            }
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
            options: [.flag("--force", help: "send it even if the node command policy refuses it (the transcript says so)"),
                      .flag("--no-wait", help: "return once it is sent (invoke.sent has its id, invoke.result its answer)")],
            restOfLine: true,
            summary: "invoke a node command and wait for its result (latest: the most recently connected node); the node command policy applies",
            example: #"invoke latest location.get {"desiredAccuracy":"balanced"}"#
        ) { command, console in
            let nodeId = try await console.nodeId(command.required(0, as: ConsoleReference.self))
            let name = try command.text(1)
            let params = command.argument(2, as: JSONArgument.self)?.value
            let refusal = await console.gateway.nodeCommandRefusal(nodeId: nodeId, command: name)
            if let refusal, !command.isSet("--force") {
                let reason = refusal.details?["reason"]?.stringValue.map { " (reason: \($0))" } ?? ""
                throw ConsoleError("invoke: \(refusal.code) \(refusal.message)\(reason); --force sends it anyway")
            }
            let transcriptLine = refusal.map { "invoke --force \(name) on \(nodeId): node command policy bypassed (\($0.message))" }
            if command.isSet("--no-wait") {
                guard let connectionId = await console.gateway.sendInvoke(nodeId: nodeId, command: name, params: params,
                                                                          timeoutMs: console.invokeTimeoutMs,
                                                                          transcriptLine: transcriptLine) else {
                    throw ConsoleError("invoke: node \(nodeId) is not connected")
                }
                return .eventSent(name: GatewayEventName.nodeInvokeRequest.rawValue, connectionIds: [connectionId])
            }
            switch await console.gateway.invokeAndWait(nodeId: nodeId, command: name, params: params,
                                                       timeoutMs: console.invokeTimeoutMs,
                                                       transcriptLine: transcriptLine,
                                                       wait: console.invokeWait) {
            case .result(let result):
                return .invoked(nodeId: nodeId, command: name, result: result)
            case .timedOut:
                throw ConsoleError("invoke: \(name) on \(nodeId) timed out without a result")
            case .nodeDisconnected:
                throw ConsoleError("invoke: node \(nodeId) is not connected (or disconnected before answering)")
            }
        },
        ConsoleCommandSpec(
            "node-commands",
            arguments: [PositionalSpec("show|allow|deny|unallow|undeny|reset", help: "what to do (default show)", optional: true),
                        PositionalSpec("command", help: "the node command", optional: true)],
            summary: "show or change the node command policy: gateway.nodes.commands.allow and deny (deny wins)",
            example: "node-commands allow camera.snap"
        ) { command, console in
            var policy = await console.gateway.nodeCommandPolicy()
            let action = (try? command.text(0)) ?? "show"
            if action == "show" { return .nodeCommandPolicy(policy) }
            if action == "reset" {
                policy = NodeCommandPolicy()
            } else {
                guard let name = try? command.text(1), !name.isEmpty else {
                    throw ConsoleError("node-commands \(action): name the node command")
                }
                switch action {
                case "allow": if !policy.allow.contains(name) { policy.allow.append(name) }
                case "deny": if !policy.deny.contains(name) { policy.deny.append(name) }
                case "unallow": policy.allow.removeAll { $0 == name }
                case "undeny": policy.deny.removeAll { $0 == name }
                default: throw ConsoleError("node-commands: expected show, allow, deny, unallow, undeny or reset, not '\(action)'")
                }
            }
            await console.gateway.setNodeCommandPolicy(policy)
            return .nodeCommandPolicy(policy)
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
}

// MARK: Replies of the pairing commands, in the order of the list

extension ConsoleStatus: ConsoleRendering {
    /// `status`.
    var json: JSONValue {
        ["url": .string(url), "devices": .int(Int64(devices)), "nodes": .int(Int64(nodes)),
         "pending": .int(Int64(pending)), "connections": .int(Int64(connections)), "faults": .consoleList(faults.descriptions)]
    }

    var text: String {
        let armed = faults.descriptions
        return "\(url)  \(devices) device\(devices == 1 ? "" : "s")  \(nodes) node\(nodes == 1 ? "" : "s")"
            + "  \(pending) pending  \(connections) connection\(connections == 1 ? "" : "s")"
            + "  faults: \(armed.isEmpty ? "none" : armed.joined(separator: ", "))"
    }
}

/// `pending`.
struct PendingReply: ConsoleRendering {
    let requests: [PairingRequestInfo]

    var json: JSONValue { ["requests": .array(requests.map(\.consoleJSON))] }

    var text: String {
        ConsoleText.lines(requests, empty: "no pending pairing requests") { request in
            "\(request.requestId)  device \(ConsoleText.short(request.deviceId))  \(request.roles.map(\.rawValue).joined(separator: ","))"
                + (request.scopes.isEmpty ? "" : "  \(request.scopes.count) scope\(request.scopes.count == 1 ? "" : "s")")
        }
    }
}

/// `devices`.
struct DevicesReply: ConsoleRendering {
    let devices: [PairedDevice]
    let connected: Set<String>

    var json: JSONValue {
        ["devices": .array(devices.map { $0.consoleJSON(connected: connected.contains($0.deviceId)) })]
    }

    var text: String {
        ConsoleText.lines(devices, empty: "no paired devices") { device in
            var line = "\(ConsoleText.short(device.deviceId))  \(device.roles.map(\.rawValue).joined(separator: ","))"
            if let name = device.label ?? device.displayName { line += "  \(ConsoleText.quoteIfNeeded(String(name.prefix(24))))" }
            if let platform = device.platform { line += "  \(ConsoleText.quoteIfNeeded(String(platform.prefix(16))))" }
            line += "  via \(device.approvedVia.rawValue)"
            if connected.contains(device.deviceId) { line += "  (node connected)" }
            return line
        }
    }
}

/// `nodes`.
struct NodesReply: ConsoleRendering {
    let nodes: [RegisteredNode]

    var json: JSONValue {
        ["nodes": .array(nodes.map { node in
            var object: [String: JSONValue] = [
                "nodeId": .string(node.nodeId), "connectionId": .string(node.connectionId), "clientId": .string(node.clientId),
                "platform": .string(node.platform), "version": .string(node.version), "commands": .consoleList(node.commands),
                "remoteIp": .string(node.remoteIp), "connectedAtMs": .int(node.connectedAtMs),
            ]
            if let name = node.displayName { object["displayName"] = .string(name) }
            return .object(object)
        })]
    }

    var text: String {
        ConsoleText.lines(nodes, empty: "no connected nodes") { node in
            var line = "\(ConsoleText.short(node.nodeId))"
            if let name = node.displayName { line += "  \(ConsoleText.quoteIfNeeded(String(name.prefix(24))))" }
            line += "  \(ConsoleText.quoteIfNeeded(String(node.platform.prefix(16))))  \(node.commands.count) commands"
            line += "  \(node.remoteIp)  connection \(ConsoleText.short(node.connectionId))"
            return line
        }
    }
}

/// `connections`.
struct ConnectionsReply: ConsoleRendering {
    let connections: [ConnectionSummary]

    var json: JSONValue {
        ["connections": .array(connections.map { connection in
            var object: [String: JSONValue] = [
                "connectionId": .string(connection.connectionId), "remoteAddress": .string(connection.remoteAddress),
                "closing": .bool(connection.closing),
            ]
            if let role = connection.role { object["role"] = .string(role) }
            if let deviceId = connection.deviceId { object["deviceId"] = .string(deviceId) }
            if let clientId = connection.clientId { object["clientId"] = .string(clientId) }
            return .object(object)
        })]
    }

    var text: String {
        ConsoleText.lines(connections, empty: "no open connections") { connection in
            var line = "\(connection.connectionId)  \(connection.remoteAddress)  "
            line += connection.role.map { "\($0)" + (connection.deviceId.map { " \(ConsoleText.short($0))" } ?? "") } ?? "handshake"
            if connection.closing { line += "  (closing)" }
            return line
        }
    }
}

/// `approve`.
struct ApprovedReply: ConsoleRendering {
    let requestId: String
    let device: PairedDevice

    var json: JSONValue {
        ["requestId": .string(requestId), "deviceId": .string(device.deviceId),
         "roles": .array(device.roles.map { .string($0.rawValue) }), "scopes": .consoleList(device.scopes),
         "approvedVia": .string(device.approvedVia.rawValue)]
    }

    var text: String {
        "approved \(requestId): device \(device.deviceId) roles \(device.roles.map(\.rawValue).joined(separator: ","))"
    }
}

/// `approve` of a node pairing request.
struct NodeSurfaceApprovedReply: ConsoleRendering {
    let requestId: String
    let nodeId: String
    let commands: [String]

    var json: JSONValue {
        ["requestId": .string(requestId), "nodeId": .string(nodeId), "commands": .array(commands.map(JSONValue.string))]
    }

    var text: String { "approved \(requestId): node \(nodeId) commands \(commands.joined(separator: ","))" }
}

/// `reject` of a node pairing request: the node keeps its approved surface.
struct NodeSurfaceRejectedReply: ConsoleRendering {
    let requestId: String
    let nodeId: String
    let commands: [String]

    var json: JSONValue {
        ["requestId": .string(requestId), "nodeId": .string(nodeId), "commands": .array(commands.map(JSONValue.string))]
    }

    var text: String { "rejected \(requestId): node \(nodeId) keeps its approved surface (not \(commands.joined(separator: ",")))" }
}

/// `reject`.
struct RejectedReply: ConsoleRendering {
    let requestId: String
    let deviceId: String?

    var json: JSONValue {
        var object: [String: JSONValue] = ["requestId": .string(requestId)]
        if let deviceId { object["deviceId"] = .string(deviceId) }
        return .object(object)
    }

    var text: String { "rejected \(requestId)" }
}

/// `remove`.
struct RemovedReply: ConsoleRendering {
    let deviceId: String

    var json: JSONValue { ["deviceId": .string(deviceId)] }
    var text: String { "removed \(deviceId)" }
}

/// `revoke`.
struct RevokedReply: ConsoleRendering {
    let deviceId: String
    let role: String

    var json: JSONValue { ["deviceId": .string(deviceId), "role": .string(role)] }
    var text: String { "revoked the \(role) token of \(deviceId)" }
}

/// `invoke`.
struct InvokedReply: ConsoleRendering {
    let nodeId: String
    let command: String
    let result: NodeInvokeResult

    var json: JSONValue {
        var object: [String: JSONValue] = ["id": .string(result.id), "nodeId": .string(nodeId),
                                           "command": .string(command), "ok": .bool(result.ok)]
        if let payload = result.payload { object["payload"] = payload }
        if let payloadJSON = result.payloadJSON { object["payloadJSON"] = .string(payloadJSON) }
        if let error = result.error, let value = try? JSONValue(encoding: error) { object["error"] = value }
        return .object(object)
    }

    var text: String {
        var line = "\(command) on \(nodeId): ok=\(result.ok)"
        if let payloadJSON = result.payloadJSON { line += " payloadJSON=\(payloadJSON)" }
        if let payload = result.payload { line += " payload=\(payload.jsonString)" }
        if let error = result.error, let value = try? JSONValue(encoding: error) { line += " error=\(value.jsonString)" }
        return line
    }
}

/// `setup-code`.
struct SetupCodeReply: ConsoleRendering {
    let issued: IssuedSetupCode
    let profile: String
    let qr: SetupCodeQR?

    var json: JSONValue {
        let code = issued.code
        var object: [String: JSONValue] = [
            "setupCode": .string(code.encoded), "url": .string(code.url), "link": .string(code.link),
            "bootstrapToken": .string(code.bootstrapToken), "profile": .string(profile), "setupId": .string(issued.setupId),
            "access": .string(issued.access.rawValue), "expiresAtMs": .int(issued.expiresAtMs),
        ]
        if let fingerprint = code.tlsFingerprint { object["tlsFingerprint"] = .string(fingerprint) }
        if let png = qr?.pngFile { object["qrPng"] = .string(png) }
        if issued.accessDowngraded { object["accessDowngraded"] = true }
        return .object(object)
    }

    var text: String {
        let code = issued.code
        var lines: [String] = []
        if let qr { lines.append(qr.terminalText) }
        let hidden = code.isRedacted ? " (scan the QR code, or run serve with --show-secrets to see it)" : ""
        lines.append("setup code \(code.encoded)\(hidden)")
        lines.append("link \(code.link)")
        lines.append("url \(code.url)")
        lines.append("profile \(profile), access \(issued.access.rawValue), setup \(issued.setupId), expires at \(issued.expiresAtMs)")
        if issued.accessDowngraded {
            lines.append("""
                access lowered from full to limited (no operator.admin): the code travels over plain ws:// on the LAN, \
                where anyone on the network can read its bootstrap token; serve with --tls for a full-access code
                """)
        }
        if let fingerprint = code.tlsFingerprint { lines.append("tls fingerprint \(fingerprint)") }
        if let png = qr?.pngFile { lines.append("qr png \(png)") }
        return lines.joined(separator: "\n")
    }
}

/// `advance`.
struct AdvancedReply: ConsoleRendering {
    let seconds: Double
    let nowMs: Int64

    var json: JSONValue { ["seconds": .double(seconds), "nowMs": .int(nowMs)] }
    var text: String { "advanced \(ConsoleText.number(seconds)) s; gateway time is now \(nowMs)" }
}

/// `restart` without `--stay-down`.
struct RestartedReply: ConsoleRendering {
    var json: JSONValue { ["restarted": true] }
    var text: String { "restarted: sent shutdown, closed every connection with 1012, accepting again" }
}

extension ConsoleCommandSpec {
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
            let id = try console.recordId(command.required(0, as: ConsoleReference.self), kind: .approval)
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
            let id = try console.recordId(command.required(0, as: ConsoleReference.self), kind: .approval)
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
            let id = try console.recordId(command.required(0, as: ConsoleReference.self), kind: .approval)
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
            let id = try console.recordId(command.required(0, as: ConsoleReference.self), kind: .question)
            let answers = try await console.questionAnswers(command.required(1, as: ConsoleAnswers.self), question: id,
                                                            command: "answer-question")
            return .questionResolved(try await console.gateway.answerQuestion(id: id, answers: answers, surface: GatewayConsole.surface))
        },
        ConsoleCommandSpec(
            "cancel-question", arguments: [PositionalSpec("id|latest", ConsoleReference.self, help: "the question")],
            summary: "cancel a question from the console", example: "cancel-question latest"
        ) { command, console in
            let id = try console.recordId(command.required(0, as: ConsoleReference.self), kind: .question)
            return .questionResolved(try await console.gateway.cancelQuestion(id: id, surface: GatewayConsole.surface))
        },
        ConsoleCommandSpec(
            "expire-question", arguments: [PositionalSpec("id|latest", ConsoleReference.self, help: "the question")],
            summary: "expire a pending question now", example: "expire-question latest"
        ) { command, console in
            let id = try console.recordId(command.required(0, as: ConsoleReference.self), kind: .question)
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
            let id = try console.recordId(command.required(0, as: ConsoleReference.self), kind: .question)
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
}

// MARK: Replies of the approval and question commands

/// `approval`.
struct ApprovalCreatedReply: ConsoleRendering {
    let record: ApprovalRecord

    var json: JSONValue { record.snapshot() }
    var text: String {
        "approval \(record.id) pending, decisions \(record.allowedDecisions.map(\.rawValue).joined(separator: ",")), expires at \(record.expiresAtMs)"
    }
}

/// `resolve-approval`, `expire-approval`.
struct ApprovalResolvedReply: ConsoleRendering {
    let applied: Bool
    let record: ApprovalRecord

    var json: JSONValue {
        var object = record.snapshot().objectValue ?? [:]
        object["applied"] = .bool(applied)
        return .object(object)
    }

    var text: String {
        let outcome = "\(record.status.rawValue)" + (record.decision.map { " (\($0.rawValue))" } ?? "")
        return applied ? "approval \(record.id) \(outcome)" : "approval \(record.id) was already \(outcome)"
    }
}

/// `question`.
struct QuestionCreatedReply: ConsoleRendering {
    let record: QuestionRecord

    var json: JSONValue { record.json }
    var text: String { "question \(record.id) pending, expires at \(record.expiresAtMs)" }
}

/// `answer-question`, `cancel-question`, `expire-question`.
struct QuestionResolvedReply: ConsoleRendering {
    let record: QuestionRecord

    var json: JSONValue { record.json }
    var text: String {
        var line = "question \(record.id) \(record.status.rawValue)"
        if let answers = record.answers { line += " " + QuestionRecord.answersJSON(answers).jsonString }
        return line
    }
}

extension ConsoleCommandSpec {
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
        countFault("skip-seq", help: "the gap", summary: "fault: one gap of N numbers in every connection's seq",
                   example: "skip-seq 3", arm: { await $0.skipSequenceNumbers($1) },
                   armed: { "the next seq of every open connection skips \($0)" }),
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
        countFault("send-binary", help: "how many event frames", summary: "fault: send the next N event frames as binary messages",
                   example: "send-binary 1", arm: { await $0.sendNextEventsAsBinary($1) },
                   armed: { "the next \($0) event frames go as binary messages" }),
        countFault("fragment", help: "how many event frames",
                   summary: "fault: send the next N event frames in three fragments with pings between them",
                   example: "fragment 1", arm: { await $0.fragmentNextEvents($1) },
                   armed: { "the next \($0) event frames go in three fragments with pings between them" }),
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
            options: [.option("--reason", NonEmptyText.self, help: "the wake reason (default node.invoke)"),
                      .flag("--force", help: "send even within 15 s of the last wake to the node (upstream's forced wake)")],
            summary: "send a silent wake push (background, priority 5) through the node's push registration (latest: the node that registered last; throttled within 15 s of the last wake unless --force); no real APNs is contacted",
            example: "wake latest"
        ) { command, console in
            let nodeId = try await console.pushNodeId(command.required(0, as: ConsoleReference.self))
            let reason = command.option("--reason", as: NonEmptyText.self)?.text ?? PushRelay.defaultWakeReason
            let attempt = await console.gateway.wakeNode(nodeId: nodeId, reason: reason, force: command.isSet("--force"))
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
}

extension ConsoleCommandSpec {
    /// A fault command that takes one count `N` (`skip-seq`, `send-binary`, `fragment`): it arms
    /// the fault with `arm` and replies `faultArmed` with the sentence `armed` makes of the count.
    static func countFault(_ name: String, help: String, summary: String, example: String,
                           arm: @escaping @Sendable (Gateway, Int) async -> Void,
                           armed: @escaping @Sendable (Int) -> String) -> ConsoleCommandSpec {
        ConsoleCommandSpec(name, arguments: [PositionalSpec("N", ConsoleCount.self, help: help)], summary: summary,
                           example: example) { command, console in
            let count = try command.required(0, as: ConsoleCount.self).value
            await arm(console.gateway, count)
            return .faultArmed(armed(count))
        }
    }
}

// MARK: Replies of the fault commands

/// A fault command (and `race-*`, `restart --stay-down`, `resume`, `change-auth`): what was
/// armed; the `fault.injected` line confirms it.
struct FaultArmedReply: ConsoleRendering {
    let description: String

    var json: JSONValue { ["fault": .string(description)] }
    var text: String { "fault armed: \(description)" }
}

/// `event`.
struct EventSentReply: ConsoleRendering {
    let name: String
    let connectionIds: [String]

    var json: JSONValue { ["event": .string(name), "connectionIds": .consoleList(connectionIds)] }
    var text: String { "sent \(name) to \(connectionIds.count) connection\(connectionIds.count == 1 ? "" : "s")" }
}

/// `drain`.
struct DrainedReply: ConsoleRendering {
    let drain: GatewayDrain?

    var json: JSONValue {
        ["drain": drain.map { .string($0.rawValue) } ?? .null, "reason": drain.map { .string($0.reason) } ?? .null,
         "retryAfterMs": drain == nil ? .null : .int(Int64(GatewayDrain.retryAfterMs))]
    }

    var text: String {
        guard let drain else { return "drain ended: serving requests again" }
        return "draining (\(drain.reason)): new requests get UNAVAILABLE with retryAfterMs \(GatewayDrain.retryAfterMs) until 'drain off'"
    }
}

/// `node-commands`.
struct NodeCommandPolicyReply: ConsoleRendering {
    let policy: NodeCommandPolicy

    var json: JSONValue {
        ["allow": .array(policy.allow.map(JSONValue.string)), "deny": .array(policy.deny.map(JSONValue.string))]
    }

    var text: String {
        func list(_ commands: [String]) -> String { commands.isEmpty ? "(none)" : commands.joined(separator: ", ") }
        return "node commands: allow \(list(policy.allow)); deny \(list(policy.deny)) (deny wins; dangerous commands need allow)"
    }
}

/// `voicewake`.
struct VoiceWakeReply: ConsoleRendering {
    let triggers: [String]

    var json: JSONValue { ["triggers": .array(triggers.map(JSONValue.string))] }

    var text: String { "voice wake triggers: " + triggers.map { ConsoleText.quoteIfNeeded($0) }.joined(separator: ", ") }
}

/// `workspace`.
struct WorkspaceReply: ConsoleRendering {
    let agentId: String
    let directory: String?

    var json: JSONValue { ["agentId": .string(agentId), "directory": directory.map(JSONValue.string) ?? .null] }

    var text: String { directory.map { "agent \(agentId) browses \($0)" } ?? "agent \(agentId) has no workspace" }
}

/// `wake`.
struct WokenReply: ConsoleRendering {
    let attempt: NodeWakeAttempt

    var json: JSONValue {
        var object: [String: JSONValue] = [
            "nodeId": .string(attempt.nodeId), "path": .string(attempt.path.rawValue),
            "delivered": .bool(attempt.isDelivered), "wakeReason": .string(attempt.reason),
        ]
        if let delivery = attempt.delivery {
            object["transport"] = .string(delivery.transport)
            object["pushType"] = .string(delivery.pushType)
            object["accepted"] = .bool(delivery.accepted)
            object["status"] = .int(Int64(delivery.status))
            if let priority = delivery.priority { object["priority"] = .int(Int64(priority)) }
            if let reason = delivery.reason { object["reason"] = .string(reason) }
            if let payload = delivery.payload { object["payload"] = payload }
        }
        return .object(object)
    }

    var text: String {
        var line = attempt.summary
        if let payload = attempt.delivery?.payload { line += "\npayload \(payload.jsonString)" }
        return line + "\nno real APNs or relay is contacted: a real device is not woken"
    }
}

extension ConsoleCommandSpec {
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

// MARK: Replies of the console's own commands

/// `help`.
struct HelpReply: ConsoleRendering {
    let commands: [ConsoleCommandHelp]

    var json: JSONValue {
        ["commands": .array(commands.map {
            ["name": .string($0.name), "usage": .string($0.usage), "summary": .string($0.summary)]
        })]
    }

    var text: String {
        let width = (commands.map(\.usage.count).max() ?? 0) + 2
        return commands.map { $0.usage.padding(toLength: width, withPad: " ", startingAt: 0) + $0.summary }
            .joined(separator: "\n")
    }
}

/// `help <command>`.
extension ConsoleCommandHelp: ConsoleRendering {
    var json: JSONValue {
        ["name": .string(name), "usage": .string(usage), "summary": .string(summary), "example": .string(example)]
    }

    var text: String { "\(usage)\n  \(summary)\n  example: \(example)" }
}

/// `quit`.
struct QuittingReply: ConsoleRendering {
    var json: JSONValue { .object([:]) }
    var text: String { "stopping" }
}
