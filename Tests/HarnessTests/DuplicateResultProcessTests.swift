import Foundation
import Testing

/// A node process that writes every `node.invoke.result` twice, back to back
/// (`immediate-duplicate-invoke-result`), judged in real time through `harness run
/// --node-command`: both frames reach the Gateway together, so a check that starts counting
/// after it has seen the first result can find the second already behind it. INV-001 must fail
/// the node on every run, whatever the timing of the two frames (before INV-001 counted from
/// just after the first result up to a closing round trip, some runs of this test passed).
@Suite struct DuplicateResultProcessTests {
    @Test func aBackToBackDuplicateResultFailsINV001OnEveryRun() async throws {
        for seed in 1...6 {
            // One declared command: one invoke, so no second invoke's round trip hides the race.
            let verdicts = try await DeclaredCommandsTests.run(
                ["INV-001"], nodeArguments: ["--declare", "device.info", "--mutant", "immediate-duplicate-invoke-result"],
                harnessArguments: ["--seed", "\(seed)"], profile: "current")
            #expect(verdicts.count == 1)
            for (key, outcome) in verdicts {
                #expect(outcome.verdict == "fail", "seed \(seed) \(key): \(outcome.verdict): \(outcome.message)")
                #expect(outcome.message.contains("second node.invoke.result"), "seed \(seed) \(key): \(outcome.message)")
            }
        }
    }
}
