#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Locking

/// Why a simulated run could not finish.
public struct SimulationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, in a sentence.
    public var description: String

    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

/// Runs every task of one run (a Gateway, an in-process client, a scenario) on one thread, one
/// job at a time, so that the run is a deterministic simulation:
///
/// - When several jobs are ready, the seed picks which runs next: a race is replayed exactly by
///   its seed, and other seeds try other orders.
/// - When no job is ready, the run is idle: virtual time jumps straight to the next deadline on
///   the ``VirtualTimeline`` (a client's backoff, a Gateway timer, a scenario's wait), and a wait
///   that nothing pending can satisfy is woken at once (``WakeReason/nothingPending``).
/// - No real time passes anywhere, so the verdict does not depend on how busy the machine is.
///
/// Tasks join the run by executor preference: ``run(_:)`` starts the root task on this
/// executor, child tasks inherit it, and unstructured tasks created with ``spawnTask(priority:_:)``
/// are placed on it. Code that creates a plain `Task { }` or sleeps in real time escapes the
/// simulation; the run then stalls with a ``SimulationError`` that says so.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
public final class SimulationExecutor: TaskExecutor {
    /// Bounds that turn a run that never settles into an error instead of a hang.
    public struct Limits: Sendable, Hashable {
        /// Jobs that may run at one virtual instant before time is moved to the next deadline
        /// anyway: a client that loops without ever waiting still lets its timers fire.
        public var jobsPerInstant: Int
        /// Jobs one run may execute in all.
        public var totalJobs: Int
        /// Real time one run may take, a safety net against a run that never settles (checked
        /// between jobs, never by sleeping); `nil` for none.
        public var wallClock: Duration?

        /// Creates limits.
        public init(jobsPerInstant: Int = 20_000, totalJobs: Int = 20_000_000, wallClock: Duration? = nil) {
            self.jobsPerInstant = jobsPerInstant
            self.totalJobs = totalJobs
            self.wallClock = wallClock
        }
    }

    private struct State: Sendable {
        var ready: [UnownedJob] = []
        var random: SeededRandom
        var rootFinished = false
        var stopRequested = false
        var jobsRun = 0
    }

    /// The run's virtual time.
    public let timeline: VirtualTimeline
    /// The bounds of the run.
    public let limits: Limits
    // The ready queue and the loop's flags; jobs may be enqueued from any thread.
    private let state: Locked<State>

    /// Creates an executor for one run.
    /// - Parameters:
    ///   - seed: chooses the order of jobs that are ready at the same time.
    ///   - timeline: the run's virtual time, moved by the executor when the run is idle.
    ///   - limits: bounds for runs that never settle.
    public init(seed: UInt64, timeline: VirtualTimeline, limits: Limits = Limits()) {
        self.timeline = timeline
        self.limits = limits
        self.state = Locked(State(random: SeededRandom(seed: seed)))
    }

    /// Queues a job; the run's thread picks it up.
    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        state.withLock { $0.ready.append(unowned) }
    }

    /// How many jobs ran so far.
    public var jobsRun: Int { state.withLock { $0.jobsRun } }

    /// Asks the run's thread to stop after the current job (for a real-time safety limit); the
    /// run then ends with a ``SimulationError``.
    public func requestStop() {
        state.withLock { $0.stopRequested = true }
    }

    /// Runs `body` as the root task of the simulation and returns what it returns.
    ///
    /// The calling task only waits: `body`, and every task it starts through executor
    /// preference, runs on the simulation's own thread.
    /// - Throws: what `body` throws, or ``SimulationError`` when the run stalls (no task can run,
    ///   nothing sleeps on the time line, `body` has not returned), runs away (more jobs than
    ///   ``Limits/totalJobs``), or is stopped.
    public func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let once = ResumeOnce<T>()
        timeline.setDriven(true)
        let root = Task(executorPreference: self) { [self] in
            do {
                let value = try await TaskPlacement.$executor.withValue(self) { try await body() }
                once.resume(.success(value))
            } catch {
                once.resume(.failure(error))
            }
            state.withLock { $0.rootFinished = true }
        }
        _ = root
        let thread = Thread { [self] in
            SimulationThread.markCurrent()
            Self.yieldToRealTimeWork()
            let failure = loop()
            timeline.setDriven(false)
            if let failure { once.resume(.failure(failure)) }
        }
        thread.name = "Simulation"
        thread.qualityOfService = .utility
        // Scenario code, JSON parsing and in-memory deliveries run on this thread's stack.
        thread.stackSize = 16 << 20
        thread.start()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { once.install($0) }
        } onCancel: {
            requestStop()
        }
    }

    /// A simulated run's verdict does not depend on how fast it runs, but real-time work beside
    /// it (client processes, sockets, a person at a console, other tests) does: the run's thread
    /// gives way to them (a lower priority: `nice` 10 on Linux, utility QoS elsewhere).
    private static func yieldToRealTimeWork() {
        #if canImport(Glibc)
        // Linux keeps the nice value per thread: `who` 0 is the calling thread (setpriority(2), BUGS).
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #endif
    }

    private enum Next {
        case job(UnownedJob)
        case idle(rootFinished: Bool)
        case stop
    }

    private func next() -> Next {
        state.withLock { state in
            if state.stopRequested { return .stop }
            guard !state.ready.isEmpty else { return .idle(rootFinished: state.rootFinished) }
            let index = Int(state.random.next() % UInt64(state.ready.count))
            state.ready.swapAt(index, state.ready.count - 1)
            state.jobsRun += 1
            return .job(state.ready.removeLast())
        }
    }

    /// The run's thread: jobs until idle, then time; returns why it gave up, if it did.
    private func loop() -> SimulationError? {
        var jobsThisInstant = 0
        var total = 0
        let started = ContinuousClock.now
        while true {
            if let limit = limits.wallClock, total % 1024 == 0, ContinuousClock.now - started > limit {
                return SimulationError("the simulated run took more than \(limit) of real time (\(total) jobs, virtual time "
                                       + "\(timeline.nowMs)): it never settles")
            }
            switch next() {
            case .stop:
                return SimulationError("the simulated run was stopped after \(total) jobs at virtual time \(timeline.nowMs)")
            case .job(let job):
                job.runSynchronously(on: asUnownedTaskExecutor())
                total += 1
                jobsThisInstant += 1
                if total > limits.totalJobs {
                    return SimulationError("the simulated run did not settle: \(total) jobs ran (limit \(limits.totalJobs))")
                }
                if jobsThisInstant > limits.jobsPerInstant {
                    // Busy for too long at one instant: let time pass as if the work took time.
                    timeline.advanceToNextDeadline()
                    jobsThisInstant = 0
                }
            case .idle(let rootFinished):
                if rootFinished { return nil }
                switch timeline.advanceToNextDeadline() {
                case .advanced, .wokeDeadlines:
                    jobsThisInstant = 0
                case .wokeIdleWaiters:
                    break
                case .nothingPending:
                    return SimulationError(
                        "the simulated run stalled at virtual time \(timeline.nowMs): no task can run and nothing sleeps on "
                            + "the virtual clock, but the run has not finished (a task waits for something outside the simulation: "
                            + "a plain Task { }, a real-time sleep or a thread of its own; see docs/in-process-clients.md)")
                }
            }
        }
    }
}

/// The threads simulated runs execute their jobs on.
public enum SimulationThread {
    // Thread-specific data rather than the thread dictionary, whose lookup was a visible share
    // of every in-process connect (`SimulatedClientConnector` asks on each one).
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    static func markCurrent() {
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
    }

    /// Whether the caller runs as a job of a simulated run (on a run's thread). Code that a
    /// simulation must see (a client's connects, for example) can check it to report a task that
    /// escaped the simulation (a plain `Task { }`) instead of racing it.
    public static func isCurrent() -> Bool {
        pthread_getspecific(key) != nil
    }
}

/// Resumes a continuation exactly once, whichever side comes first; a result that arrives
/// before the continuation is installed is kept for it.
///
/// ```swift
/// let once = ResumeOnce<Int>()
/// spawnTask { once.resume(.success(42)) }
/// let value = try await withCheckedThrowingContinuation { once.install($0) }
/// ```
public final class ResumeOnce<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var pending: Result<T, any Error>?
        var done = false
    }

    // All state is behind the lock; the continuation is resumed outside of it.
    private let state = Locked(State())

    /// Creates an empty one.
    public init() {}

    /// Hands over the continuation; resumes it at once when a result is already there.
    public func install(_ continuation: CheckedContinuation<T, any Error>) {
        let ready: Result<T, any Error>? = state.withLock { state in
            if let pending = state.pending {
                state.pending = nil
                state.done = true
                return pending
            }
            state.continuation = continuation
            return nil
        }
        if let ready { continuation.resume(with: ready) }
    }

    /// Delivers a result; only the first one counts.
    public func resume(_ result: Result<T, any Error>) {
        let continuation: CheckedContinuation<T, any Error>? = state.withLock { state in
            guard !state.done else { return nil }
            if let continuation = state.continuation {
                state.continuation = nil
                state.done = true
                return continuation
            }
            if state.pending == nil { state.pending = result }
            return nil
        }
        continuation?.resume(with: result)
    }
}
