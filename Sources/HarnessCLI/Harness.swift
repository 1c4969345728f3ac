import Conformance
import Foundation
import Scenarios

/// The harness's command line as a library, for a package that adds scenarios and in-process
/// clients of its own.
///
/// A three-line `main.swift` in your package gives you `list`, `explain`, `run`, `serve`,
/// `selftest` and `reference-node` with your scenarios next to the built-in catalogue and your
/// clients next to `--node reference`:
///
/// ```swift
/// import AcmeNode
/// import AcmeScenarios
/// import HarnessCLI
///
/// await Harness.main(scenarios: AcmeScenarios.allScenarios, nodes: ["acme": .init("Acme's node") { AcmeNode() }])
/// ```
///
/// Your scenarios need IDs of the form `X-OWNER-NNN` (`X-ACME-001`): an ID of the built-in
/// catalogue, or one used twice, is refused before any command runs. `selftest` validates the
/// built-in catalogue only.
public enum Harness {
    /// An in-process client for `run --node NAME`.
    public struct Client: Sendable {
        /// One line for `run --help` and the report header.
        public var summary: String
        /// How it reaches the Gateway (see `NodeUnderTestRegistry.register`).
        public var transport: InProcessTransport
        /// Makes a fresh client for each run.
        public var factory: NodeUnderTestRegistry.Factory

        /// Describes a client.
        /// - Parameters:
        ///   - summary: one line for `run --help` and the report header.
        ///   - transport: `.simulated` (the default) or `.loopbackSockets` for a client that
        ///     cannot use `NodeConfiguration.connector` and `spawnTask`.
        ///   - factory: makes a fresh client for each run.
        public init(_ summary: String, transport: InProcessTransport = .simulated,
                    factory: @escaping NodeUnderTestRegistry.Factory) {
            self.summary = summary
            self.transport = transport
            self.factory = factory
        }
    }

    /// The command line over the built-in catalogue plus `scenarios`, with the reference clients
    /// plus `nodes`.
    /// - Throws: `HarnessError` when a scenario's ID is not of the form `X-OWNER-NNN` or is used
    ///   twice, or when a client's name is taken.
    public static func tool(scenarios: [Scenario] = [], nodes: [String: Client] = [:]) throws -> CommandLineTool {
        let catalogue = try ScenarioCatalogue.combined(HarnessCommands.scenarios, with: scenarios)
        var registry = HarnessCommands.nodes
        let taken = nodes.keys.filter { registry.summary(of: $0) != nil }.sorted()
        guard taken.isEmpty else {
            throw HarnessError("the client name\(taken.count == 1 ? "" : "s") \(taken.joined(separator: ", ")) "
                               + "\(taken.count == 1 ? "is" : "are") taken by the built-in clients; choose another")
        }
        for (name, client) in nodes.sorted(by: { $0.key < $1.key }) {
            registry.register(name, summary: client.summary, transport: client.transport, factory: client.factory)
        }
        return HarnessCommands.tool(scenarios: catalogue, nodes: registry)
    }

    /// Runs one command line.
    /// - Parameters:
    ///   - arguments: the arguments after the program name.
    ///   - scenarios: your scenarios (see ``tool(scenarios:nodes:)``).
    ///   - nodes: your in-process clients, by name.
    /// - Returns: the exit status: 0 nothing gated failed, 1 conformance failures, 2 usage or
    ///   harness error (including a bad scenario ID or client name).
    public static func run(_ arguments: [String], scenarios: [Scenario] = [], nodes: [String: Client] = [:]) async -> Int32 {
        do {
            return try await tool(scenarios: scenarios, nodes: nodes).main(arguments)
        } catch {
            FileHandle.standardError.write(Data("harness: \(error)\n".utf8))
            return 2
        }
    }

    /// Runs the process's command line and exits with its status.
    /// - Parameters:
    ///   - scenarios: your scenarios (see ``tool(scenarios:nodes:)``).
    ///   - nodes: your in-process clients, by name.
    ///
    /// As the process's own entry point it also adopts the orphans of client processes
    /// (``OrphanReaping/enableForThisProcess()``): every child of this process is then a client
    /// or one of its descendants. ``run(_:scenarios:nodes:)`` does not.
    public static func main(scenarios: [Scenario] = [], nodes: [String: Client] = [:]) async -> Never {
        OrphanReaping.enableForThisProcess()
        exit(await run(Array(CommandLine.arguments.dropFirst()), scenarios: scenarios, nodes: nodes))
    }
}
