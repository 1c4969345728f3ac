import Conformance
import MockGateway
import ReferenceAdapter
import Scenarios

/// The harness's subcommands and what they run against.
///
/// To add a subcommand, append one `CommandSpec` to `additionalCommands` (its flag table is
/// both its parser and its `--help`). To add a client for `run --node NAME`, register it in
/// `nodes`.
enum HarnessCommands {
    /// The built-in catalogue: every file in `scenarios/`, indexed by the `ScenarioIndexPlugin`.
    /// `selftest` validates this catalogue only (scenarios of your own are checked against your
    /// own clients and mutants).
    static let scenarios: [Scenario] = Scenarios.allScenarios

    /// In-process clients for `harness run --node NAME`: the reference client and its variants.
    static var nodes: NodeUnderTestRegistry {
        var registry = NodeUnderTestRegistry()
        registry.registerReferenceClients()
        return registry
    }

    /// Subcommands beyond `list`, `explain` and `run` (`serve`, `reference-node`, `selftest`).
    static let additionalCommands: [CommandSpec] = [ServeCommand.spec, SelftestCommand.spec, ReferenceNodeCommand.spec]

    /// The tool over `scenarios` (the built-in catalogue plus any of your own) and `nodes`.
    static func tool(scenarios: [Scenario], nodes: NodeUnderTestRegistry) -> CommandLineTool {
        let context = HarnessContext(scenarios: scenarios, nodes: nodes, gatewayFactory: GatewayFactories.standard)
        return CommandLineTool(
            name: "harness",
            summary: "a fake OpenClaw Gateway and a conformance harness for its clients",
            commands: ConformanceCommands.all(context) + additionalCommands)
    }
}
