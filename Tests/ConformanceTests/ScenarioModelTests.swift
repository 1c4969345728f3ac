import Conformance
import MockGateway
import Testing

@Suite struct ScenarioModelTests {
    @Test func wellFormedIDsHaveAKnownAreaAndThreeDigits() {
        #expect(ScenarioID("PAIR-006").isWellFormed)
        #expect(ScenarioID("LIFE-004").isWellFormed)
        #expect(!ScenarioID("PAIR-6").isWellFormed)
        #expect(!ScenarioID("FOO-001").isWellFormed)
        #expect(!ScenarioID("PAIR006").isWellFormed)
        #expect(!ScenarioID("PAIR-00x").isWellFormed)
        #expect(ScenarioID("PAIR-006").area == .pairing)
        #expect(ScenarioID("PAIR-006").number == 6)
    }

    @Test func idsSortByCatalogueAreaThenNumber() {
        let sorted = [ScenarioID("PAIR-010"), "HS-002", "PAIR-002", "LIFE-001", "HS-010"].sorted()
        #expect(sorted.map(\.rawValue) == ["HS-002", "HS-010", "PAIR-002", "PAIR-010", "LIFE-001"])
    }

    @Test func catalogueProblemsNameDuplicatesAndMalformedIDs() {
        let body: Scenario.Body = { _ in }
        let scenarios = [
            Scenario("PAIR-001", .must, requirement: "r", source: "s", body: body),
            Scenario("PAIR-001", .must, requirement: "r", source: "s", body: body),
            Scenario("NOPE-1", .should, requirement: "r", source: "s", body: body),
            Scenario("HS-001", .must, requirement: "r", source: "s", profiles: ProfileSelection([]), body: body),
        ]
        let problems = ScenarioCatalogue.problems(in: scenarios)
        #expect(problems.contains { $0.hasPrefix("PAIR-001: declared more than once") })
        #expect(problems.contains { $0.hasPrefix("NOPE-1: not a well-formed ID") })
        #expect(problems.contains { $0.hasPrefix("HS-001: applies to no profile") })
        #expect(problems.count == 3)
    }

    @Test func titleDefaultsToTheRequirement() {
        let scenario = Scenario("HS-001", .must, requirement: "The client waits.", source: "GP 3.1") { _ in }
        #expect(scenario.title == "The client waits.")
        #expect(scenario.profiles.names == ["current", "legacy"])
    }

    @Test func stimuliCarryTheirParametersForTheAdapterProtocol() {
        let wake = Stimulus.backgroundWake(trigger: "silent_push")
        #expect(wake.kind == .backgroundWake)
        #expect(wake.params["trigger"] == "silent_push")
        #expect(AdapterProtocol.encode(stimulus: wake, id: "7")
            == #"{"id":"7","params":{"trigger":"silent_push"},"stimulus":"background-wake","type":"stimulus"}"#)
        let approval = Stimulus.resolveApproval(id: "a1", decision: "allow-once")
        #expect(AdapterProtocol.encode(stimulus: approval, id: "8").hasPrefix(#"{"id":"8","#))
    }

    @Test func verdictGatingFollowsStrictness() {
        #expect(!Verdict.warn.isGatedFailure(strict: false))
        #expect(Verdict.warn.isGatedFailure(strict: true))
        #expect(!Verdict.unsupported.isGatedFailure(strict: true))
        #expect(Verdict.timeout.isGatedFailure(strict: false))
        #expect(Verdict.error.isGatedFailure(strict: false))
        #expect(Verdict.fail.isGatedFailure(strict: false))
    }

    @Test func seedsDependOnlyOnTheBaseSeedAndTheRunKey() {
        #expect(Seed.derive(42, "PAIR-006@current") == Seed.derive(42, "PAIR-006@current"))
        #expect(Seed.derive(42, "PAIR-006@current") != Seed.derive(42, "PAIR-006@legacy"))
        #expect(Seed.derive(42, "PAIR-006@current") != Seed.derive(43, "PAIR-006@current"))
        #expect(Seed.derive(.max, "x") <= 9_007_199_254_740_991)
        #expect(Seed.random() <= 9_007_199_254_740_991)
    }
}

@Suite struct AdapterProtocolDecodingTests {
    @Test func decodesHelloRepliesAndLogs() throws {
        let hello = try AdapterProtocol.decode(#"{"type":"hello","adapterProtocol":1,"client":{"name":"x"},"stimuli":["connect","future-thing"]}"#)
        guard case .hello(let version, _, let stimuli, let probes) = hello else {
            Issue.record("not a hello: \(hello)")
            return
        }
        #expect(version == 1)
        #expect(stimuli == [.connect, "future-thing"])
        #expect(probes.isEmpty)
        let named = try AdapterProtocol.decode(
            #"{"type":"hello","adapterProtocol":1,"stimuli":[],"probeCommands":["acme.read",{"command":"acme.get","params":{"n":1}}]}"#)
        #expect(named == .hello(version: 1, client: nil, stimuli: [], probeCommands: [
            ProbeCommand(name: "acme.read"), ProbeCommand(name: "acme.get", params: ["n": 1]),
        ]))
        #expect(try AdapterProtocol.decode(#"{"type":"reply","id":"3","status":"error","message":"no"}"#)
            == .reply(id: "3", status: "error", message: "no"))
        #expect(try AdapterProtocol.decode(#"{"type":"reply","id":4,"status":"ok"}"#) == .reply(id: "4", status: "ok", message: nil))
        #expect(try AdapterProtocol.decode(#"{"type":"log","message":"hi"}"#) == .log(level: "info", message: "hi"))
    }

    @Test func garbageIsAProblemNotACrash() {
        for line in ["", "hello", "[1]", "{}", #"{"type":"reply","status":"ok"}"#, #"{"type":"reply","id":"1","status":"maybe"}"#,
                     #"{"type":"hello","stimuli":[]}"#, #"{"type":"wat"}"#, "\u{0}\u{1}{{{",
                     #"{"type":"hello","adapterProtocol":1,"stimuli":[],"probeCommands":"acme.read"}"#,
                     #"{"type":"hello","adapterProtocol":1,"stimuli":[],"probeCommands":[{"params":{}}]}"#,
                     #"{"type":"hello","adapterProtocol":1,"stimuli":[],"probeCommands":[{"command":"a","params":[1]}]}"#] {
            #expect(throws: AdapterProtocol.DecodingProblem.self) { try AdapterProtocol.decode(line) }
        }
    }
}

@Suite struct ScenarioIndexTests {
    @Test func everyScenarioFileInTheTargetIsIndexedWithoutRegistration() {
        #expect(allScenarios.map(\.id) == ["HS-900", "PAIR-900", "PRES-900"])
        #expect(ScenarioCatalogue.problems(in: allScenarios).isEmpty)
    }
}

@Suite("Scenario IDs of your own")
struct UserScenarioIDTests {
    @Test func userIDsHaveTheirOwnNamespace() {
        let id = ScenarioID("X-ACME-001")
        #expect(id.isWellFormed && id.isUserDefined)
        #expect(id.area.code == "X-ACME" && id.area.name == "acme")
        #expect(id.number == 1)
        #expect(!ScenarioID("X-acme-001").isWellFormed, "the owner is upper case")
        #expect(!ScenarioID("X-ACME-01").isWellFormed)
        #expect(!ScenarioID("X--001").isWellFormed)
        #expect(!ScenarioID("PAIR-001").isUserDefined)
    }

    private static func scenario(_ id: String) -> Scenario {
        Scenario(ScenarioID(id), .must, requirement: "r", source: "s") { _ in }
    }

    @Test func aUserScenarioCannotTakeOrShadowABuiltInID() throws {
        let builtIn = [Self.scenario("PAIR-001"), Self.scenario("HS-001")]
        // The same ID as a built-in one, or any ID outside the user namespace, is refused.
        #expect(throws: HarnessError.self) { try ScenarioCatalogue.combined(builtIn, with: [Self.scenario("PAIR-001")]) }
        #expect(throws: HarnessError.self) { try ScenarioCatalogue.combined(builtIn, with: [Self.scenario("PAIR-099")]) }
        do {
            _ = try ScenarioCatalogue.combined(builtIn, with: [Self.scenario("PAIR-001")])
        } catch let error as HarnessError {
            #expect(error.message.contains("needs an ID of the form X-OWNER-NNN"))
        }
        // Two user scenarios with one ID are refused too.
        #expect(throws: HarnessError.self) {
            try ScenarioCatalogue.combined(builtIn, with: [Self.scenario("X-ACME-001"), Self.scenario("X-ACME-001")])
        }
        let combined = try ScenarioCatalogue.combined(builtIn, with: [Self.scenario("X-ACME-001")])
        #expect(combined.map(\.id) == ["PAIR-001", "HS-001", "X-ACME-001"])
    }

    @Test func globsAcceptCharacterClasses() {
        #expect(Glob.matches("HS-00[1-5]", "HS-003"))
        #expect(!Glob.matches("HS-00[1-5]", "HS-006"))
        #expect(Glob.matches("HS-00[!1]", "HS-002"))
        #expect(!Glob.matches("HS-00[!1]", "HS-001"))
        #expect(Glob.matches("[hp]*-001", "PAIR-001"))
        #expect(Glob.matches("X-ACME-*", "x-acme-007"))
        #expect(Glob.matches("HS-00[", "HS-00["), "an unterminated class is literal")
        #expect(Glob.matches("PAIR-00?", "PAIR-006") && Glob.matches("*", "ANY"))
    }
}
