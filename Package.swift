// swift-tools-version: 6.0
// The package builds with the Swift 6 language mode (the default for tools version 6.0).
import PackageDescription

let package = Package(
    name: "openclaw-conformance",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "GatewayProtocol", targets: ["GatewayProtocol"]),
        .library(name: "WebSocketTransport", targets: ["WebSocketTransport"]),
    ],
    targets: [
        .systemLibrary(
            name: "COpenSSL",
            path: "Sources/COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        .target(name: "GatewayProtocol", dependencies: ["COpenSSL"]),
        .target(name: "WebSocketTransport", dependencies: ["COpenSSL"]),
        .testTarget(name: "GatewayProtocolTests", dependencies: ["GatewayProtocol"]),
        .testTarget(name: "WebSocketTransportTests", dependencies: ["WebSocketTransport"]),
    ],
    swiftLanguageModes: [.v6]
)
