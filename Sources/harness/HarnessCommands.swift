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
    /// The scenario catalogue: every file in `scenarios/`, indexed by the `ScenarioIndexPlugin`.
    static let scenarios: [Scenario] = allScenarios

    /// In-process clients for `harness run --node NAME`.
    static var nodes: NodeUnderTestRegistry {
        var registry = NodeUnderTestRegistry()
        registry.registerReferenceClients()
        return registry
    }

    /// Subcommands beyond `list`, `explain` and `run` (`serve`, `reference-node`, `selftest`).
    static let additionalCommands: [CommandSpec] = [ServeCommand.spec, SelftestCommand.spec, ReferenceNodeCommand.spec]

    /// The context the conformance subcommands share.
    static var context: HarnessContext {
        HarnessContext(scenarios: scenarios, nodes: nodes, gatewayFactory: GatewayFactories.standard)
    }

    /// The tool.
    static var tool: CommandLineTool {
        CommandLineTool(
            name: "harness",
            summary: "a fake OpenClaw Gateway and a conformance harness for its clients",
            commands: ConformanceCommands.all(context) + additionalCommands)
    }
}
