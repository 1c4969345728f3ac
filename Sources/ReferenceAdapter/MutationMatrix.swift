import Conformance
import Foundation
import MockGateway
import ReferenceNode

/// The catalogue run against the correct reference client and against each mutant: which
/// scenario catches which bug. A trustworthy catalogue passes the correct client and fails every
/// mutant; a scenario that catches no mutant is either redundant or untested.
public struct MutationMatrix: Sendable {
    /// The correct client's results.
    public var reference: [RunResult]
    /// Each mutant's results, by mutant name.
    public var mutants: [String: [RunResult]]
    /// The scenario IDs, sorted.
    public var scenarioIDs: [String]

    /// Whether a verdict means the client broke the scenario's rule (a MUST as `fail`, a SHOULD
    /// as `warn`, or a client that hung or crashed).
    public static func isKill(_ verdict: Verdict) -> Bool {
        switch verdict {
        case .fail, .warn, .error, .timeout: true
        case .pass, .unsupported: false
        }
    }

    /// The reference client's runs that did not pass (and were not unsupported).
    public var referenceFailures: [RunResult] {
        reference.filter { Self.isKill($0.verdict) }
    }

    /// The scenario IDs that caught `mutant`; a run the handshake probe decided ran no script,
    /// so it credits no scenario, but the probe itself caught the mutant (``probeKills``).
    public func killers(of mutant: String) -> [String] {
        let results = mutants[mutant] ?? []
        var ids = Set(results.filter { Self.isKill($0.verdict) && !$0.decidedByProbe }.map(\.id))
        if ids.isEmpty, results.contains(where: { $0.decidedByProbe && Self.isKill($0.verdict) }) {
            ids.insert(Self.probeKiller)
        }
        return ids.sorted()
    }

    /// How the matrix names a kill by the handshake probe alone.
    public static let probeKiller = "(handshake probe)"

    /// Mutants no scenario caught.
    public var survivors: [String] {
        mutants.keys.sorted().filter { killers(of: $0).isEmpty }
    }

    /// Scenarios that caught no mutant.
    public var scenariosWithoutKill: [String] {
        let killing = Set(mutants.keys.flatMap(killers(of:)))
        return scenarioIDs.filter { !killing.contains($0) }
    }

    /// Whether the catalogue is validated: the reference passes and every mutant is caught.
    public var isValid: Bool { referenceFailures.isEmpty && survivors.isEmpty }

    /// Which scenarios a mutant is run against.
    public enum Coverage: Sendable, Hashable {
        /// Every scenario: the full matrix.
        case full
        /// Only the scenarios the mutant names as the rules it breaks (`Mutant.catalogueIDs`):
        /// enough to prove that every mutant is caught, in a fraction of the time.
        case mapped
    }

    /// Runs `scenarios` against the reference client and every mutant in `mutants`.
    /// - Parameters:
    ///   - scenarios: the catalogue.
    ///   - mutants: the mutants to check (default: all).
    ///   - coverage: every scenario per mutant, or only the mapped ones.
    ///   - configuration: seed, selection, jobs, slowness; transcripts are not written. `jobs`
    ///     runs are under way at once across the whole matrix: the clients' catalogues run side
    ///     by side, one run each at a time, so no core waits for the last run of one client
    ///     before the next client starts. Each run is a simulation of its own, so the verdicts do
    ///     not depend on that order.
    ///   - progress: called after each client's run with its name (in completion order).
    /// - Throws: when the runner cannot run (for example no state directory).
    public static func compute(
        scenarios: [Scenario], mutants: [Mutant] = Mutant.allCases, coverage: Coverage = .full,
        configuration: RunConfiguration,
        gatewayFactory: @escaping GatewayFactory = GatewayFactories.standard,
        progress: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws -> MutationMatrix {
        // The clients side by side, each catalogue one run at a time.
        let parallel = configuration.jobs > 0 ? configuration.jobs : max(1, ProcessInfo.processInfo.activeProcessorCount)
        var shared = configuration
        shared.transcripts = .none
        shared.jobs = 1
        let base = shared
        // The Watch scenarios (they need `watch-pair`) judge the reference client in its Apple
        // Watch direct mode, and the Watch mode's mutants; the WebSocket client finds them
        // unsupported, and a Watch client every other scenario.
        let watchIDs = Set(scenarios.filter { $0.needs.contains(.watchPair) }.map(\.id))
        @Sendable func run(_ client: MatrixClient) async throws -> [RunResult] {
            let name: String
            let driver: InProcessDriver
            var configuration = base
            switch client {
            case .reference(let transport):
                name = transport == .watchDirect ? "reference-watch" : "reference"
                driver = InProcessDriver(name: name) { ReferenceNodeUnderTest(transport: transport) }
            case .mutant(let mutant):
                name = "reference+\(mutant.rawValue)"
                driver = InProcessDriver(name: name) { ReferenceNodeUnderTest(mutants: [mutant]) }
                if coverage == .mapped {
                    let mapped = Set(mutant.catalogueIDs)
                    let selected = configuration.selection.filters.isEmpty
                        ? mapped : mapped.filter { id in scenarios.contains { $0.id == id } }
                    configuration.selection.filters = selected.sorted()
                    if selected.isEmpty { return [] }
                }
            }
            if client.isWatch {
                let filters = configuration.selection.filters
                let wanted = watchIDs.filter { id in filters.isEmpty || filters.contains { Glob.matches($0, id) } }
                if wanted.isEmpty { return [] }
                configuration.selection.filters = wanted.sorted()
            }
            let runner = Runner(scenarios: scenarios, driver: driver, gatewayFactory: gatewayFactory, configuration: configuration)
            let report = try await runner.run()
            progress(name)
            return report.results
        }
        let clients: [MatrixClient] = [.reference(.webSocket), .reference(.watchDirect)] + mutants.map { .mutant($0) }
        var reference: [RunResult] = []
        var watchReference: [RunResult] = []
        var results: [String: [RunResult]] = [:]
        try await withThrowingTaskGroup(of: (MatrixClient, [RunResult]).self) { group in
            var next = 0
            func schedule() {
                let client = clients[next]
                next += 1
                group.addTask { (client, try await run(client)) }
            }
            while next < min(parallel, clients.count) { schedule() }
            while let (client, runs) = try await group.next() {
                switch client {
                case .reference(.webSocket): reference = runs
                case .reference(.watchDirect): watchReference = runs
                case .mutant(let mutant): results[mutant.rawValue] = runs
                }
                if next < clients.count { schedule() }
            }
        }
        // The reference verdict of a Watch scenario is the Watch client's.
        let judgedByWatch = Set(watchReference.map(\.id))
        reference = reference.filter { !judgedByWatch.contains($0.id) } + watchReference
        return MutationMatrix(reference: reference, mutants: results, scenarioIDs: Array(Set(scenarios.map(\.id))).sorted())
    }

    /// The matrix as text: the reference verdicts, a grid of scenarios x mutants (`X` = caught),
    /// the mutants' legend with the scenarios that caught each, and what is missing.
    public func rendered() -> String {
        var out = ""
        let names = mutants.keys.sorted()
        out += "Reference client: \(reference.count) runs, \(referenceFailures.count) not passing\n"
        for failure in referenceFailures {
            out += "  \(failure.verdict.rawValue.uppercased()) \(failure.key): \(failure.message)\n"
        }
        out += "\nMutants (columns):\n"
        for (index, name) in names.enumerated() {
            let killers = killers(of: name)
            out += "  \(String(format: "%2d", index + 1)) \(name): " + (killers.isEmpty ? "SURVIVED" : "caught by \(killers.joined(separator: ", "))") + "\n"
        }
        let width = scenarioIDs.map(\.count).max() ?? 8
        out += "\nScenarios x mutants (X = the scenario caught the mutant):\n"
        out += String(repeating: " ", count: width + 1) + names.indices.map { String(($0 + 1) % 10) }.joined() + "\n"
        let killSets = Dictionary(uniqueKeysWithValues: names.map { ($0, Set(killers(of: $0))) })
        for id in scenarioIDs {
            let row = names.map { killSets[$0]?.contains(id) == true ? "X" : "." }.joined()
            out += id.padding(toLength: width, withPad: " ", startingAt: 0) + " " + row + "\n"
        }
        out += "\nSurviving mutants: \(survivors.isEmpty ? "none" : survivors.joined(separator: ", "))\n"
        out += "Scenarios that catch no mutant: \(scenariosWithoutKill.isEmpty ? "none" : scenariosWithoutKill.joined(separator: ", "))\n"
        return out
    }
}

/// One client of the matrix: the reference client in one of its transports, or a mutant.
enum MatrixClient: Sendable {
    case reference(ReferenceTransport)
    case mutant(Mutant)

    /// Whether it runs as an Apple Watch in direct mode.
    var isWatch: Bool {
        switch self {
        case .reference(let transport): transport == .watchDirect
        case .mutant(let mutant): mutant.isWatchMode
        }
    }
}
