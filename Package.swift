// swift-tools-version: 6.0
// The package builds with the Swift 6 language mode (the default for tools version 6.0).
import PackageDescription

let package = Package(
    name: "openclaw-conformance",
    // Apple platforms use CryptoKit; Linux uses OpenSSL 3 (see the OpenClawCrypto target).
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "GatewayProtocol", targets: ["GatewayProtocol"]),
        .library(name: "WebSocketTransport", targets: ["WebSocketTransport"]),
        .library(name: "MockGateway", targets: ["MockGateway"]),
        .library(name: "Simulation", targets: ["Simulation"]),
        .library(name: "Conformance", targets: ["Conformance"]),
        .library(name: "ConformanceTesting", targets: ["ConformanceTesting"]),
        .library(name: "Scenarios", targets: ["Scenarios"]),
        .library(name: "ReferenceNode", targets: ["ReferenceNode", "ReferenceAdapter"]),
        .library(name: "HarnessCLI", targets: ["HarnessCLI"]),
        .executable(name: "harness", targets: ["harness"]),
        .plugin(name: "ScenarioIndexPlugin", targets: ["ScenarioIndexPlugin"]),
    ],
    targets: [
        // OpenSSL 3, the crypto of Linux builds only (Apple platforms use CryptoKit).
        .systemLibrary(
            name: "COpenSSL",
            path: "Sources/COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // Linux epoll for the transport's event loop (elsewhere it uses poll).
        .systemLibrary(name: "CEpoll", path: "Sources/CEpoll"),
        // The one crypto interface (Ed25519, SHA-256, SHA-1, random bytes): CryptoKit on Apple
        // platforms, OpenSSL on Linux.
        .target(
            name: "OpenClawCrypto",
            dependencies: ["Locking", .target(name: "COpenSSL", condition: .when(platforms: [.linux]))]
        ),
        // The package's lock (`Locked`): Synchronization.Mutex needs macOS 15 / iOS 18.
        .target(name: "Locking"),
        // posix_spawn with nothing inherited but the standard streams (client processes, and the
        // test suite's child processes).
        .target(name: "Spawning"),
        // Setup-code QR codes (harness serve --qr): libqrencode is opened with dlopen when a code
        // is drawn, so nothing else needs it installed, and no target needs its header.
        .target(name: "QRCode"),
        .target(name: "Simulation", dependencies: ["Locking"]),
        // The option parser of both the `harness` command line and the `harness serve` console.
        .target(name: "ArgumentParsing"),
        .target(name: "GatewayProtocol", dependencies: ["OpenClawCrypto"]),
        .target(
            name: "WebSocketTransport",
            dependencies: [
                "OpenClawCrypto", "Locking", .target(name: "CEpoll", condition: .when(platforms: [.linux])),
                // TLS (wss://) through libssl, Linux only for now; it compiles out elsewhere.
                .target(name: "COpenSSL", condition: .when(platforms: [.linux])),
            ]
        ),
        .target(name: "MockGateway", dependencies: ["Locking", "ArgumentParsing", "GatewayProtocol", "WebSocketTransport", "Simulation"]),
        .target(name: "ReferenceNode", dependencies: ["Locking", "GatewayProtocol", "WebSocketTransport", "Simulation"]),
        .target(name: "Conformance", dependencies: ["Locking", "ArgumentParsing", "MockGateway", "GatewayProtocol", "Simulation", "WebSocketTransport", "Spawning"]),
        .target(name: "ConformanceTesting", dependencies: ["Conformance", "MockGateway"]),
        .target(name: "ReferenceAdapter", dependencies: ["Locking", "Conformance", "MockGateway", "ReferenceNode"]),
        .target(
            name: "Scenarios", dependencies: ["Conformance", "MockGateway", "GatewayProtocol"],
            path: "scenarios", plugins: ["ScenarioIndexPlugin"]
        ),
        // The command line as a library (`Harness.main`), so a package can add its own scenarios
        // and clients; `harness` is its three-line main.
        .target(
            name: "HarnessCLI",
            dependencies: ["Locking", "Conformance", "MockGateway", "GatewayProtocol", "ReferenceNode", "ReferenceAdapter", "Scenarios",
                           "QRCode", "WebSocketTransport"]
        ),
        .executableTarget(name: "harness", dependencies: ["HarnessCLI"]),
        // Generates `allScenarios` from a target's scenario files (see Plugins/ScenarioIndexPlugin).
        .executableTarget(name: "ScenarioIndexGenerator", path: "Plugins/ScenarioIndexGenerator"),
        .plugin(name: "ScenarioIndexPlugin", capability: .buildTool(), dependencies: ["ScenarioIndexGenerator"]),
        .executableTarget(name: "WebSocketBench", dependencies: ["WebSocketTransport"], path: "Benchmarks/WebSocketBench"),
        .executableTarget(name: "JSONBench", dependencies: ["GatewayProtocol"], path: "Benchmarks/JSONBench"),
        // Shared by the test targets: child processes without blocking the cooperative pool, the raw
        // wire client and the interop interpreter lookup.
        .target(name: "TestSupport", dependencies: ["Locking", "GatewayProtocol", "WebSocketTransport", "Spawning", "QRCode"], path: "Tests/TestSupport"),
        .testTarget(name: "SimulationTests", dependencies: ["Locking", "Simulation"]),
        .testTarget(name: "OpenClawCryptoTests", dependencies: ["OpenClawCrypto"]),
        .testTarget(name: "QRCodeTests", dependencies: ["QRCode", "TestSupport"]),
        .testTarget(name: "GatewayProtocolTests", dependencies: ["GatewayProtocol", "Simulation", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "WebSocketTransportTests", dependencies: ["Locking", "WebSocketTransport", "Simulation", "TestSupport"]),
        .testTarget(name: "ReferenceNodeTests", dependencies: ["Locking", "ReferenceNode", "ReferenceAdapter", "MockGateway", "GatewayProtocol", "WebSocketTransport"]),
        .testTarget(name: "CatalogueTests", dependencies: ["Locking", "GatewayProtocol", "Scenarios", "ReferenceAdapter", "ReferenceNode", "Conformance", "ConformanceTesting", "TestSupport"]),
        .testTarget(name: "MockGatewayTests", dependencies: ["Locking", "MockGateway", "GatewayProtocol", "WebSocketTransport", "TestSupport"]),
        .testTarget(name: "HarnessTests", dependencies: ["Locking", "harness", "HarnessCLI", "QRCode", "Conformance", "MockGateway", "GatewayProtocol", "WebSocketTransport", "TestSupport"]),
        .testTarget(
            name: "ConformanceTests", dependencies: ["Locking", "Conformance", "MockGateway", "GatewayProtocol", "TestSupport"],
            exclude: ["Fixtures", "Golden"], plugins: ["ScenarioIndexPlugin"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
