import Conformance
import Foundation
import GatewayProtocol
import ReferenceAdapter
import ReferenceNode

/// `harness selftest`: the catalogue against the correct reference client and every mutant.
enum SelftestCommand {
    static let spec = CommandSpec(
        name: "selftest",
        summary: "Validate the catalogue: the reference client passes, every mutant is caught.",
        discussion: """
        Runs every scenario (on every profile it applies to) against the correct reference client and \
        against each of its mutants, in process on virtual time, and prints which scenario caught \
        which mutant. Exit codes: 0 the reference passes everything it can be tested on and every \
        mutant is caught; 1 otherwise; 2 usage error.
        """,
        flags: [
            .choice("--mutant", "NAME", among: Mutant.allCases.map(\.rawValue), what: "mutant",
                    help: "Only this mutant.", repeatable: true),
            .option("--filter", "GLOB", help: "Only scenario IDs matching the glob.", repeatable: true),
            .option("--seed", SeedOption.self, help: "Seed every random choice, 0 to 2^53-1, decimal or 0x hex (default: random, printed)."),
            .flag("--mapped", help: "Run each mutant only against the scenarios it names (fast; proves every mutant is caught)."),
            .option("--json", "FILE", help: "Write every run of the matrix (the reference client's and each mutant's) as JSON to FILE."),
            .option("--jobs", JobsOption.self, help: "Runs at once (default: the number of cores)."),
        ]
    ) { arguments, io in
        // Every name was checked against Mutant.allCases when the command line was parsed.
        let chosen = arguments.allValues("--mutant").compactMap(Mutant.init(rawValue:))
        let mutants = chosen.isEmpty ? Mutant.allCases : chosen
        // The same deadlines as `harness run`: in process they are virtual time, so a mutant that
        // waits them out costs no real time.
        var configuration = RunConfiguration()
        if let seed = arguments.value("--seed", as: SeedOption.self) { configuration.seed = seed.value }
        configuration.jobs = arguments.value("--jobs", as: JobsOption.self)?.value ?? 0
        configuration.selection = RunSelection(filters: ConformanceCommands.splitList(arguments.allValues("--filter")))
        io.out("Selftest: \(HarnessCommands.scenarios.count) scenarios, \(mutants.count) mutants, seed \(configuration.seed)\n")
        let start = ContinuousClock.now
        do {
            let matrix = try await MutationMatrix.compute(
                scenarios: HarnessCommands.scenarios, mutants: mutants,
                coverage: arguments.isSet("--mapped") ? .mapped : .full, configuration: configuration)
            io.out(matrix.rendered())
            io.out("Took \(ContinuousClock.now - start).\n")
            if let path = arguments.value("--json") {
                let reporter = JSONReporter()
                let document: JSONValue = [
                    "seed": .int(Int64(configuration.seed)),
                    "reference": .array(matrix.reference.map(reporter.value(of:))),
                    "mutants": .object(matrix.mutants.mapValues { .array($0.map(reporter.value(of:))) }),
                    "survivors": .array(matrix.survivors.map(JSONValue.string)),
                    "scenariosWithoutKill": .array(matrix.scenariosWithoutKill.map(JSONValue.string)),
                ]
                do {
                    try Data((document.jsonString + "\n").utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
                } catch {
                    io.err("error: cannot write \(path): \(error.localizedDescription)\n")
                    return CommandLineTool.exitUsage
                }
            }
            return matrix.isValid ? CommandLineTool.exitSuccess : CommandLineTool.exitFailures
        } catch {
            io.err("error: \(error)\n")
            return CommandLineTool.exitUsage
        }
    }
}
