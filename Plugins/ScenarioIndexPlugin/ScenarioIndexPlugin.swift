import PackagePlugin

/// Generates `allScenarios`, the list of every scenario a target declares, so that adding a
/// scenario file is the only step to add a scenario.
///
/// Every Swift file of the target is scanned for top-level declarations of the form
/// `let name = Scenario(` (optionally `public`/`package`/`internal`, optionally typed
/// `: Scenario`). The generated `ScenarioIndex.swift` declares `allScenarios` (public in a
/// library target, internal in a test target) in file-name order. A file named after a scenario
/// ID (`PAIR-006-supersession.swift`) must declare exactly that scenario, or the build fails.
@main
struct ScenarioIndexPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        guard let module = target as? SourceModuleTarget else { return [] }
        let inputs = module.sourceFiles(withSuffix: "swift").map(\.url).sorted { $0.path < $1.path }
        let output = context.pluginWorkDirectoryURL.appending(path: "ScenarioIndex.swift")
        let access = module.kind == .test ? "internal" : "public"
        let generator = try context.tool(named: "ScenarioIndexGenerator")
        return [
            .buildCommand(
                displayName: "Indexing the scenarios of \(target.name)",
                executable: generator.url,
                arguments: ["--output", output.path(percentEncoded: false), "--access", access, "--import", "Conformance"]
                    + inputs.map { $0.path(percentEncoded: false) },
                inputFiles: inputs,
                outputFiles: [output])
        ]
    }
}
