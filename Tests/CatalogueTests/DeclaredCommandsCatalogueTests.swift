import Conformance
import Foundation
import Scenarios
import Testing

/// Every scenario whose body asks for declared commands (`requireDeclared`, `probeCommand`,
/// `declaredCommands`, or a set-up step that calls one of them) names them in `Options.needsCommands` too, so that the runner decides it
/// `unsupported` from the handshake probe for a client that never gets a session.
@Suite struct DeclaredCommandsCatalogueTests {
    static let scenariosDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scenarios")

    /// `ID -> source` for every scenario file.
    static func sources() throws -> [String: String] {
        var result: [String: String] = [:]
        let files = FileManager.default.enumerator(at: scenariosDirectory, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            let name = file.deletingPathExtension().lastPathComponent
            let parts = name.split(separator: "-")
            guard parts.count >= 2, Int(parts[1]) != nil else { continue }
            result["\(parts[0])-\(parts[1])"] = try String(contentsOf: file, encoding: .utf8)
        }
        return result
    }

    /// The steps that ask for declared commands: the three primitives, `declaredCommands(oneOfEach:)` and the set-up steps of
    /// `ScenarioRun+SetUps.swift` that call one of them.
    static let askingSteps = [
        "requireDeclared(", "probeCommand()", "declaredCommands()", "declaredCommands(oneOfEach:",
        "probeAndNodeSession(", "probeAndFailingInvokes(",
    ]

    @Test func scenariosThatAskForCommandsNameThemInTheirOptions() throws {
        let sources = try Self.sources()
        #expect(sources.count > 40, "the scenario sources were not found in \(Self.scenariosDirectory.path)")
        var asking = 0
        for scenario in allScenarios {
            guard let source = sources[scenario.id] else { continue }
            let asks = Self.askingSteps.contains { source.contains($0) }
            if asks { asking += 1 }
            #expect(asks == !scenario.options.needsCommands.isEmpty,
                    "\(scenario.id): the body \(asks ? "asks" : "does not ask") for declared commands, needsCommands is \(scenario.options.needsCommands)")
        }
        #expect(asking >= 11)
    }

    @Test func needsCommandsMatchesExactNamesAndPrefixes() {
        let options = Scenario.Options(needsCommands: [["debug.slow"], ["device.info", "device.status"], ["canvas.*"]])
        #expect(options.missingCommands(declared: ["debug.slow", "device.status", "canvas.present"]).isEmpty)
        #expect(options.missingCommands(declared: ["debug.slowly", "canvas"]) == [["debug.slow"], ["device.info", "device.status"], ["canvas.*"]])
        #expect(options.missingCommands(declared: []).count == 3)
        #expect(Scenario.Options().missingCommands(declared: []).isEmpty)
    }
}
