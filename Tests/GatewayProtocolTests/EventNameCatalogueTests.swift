import Foundation
import Testing

import GatewayProtocol

/// `GatewayEventName.allKnown` lists every event constant of `Names.swift`, so that what is
/// derived from it (the reference client's known events) follows a new event at once.
@Suite("The event name catalogue")
struct EventNameCatalogueTests {
    /// `Sources/GatewayProtocol/Names.swift`, from this file's path.
    static let names = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/GatewayProtocol/Names.swift")

    /// The values of the `static let x: GatewayEventName = "..."` constants in `text`.
    static func declaredEvents(in text: String) throws -> [String] {
        let pattern = try NSRegularExpression(pattern: #"static let [A-Za-z]+: GatewayEventName = "([^"]+)""#)
        return pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    @Test("allKnown holds every event constant of Names.swift, once and in order")
    func allKnownIsComplete() throws {
        let declared = try Self.declaredEvents(in: String(contentsOf: Self.names, encoding: .utf8))
        #expect(declared.count > 30, "Names.swift was found and read")
        #expect(GatewayEventName.allKnown.map(\.rawValue) == declared,
                "add the new GatewayEventName constants to GatewayEventName.allKnown")
    }

    @Test("the scan finds event constants and nothing else")
    func scanFindsConstants() throws {
        let text = """
            public static let tick: GatewayEventName = "tick"
            public static let connect: GatewayMethod = "connect"
            public static let chat: GatewayEventName = "chat"
            """
        #expect(try Self.declaredEvents(in: text) == ["tick", "chat"])
    }
}
