import Foundation
import GatewayProtocol
import MockGateway
import Locking
import Testing

/// Collects written lines.
final class ConsoleLineSink: Sendable {
    private let written = Locked<[String]>([])
    var lines: [String] { written.withLock { $0.joined().split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty } } }
    var write: @Sendable (String) -> Void { { text in self.written.withLock { $0.append(text) } } }
}

/// A whole console session: events and replies on one output, ended by `quit`, the input or a stop.
@Suite("Console session")
struct ConsoleSessionTests {
    @Test func sessionAnswersCommandsPrintsEventsAndShutsDownOnQuit() async throws {
        let gateway = try await Gateway.start()
        let sink = ConsoleLineSink()
        let session = GatewayConsoleSession(console: GatewayConsole(gateway: gateway), format: .json, write: sink.write)
        session.announceListening()
        let (commands, input) = AsyncStream<String>.makeStream()
        input.yield(#"approval "rm -rf /tmp/x" --expires-in 60"#)
        input.yield("")
        input.yield("resolve-approval latest deny")
        input.yield("quit")
        input.yield("pending")  // never read: the session ended at quit
        #expect(await session.run(commands: commands) == .quit)
        let objects = try sink.lines.map { try JSONValue(parsing: $0) }
        #expect(objects.first?["event"] == "listening")
        #expect(objects.first?["url"]?.stringValue == gateway.url)
        let replies = objects.filter { $0["command"] != nil }
        #expect(replies.map { $0["command"] } == ["approval", "resolve-approval", "quit"])
        #expect(replies.allSatisfy { $0["event"] == "command.ok" })
        let events = objects.compactMap { $0["event"]?.stringValue }
        #expect(events.contains("approval.requested"))
        #expect(events.contains("approval.resolved"))
        // The Gateway is shut down: its log is finished.
        #expect(await gateway.waitForEvent(from: gateway.events.count, timeout: .seconds(5)) { _ in true } == nil)
    }

    @Test func textListeningLineAndEndOfInputWithoutAStopSignal() async throws {
        let gateway = try await Gateway.start()
        let sink = ConsoleLineSink()
        let session = GatewayConsoleSession(console: GatewayConsole(gateway: gateway), format: .text, write: sink.write)
        session.announceListening()
        let (commands, input) = AsyncStream<String>.makeStream()
        input.yield("frobnicate")
        input.finish()
        #expect(await session.run(commands: commands) == .inputClosed)
        #expect(sink.lines.first == "listening \(gateway.url)")
        #expect(sink.lines.contains("error: unknown command 'frobnicate' (type 'help' for the list)"))
    }

    @Test func endOfInputKeepsServingUntilTheStopSignal() async throws {
        let gateway = try await Gateway.start()
        let sink = ConsoleLineSink()
        let session = GatewayConsoleSession(console: GatewayConsole(gateway: gateway), format: .json, write: sink.write)
        let (commands, input) = AsyncStream<String>.makeStream()
        let (stop, signal) = AsyncStream<Void>.makeStream()
        input.yield("pending")
        input.finish()
        let running = Task { await session.run(commands: commands, stop: stop) }
        // Input has ended, yet the Gateway still accepts connections.
        let client = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0x37))
        #expect(client.challenge != nil)
        signal.yield()
        #expect(await running.value == .stopped)
        let closed = await client.connection.waitUntilClosed()
        #expect(closed.code.rawValue == 1001)
    }
}
