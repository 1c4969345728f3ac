import Foundation
import GatewayProtocol
import Locking

/// The reference client's state files held in memory instead of in its state directory.
///
/// A simulated conformance run gives the client one of these: the run's client then reads and
/// writes `identity.json`, `device-auth.json` and `chat-state.json` here, and a restart or cold
/// start within the run (a new client on the same ``ReferenceConfiguration``) finds what the
/// previous one wrote, as it would on a disk. A simulated run's disk is part of the simulation:
/// it costs no system calls, and a file system's latency never enters the run. The bytes are
/// exactly what the client would write to its directory; ``write(to:)`` puts them there, for a
/// state directory kept for inspection.
public final class InMemoryStateFiles: Sendable {
    /// A file's contents, or how to produce them: the client rewrites its chat book on every
    /// change, and in memory the encoding is done only when someone reads the file.
    private enum Contents: Sendable {
        case bytes(Data?)
        case deferred(@Sendable () -> Data?)
    }

    // File name → contents; every access is under the lock.
    private let files = Locked<[String: Contents]>([:])

    /// Creates an empty set of files (a fresh install).
    public init() {}

    /// The names of the files held, sorted.
    public var names: [String] { files.withLock { $0.keys.sorted() } }

    /// The contents of `name`, if it was written (`nil` also when its encoding failed, as a
    /// failed write leaves no file).
    public func contents(of name: String) -> Data? {
        let entry = files.withLock { $0[name] }
        switch entry {
        case nil: return nil
        case .bytes(let data)?: return data
        case .deferred(let encode)?:
            // Encoded outside the lock; kept only if no newer write replaced the entry meanwhile
            // (a newer one is simply encoded by its own reader).
            let data = encode()
            files.withLock { files in
                if case .deferred? = files[name] { files[name] = .bytes(data) }
            }
            return data
        }
    }

    func store(_ data: Data, as name: String) { files.withLock { $0[name] = .bytes(data) } }

    func store(as name: String, encoding encode: @escaping @Sendable () -> Data?) {
        files.withLock { $0[name] = .deferred(encode) }
    }

    /// Writes every file into `directory` (created when missing), each atomically with
    /// permissions 0600, as the client writes its own files.
    /// - Throws: `DeviceIdentityError` when a file cannot be written.
    public func write(to directory: URL) throws {
        for name in names {
            guard let data = contents(of: name) else { continue }
            try AtomicFile.write(data, to: directory.appendingPathComponent(name), permissions: 0o600, durable: false)
        }
    }
}

/// Where the client's state files are read and written: its state directory, or an
/// ``InMemoryStateFiles`` in a simulated run.
struct StateFiles: Sendable {
    let directory: URL
    let memory: InMemoryStateFiles?
    /// Flush directory writes to the disk (not used in memory).
    let durable: Bool

    /// The contents of `name`, or `nil` when it does not exist or cannot be read.
    func read(_ name: String) -> Data? {
        if let memory { return memory.contents(of: name) }
        return try? Data(contentsOf: directory.appendingPathComponent(name))
    }

    /// Replaces `name` atomically with permissions 0600 (every state file holds a secret).
    /// - Throws: `DeviceIdentityError` when the directory file cannot be written.
    func write(_ data: Data, to name: String) throws {
        if let memory {
            memory.store(data, as: name)
            return
        }
        try AtomicFile.write(data, to: directory.appendingPathComponent(name), permissions: 0o600, durable: durable)
    }

    /// Replaces `name` with what `encode` produces (nothing when it fails). In memory the
    /// encoding waits until the file is read; on disk it is done now.
    /// - Throws: `DeviceIdentityError` when the directory file cannot be written.
    func write(_ name: String, encoding encode: @escaping @Sendable () -> Data?) throws {
        if let memory {
            memory.store(as: name, encoding: encode)
            return
        }
        guard let data = encode() else { return }
        try write(data, to: name)
    }

    /// Makes sure the files can be written: creates the directory (not needed in memory).
    func prepare() throws {
        guard memory == nil else { return }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }
}
