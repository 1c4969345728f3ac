import Conformance
import Foundation

// The harness command line: every subcommand is one entry of `HarnessCommands.tool`.
let status = await HarnessCommands.tool.main(Array(CommandLine.arguments.dropFirst()))
exit(status)
