import GatewayProtocol
import MockGateway
import Testing

/// The node command policy's tables and decisions against upstream's lists
/// (src/gateway/node-command-policy.ts, src/infra/node-commands.ts; docs/fidelity.md cites the
/// revisions). Each table is spelled out here independently of the implementation, so a changed
/// entry fails (tried: deny applied before allow fails `dangerousCommandsNeedAllowAndDenyAlwaysWins`).
/// The filter that keeps dangerous commands out of the non-`allow` sources cannot be seen from
/// these tables: no built-in default list holds a dangerous command.
@Suite("Node command policy")
struct NodeCommandPolicyTests {
    static func node(platform: String?, family: String?, caps: [String] = [], commands: [String],
                     effective: [String]? = nil) -> NodeCommandPolicy.Node {
        NodeCommandPolicy.Node(nodeId: "n1", platform: platform, deviceFamily: family, caps: caps,
                               declaredCommands: commands, effectiveCommands: effective)
    }

    @Test func platformDefaultsAreUpstreamsLists() {
        #expect(Set(NodeCommandPolicy.platformDefaults(.ios)) == [
            "camera.list", "location.get", "device.info", "device.status", "contacts.search", "calendar.events",
            "reminders.list", "photos.latest", "motion.activity", "motion.pedometer", "system.notify",
        ])
        #expect(Set(NodeCommandPolicy.platformDefaults(.watchos)) == ["device.info", "device.status", "system.notify"])
        #expect(Set(NodeCommandPolicy.platformDefaults(.android)) == [
            "camera.list", "location.get", "notifications.list", "notifications.actions", "system.notify", "device.info",
            "device.status", "device.permissions", "device.health", "device.apps", "contacts.search", "calendar.events",
            "callLog.search", "reminders.list", "photos.latest", "motion.activity", "motion.pedometer",
            "mobile.ui.observe", "mobile.ui.act",
        ])
        #expect(Set(NodeCommandPolicy.platformDefaults(.unknown)) == ["camera.list", "location.get", "system.notify"])
        let system: Set<String> = [
            "system.run.prepare", "system.run", "system.which", "system.execApprovals.get", "system.execApprovals.set",
            "fs.listDir", "terminal.upload", "system.notify", "browser.proxy", "browser.proxy.upload.v1",
            "mcp.tools.call.v1", "agent.cli.claude.run.v1",
        ]
        let desktop: Set<String> = ["screen.snapshot", "desktop.stream", "computer.act"]
        #expect(Set(NodeCommandPolicy.platformDefaults(.linux)) == system.union(desktop))
        #expect(Set(NodeCommandPolicy.platformDefaults(.windows))
            == system.union(desktop).union(["camera.list", "location.get", "device.info", "device.status"]))
        #expect(Set(NodeCommandPolicy.platformDefaults(.macos)) == system.union(desktop).union([
            "camera.list", "camera.ptz.status", "location.get", "device.info", "device.status", "device.apps",
            "contacts.search", "calendar.events", "reminders.list", "photos.latest", "motion.activity", "motion.pedometer",
        ]))
        #expect(Set(NodeCommandPolicy.dangerousCommands) == [
            "camera.snap", "camera.clip", "camera.ptz.control", "screen.record", "contacts.add", "calendar.add",
            "reminders.add", "sms.send", "sms.search", "health.summary",
        ])
        for platform in NodeCommandPolicy.Platform.allCases {
            #expect(Set(NodeCommandPolicy.platformDefaults(platform)).isDisjoint(with: NodeCommandPolicy.dangerousCommands))
        }
    }

    @Test func platformsAreClassifiedAsUpstreamClassifiesThem() {
        typealias P = NodeCommandPolicy
        #expect(P.platform(platform: "iOS 18.4.0", deviceFamily: "iPhone") == .ios)
        #expect(P.platform(platform: "iPadOS 18.4", deviceFamily: "iPad") == .ios)
        #expect(P.platform(platform: "ios", deviceFamily: nil) == .ios, "an exact id with no family (iOS allows that)")
        #expect(P.platform(platform: "ios", deviceFamily: "Mac") == .unknown, "metadata that disagrees is unknown")
        #expect(P.platform(platform: "iOS 18.4.0", deviceFamily: nil) == .unknown, "a native label needs its family")
        #expect(P.platform(platform: "Android 15 (SDK 35)", deviceFamily: "Android") == .android)
        #expect(P.platform(platform: "watchOS 11.2", deviceFamily: "Apple Watch") == .watchos)
        #expect(P.platform(platform: "macOS 15.3", deviceFamily: "Mac") == .macos)
        #expect(P.platform(platform: "macos", deviceFamily: nil) == .unknown, "macOS needs its family")
        #expect(P.platform(platform: "linux", deviceFamily: nil) == .unknown)
        #expect(P.platform(platform: "linux", deviceFamily: "Linux") == .linux)
        #expect(P.platform(platform: nil, deviceFamily: "my iPhone") == .ios, "without a platform the family decides")
        #expect(P.platform(platform: "ｉｏｓ", deviceFamily: "iPhone") == .ios, "compatibility forms are folded")
        #expect(P.platform(platform: "FreeBSD", deviceFamily: "server") == .unknown)
    }

    @Test func canvasDefaultsOnlyOnMacOS() {
        let policy = NodeCommandPolicy()
        let mac = policy.allowlist(for: Self.node(platform: "macOS 15.3", family: "Mac", commands: ["canvas.present"]))
        #expect(mac.isSuperset(of: ["canvas.present", "canvas.hide", "canvas.navigate"]))
        for (platform, family) in [("iOS 18.4.0", "iPhone"), ("Android 15", "Android"), ("linux", "Linux"), ("windows", "Windows"), ("x", "y")] {
            let list = policy.allowlist(for: Self.node(platform: platform, family: family, commands: ["canvas.present"]))
            #expect(!list.contains("canvas.present"), "\(platform) gets no Canvas defaults")
        }
    }

    @Test func talkAndWatchRelayRules() {
        let policy = NodeCommandPolicy()
        let plain = policy.allowlist(for: Self.node(platform: "iOS 18.4.0", family: "iPhone", commands: ["device.info"]))
        #expect(!plain.contains("talk.ptt.start"))
        #expect(plain.isSuperset(of: ["watch.status", "watch.notify"]), "an iPhone relays to its Watch")
        let withCap = policy.allowlist(for: Self.node(platform: "iOS 18.4.0", family: "iPhone", caps: ["Talk"], commands: ["device.info"]))
        #expect(withCap.isSuperset(of: NodeCommandPolicy.talkPushToTalkCommands))
        let withCommand = policy.allowlist(for: Self.node(platform: "linux", family: "Linux", commands: ["talk.ptt.start"]))
        #expect(withCommand.isSuperset(of: NodeCommandPolicy.talkPushToTalkCommands))
        let ipad = policy.allowlist(for: Self.node(platform: "iPadOS 18.4", family: "iPad", commands: ["device.info"]))
        #expect(!ipad.contains("watch.status"), "only an iPhone relays to a Watch")
    }

    @Test func dangerousCommandsNeedAllowAndDenyAlwaysWins() {
        let iphone = Self.node(platform: "iOS 18.4.0", family: "iPhone", commands: ["camera.snap", "health.summary", "device.info"])
        #expect(NodeCommandPolicy().evaluate(command: "camera.snap", node: iphone) == .notAllowlisted)
        #expect(NodeCommandPolicy(allow: ["camera.snap"]).evaluate(command: "camera.snap", node: iphone) == nil)
        #expect(NodeCommandPolicy(allow: ["camera.snap"], deny: ["camera.snap"]).evaluate(command: "camera.snap", node: iphone) == .notAllowlisted)
        #expect(NodeCommandPolicy(deny: ["device.info"]).evaluate(command: "device.info", node: iphone) == .notAllowlisted)
        #expect(NodeCommandPolicy(allow: ["health.summary"]).evaluate(command: "health.summary", node: iphone) == nil)
        #expect(NodeCommandPolicy(allow: ["worker.launch.v1"]).evaluate(command: "worker.launch.v1",
            node: Self.node(platform: "linux", family: "Linux", commands: ["worker.launch.v1"])) == .notAllowlisted,
                "private worker controls never become invocable")
    }

    @Test func declaredAndEffectiveCommands() {
        let policy = NodeCommandPolicy()
        #expect(policy.evaluate(command: "location.get", node: Self.node(platform: "iOS 18.4.0", family: "iPhone", commands: ["device.info"]))
            == .notDeclared)
        #expect(policy.evaluate(command: "location.get", node: Self.node(platform: "iOS 18.4.0", family: "iPhone", commands: []))
            == .noDeclaredCommands)
        #expect(policy.evaluate(command: " ", node: Self.node(platform: "iOS 18.4.0", family: "iPhone", commands: ["x"])) == .commandRequired)
        #expect(policy.evaluate(command: "sms.send", node: Self.node(platform: "iOS 18.4.0", family: "iPhone", commands: []))
            == .notAllowlisted, "the allowlist is checked before the declaration")
        let pending = Self.node(platform: "iOS 18.4.0", family: "iPhone", commands: ["device.info", "location.get"], effective: ["device.info"])
        let refusal = policy.refusal(command: "location.get", node: pending)
        #expect(refusal?.details == ["reason": "command not declared by node", "command": "location.get"])
        #expect(refusal?.message.hasSuffix("is pending approval; run `openclaw nodes pending`, then `openclaw nodes approve <requestId>`") == true)
    }

    @Test func refusalMessagesNameTheCauseAsUpstreamDoes() {
        let iphone = Self.node(platform: "iOS 18.4.0", family: "iPhone", commands: ["device.info", "camera.snap"])
        let target = "node command not allowed: \"camera.snap\" on node \"n1\" (platform: iOS 18.4.0)"
        let tail = "; review gateway.nodes.commands.allow and gateway.nodes.commands.deny (deny overrides allow)"
        #expect(NodeCommandPolicy().refusal(command: "camera.snap", node: iphone)?.message
            == target + " requires explicit gateway.nodes.commands.allow opt-in" + tail)
        #expect(NodeCommandPolicy(deny: ["camera.snap"]).refusal(command: "camera.snap", node: iphone)?.message
            == target + " is blocked by gateway.nodes.commands.deny" + tail)
        #expect(NodeCommandPolicy().refusal(command: "system.run", node: iphone)?.message
            == "node command not allowed: \"system.run\" on node \"n1\" (platform: iOS 18.4.0) is not in the Gateway allowlist" + tail)
        #expect(NodeCommandPolicy().refusal(command: "talk.ptt.start", node: iphone)?.message
            == "node command not allowed: \"talk.ptt.start\" on node \"n1\" (platform: iOS 18.4.0) requires a trusted Talk-capable node" + tail)
        #expect(NodeCommandPolicy().refusal(command: "location.get", node: iphone)?.message
            == "node command not allowed: \"location.get\" on node \"n1\" (platform: iOS 18.4.0) does not support this command; "
            + "check that its plugin or device runtime is installed and enabled on the device, then reconnect and approve the node's commands")
        #expect(NodeCommandPolicy().refusal(command: "camera.snap", node: iphone)?.code == "INVALID_REQUEST")
    }

    @Test func preflightRefusals() {
        #expect(NodeCommandPolicy.preflight(command: "system.execApprovals.get")?.message
            == "node.invoke does not allow system.execApprovals.*; use exec.approvals.node.*")
        #expect(NodeCommandPolicy.preflight(command: "system.execApprovals.set")?.details == ["command": "system.execApprovals.set"])
        #expect(NodeCommandPolicy.preflight(command: "worker.status.v1")?.message == "node.invoke does not allow private node controls")
        #expect(NodeCommandPolicy.preflight(command: "device.info") == nil)
        #expect(NodeCommandPolicy.requiresAdmin("browser.proxy"))
        #expect(NodeCommandPolicy.requiresAdmin("fs.listDir"))
        #expect(NodeCommandPolicy.requiresAdmin("terminal.upload"))
        #expect(!NodeCommandPolicy.requiresAdmin("system.run"))
    }
}
