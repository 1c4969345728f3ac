import Conformance
import Testing

@Suite struct OptionValuesTests {
    @Test(arguments: ["0", "42", "0x2a", "0X2A", "9007199254740991", "0x1fffffffffffff"])
    func seedsInTheRangeAreAccepted(_ text: String) throws {
        _ = try SeedOption(option: text)
    }

    @Test func seedValuesAreParsedAsWritten() throws {
        #expect(try SeedOption(option: "0x2a").value == 42)
        #expect(try SeedOption(option: "9007199254740991").value == SeedOption.maximum)
    }

    @Test(arguments: ["9007199254740992", "18446744073709551615", "-1", "abc", "", "0x", "1.5", " 1"])
    func seedsOutsideTheRangeAreRefusedWithTheRule(_ text: String) {
        #expect(throws: OptionValueError(expected: "an integer from 0 to 9007199254740991 (decimal, or hexadecimal with 0x)")) {
            try SeedOption(option: text)
        }
    }

    @Test func jobsSlownessAndShardsHaveOneRuleEach() throws {
        #expect(try JobsOption(option: "1").value == 1)
        #expect(try JobsOption(option: "256").value == 256)
        for bad in ["0", "257", "-3", "many"] {
            #expect(throws: OptionValueError(expected: "an integer from 1 to 256")) { try JobsOption(option: bad) }
        }
        #expect(try SlownessOption(option: "2.5").value == 2.5)
        for bad in ["0", "-1", "1001", "nan", "inf", "x"] {
            #expect(throws: OptionValueError(expected: "a number above 0 and at most 1000")) { try SlownessOption(option: bad) }
        }
        #expect(try Shard(option: "2/4") == Shard(index: 2, count: 4))
        for bad in ["0/4", "5/4", "2", "a/b"] {
            #expect(throws: OptionValueError(expected: "I/N with 1 <= I <= N")) { try Shard(option: bad) }
        }
    }

    @Test func portsAreZeroTo65535() throws {
        #expect(try PortOption(option: "0").value == 0)
        #expect(try PortOption(option: "18789").value == 18_789)
        #expect(try PortOption(option: "65535").value == 65_535)
        for bad in ["65536", "-1", "http", "", "80.5", " 80"] {
            #expect(throws: OptionValueError(expected: "a port from 0 to 65535")) { try PortOption(option: bad) }
        }
    }

    @Test func aChoiceSuggestsTheClosestName() {
        let choices = ["stale-signed-at", "wrong-device-id"]
        #expect(ChoiceOption.problem(with: "wrong-device-id", among: choices, what: "mutant") == nil)
        #expect(ChoiceOption.problem(with: "stale-signed", among: choices, what: "mutant")
                == "unknown mutant 'stale-signed'; did you mean 'stale-signed-at'?")
        #expect(ChoiceOption.problem(with: "zzzzzzzzzzzzzzzzzzzz", among: choices, what: "mutant")
                == "unknown mutant 'zzzzzzzzzzzzzzzzzzzz' (one of: stale-signed-at, wrong-device-id)")
    }

    @Test func aTypedOptionIsCheckedWhenTheCommandLineIsParsed() throws {
        let command = CommandSpec(name: "demo", summary: "demo", flags: [.option("--seed", SeedOption.self, help: "seed")]) { _, _ in 0 }
        let tool = CommandLineTool(name: "t", summary: "t", commands: [command])
        let parsed = try tool.parse(["--seed", "0x10"], for: command)
        #expect(parsed.value("--seed", as: SeedOption.self)?.value == 16)
        #expect(throws: UsageError.self) { try tool.parse(["--seed", "9007199254740992"], for: command) }
    }
}
