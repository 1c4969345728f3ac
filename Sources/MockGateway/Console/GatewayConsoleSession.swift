import Foundation
import GatewayProtocol
import Locking

/// Why a console session ended.
public enum ConsoleSessionEnd: Sendable, Hashable {
    /// `quit` was typed.
    case quit
    /// The stop signal arrived (SIGINT or SIGTERM in `harness serve`).
    case stopped
    /// The command input ended and there is no stop signal to wait for.
    case inputClosed
}

/// A running console: prints every gateway event as one line, answers every command line, and
/// shuts the Gateway down when it ends. `harness serve` is this plus flag parsing.
///
/// Lines are written whole, one `write` call each (text replies of listing commands may span
/// several lines), so that a script reading the output live never sees half a line.
public struct GatewayConsoleSession: Sendable {
    /// The console that answers commands.
    public let console: GatewayConsole
    /// Text or JSON.
    public let format: ConsoleOutputFormat
    /// Also print frame-level events (`frame.in`, `frame.out`, `request.handled`).
    public let verbose: Bool
    private let output: LineWriter

    /// Creates a session.
    /// - Parameters:
    ///   - console: the console (and through it the Gateway).
    ///   - format: text or JSON lines.
    ///   - verbose: also print frame-level events.
    ///   - write: receives each line with its trailing newline; calls are serialised.
    public init(console: GatewayConsole, format: ConsoleOutputFormat, verbose: Bool = false,
                write: @escaping @Sendable (String) -> Void) {
        self.console = console
        self.format = format
        self.verbose = verbose
        self.output = LineWriter(write)
    }

    /// Writes the `listening` line (the first line `harness serve` prints).
    /// - Parameter details: more fields of the line (TLS fingerprint, state directory, ...); in
    ///   text mode each follows as a line of its own (`key value`).
    public func announceListening(details: [ConsoleEventLine.Field] = []) {
        let gateway = console.gateway
        var line = ConsoleEventLine.listening(url: gateway.url, host: gateway.host, port: gateway.port, profile: gateway.profile.name)
        line.fields += details
        guard format == .text else {
            output.write(line.json.jsonString)
            return
        }
        output.write("listening \(gateway.url)")
        for field in details {
            output.write("\(field.key) \(field.value.stringValue ?? field.value.jsonString)")
        }
    }

    /// Prints events and answers `commands` until `quit`, the first element of `stop`, or (when
    /// `stop` is `nil`) the end of `commands`; then shuts the Gateway down and prints what that
    /// caused. When `stop` is given, the end of `commands` does not end the session.
    /// - Returns: why it ended.
    public func run(commands: AsyncStream<String>, stop: AsyncStream<Void>? = nil) async -> ConsoleSessionEnd {
        let gateway = console.gateway
        let (format, verbose, output, console) = (self.format, self.verbose, self.output, self.console)
        let secrets = gateway.secrets
        let printer = Task {
            for await event in gateway.events.stream(from: 0) {
                if let line = ConsoleEventLine.describing(event, verbose: verbose, redactSecrets: secrets.isEnabled) {
                    // Every line goes through the Gateway's redactor: secrets by key and every
                    // token it knows by value, whatever the event carries.
                    output.write(secrets.redact(text: line.rendered(format)))
                }
            }
        }
        let end = await withTaskGroup(of: ConsoleSessionEnd?.self) { group in
            group.addTask {
                for await line in commands {
                    guard let reply = await console.handle(line) else { continue }
                    // Replies are redacted like the event lines; without --show-secrets the
                    // setup code, its link and its bootstrap token read `<redacted>` too.
                    output.write(secrets.redact(text: reply.rendered(format, showSecrets: !secrets.isEnabled)))
                    if reply.result == .quitting { return .quit }
                }
                return stop == nil ? .inputClosed : nil
            }
            if let stop {
                group.addTask {
                    for await _ in stop { return .stopped }
                    return nil
                }
            }
            var end = ConsoleSessionEnd.inputClosed
            for await result in group {
                if let result {
                    end = result
                    break
                }
            }
            group.cancelAll()
            return end
        }
        await gateway.shutdown()
        await printer.value
        return end
    }
}

/// Serialises whole-line writes.
final class LineWriter: Sendable {
    // The lock makes sharing safe: the sink is only ever called while holding it.
    private let lock = Locked<Void>(())
    private let sink: @Sendable (String) -> Void

    init(_ sink: @escaping @Sendable (String) -> Void) { self.sink = sink }

    func write(_ line: String) {
        lock.withLock { _ in sink(line.hasSuffix("\n") ? line : line + "\n") }
    }
}
