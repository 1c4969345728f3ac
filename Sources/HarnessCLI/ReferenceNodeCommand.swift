import Conformance
import Foundation
import GatewayProtocol
import ReferenceNode
import Locking
import WebSocketTransport

/// `harness reference-node`: the reference client as an adapter process, speaking
/// `docs/adapter-protocol.md` on stdin/stdout, so that the process driver is exercised by a real
/// subprocess (`harness run --node-command "harness reference-node"`).
enum ReferenceNodeCommand {
    static let spec = CommandSpec(
        name: "reference-node",
        summary: "Run the reference client as an adapter process (stdin/stdout, docs/adapter-protocol.md).",
        discussion: """
        Reads OPENCLAW_GATEWAY_URL (ws:// or wss://), OPENCLAW_GATEWAY_TOKEN (optional), \
        OPENCLAW_GATEWAY_TLS_FINGERPRINT (the pinned certificate of a wss:// Gateway), OPENCLAW_STATE_DIR and \
        OPENCLAW_HARNESS_SEED (optional) from the environment, connects to the Gateway, prints the \
        adapter hello and then answers one stimulus per input line. It stops when its input closes.
        """,
        flags: [
            .choice("--mutant", "NAME", among: Mutant.allCases.map(\.rawValue), what: "mutant",
                    help: "Switch on one known bug (see --list-mutants).", repeatable: true),
            .flag("--list-mutants", help: "Print one mutant name per line and exit."),
            .option("--declare", "COMMAND",
                    help: "Declare only these commands in connect.commands (default: every command it implements), "
                        + "as a third-party node with its own commands would.", repeatable: true),
        ]
    ) { arguments, io in
        if arguments.isSet("--list-mutants") {
            io.out(Mutant.allCases.map(\.rawValue).joined(separator: "\n") + "\n")
            return CommandLineTool.exitSuccess
        }
        // Every name was checked against Mutant.allCases when the command line was parsed.
        let mutants = Set(arguments.allValues("--mutant").compactMap(Mutant.init(rawValue:)))
        guard let url = io.environment["OPENCLAW_GATEWAY_URL"], !url.isEmpty else {
            io.err("error: OPENCLAW_GATEWAY_URL is not set (this command is started by harness run --node-command)\n")
            return CommandLineTool.exitUsage
        }
        guard let stateDirectory = io.environment["OPENCLAW_STATE_DIR"], !stateDirectory.isEmpty else {
            io.err("error: OPENCLAW_STATE_DIR is not set\n")
            return CommandLineTool.exitUsage
        }
        let declared = arguments.allValues("--declare")
        if let empty = declared.first(where: { $0.trimmingCharacters(in: .whitespaces).isEmpty }) {
            io.err("error: --declare needs a command name, got \"\(empty)\"\n")
            return CommandLineTool.exitUsage
        }
        let token = io.environment["OPENCLAW_GATEWAY_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        // The seed parses as `--seed` does; a bad value is an error, never a silent 0.
        var seed: UInt64 = 0
        if let text = io.environment["OPENCLAW_HARNESS_SEED"] {
            do throws(OptionValueError) {
                seed = try SeedOption(option: text).value
            } catch {
                io.err("error: OPENCLAW_HARNESS_SEED is '\(text)': \(error)\n")
                return CommandLineTool.exitUsage
            }
        }
        // A wss:// Gateway is trusted by the fingerprint harness run (or a person) gives.
        let fingerprint = io.environment["OPENCLAW_GATEWAY_TLS_FINGERPRINT"].flatMap { $0.isEmpty ? nil : $0 }
        if let fingerprint, WebSocketTLSClientConfiguration.normalizedFingerprint(fingerprint) == nil {
            io.err("error: OPENCLAW_GATEWAY_TLS_FINGERPRINT is not a SHA-256 fingerprint (64 hex digits): \(fingerprint)\n")
            return CommandLineTool.exitUsage
        }
        let connector = SocketConnector(tls: fingerprint.map { WebSocketTLSClientConfiguration(pinnedCertificateSHA256: $0) })
        let client = ReferenceClient(configuration: ReferenceConfiguration(
            gatewayURL: url, sharedToken: token, stateDirectory: URL(fileURLWithPath: stateDirectory), seed: seed,
            mutants: mutants, connector: connector, declaredCommands: declared.isEmpty ? nil : declared))
        let hello: JSONValue = [
            "type": "hello", "adapterProtocol": 1,
            "client": ["name": "openclaw-reference", "mutants": .array(mutants.map { .string($0.rawValue) }.sorted { $0.jsonString < $1.jsonString })],
            "stimuli": .array(client.supportedStimuli.sorted().map(JSONValue.string)),
        ]
        io.out(hello.jsonString + "\n")
        do {
            try await client.start()
        } catch {
            io.err("error: the reference client did not start: \(error)\n")
            return CommandLineTool.exitFailures
        }
        for await line in StandardInputLines.stream() {
            guard let message = try? JSONValue(parsing: line), message["type"]?.stringValue == "stimulus",
                  let id = message["id"], let name = message["stimulus"]?.stringValue else {
                io.err("ignored an input line that is not a stimulus: \(line.prefix(200))\n")
                continue
            }
            let params = message["params"]?.objectValue ?? [:]
            var reply: [String: JSONValue] = ["type": "reply", "id": id]
            switch await client.apply(name: name, params: params) {
            case .ok:
                reply["status"] = "ok"
            case .error(let text):
                reply["status"] = "error"
                reply["message"] = .string(text)
            case .unsupported(let text):
                reply["status"] = "unsupported"
                reply["message"] = .string(text)
            }
            io.out(JSONValue.object(reply).jsonString + "\n")
        }
        await client.stop()
        return CommandLineTool.exitSuccess
    }
}

/// Standard input as a stream of lines, read on a dedicated thread (a blocking read must not
/// occupy a thread of the cooperative pool).
enum StandardInputLines {
    static func stream() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        let thread = Thread {
            while let line = readLine(strippingNewline: true) {
                continuation.yield(line)
            }
            continuation.finish()
        }
        thread.start()
        return stream
    }
}
