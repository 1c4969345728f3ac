#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a child process could not be started.
public struct SpawnError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed, with the system's reason.
    public var description: String

    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

/// Starting child processes so that they inherit nothing but their standard streams.
///
/// `posix_spawn` passes every descriptor that is not close-on-exec to the child. In a process
/// that also starts children with Foundation's `Process`, that includes the socket through which
/// Foundation learns that one of its children exited (its end must stay open in that child, so it
/// is not close-on-exec). A client spawned at the same moment would hold it for its whole life,
/// and Foundation would not see the other child's exit until the client exited: a test runner's
/// `waitUntilExit()` then blocked a thread of the cooperative pool for as long. So every spawn here
/// closes all descriptors from 3 up in the child (`posix_spawn_file_actions_addclosefrom_np`,
/// glibc 2.34 and later; `POSIX_SPAWN_CLOEXEC_DEFAULT` on Darwin), and the pipes made here are
/// close-on-exec from the start (`pipe2`), so no concurrent spawn can catch them half made.
public enum ProcessSpawn {
    /// Where a child's standard stream comes from or goes to.
    public enum Stream: Sendable, Hashable {
        /// `/dev/null`.
        case null
        /// This descriptor of the parent, duplicated onto the stream (the parent keeps its own
        /// and closes it after the spawn).
        case descriptor(Int32)
    }

    /// The signals a child gets the default action for, whatever the parent ignores or handles
    /// (an ignored signal is inherited through exec: SIGPIPE is ignored by the harness and by
    /// test runners, and a child ignoring SIGTERM would only end with SIGKILL).
    public static let defaultedSignals: [Int32] = [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD]

    /// Whether children are kept from inheriting descriptors from 3 up (false only with a glibc
    /// older than 2.34, where the parent's other descriptors still leak into its children).
    public static var closesInheritedDescriptors: Bool {
        #if canImport(Glibc)
        addCloseFrom != nil
        #else
        true
        #endif
    }

    /// A pipe whose two ends are close-on-exec from the moment they exist.
    /// - Returns: the read end and the write end.
    /// - Throws: ``SpawnError`` when the system has no descriptor left.
    public static func pipe() throws(SpawnError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        #if canImport(Glibc)
        if let pipe2 = pipe2Function {
            guard pipe2(&fds, O_CLOEXEC) == 0 else { throw SpawnError("pipe2() failed: \(String(cString: strerror(errno)))") }
            return (fds[0], fds[1])
        }
        #endif
        guard systemPipe(&fds) == 0 else { throw SpawnError("pipe() failed: \(String(cString: strerror(errno)))") }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        return (fds[0], fds[1])
    }

    /// `count` pipes made by ``pipe()``; when one cannot be made, those already made are closed.
    /// - Throws: ``SpawnError`` when the system has no descriptor left.
    public static func pipes(_ count: Int) throws(SpawnError) -> [(read: Int32, write: Int32)] {
        var made: [(read: Int32, write: Int32)] = []
        do {
            for _ in 0..<count { made.append(try pipe()) }
        } catch {
            closeAll(made)
            throw error
        }
        return made
    }

    /// Closes both ends of every pipe in `pipes`.
    public static func closeAll(_ pipes: [(read: Int32, write: Int32)]) {
        for pipe in pipes {
            _ = close(pipe.read)
            _ = close(pipe.write)
        }
    }

    /// Starts `path` with `arguments` (without `argv[0]`, which is `path`) and `environment`.
    ///
    /// The child gets `stdin`, `stdout` and `stderr` as descriptors 0, 1 and 2 and no other
    /// descriptor of this process, no blocked signals, and the default action for
    /// ``defaultedSignals``.
    /// - Parameters:
    ///   - path: the executable's absolute path.
    ///   - environment: `NAME=value` entries; `nil` passes this process's environment.
    ///   - newProcessGroup: whether the child leads a process group of its own (pgid = pid).
    /// - Returns: the child's process id.
    /// - Throws: ``SpawnError`` when it cannot be started (no such executable, no resources).
    public static func spawn(
        path: String, arguments: [String], environment: [String]?,
        stdin: Stream, stdout: Stream, stderr: Stream, newProcessGroup: Bool = false
    ) throws(SpawnError) -> pid_t {
        #if canImport(Glibc)
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #else
        var actions: posix_spawn_file_actions_t? = nil
        var attributes: posix_spawnattr_t? = nil
        #endif
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        // dup2 clears FD_CLOEXEC on the target; the close-from action runs after the dup2s.
        for (stream, target) in [(stdin, Int32(0)), (stdout, 1), (stderr, 2)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .descriptor(let fd):
                posix_spawn_file_actions_adddup2(&actions, fd, target)
            }
        }
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        #if canImport(Glibc)
        if let addCloseFrom { _ = addCloseFrom(&actions, 3) }
        #else
        flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #endif
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in defaultedSignals { sigaddset(&defaults, number) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &mask)
        if newProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = (environment ?? []).map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let status = environment == nil
            ? posix_spawn(&pid, path, &actions, &attributes, &argv, environ)
            : posix_spawn(&pid, path, &actions, &attributes, &argv, &envp)
        guard status == 0 else { throw SpawnError("cannot start \(path): \(String(cString: strerror(status)))") }
        return pid
    }

    #if canImport(Glibc)
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+) and `pipe2`, looked up at run
    /// time: Swift's Glibc module does not declare these GNU extensions.
    private static let addCloseFrom: AddCloseFrom? = lookUp("posix_spawn_file_actions_addclosefrom_np")
    private static let pipe2Function: Pipe2? = lookUp("pipe2")

    private static func lookUp<T>(_ name: String) -> T? {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, name) else { return nil }
        return unsafeBitCast(symbol, to: T.self)
    }
    #endif

    private static func systemPipe(_ fds: inout [Int32]) -> Int32 {
        #if canImport(Glibc)
        Glibc.pipe(&fds)
        #else
        Darwin.pipe(&fds)
        #endif
    }
}
