import Conformance
import Foundation
import HarnessCLI
import Locking
import Testing

/// `Harness` as a library: a package's own scenarios and clients next to the built-in ones.
@Suite struct HarnessLibraryTests {
    /// Collects what a command writes.
    final class Output: Sendable {
        private let buffers = Locked<(out: String, err: String)>(("", ""))
        var out: String { buffers.withLock { $0.out } }
        var err: String { buffers.withLock { $0.err } }
        var io: CommandIO {
            CommandIO(out: { text in self.buffers.withLock { $0.out += text } },
                      err: { text in self.buffers.withLock { $0.err += text } },
                      environment: ["NO_COLOR": "1"])
        }
    }

    /// A user scenario the reference client passes: its node session comes up and declares
    /// device.info.
    static let own = Scenario(
        "X-TEST-001", .must, title: "the node declares device.info",
        requirement: "The client's node declares device.info.", source: "this test", tags: ["test"], profiles: .all
    ) { run in
        let declared = try await run.declaredCommands()
        try run.expect(declared.contains("device.info"), "device.info is declared",
                       expected: "device.info among the commands", actual: declared.joined(separator: ", "))
    }

    static func run(_ arguments: [String], scenarios: [Scenario] = [own]) async throws -> (Int32, Output) {
        let output = Output()
        let status = try await Harness.tool(scenarios: scenarios).main(arguments, io: output.io)
        return (status, output)
    }

    @Test func listAndExplainShowScenariosOfYourOwn() async throws {
        let (listed, list) = try await Self.run(["list"])
        #expect(listed == 0)
        #expect(list.out.contains("X-TEST-001"))
        #expect(list.out.contains("HS-001"))
        let (explained, explain) = try await Self.run(["explain", "X-TEST-001"])
        #expect(explained == 0)
        #expect(explain.out.contains("The client's node declares device.info."))
    }

    @Test func runRunsScenariosOfYourOwnWithTheCatalogue() async throws {
        let (status, output) = try await Self.run(["run", "--node", "reference", "--filter", "X-TEST-*", "--filter", "HS-001", "--quiet"])
        #expect(status == 0, "\(output.out)\n\(output.err)")
        #expect(output.out.contains("4 runs: 4 pass"), "\(output.out)")
    }

    @Test func aBuiltInIDCannotBeShadowed() throws {
        let impostor = Scenario("PAIR-001", .must, requirement: "impostor", source: "this test") { _ in }
        #expect(throws: HarnessError.self) { try Harness.tool(scenarios: [impostor]) }
        let twice = Scenario("X-TEST-001", .should, requirement: "the same ID again", source: "this test") { _ in }
        #expect(throws: HarnessError.self) { try Harness.tool(scenarios: [Self.own, twice]) }
    }

    @Test func aBuiltInClientNameCannotBeTaken() throws {
        #expect(throws: HarnessError.self) {
            try Harness.tool(nodes: ["reference": .init("impostor") { fatalError("never made") }])
        }
    }

    @Test func aBadScenarioIsAUsageErrorNotACrash() async {
        let impostor = Scenario("HS-001", .must, requirement: "impostor", source: "this test") { _ in }
        let status = await Harness.run(["list"], scenarios: [impostor])
        #expect(status == 2)
    }

    /// An option has one rule in every command that takes it.
    @Test func theSameOptionHasTheSameRulesInEveryCommand() throws {
        let tool = try Harness.tool()
        func problem(_ command: String, _ arguments: [String]) throws -> String? {
            let spec = try #require(tool.commands.first { $0.name == command })
            do {
                _ = try tool.parse(arguments, for: spec)
                return nil
            } catch let error as UsageError {
                return error.message
            }
        }
        for command in ["run", "selftest", "serve"] {
            #expect(try problem(command, ["--seed", "0x10"]) == nil, "\(command)")
            #expect(try problem(command, ["--seed", "9007199254740992"])
                    == "invalid value '9007199254740992' for '--seed': expected an integer from 0 to 9007199254740991 (decimal, or hexadecimal with 0x)",
                    "\(command)")
        }
        for command in ["run", "selftest"] {
            #expect(try problem(command, ["--jobs", "256"]) == nil, "\(command)")
            #expect(try problem(command, ["--jobs", "0"]) == "invalid value '0' for '--jobs': expected an integer from 1 to 256", "\(command)")
        }
        for command in ["selftest", "reference-node"] {
            #expect(try problem(command, ["--mutant", "stale-signed"])?.hasSuffix("did you mean 'stale-signed-at'?") == true, "\(command)")
        }
    }

    /// `OPENCLAW_HARNESS_SEED` parses as `--seed` does: a bad value stops `reference-node` with a
    /// usage error naming the variable and the value, before it connects anywhere.
    @Test func aBadSeedInTheEnvironmentIsAUsageError() async throws {
        for bad in ["abc", "-1", "9007199254740992", ""] {
            let output = Output()
            var io = output.io
            io.environment["OPENCLAW_GATEWAY_URL"] = "ws://127.0.0.1:9"
            io.environment["OPENCLAW_STATE_DIR"] = FileManager.default.temporaryDirectory.path
            io.environment["OPENCLAW_HARNESS_SEED"] = bad
            let status = try await Harness.tool().main(["reference-node"], io: io)
            #expect(status == 2, "\(bad)")
            #expect(output.err == "error: OPENCLAW_HARNESS_SEED is '\(bad)': expected an integer from 0 to 9007199254740991 "
                + "(decimal, or hexadecimal with 0x)\n", "\(bad)")
            #expect(output.out.isEmpty, "no adapter hello for a bad seed")
        }
    }
}
