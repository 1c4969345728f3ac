import Foundation
import GatewayProtocol
import Testing
import WebSocketTransport

/// `harness serve` against independent clients written in Python (`websockets` for the
/// transport, `cryptography` for Ed25519), driven through the console like a person would.
@Suite(.enabled(if: InteropPython.shouldRun, "Python with websockets and cryptography not found (.venv or OPENCLAW_PYTHON)"))
struct ServeInteropTests {
    /// The admission rules of the current Gateway as an independent client sees them on the wire
    /// (`Tests/Interop/gateway_wire_checks.py`; docs/fidelity.md): the closed connect schema, no
    /// response to a first frame that is not a request frame, the device proof before the token,
    /// the signature token rule, hello-ok's protocol and capabilities, and that loopback clients
    /// are exempt from the rate limits by default.
    @Test func pythonWireChecksOfTheAdmissionRulesPass() async throws {
        let secret = "interop-wire-secret"
        try await ServeProcess.withServe(["--auth", "token:\(secret)", "--pairing", "auto"]) { serve, url in
            try await InteropPython.withPeer("gateway_wire_checks.py", [url, secret]) { peer in
                func context() -> Comment { Comment(rawValue: serve.transcript + "\n" + peer.transcript) }
                let checks = ["unknown-member", "unknown-client-id", "empty-display-name", "missing-nonce", "blank-nonce",
                              "not-a-request-frame", "proof-before-token", "signature-token-empty-wins",
                              "hello-protocol-and-capabilities", "loopback-exempt-from-rate-limits"]
                try await peer.expectChecksPass(checks, context: context)
                try await peer.expectDoneAndExit(context: context)
            }
        }
    }

    /// Setup codes, setup-code pairing, supersession, hello-ok's `auth` and close 4001 as an
    /// independent client sees them on the wire (`gateway_wire_checks.py --suite pairing`;
    /// docs/fidelity.md): the operator that makes the checks is approved on the console, and the
    /// shared secret is changed on the console (`change-auth`) while stale sessions are open.
    @Test func pythonWireChecksOfSetupCodesPairingAndTokensPass() async throws {
        let secret = "interop-pairing-secret"
        let newSecret = "interop-pairing-secret-changed"
        try await ServeProcess.withServe(["--auth", "token:\(secret)", "--pairing", "manual"]) { serve, url in
            try await InteropPython.withPeer("gateway_wire_checks.py", [url, secret, "--suite", "pairing", "--new-secret", newSecret]) { peer in
                func context() -> Comment { Comment(rawValue: serve.transcript + "\n" + peer.transcript) }
                let waiting = try #require(await peer.object("step", "operator_pairing_required"), context())
                let requestId = try #require(waiting["requestId"]?.stringValue, context())
                try serve.send("approve \(requestId)")
                _ = try #require(await serve.object("event", "command.ok") { $0["command"] == "approve" }, context())

                _ = try #require(await peer.object(timeout: .seconds(90), "step", "awaiting_auth_change"), context())
                let cursor = serve.objects.count
                try serve.send("change-auth token:\(newSecret)")
                let changed = try #require(await serve.object(after: cursor, "event", "command.ok") {
                    $0["command"] == "change-auth"
                }, context())
                #expect(changed["result"]?["fault"]?.stringValue?.contains(newSecret) == false)

                let checks = ["setup-code-full", "setup-code-limited", "setup-code-voice-node", "setup-code-node",
                              "setup-code-full-2", "setup-code-mobile-silent-approval", "setup-status-and-completed-event",
                              "setup-code-mobile-metadata-mismatch-waits", "setup-code-other-client-waits",
                              "reject-revokes-bootstrap-tokens", "supersession-new-request-per-role-alternation",
                              "hello-scopes-are-token-scopes", "hello-issued-at-is-rotation-time",
                              "auth-change-closes-stale-sessions-4001", "auth-change-stale-credentials-refused"]
                try await peer.expectChecksPass(checks, timeout: .seconds(60), context: context)
                try await peer.expectDoneAndExit(context: context)
                // The new secret is redacted on the console like the configured one.
                #expect(!serve.lines.all.contains { $0.contains(newSecret) }, context())
            }
        }
    }

    /// The node-pairing and shared-secret rate limits on the wire (`gateway_wire_checks.py
    /// --suite rate-limits`), with `--rate-limit-loopback` so that they apply to a local client.
    @Test func pythonWireChecksOfTheRateLimitsPass() async throws {
        let secret = "interop-rate-limit-secret"
        try await ServeProcess.withServe(["--auth", "token:\(secret)", "--pairing", "auto", "--rate-limit-loopback"]) { serve, url in
            try await InteropPython.withPeer("gateway_wire_checks.py", [url, secret, "--suite", "rate-limits"]) { peer in
                func context() -> Comment { Comment(rawValue: serve.transcript + "\n" + peer.transcript) }
                try await peer.expectChecksPass(["node-pairing-rate-limit", "auth-failure-rate-limit"], timeout: .seconds(60), context: context)
                try await peer.expectDoneAndExit(context: context)
            }
        }
    }

    /// The apps' surfaces as an independent client sees them (`gateway_wire_checks.py --suite
    /// apps`): agent workspace browsing over `--workspace DIR` (order, limits, previews, links,
    /// big files, fake images, typed errors), `agents.files.*` with the hash compare-and-set,
    /// `voicewake.get/set` with `voicewake.changed` to an
    /// operator and a node, `chat.abort` and `agent.wait` on runs the console keeps going (`chat-auto-reply
    /// echo --delay 600`), the `health` summary, `tasks.list` over the fixtures file's task ledger, `config.get`
    /// over its configuration (secrets redacted), `cron.list/get/runs` over its cron jobs and runs, `chat.metadata`
    /// over its models and commands, `talk.config` over its configuration, `skills.status/install` over its
    /// skills, `artifacts.download` of rows posted with `chat-post --blocks` (bytes, url, unsupported) and
    /// its refusals, `plugin.surface.refresh` renewing the reader's own
    /// `hello-ok.pluginSurfaceUrls` with its refusals, and an unserved method, which serve reports once as
    /// `method.unserved`.
    @Test func pythonWireChecksOfTheAppsSurfacesPass() async throws {
        let secret = "interop-apps-secret"
        let workspace = FileManager.default.temporaryDirectory.appendingPathComponent("serve-workspace-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workspace, withIntermediateDirectories: true)
        // The catalogue commands.list serves, the task ledger tasks.list pages through and the
        // configuration config.get answers redacted; the peer reads the same file for what to expect.
        let fixtures = workspace.path + "-fixtures.json"
        try Data(#"""
            {"commands": [
              {"name": "model", "description": "Switch the model", "category": "options", "source": "native",
               "scope": "both", "acceptsArgs": true,
               "args": [{"name": "model", "description": "the model", "type": "string", "required": true}]},
              {"name": "think", "description": "Thinking level", "source": "native", "scope": "text", "acceptsArgs": false},
              {"name": "weather", "description": "Weather skill", "source": "skill", "scope": "native", "acceptsArgs": false}
            ],
             "tasks": [
              {"id": "t-old", "status": "completed", "title": "Old", "createdAt": 100, "endedAt": 400},
              {"id": "t-b", "status": "running", "agentId": "main", "sessionKey": "agent:main:main", "createdAt": 200,
               "updatedAt": 900},
              {"id": "t-a", "status": "queued", "sessionKey": "agent:work:chat", "createdAt": 300, "updatedAt": 900},
              {"id": "t-own", "status": "timed_out", "agentId": "main", "ownerKey": "agent:work:owner", "createdAt": 500},
              {"id": "t-fail", "status": "failed", "error": "boom", "createdAt": 50}
            ],
             "config": {
              "gateway": {"auth": {"mode": "token", "token": "gw-secret-1"}, "remote": {"password": "pw-2"}},
              "talk": {"apiKey": "el-secret-6", "voiceId": "v1", "voiceAliases": {"Clawd": "v1", "odd": 3},
                       "modelId": "eleven_v3", "interruptOnSpeech": true, "provider": "elevenlabs", "silenceTimeoutMs": 900},
              "session": {"mainKey": "main"}, "ui": {"seamColor": "#ff4500"},
              "messages": {"tts": {"apiKey": "${OPENAI_API_KEY}"}},
              "tools": {"web": {"search": {"api_key": "brave-3", "maxResults": 5}}},
              "agents": {"defaults": {"maxTokens": "4096"}},
              "hooks": {"secretValues": ["s-4", 7, {"note": "n"}], "tokenTtl": 60},
              "secrets": {"serviceAccount": {"email": "a@b", "key": "k-5"}}
            },
             "cron": {
              "jobs": [
               {"id": "j-b", "name": "Backup", "enabled": true, "createdAtMs": 1, "updatedAtMs": 10,
                "schedule": {"kind": "cron", "expr": "0 3 * * *"}, "sessionTarget": "isolated", "wakeMode": "now",
                "payload": {"kind": "agentTurn", "message": "back up"}, "delivery": {"mode": "none"},
                "state": {"nextRunAtMs": 2000, "lastRunAtMs": 1500, "lastRunStatus": "ok", "lastDelivered": false,
                          "lastDeliveryStatus": "not-delivered"}},
               {"id": "j-a", "name": "alpha report", "agentId": "work", "enabled": true, "createdAtMs": 2,
                "updatedAtMs": 20, "schedule": {"kind": "every", "everyMs": 60000}, "sessionTarget": "main",
                "wakeMode": "next-heartbeat", "payload": {"kind": "systemEvent", "text": "report"},
                "delivery": {"mode": "webhook", "to": "https://example.invalid/hook"},
                "state": {"nextRunAtMs": 1000, "lastStatus": "error", "lastError": "boom"}},
               {"id": "j-off", "name": "Paused", "enabled": false, "createdAtMs": 3, "updatedAtMs": 30,
                "schedule": {"kind": "at", "at": "2026-12-24T00:00:00Z"}, "sessionTarget": "main",
                "wakeMode": "now", "payload": {"kind": "systemEvent", "text": "later"}, "state": {}},
               {"id": "j-c", "name": "Zeta", "description": "weekly digest", "enabled": true, "createdAtMs": 4,
                "updatedAtMs": 40, "schedule": {"kind": "cron", "expr": "0 9 * * 1"}, "sessionTarget": "isolated",
                "wakeMode": "now", "payload": {"kind": "agentTurn", "message": "digest"},
                "delivery": {"mode": "announce", "channel": "telegram", "to": "42"}, "state": {}}
              ],
              "runs": [
               {"ts": 100, "jobId": "j-b", "action": "finished", "status": "ok", "summary": "backed up",
                "deliveryStatus": "delivered"},
               {"ts": 300, "jobId": "j-b", "action": "finished", "status": "error", "error": "disk full"},
               {"ts": 200, "jobId": "j-a", "action": "finished", "status": "ok", "summary": "sent"},
               {"ts": 300, "jobId": "j-a", "action": "finished", "status": "error", "error": "timed out",
                "errorReason": "timeout", "deliveryStatus": "not-delivered"},
               {"ts": 50, "jobId": "gone", "action": "finished", "status": "skipped"}
              ],
              "deliveryPreviews": {"j-c": {"label": "announce -> telegram:42", "detail": "explicit"}}
            },
             "skills": {"workspaceDir": "/work/agent", "managedSkillsDir": "/home/me/.openclaw/skills", "skills": [
              {"name": "weather", "description": "Forecasts", "source": "openclaw-bundled",
               "filePath": "/b/weather/SKILL.md", "baseDir": "/b/weather", "emoji": "W",
               "requirements": {"bins": ["curl", "jq"], "anyBins": ["wget", "fetch"]},
               "missing": {"bins": ["curl", "jq"], "anyBins": ["wget", "fetch"]},
               "install": [{"id": "brew-0", "kind": "brew", "label": "Install curl (brew)", "bins": ["curl", "jq", "wget"]}]},
              {"name": "notes", "description": "Notes", "source": "openclaw-workspace", "filePath": "/w/notes/SKILL.md",
               "baseDir": "/w/notes", "skillKey": "notes-key", "disabled": true},
              {"name": "always-on", "description": "Always", "source": "openclaw-managed", "filePath": "/m/a/SKILL.md",
               "baseDir": "/m/a", "always": true, "requirements": {"env": ["TOKEN"]}, "missing": {"env": ["TOKEN"]},
               "configChecks": [{"path": "x.y", "value": null, "satisfied": false}]}
             ]}}
            """#.utf8).write(to: URL(fileURLWithPath: fixtures))
        defer {
            try? FileManager.default.removeItem(at: workspace)
            try? FileManager.default.removeItem(atPath: workspace.path + "-outside")
            try? FileManager.default.removeItem(atPath: fixtures)
        }
        try await ServeProcess.withServe(["--auth", "token:\(secret)", "--pairing", "auto", "--workspace", workspace.path,
                                          "--fixtures", fixtures]) { serve, url in
            // chat.abort needs runs that are still going: the agent answers only after 600 s.
            try serve.send("chat-auto-reply echo --delay 600")
            _ = try #require(await serve.object("event", "command.ok") { $0["command"] == "chat-auto-reply" },
                             Comment(rawValue: serve.transcript))
            // artifacts.download: three rows of a session of their own (seq 1, 2, 3), with an inline
            // image, a file by URL and an audio block with neither; the peer derives their ids.
            for blocks in [#"[{"type":"image","title":"chart.png","data":"aGVsbG8=","mimeType":"image/png"}]"#,
                           #"[{"type":"file","title":"report.pdf","url":"https://example.com/report.pdf"}]"#,
                           #"[{"type":"audio","title":"memo"}]"#] {
                let cursor = serve.objects.all.count
                try serve.send("chat-post attached --session agent:main:artifacts --blocks \(blocks)")
                _ = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"] == "chat-post" },
                                 Comment(rawValue: serve.transcript))
            }
            try await InteropPython.withPeer("gateway_wire_checks.py", [url, secret, "--suite", "apps", "--workspace-dir", workspace.path,
                                                          "--fixtures-file", fixtures]) { peer in
                func context() -> Comment { Comment(rawValue: serve.transcript + "\n" + peer.transcript) }
                let checks = ["workspace-list-order", "workspace-list-limits", "workspace-previews", "workspace-too-large",
                              "workspace-links-refused", "workspace-unsupported", "workspace-invalid-requests",
                              "voicewake-set-broadcast", "agent-files-compare-and-set", "commands-list",
                              "talk-mode-broadcast", "chat-abort", "agent-wait", "health", "tasks-list", "config-get",
                              "cron-list", "cron-get", "cron-runs", "chat-metadata", "talk-config", "skills-status",
                              "skills-install", "artifacts-download", "plugin-surface-refresh",
                              "unserved-method"]
                try await peer.expectChecksPass(checks, context: context)
                try await peer.expectDoneAndExit(context: context)
                let unserved = serve.objects.all.filter { $0["event"] == "method.unserved" }
                #expect(unserved.count == 1 && unserved.first?["method"] == "last-heartbeat", context())
            }
        }
    }

    @Test func pythonNodePairsThroughTheConsoleIsInvokedAndSendsAPresenceBeacon() async throws {
        try await ServeProcess.withServe { serve, url in
            try await InteropPython.withPeer("gateway_node_peer.py", [url, "--timeout", "60"]) { peer in
                func context() -> Comment { Comment(rawValue: serve.transcript + "\n" + peer.transcript) }

                // Unpaired: PAIRING_REQUIRED; the console sees the request and approves it.
                let refused = try #require(await peer.object("step", "pairing_required"), context())
                let deviceId = try #require(refused["deviceId"]?.stringValue)
                let requested = try #require(await serve.object("event", "pairing.requested"), context())
                #expect(requested["requestId"] == refused["requestId"])
                #expect(requested["deviceId"]?.stringValue == deviceId)
                #expect(requested["role"] == "node")
                try serve.send("approve latest")
                let approved = try #require(await serve.object("event", "command.ok") { $0["command"] == "approve" }, context())
                #expect(approved["result"]?["requestId"] == refused["requestId"])

                // The peer retries on its own, gets a token, and reconnects with it.
                let paired = try #require(await peer.object("step", "paired"), context())
                #expect(paired["deviceToken"]?.stringValue?.isEmpty == false)
                _ = try #require(await peer.object("step", "ready"), context())

                let cursor = serve.objects.count
                try serve.send("invoke latest device.info")
                let reply = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"] == "invoke" },
                                         context())
                #expect(reply["result"]?["ok"] == true)
                #expect(reply["result"]?["nodeId"]?.stringValue == deviceId)
                let payloadJSON = try #require(reply["result"]?["payloadJSON"]?.stringValue)
                let payload = try JSONValue(parsing: payloadJSON)
                #expect(payload["model"] == "PythonNode")
                #expect(payload["command"] == "device.info")
                let invokeId = try #require(reply["result"]?["id"]?.stringValue)
                let result = try #require(await serve.object(after: cursor, "event", "invoke.result"), context())
                #expect(result["id"]?.stringValue == invokeId)
                #expect(result["ok"] == true)
                let answered = try #require(await peer.object("step", "invoke"), context())
                #expect(answered["id"]?.stringValue == invokeId)

                // The beacon is persisted, as the peer and the console both report.
                let presence = try #require(await peer.object("step", "presence"), context())
                #expect(presence["handled"] == true)
                #expect(presence["reason"] == "persisted")
                let alive = try #require(await serve.object("event", "presence.alive"), context())
                #expect(alive["nodeId"]?.stringValue == deviceId)
                #expect(alive["handled"] == true)
                #expect(alive["reason"] == "persisted")

                try await peer.expectDoneAndExit(context: context)
            }
        }
    }

    @Test func pythonOperatorApprovesANodeResolvesAnApprovalAndAnswersQuestions() async throws {
        try await ServeProcess.withServe { serve, url in
            let seed = String(repeating: "22", count: 32)
            try await InteropPython.withPeer("gateway_operator_peer.py", [url, "--seed", seed, "--timeout", "90"]) { peer in
                func context() -> Comment { Comment(rawValue: serve.transcript + "\n" + peer.transcript) }

                // The operator itself is approved from the console.
                let refused = try #require(await peer.object("step", "pairing_required"), context())
                let requested = try #require(await serve.object("event", "pairing.requested") { $0["role"] == "operator" },
                                             context())
                #expect(requested["requestId"] == refused["requestId"])
                try serve.send("approve latest")
                _ = try #require(await peer.object("step", "operator_ready"), context())

                // It lists and approves a node's request over the wire.
                let nodeApproved = try #require(await peer.object("step", "node_approved"), context())
                let nodeResolved = try #require(await serve.object("event", "pairing.resolved") {
                    $0["requestId"] == nodeApproved["requestId"]
                }, context())
                #expect(nodeResolved["decision"] == "approved")
                #expect(nodeResolved["deviceId"] == nodeApproved["nodeDeviceId"])

                // An approval made on the console is resolved by the operator.
                var cursor = serve.objects.count
                try serve.send(#"approval "rm -rf /tmp/x" --expires-in 60"#)
                let created = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"] == "approval" },
                                           context())
                let approvalId = try #require(created["result"]?["id"]?.stringValue)
                let resolvedByPeer = try #require(await peer.object("step", "approval_resolved"), context())
                #expect(resolvedByPeer["id"]?.stringValue == approvalId)
                let approvalResolved = try #require(await serve.object("event", "approval.resolved") {
                    $0["id"]?.stringValue == approvalId
                }, context())
                #expect(approvalResolved["decision"] == "allow-once")
                #expect(approvalResolved["status"] == "allowed")

                // A console question answered by the operator.
                cursor = serve.objects.count
                try serve.send(#"question "Deploy to?" --options staging,production"#)
                let question = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"] == "question" },
                                            context())
                let questionId = try #require(question["result"]?["id"]?.stringValue)
                let answered = try #require(await peer.object("step", "question_answered"), context())
                #expect(answered["id"]?.stringValue == questionId)
                let questionResolved = try #require(await serve.object("event", "question.resolved") {
                    $0["id"]?.stringValue == questionId
                }, context())
                #expect(questionResolved["status"] == "answered")
                #expect(questionResolved["answers"] == ["q1": ["staging"]])

                // Done-when: created with --expires-in 900, expired by `advance 901`; every
                // operator session with the scope is told, and a late answer is refused.
                cursor = serve.objects.count
                try serve.send(#"question "Still there?" --options yes,no --expires-in 900"#)
                let expiring = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"] == "question" },
                                            context())
                let expiringId = try #require(expiring["result"]?["id"]?.stringValue)
                let pending = try #require(await peer.object("step", "question_pending"), context())
                #expect(pending["id"]?.stringValue == expiringId)
                try serve.send("advance 901")
                let expired = try #require(await serve.object("event", "question.resolved") {
                    $0["id"]?.stringValue == expiringId
                }, context())
                #expect(expired["status"] == "expired")
                let seen = try #require(await peer.object("step", "question_expired"), context())
                #expect(seen["sessions"] == ["A", "B"])
                let late = try #require(await peer.object("step", "late_answer_rejected"), context())
                #expect(late["code"] == "INVALID_REQUEST")
                #expect(late["reason"] == "QUESTION_ALREADY_TERMINAL")
                #expect(late["message"]?.stringValue == "question '\(expiringId)' is already expired")

                try await peer.expectDoneAndExit(context: context)
            }
        }
    }

    @Test(.enabled(if: WebSocketTLS.isAvailable, "TLS needs OpenSSL"))
    func pythonNodeOverTLSWithThePrintedFingerprintPinnedPairsAndIsInvoked() async throws {
        try await ServeProcess.withServe(["--tls"]) { serve, url in
            #expect(url.hasPrefix("wss://"))
            let fingerprint = try #require(serve.objects.all.first?["tlsFingerprint"]?.stringValue, "\(serve.transcript)")
            try await InteropPython.withPeer("gateway_node_peer.py", [url, "--pin", fingerprint, "--timeout", "60"]) { peer in
                func context() -> Comment { Comment(rawValue: serve.transcript + "\n" + peer.transcript) }
                _ = try #require(await peer.object("step", "pairing_required"), context())
                try serve.send("approve")
                _ = try #require(await peer.object("step", "ready"), context())
                let cursor = serve.objects.count
                try serve.send("invoke latest device.info")
                let reply = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"] == "invoke" }, context())
                #expect(reply["result"]?["ok"] == true)
                _ = try #require(await peer.object("step", "presence"), context())
                try await peer.expectDoneAndExit(context: context)
            }
        }
    }

    @Test(.enabled(if: WebSocketTLS.isAvailable, "TLS needs OpenSSL"))
    func aPythonClientWithAWrongPinRefusesTheGatewayBeforeAnyFrame() async throws {
        try await ServeProcess.withServe(["--tls"]) { serve, url in
            let fingerprint = try #require(serve.objects.all.first?["tlsFingerprint"]?.stringValue)
            let wrong = (fingerprint.first == "0" ? "1" : "0") + fingerprint.dropFirst()
            try await InteropPython.withPeer("gateway_node_peer.py", [url, "--pin", wrong, "--timeout", "20"]) { peer in
                func context() -> Comment { Comment(rawValue: serve.transcript + "\n" + peer.transcript) }
                let error = try #require(await peer.object("step", "error"), context())
                #expect(error["message"]?.stringValue?.hasPrefix("PinMismatch: certificate fingerprint mismatch") == true, context())
                #expect(await peer.waitForExit(timeout: .seconds(30)) == 1, context())
                // The upgrade request was never sent: the Gateway saw no WebSocket connection.
                try serve.send("status")
                let status = try #require(await serve.object("event", "command.ok") { $0["command"] == "status" }, context())
                #expect(status["result"]?["connections"] == 0)
                #expect(!serve.objects.all.contains { $0["event"] == "connection.opened" }, context())
            }
        }
    }
}
