import AcmeNode
import AcmeScenarios
import HarnessCLI

// The harness's command line, with Acme's scenarios added to the catalogue and Acme's node
// available as `--node acme`: `swift run acme-harness run --node acme --filter 'X-ACME-*'`.
await Harness.main(scenarios: AcmeScenarios.allScenarios, nodes: ["acme": .init("Acme's node") { AcmeNode() }])
