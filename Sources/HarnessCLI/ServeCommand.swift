#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Conformance
import Dispatch
import Foundation
import MockGateway
import Locking
import QRCode
import WebSocketTransport

/// `harness serve`: a standalone fake Gateway with an operator console on stdin.
///
/// All behaviour lives in `MockGateway` (`GatewayConsole`, `GatewayConsoleSession`); this file
/// turns flags into a `GatewayConfiguration` and wires stdin, stdout and signals.
enum ServeCommand {
    /// The command's flag table: its parser and its `--help`.
    static let spec = CommandSpec(
        name: "serve",
        summary: "run a standalone fake Gateway with an operator console on stdin",
        discussion: """
            Prints `listening ws://HOST:PORT` (wss:// with --tls) first, with its details (TLS \
            fingerprint, state directory or in-memory state, auth mode) on the following lines, then \
            one line per gateway event, and answers one console command per stdin line (type `help`). \
            With --json every line is a JSON object with an "event" member. Tokens, setup codes and \
            passwords read <redacted> unless --show-secrets. The shared secret can also come from \
            --auth-file FILE or the environment variable \(ServeOptions.authEnvironmentVariable) (same \
            syntax as --auth). Runs until `quit`, SIGINT or SIGTERM; closing stdin does not stop it. \
            See docs/harness-serve.md ("Pairing a real phone").
            """,
        flags: ([
            .option("--host", "HOST", help: "Address to listen on (default 127.0.0.1); off loopback it needs --auth (or --insecure)."),
            .option("--port", PortOption.self, help: "Port to listen on; 0 picks a free one (default 18789)."),
            .option("--profile", "NAME", help: "Gateway generation: current, legacy or protocol3 (default current).",
                    validate: { GatewayProfile.named($0) == nil
                        ? "expected \(GatewayProfile.selectable.map(\.name).joined(separator: ", "))" : nil }),
            .option("--auth", "MODE", help: "Shared secret: none, token:SECRET or password:SECRET (default none). Other local users can read it from the process arguments; prefer --auth-file or OPENCLAW_HARNESS_AUTH.",
                    secret: true,
                    validate: { (try? ServeOptions.authMode($0)) == nil ? "expected none, token:SECRET or password:SECRET" : nil }),
            .option("--auth-file", "FILE", help: "Read the shared secret (token:SECRET or password:SECRET, first line) from FILE."),
            .option("--pairing", "POLICY", help: "Pairing approval: manual, auto or local (default manual).",
                    validate: { ["manual", "auto", "local"].contains($0) ? nil : "expected manual, auto or local" }),
            .option("--trusted-cidr", "CIDR", help: "Approve fresh scopeless nodes from this network.", repeatable: true,
                    validate: { entry in
                        do { _ = try IPNetwork(parsing: entry); return nil } catch { return "\(error)" }
                    }),
            .option("--node-command-allow", "COMMAND",
                    help: "gateway.nodes.commands.allow: let nodes run this command (needed for dangerous ones such as camera.snap).",
                    repeatable: true),
            .option("--node-command-deny", "COMMAND",
                    help: "gateway.nodes.commands.deny: never send this command to a node (wins over --node-command-allow).",
                    repeatable: true),
            .option("--tick-interval-ms", "N", help: "Tick interval in milliseconds (default 30000).",
                    validate: { Int($0).map { $0 > 0 } == true ? nil : "expected a positive number of milliseconds" }),
            .option("--transcript", "FILE", help: "Also write every frame to this JSON Lines file."),
            .option("--seed", SeedOption.self,
                    help: "Seed of every random choice (request ids, tokens), 0 to 2^53-1, decimal or 0x hex: secrets become predictable."),
            .option("--state-dir", "DIR", help: "Keep the identity, paired devices, tokens, pending requests, setup outcomes and TLS material here."),
            .option("--workspace", "DIR", help: "The workspace directory of agent main, browsed read-only by agents.workspace.list/get (the apps' Files card)."),
            .option("--fixtures", "FILE", help: "Serve the apps' fixtures from this JSON file: \"commands\" (commands.list), \"models\" (models.list), \"tasks\" (tasks.list), \"config\" (config.get, talk.config), \"cron\" (cron.list, cron.get, cron.runs), \"skills\" (skills.status, skills.install); docs/harness-serve.md \"Fixtures file\"."),
            .flag("--tls", help: "Serve wss:// with a self-signed certificate (kept in --state-dir, else new every run); Linux only."),
            .option("--cert", "FILE", help: "Serve wss:// with this PEM certificate (chain) instead (implies --tls); needs --key."),
            .option("--key", "FILE", help: "The PEM private key of --cert; needs --cert."),
            .option("--tls-cert", "FILE", help: "Same as --cert (for a certificate an Apple Watch trusts: docs/harness-serve.md)."),
            .option("--tls-key", "FILE", help: "Same as --key."),
            .option("--url", SetupCodeURLOption.self,
                    help: "The URL setup codes carry (default: the listening URL, a LAN address for 0.0.0.0)."),
            .flag("--qr", help: "Issue a setup code at start and draw its QR code (text output; with --json use --qr-png)."),
            .option("--qr-png", "FILE", help: "Issue a setup code at start and write its QR code to this PNG file."),
            .flag("--rate-limit-loopback",
                  help: "Apply the auth and node-pairing rate limits to loopback clients too (upstream exempts loopback by default)."),
            .flag("--insecure", help: "Allow a non-loopback --host without --auth (anyone who reaches the port may connect)."),
            .flag("--show-secrets", help: "Print tokens, setup codes and passwords: no redaction in the output, the transcript and verbose frames."),
            .flag("--json", help: "Write one JSON object per line."),
            .flag("--verbose", help: "Also print every frame in and out."),
        ] as [FlagSpec]) + ServeDiscovery.flags,
        action: { arguments, io in await run(arguments, io: io) })

    static func run(_ arguments: ParsedArguments, io: CommandIO) async -> Int32 {
        let configuration: GatewayConfiguration
        do {
            configuration = try ServeOptions.configuration(from: arguments, environment: io.environment, warn: { io.err("warning: \($0)\n") })
        } catch {
            io.err("error: \(error)\n")
            return CommandLineTool.exitUsage
        }
        for warning in ServeOptions.warnings(for: configuration, arguments: arguments) { io.err("warning: \(warning)\n") }
        let qrLibrary = SetupCodeQRRenderer.library(environment: io.environment)
        if arguments.isSet("--qr") || arguments.isSet("--qr-png"), case .failure(let error) = qrLibrary {
            io.err("error: \(arguments.isSet("--qr") ? "--qr" : "--qr-png"): \(error)\n")
            return CommandLineTool.exitUsage
        }
        MemoryReturn.configure()
        let temporaryTLS = configuration.tls.flatMap { tls in
            configuration.stateStore == nil && ServeOptions.tlsFiles(arguments).certificate == nil ? URL(fileURLWithPath: tls.certificateFile).deletingLastPathComponent() : nil
        }
        defer { if let temporaryTLS { try? FileManager.default.removeItem(at: temporaryTLS) } }
        let gateway: Gateway
        do {
            gateway = try await Gateway.start(configuration)
        } catch {
            io.err("error: cannot serve on \(configuration.host):\(configuration.port): \(error)\n")
            return CommandLineTool.exitUsage
        }
        var discoveryFields: [ConsoleEventLine.Field]
        let publisher: AvahiPublisher?
        do {
            discoveryFields = try ServeDiscovery.writeZone(gateway: gateway, arguments: arguments, environment: io.environment)
            publisher = try ServeDiscovery.advertise(gateway: gateway, arguments: arguments, environment: io.environment)
            if publisher != nil { discoveryFields.append(.init("advertised", .string("\(GatewayDiscoveryRecords.serviceType).local."))) }
        } catch {
            io.err("error: \(error)\n")
            await gateway.shutdown()
            return CommandLineTool.exitUsage
        }
        let format: ConsoleOutputFormat = arguments.isSet("--json") ? .json : .text
        let console = GatewayConsole(gateway: gateway, qrRenderer: { text, pngFile in
            try SetupCodeQRRenderer.render(text, pngFile: pngFile, library: qrLibrary)
        })
        let session = GatewayConsoleSession(console: console, format: format, verbose: arguments.isSet("--verbose"), write: io.out)
        session.announceListening(details: ServeOptions.banner(gateway: gateway, configuration: configuration,
                                                               temporaryTLS: temporaryTLS != nil) + discoveryFields)
        if arguments.isSet("--qr") || arguments.isSet("--qr-png") {
            // As if `setup-code` had been typed first.
            let line = "setup-code" + (arguments.value("--qr-png").map { " --qr-png \(ConsoleText.quoted($0))" } ?? "")
            if let reply = await console.handle(line) {
                io.out(reply.rendered(format, showSecrets: !gateway.transcript.redactSecrets) + "\n")
            }
        }
        let signals = StopSignals()
        ShutdownAtExit.arm()
        _ = await session.run(commands: standardInputLines(), stop: signals.stream)
        publisher?.stop()
        ShutdownAtExit.disarm()
        signals.cancel()
        return CommandLineTool.exitSuccess
    }


    /// Standard input, one element per line. A dedicated thread does the blocking reads so that
    /// no task of the cooperative pool waits on the terminal.
    static func standardInputLines() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        let thread = Thread {
            while let line = readLine(strippingNewline: true) { continuation.yield(line) }
            continuation.finish()
        }
        thread.start()
        return stream
    }
}

/// SIGINT, SIGTERM and SIGHUP as a stream, so that the console session can shut the Gateway
/// down cleanly (closing every connection) before the process exits.
final class StopSignals: Sendable {
    let stream: AsyncStream<Void>
    private let sources: Locked<[any DispatchSourceSignal]>

    init() {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        self.stream = stream
        let created = [SIGINT, SIGTERM, SIGHUP].map { number in
            #if canImport(Darwin)
            // kqueue reports signals only when their default action is disabled. On Linux,
            // libdispatch installs its own handler for the first source of a signal, and setting
            // SIG_IGN afterwards would silence every source of that signal.
            signal(number, SIG_IGN)
            #endif
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield() }
            source.resume()
            return source
        }
        sources = Locked(created)
    }

    func cancel() {
        sources.withLock { sources in
            for source in sources { source.cancel() }
        }
    }
}

/// Holds the process exit back until the console session has shut the Gateway down.
///
/// The harness's own interrupt handler (`InterruptHandling`) exits the process on SIGINT,
/// SIGTERM and SIGHUP. The same signal also reaches `StopSignals`, which ends the session and
/// closes every connection (1001, going away); an `atexit` hook waits for that to finish, for at
/// most a few seconds, so that clients see a clean close rather than a dropped connection.
enum ShutdownAtExit {
    private static let finished = Locked<DispatchSemaphore?>(nil)
    private static let hookInstalled = Locked(false)

    /// Called when serving starts.
    static func arm() {
        finished.withLock { $0 = DispatchSemaphore(value: 0) }
        let install = hookInstalled.withLock { installed in
            defer { installed = true }
            return !installed
        }
        if install { atexit { ShutdownAtExit.waitForSession() } }
    }

    /// Called when the session has shut the Gateway down.
    static func disarm() {
        let semaphore = finished.withLock { semaphore in defer { semaphore = nil }; return semaphore }
        semaphore?.signal()
    }

    private static func waitForSession() {
        guard let semaphore = finished.withLock({ $0 }) else { return }
        _ = semaphore.wait(timeout: .now() + 5)
    }
}

/// Returning freed memory to the system, so that the process's size falls back after a burst
/// of large frames.
///
/// glibc raises its mmap threshold to the size of the largest block freed (up to 32 MiB), after
/// which multi-megabyte frame buffers come from the heap and their pages stay with the process
/// once freed. A fixed threshold keeps every block of 256 KiB and more in its own mapping, which
/// `free` unmaps at once. Elsewhere (Darwin) the system allocator returns large blocks by itself.
enum MemoryReturn {
    static func configure() {
        #if canImport(Glibc)
        // `mallopt` is not exported by the Glibc module; it is looked up in the C library.
        // M_TRIM_THRESHOLD is -1, M_MMAP_THRESHOLD is -3 (<malloc.h>).
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        _ = mallopt(-3, 256 * 1024)
        _ = mallopt(-1, 1 << 20)
        #endif
    }
}

/// The QR codes of `setup-code`, drawn with libqrencode (opened at run time).
enum SetupCodeQRRenderer {
    /// The environment variable that names the libqrencode file to open instead of the usual
    /// places (`QREncodeLibrary.candidates`).
    static let libraryEnvironmentVariable = "OPENCLAW_LIBQRENCODE"

    /// libqrencode from `OPENCLAW_LIBQRENCODE`, else from the usual places.
    static func library(environment: [String: String]) -> Result<QREncodeLibrary, QRCodeError> {
        guard let path = environment[libraryEnvironmentVariable], !path.isEmpty else { return QREncodeLibrary.system }
        return Result { () throws(QRCodeError) in try QREncodeLibrary(candidates: [path]) }
    }

    /// The QR code of `text`, drawn for the terminal and written to `pngFile` if given. Without
    /// libqrencode a code is still issued, without a QR code, unless a PNG was asked for.
    static func render(_ text: String, pngFile: String?,
                       library: Result<QREncodeLibrary, QRCodeError>) throws -> SetupCodeQR? {
        let found: QREncodeLibrary
        switch library {
        case .success(let opened): found = opened
        case .failure(let error):
            if pngFile == nil { return nil }
            throw error
        }
        let code = try QRCode(encoding: text, errorCorrection: .medium, library: found)
        if let pngFile {
            let url = URL(fileURLWithPath: pngFile)
            try Data(code.png()).write(to: url, options: .atomic)
        }
        return SetupCodeQR(terminalText: code.terminalText(), pngFile: pngFile)
    }
}

/// Turning `serve` flags into a configuration.
enum ServeOptions {
    /// A flag value that passed its table check but still cannot be used.
    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    /// The environment variable that may hold the shared secret (`token:SECRET`, ...).
    static let authEnvironmentVariable = "OPENCLAW_HARNESS_AUTH"

    static func configuration(from arguments: ParsedArguments, environment: [String: String] = [:],
                              warn: (String) -> Void = { _ in }) throws -> GatewayConfiguration {
        let pairing = arguments.value("--pairing") ?? "manual"
        let networks = try arguments.allValues("--trusted-cidr").map { entry throws in try IPNetwork(parsing: entry) }
        let host = arguments.value("--host") ?? "127.0.0.1"
        let auth = try auth(from: arguments, environment: environment, warn: warn)
        if !isLoopback(host), !auth.hasSecret, !arguments.isSet("--insecure") {
            throw Invalid(description: """
                --host \(host) is not a loopback address: a Gateway on the network needs a shared secret. \
                Give --auth token:SECRET or --auth password:SECRET (or the same in --auth-file FILE or \
                \(authEnvironmentVariable)), or --insecure to serve without one.
                """)
        }
        let transcriptFile = arguments.value("--transcript").map { URL(fileURLWithPath: $0) }
        var memoryBudget = GatewayMemoryBudget.serve
        if transcriptFile != nil {
            // The file gets every entry; memory keeps only a little of the most recent.
            memoryBudget.transcript.totalBytes = 1 << 20
            memoryBudget.transcript.connectionBytes = 512 << 10
        }
        var configuration = GatewayConfiguration(
            host: host,
            port: arguments.value("--port", as: PortOption.self)?.value ?? 18789,
            profile: GatewayProfile.named(arguments.value("--profile") ?? "current") ?? .current,
            auth: auth,
            autoApproval: AutoApprovalPolicy(approveEverything: pairing == "auto", approveLoopback: pairing == "local",
                                             trustedNetworks: networks),
            clock: .system(),
            redactSecrets: !arguments.isSet("--show-secrets"),
            transcriptFile: transcriptFile,
            memoryBudget: memoryBudget)
        if let interval = arguments.value("--tick-interval-ms").flatMap(Int.init) { configuration.tickIntervalMs = interval }
        configuration.nodeCommands = NodeCommandPolicy(allow: arguments.allValues("--node-command-allow"),
                                                       deny: arguments.allValues("--node-command-deny"))
        // `gateway.auth.rateLimit.exemptLoopback: false`: a client on this machine can then be
        // rate-limited (AUTH_RATE_LIMITED), which is how the limits are tested locally.
        if arguments.isSet("--rate-limit-loopback") { configuration.authRateLimit.exemptLoopback = false }
        if let workspace = arguments.value("--workspace") {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: workspace, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw Invalid(description: "--workspace \(workspace): not a directory")
            }
            configuration.agents.setWorkspace(workspace, forAgent: AgentRoster.mainAgentId)
        }
        if let file = arguments.value("--fixtures") {
            configuration.fixtures = try fixtures(file)
        }
        if let directory = arguments.value("--state-dir") {
            do {
                configuration.stateStore = try GatewayStateStore(directory: URL(fileURLWithPath: directory))
            } catch {
                throw Invalid(description: error.description)
            }
        }
        configuration.tls = try tlsConfiguration(arguments, host: host, stateStore: configuration.stateStore)
        if let url = arguments.value("--url", as: SetupCodeURLOption.self) { configuration.advertisedURL = url.value }
        if configuration.advertisedURL == nil, let lan = LocalAddresses.firstLANIPv4(),
           (try? IPAddress(parsing: host))?.bytes.allSatisfy({ $0 == 0 }) == true {
            // Bound to every interface: setup codes need an address a phone can reach.
            configuration.advertisedHost = lan
        }
        if let seed = arguments.value("--seed", as: SeedOption.self)?.value {
            // Everything, the Gateway's identity included, follows the seed: a run replays exactly.
            configuration.seed = seed
            var derived = SeededRandom(seed: seed ^ 0x1DE7_171E_5EED)
            configuration.identitySeed = derived.bytes(32)
        } else {
            // Nothing predictable: a fresh seed, secrets from the system's secure generator and
            // a fresh identity (or the one kept in --state-dir).
            var system = SystemRandomNumberGenerator()
            configuration.seed = system.next() & SeedOption.maximum
            configuration.secretsFromSystemRandom = true
            configuration.identitySeed = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &system) }
        }
        return configuration
    }

    /// `--cert FILE` or its alias `--tls-cert FILE`, `--key FILE` or `--tls-key FILE`.
    static func tlsFiles(_ arguments: ParsedArguments) -> (certificate: String?, key: String?) {
        (arguments.value("--cert") ?? arguments.value("--tls-cert"), arguments.value("--key") ?? arguments.value("--tls-key"))
    }

    /// `--tls`, `--cert`/`--tls-cert`, `--key`/`--tls-key`: the files to serve with, generating a
    /// self-signed certificate on first use (into `--state-dir`, else into a temporary directory
    /// removed on exit).
    static func tlsConfiguration(_ arguments: ParsedArguments, host: String,
                                 stateStore: GatewayStateStore?) throws -> WebSocketTLSServerConfiguration? {
        for (name, alias) in [("--cert", "--tls-cert"), ("--key", "--tls-key")] {
            if let first = arguments.value(name), let second = arguments.value(alias), first != second {
                throw Invalid(description: "\(name) and \(alias) name different files")
            }
        }
        let (certificate, key) = tlsFiles(arguments)
        guard arguments.isSet("--tls") || certificate != nil || key != nil else { return nil }
        guard WebSocketTLS.isAvailable else { throw Invalid(description: "--tls: TLS needs OpenSSL; not available on this platform") }
        if certificate != nil || key != nil {
            guard let certificate, let key else { throw Invalid(description: "--cert and --key go together") }
            let configuration = WebSocketTLSServerConfiguration(certificateFile: certificate, privateKeyFile: key)
            do { try configuration.validate() } catch { throw Invalid(description: "--tls: \(error.detail)") }
            return configuration
        }
        let directory = stateStore?.tlsDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("openclaw-serve-tls-\(UUID().uuidString)")
        let certificateFile = directory.appendingPathComponent("gateway-cert.pem")
        let keyFile = directory.appendingPathComponent("gateway-key.pem")
        let configuration = WebSocketTLSServerConfiguration(certificateFile: certificateFile.path, privateKeyFile: keyFile.path)
        if FileManager.default.fileExists(atPath: certificateFile.path) {
            do { try configuration.validate() } catch {
                throw Invalid(description: "--tls: the kept certificate in \(directory.path) cannot be used (\(error.detail)); remove both files to make new ones")
            }
            return configuration
        }
        var names = ["DNS:localhost", "IP:127.0.0.1", "IP:::1"]
        if let address = try? IPAddress(parsing: host), !address.bytes.allSatisfy({ $0 == 0 }), !address.isLoopback { names.append("IP:\(address)") }
        if let lan = LocalAddresses.firstLANIPv4(), !names.contains("IP:\(lan)") { names.append("IP:\(lan)") }
        let hostName = ProcessInfo.processInfo.hostName
        if !hostName.isEmpty, hostName.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." }), hostName != "localhost" {
            names.append("DNS:\(hostName)")
        }
        do {
            let made = try WebSocketTLS.makeSelfSignedCertificate(commonName: "openclaw harness serve", subjectAlternativeNames: names)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try Data(made.privateKeyPEM.utf8).write(to: keyFile, options: .atomic)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile.path)
            try Data(made.certificatePEM.utf8).write(to: certificateFile, options: .atomic)
        } catch {
            throw Invalid(description: "--tls: cannot make a certificate in \(directory.path): \(error)")
        }
        return configuration
    }

    /// The `listening` line's extra fields and the lines that follow it in text mode.
    /// The fixtures of `--fixtures FILE`.
    /// - Throws: `Invalid` naming the file and the first problem (unreadable, not JSON, a value
    ///   that does not fit with its JSON pointer).
    static func fixtures(_ file: String) throws -> GatewayFixtures {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw Invalid(description: "--fixtures \(file): cannot read the file")
        }
        do {
            return try GatewayFixtures(data: data)
        } catch {
            throw Invalid(description: "--fixtures \(file): \(error)")
        }
    }

    static func banner(gateway: Gateway, configuration: GatewayConfiguration, temporaryTLS: Bool) -> [ConsoleEventLine.Field] {
        var fields: [ConsoleEventLine.Field] = []
        if let fingerprint = gateway.tlsFingerprint {
            fields.append(.init("tlsFingerprint", .string(fingerprint)))
            if temporaryTLS { fields.append(.init("tlsCertificate", .string("temporary: a new one every run without --state-dir"))) }
        }
        if let store = configuration.stateStore {
            fields.append(.init("stateDir", .string(store.directory.path)))
        } else {
            fields.append(.init("state", .string("in memory: pairings, tokens and the identity are lost on exit (--state-dir DIR keeps them)")))
        }
        if gateway.advertisedURL != gateway.url { fields.append(.init("setupCodeURL", .string(gateway.advertisedURL))) }
        fields.append(.init("auth", .string(configuration.auth.name)))
        return fields
    }

    /// What the person starting `serve` must know about the choices made: printed to stderr as
    /// `warning:` lines before the server starts.
    static func warnings(for configuration: GatewayConfiguration, arguments: ParsedArguments) -> [String] {
        var warnings: [String] = []
        if let seed = arguments.value("--seed") {
            warnings.append("""
                --seed \(seed): device tokens, setup codes, request ids and the Gateway identity are predictable \
                from the seed; use it to replay a run, never on a network you do not control
                """)
        }
        if !isLoopback(configuration.host), !configuration.auth.hasSecret {
            let approval = configuration.autoApproval.approveEverything
                ? " and is approved at once (--pairing auto), operator.admin included" : ""
            warnings.append("""
                --insecure: serving on \(configuration.host):\(configuration.port) without a shared secret; anyone \
                who can reach the port can connect, ask for pairing\(approval), and read the traffic unless --tls is on
                """)
        }
        if arguments.isSet("--show-secrets") {
            warnings.append("--show-secrets: tokens, setup codes and passwords appear in the output and the transcript")
        }
        return warnings
    }

    /// Whether `host` only accepts connections from this machine: `localhost`, 127.0.0.0/8 or `::1`.
    static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare.lowercased() == "localhost" { return true }
        return (try? IPAddress(parsing: bare))?.isLoopback == true
    }

    /// `none`, `token:SECRET` or `password:SECRET`. The error never repeats the text (it may
    /// hold a secret with a typo in its mode).
    static func authMode(_ text: String, source: String = "--auth") throws -> GatewayAuthMode {
        guard let mode = GatewayAuthMode(specification: text) else {
            throw Invalid(description: "invalid \(source): expected none, token:SECRET or password:SECRET")
        }
        return mode
    }

    /// The shared-secret mode from `--auth`, `--auth-file` or the environment, in that order;
    /// `--auth` and `--auth-file` together are refused.
    static func auth(from arguments: ParsedArguments, environment: [String: String], warn: (String) -> Void) throws
        -> GatewayAuthMode
    {
        let inline = arguments.value("--auth")
        let file = arguments.value("--auth-file")
        if inline != nil, file != nil { throw Invalid(description: "give the shared secret once: --auth or --auth-file, not both") }
        if let inline {
            let mode = try authMode(inline)
            // `token:` with nothing after it is "not configured": no secret to leak.
            if mode.hasSecret {
                warn("--auth puts the secret in the process arguments, which other local users can read; "
                     + "use --auth-file FILE or \(authEnvironmentVariable) instead")
            }
            return mode
        }
        if let file { return try authMode(fromFile: file, warn: warn) }
        if let value = environment[authEnvironmentVariable], !value.isEmpty {
            return try authMode(value.trimmingCharacters(in: .whitespacesAndNewlines), source: authEnvironmentVariable)
        }
        return .none
    }

    /// The first line of `path`, as `--auth` reads it.
    static func authMode(fromFile path: String, warn: (String) -> Void) throws -> GatewayAuthMode {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw Invalid(description: "cannot read --auth-file \(path): \((error as NSError).localizedDescription)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw Invalid(description: "--auth-file \(path) is not UTF-8 text")
        }
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let mode = try authMode(line.trimmingCharacters(in: .whitespaces), source: "--auth-file \(path) (first line)")
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & 0o077 != 0 {
            warn("\(path) can be read by other users; chmod 600 it")
        }
        return mode
    }
}

/// `--url`: the `ws://` or `wss://` URL, with a host, that setup codes carry.
struct SetupCodeURLOption: OptionValue {
    static let placeholder = "URL"
    /// The URL as typed.
    let value: String

    init(option text: String) throws(OptionValueError) {
        let expected = OptionValueError(expected: "ws://HOST:PORT or wss://HOST:PORT")
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              scheme == "ws" || scheme == "wss", components.host.map({ !$0.isEmpty }) == true else { throw expected }
        value = text
    }
}

/// This machine's own addresses (read from the interface list; nothing is sent).
enum LocalAddresses {
    /// The first IPv4 address of an interface that is up and not loopback.
    static func firstLANIPv4() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(first) }
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            let flags = Int32(bitPattern: UInt32(entry.pointee.ifa_flags))
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0,
                  let address = entry.pointee.ifa_addr, Int32(address.pointee.sa_family) == AF_INET else { continue }
            var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            let text = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer -> String? in
                var raw = pointer.pointee.sin_addr
                guard inet_ntop(AF_INET, &raw, &buffer, socklen_t(buffer.count)) != nil else { return nil }
                return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            if let text { return text }
        }
        return nil
    }
}
