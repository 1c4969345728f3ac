// The event log, the seeded random source and the time lines are part of the fake Gateway's
// API (`Gateway.events`, `GatewayConfiguration.seed`, `GatewayClock`); they live in `Simulation`
// so that the reference client and the conformance engine share them.
@_exported import Simulation

// The console's commands take their arguments through the option parser they share with the
// `harness` command line (`ConsoleCommand.arguments`, `OptionValue`).
@_exported import ArgumentParsing
