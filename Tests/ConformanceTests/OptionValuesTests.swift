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

    /// The parser the command line and the console share: the same words give the same values,
    /// and the two dialects differ only in `-x` and `--`.
    @Test func oneParserTwoSyntaxes() throws {
        let flags: [FlagSpec] = [.option("--seed", SeedOption.self, help: "seed"), .flag("--quiet", help: "quiet")]
        let positionals = [PositionalSpec("PORT", PortOption.self, help: "a port"), PositionalSpec("REST", help: "rest", optional: true, variadic: true)]
        func parse(_ words: [String], _ syntax: ArgumentSyntax) throws(ArgumentProblem) -> ParsedArguments {
            try ArgumentParser.parse(words.map { ArgumentWord($0) }, flags: flags, positionals: positionals, syntax: syntax)
        }
        for syntax in [ArgumentSyntax.commandLine, .console] {
            let parsed = try parse(["80", "--seed=0x10", "--quiet", "x"], syntax)
            #expect(parsed.positional(0, as: PortOption.self)?.value == 80)
            #expect(parsed.value("--seed", as: SeedOption.self)?.value == 16)
            #expect(parsed.isSet("--quiet"))
            #expect(parsed.positionals == ["80", "x"])
            #expect(throws: ArgumentProblem.invalidArgument(argument: "PORT", value: "70000", problem: OptionValueError(expected: "a port from 0 to 65535"),
                                                            secret: false)) { try parse(["70000"], syntax) }
            #expect(throws: ArgumentProblem.repeatedOption("--quiet")) { try parse(["1", "--quiet", "--quiet"], syntax) }
            #expect(throws: ArgumentProblem.missingValue(option: "--seed", valueName: "N")) { try parse(["1", "--seed", "--quiet"], syntax) }
            #expect(throws: ArgumentProblem.missingArgument("PORT")) { try parse([], syntax) }
            #expect(try parse(["1", "-5"], syntax).positionals == ["1", "-5"], "a negative number is never an option")
        }
        #expect(throws: ArgumentProblem.unknownOption("-rf")) { try parse(["1", "-rf"], .commandLine) }
        #expect(try parse(["1", "--", "-rf", "--quiet"], .commandLine).positionals == ["1", "-rf", "--quiet"])
        #expect(try parse(["1", "-rf", "--", "x"], .console).positionals == ["1", "-rf", "--", "x"])
        let literal = try ArgumentParser.parse([ArgumentWord("1"), ArgumentWord("--quiet", literal: true)], flags: flags,
                                               positionals: positionals, syntax: .console)
        #expect(literal.positionals == ["1", "--quiet"] && !literal.isSet("--quiet"), "a quoted console word is never an option")
    }
}
