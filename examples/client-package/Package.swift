// swift-tools-version: 6.0
// A client team's own package: its in-process client, a scenario for its own command, the
// conformance catalogue as Swift Testing cases, and its own harness command line.
import PackageDescription

let package = Package(
    name: "acme-client",
    platforms: [.macOS(.v14), .iOS(.v17)],
    dependencies: [
        // In your package: .package(url: "<this repository>", from: "...").
        .package(name: "openclaw-conformance", path: "../.."),
    ],
    targets: [
        // The client under test: here a small node of its own, written against the project's
        // transport; in a real app, an adapter around the app's own client.
        .target(name: "AcmeNode", dependencies: [
            .product(name: "Conformance", package: "openclaw-conformance"),
            .product(name: "GatewayProtocol", package: "openclaw-conformance"),
            .product(name: "WebSocketTransport", package: "openclaw-conformance"),
            .product(name: "Simulation", package: "openclaw-conformance"),
        ]),
        // Scenarios of your own, one file each, indexed by the project's plugin.
        .target(
            name: "AcmeScenarios",
            dependencies: [
                .product(name: "Conformance", package: "openclaw-conformance"),
                .product(name: "MockGateway", package: "openclaw-conformance"),
            ],
            plugins: [.plugin(name: "ScenarioIndexPlugin", package: "openclaw-conformance")]
        ),
        // `swift run acme-harness run --node acme`: the harness's command line with your
        // scenarios and clients added.
        .executableTarget(name: "acme-harness", dependencies: [
            "AcmeNode", "AcmeScenarios",
            .product(name: "HarnessCLI", package: "openclaw-conformance"),
        ]),
        .testTarget(name: "AcmeNodeTests", dependencies: [
            "AcmeNode", "AcmeScenarios",
            .product(name: "ConformanceTesting", package: "openclaw-conformance"),
            .product(name: "Scenarios", package: "openclaw-conformance"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
