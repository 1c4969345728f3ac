#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(CEpoll)
import CEpoll
#endif
import Foundation
import Locking

/// The directions a registered descriptor wants to hear about.
struct IOInterest: OptionSet, Sendable, Hashable {
    let rawValue: UInt8
    static let read = IOInterest(rawValue: 1)
    static let write = IOInterest(rawValue: 2)
}

/// What the poller reported for a descriptor.
struct IOReadiness: Sendable, Hashable {
    /// Data (or EOF) can be read.
    var readable = false
    /// Bytes can be written.
    var writable = false
    /// The peer hung up or the socket has an error; reported even without read interest, so
    /// the handler must read (or close) to make progress.
    var hangup = false
}

/// Something that owns a descriptor registered with an ``EventLoop``. All three calls come
/// from the loop thread, one at a time.
protocol EventLoopHandler: AnyObject, Sendable {
    /// The descriptor is ready. `scratch` is the loop's read buffer, valid during the call only.
    func handleIO(_ readiness: IOReadiness, scratch: UnsafeMutableRawBufferPointer)
    /// The loop is stopping: close the descriptor now.
    func handleLoopStop()
}

/// Identifies a registration (never reused, unlike descriptor numbers).
struct RegistrationID: Sendable, Hashable {
    var rawValue: UInt64
}

/// Identifies a scheduled timer.
struct TimerID: Sendable, Hashable {
    var rawValue: UInt64
}

/// One thread that multiplexes many non-blocking sockets with `epoll` (Linux) or `poll`,
/// runs timers and runs submitted work. There is no thread per connection.
///
/// Handlers are called on the loop thread. Registration, interest changes, timers and
/// submitted work may come from any thread. Each server owns a loop; clients share a loop that
/// exists while at least one client connection does.
final class EventLoop: Sendable {
    private struct Registration {
        var fd: Int32
        var interest: IOInterest
        var handler: any EventLoopHandler
    }

    private struct Timer {
        var deadline: ContinuousClock.Instant
        var action: @Sendable () -> Void
    }

    private struct State: ~Copyable {
        var registrations: [UInt64: Registration] = [:]
        var nextID: UInt64 = 1
        var timers: [UInt64: Timer] = [:]
        var timerHeap = TimerHeap()
        var work: [@Sendable () -> Void] = []
        var wakeupPending = false
        var stopRequested = false
        var terminated = false
        var terminationWaiters: [CheckedContinuation<Void, Never>] = []
    }

    let kind: PollerKind
    /// The thread's name.
    let name: String
    private let pollFD: Int32  // epoll descriptor; -1 for poll
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let state = Locked(State())
    private static let wakeupID: UInt64 = 0
    private static let scratchSize = 256 * 1024

    /// Creates the loop's descriptors and starts its thread.
    init(kind: PollerKind = .platformDefault, name: String = "WebSocketEventLoop") throws(WebSocketError) {
        self.kind = kind
        self.name = name
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { throw WebSocketError.socketFailed.with(detail: Socket.errorText("pipe()")) }
        for fd in pipeFDs {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakeRead = pipeFDs[0]
        wakeWrite = pipeFDs[1]
        #if canImport(CEpoll)
        if kind == .epoll {
            let fd = openclaw_epoll_create()
            guard fd >= 0 else {
                Socket.closeDescriptor(pipeFDs[0])
                Socket.closeDescriptor(pipeFDs[1])
                throw WebSocketError.socketFailed.with(detail: Socket.errorText("epoll_create1()"))
            }
            pollFD = fd
            _ = openclaw_epoll_control(fd, 1, wakeRead, 1, 0, Self.wakeupID)
        } else {
            pollFD = -1
        }
        #else
        pollFD = -1
        #endif
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    // MARK: - Registration (any thread)

    /// Registers a descriptor. The loop does not own it: the handler closes it after
    /// ``deregister(_:)``.
    func register(fd: Int32, interest: IOInterest, handler: any EventLoopHandler) throws(WebSocketError) -> RegistrationID {
        let result: Result<RegistrationID, WebSocketError> = state.withLock { state in
            guard !state.stopRequested else { return .failure(.eventLoopShutDown) }
            let id = state.nextID
            state.nextID += 1
            state.registrations[id] = Registration(fd: fd, interest: interest, handler: handler)
            #if canImport(CEpoll)
            if kind == .epoll {
                if Self.epollControl(pollFD, 1, fd, interest, id) != 0 {
                    state.registrations[id] = nil
                    return .failure(WebSocketError.socketFailed.with(detail: Socket.errorText("epoll_ctl(ADD)")))
                }
            }
            #endif
            return .success(RegistrationID(rawValue: id))
        }
        let id = try result.get()
        if kind == .poll { wakeUp() }
        return id
    }

    /// Changes what a registration listens for.
    func setInterest(_ id: RegistrationID, _ interest: IOInterest) {
        let changed = state.withLock { state -> Bool in
            guard var registration = state.registrations[id.rawValue], registration.interest != interest else { return false }
            registration.interest = interest
            state.registrations[id.rawValue] = registration
            #if canImport(CEpoll)
            if kind == .epoll {
                _ = Self.epollControl(pollFD, 2, registration.fd, interest, id.rawValue)
            }
            #endif
            return true
        }
        if changed, kind == .poll { wakeUp() }
    }

    /// Hands a registration to another handler (a finished opening handshake hands the
    /// socket to its connection).
    func replaceHandler(_ id: RegistrationID, with handler: any EventLoopHandler) {
        state.withLock { state in state.registrations[id.rawValue]?.handler = handler }
    }

    /// Removes a registration; call before closing its descriptor.
    func deregister(_ id: RegistrationID) {
        state.withLock { state in
            guard let registration = state.registrations.removeValue(forKey: id.rawValue) else { return }
            #if canImport(CEpoll)
            if kind == .epoll {
                _ = Self.epollControl(pollFD, 3, registration.fd, [], id.rawValue)
            }
            #else
            _ = registration
            #endif
        }
    }

    /// The number of registered descriptors.
    var registrationCount: Int { state.withLock { $0.registrations.count } }

    // MARK: - Timers and work (any thread)

    /// Runs `action` on the loop thread after `delay`.
    @discardableResult
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> TimerID {
        let deadline = ContinuousClock.now.advanced(by: delay)
        let id = state.withLock { state -> UInt64 in
            let id = state.nextID
            state.nextID += 1
            guard !state.stopRequested else { return id }  // never fires
            state.timers[id] = Timer(deadline: deadline, action: action)
            state.timerHeap.push(deadline: deadline, id: id)
            return id
        }
        wakeUp()
        return TimerID(rawValue: id)
    }

    /// Cancels a timer that has not fired yet.
    func cancel(_ timer: TimerID) {
        state.withLock { state in _ = state.timers.removeValue(forKey: timer.rawValue) }
    }

    /// Runs `work` on the loop thread soon. Returns `false` when the loop is stopping.
    @discardableResult
    func execute(_ work: @escaping @Sendable () -> Void) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard !state.stopRequested else { return false }
            state.work.append(work)
            return true
        }
        if accepted { wakeUp() }
        return accepted
    }

    /// Interrupts the blocking wait. The byte is written under the lock so that it can never
    /// reach a descriptor number reused after the loop has closed its pipe.
    private func wakeUp() {
        state.withLock { state in
            guard !state.wakeupPending, !state.terminated else { return }
            state.wakeupPending = true
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
    }

    // MARK: - Stopping

    /// Asks the loop to stop without waiting (usable on the loop thread). Every registered
    /// handler gets ``EventLoopHandler/handleLoopStop()``, then the thread exits.
    func requestStop() {
        state.withLock { $0.stopRequested = true }
        wakeUp()
    }

    /// Stops the loop and waits until its thread has released everything.
    func stop() async {
        requestStop()
        await waitUntilTerminated()
    }

    /// Waits until the loop thread has finished, without asking it to stop.
    func waitUntilTerminated() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.terminated { return true }
                state.terminationWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Whether the loop thread has finished.
    var isTerminated: Bool { state.withLock { $0.terminated } }

    // MARK: - The loop thread

    private func run() {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.scratchSize, alignment: 16)
        defer { scratch.deallocate() }
        var ready: [(UInt64, IOReadiness)] = []
        ready.reserveCapacity(256)
        var poller = Poller(kind: kind, pollFD: pollFD, wakeRead: wakeRead)
        while true {
            let timeout = state.withLock { state -> Int32? in
                if state.stopRequested { return nil }
                return Self.timeoutMilliseconds(state.timerHeap.peek(), now: .now, hasWork: !state.work.isEmpty)
            }
            guard let timeout else { break }
            ready.removeAll(keepingCapacity: true)
            let snapshot: [(UInt64, Int32, IOInterest)] = kind == .poll
                ? state.withLock { state in state.registrations.map { ($0.key, $0.value.fd, $0.value.interest) } }
                : []
            poller.wait(timeout: timeout, pollRegistrations: snapshot, into: &ready)
            for (id, readiness) in ready {
                if id == Self.wakeupID {
                    drainWakeups()
                    continue
                }
                // A handler may have closed another registration earlier in this batch.
                guard let handler = state.withLock({ $0.registrations[id]?.handler }) else { continue }
                handler.handleIO(readiness, scratch: scratch)
            }
            runDueTimers()
            let work = state.withLock { state -> [@Sendable () -> Void] in
                let work = state.work
                state.work.removeAll()
                return work
            }
            for item in work { item() }
        }
        shutDownRegistrations()
    }

    private func drainWakeups() {
        // Empty the pipe first, then clear the flag: clearing first let a wake-up that landed in
        // between have its byte consumed while the flag stayed set, so every later wake-up
        // (including stop) was skipped. Work queued before the flag is cleared is picked up by
        // this iteration; work queued after it writes a new byte.
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &buffer, buffer.count) > 0 {}
        state.withLock { $0.wakeupPending = false }
    }

    private func runDueTimers() {
        let now = ContinuousClock.now
        while true {
            let action = state.withLock { state -> (@Sendable () -> Void)?? in
                guard let (deadline, id) = state.timerHeap.peek(), deadline <= now else { return .none }
                state.timerHeap.pop()
                return .some(state.timers.removeValue(forKey: id)?.action)
            }
            guard let action else { return }
            action?()
        }
    }

    private func shutDownRegistrations() {
        // Handlers deregister themselves while stopping; repeat until none is left.
        var rounds = 0
        while rounds < 4 {
            let handlers = state.withLock { state in state.registrations.values.map(\.handler) }
            if handlers.isEmpty { break }
            for handler in handlers { handler.handleLoopStop() }
            rounds += 1
        }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.registrations.removeAll()
            state.timers.removeAll()
            state.timerHeap = TimerHeap()
            state.work.removeAll()
            state.terminated = true
            if pollFD >= 0 { Socket.closeDescriptor(pollFD) }
            Socket.closeDescriptor(wakeRead)
            Socket.closeDescriptor(wakeWrite)
            let waiters = state.terminationWaiters
            state.terminationWaiters.removeAll()
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Milliseconds until the next timer (rounded up), 0 with pending work, -1 for none.
    static func timeoutMilliseconds(_ next: (ContinuousClock.Instant, UInt64)?, now: ContinuousClock.Instant, hasWork: Bool) -> Int32 {
        if hasWork { return 0 }
        guard let (deadline, _) = next else { return -1 }
        if deadline <= now { return 0 }
        let (seconds, attoseconds) = (deadline - now).components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }

    #if canImport(CEpoll)
    /// `op`: 1 add, 2 modify, 3 remove.
    private static func epollControl(_ epoll: Int32, _ op: Int32, _ fd: Int32, _ interest: IOInterest, _ id: UInt64) -> Int32 {
        openclaw_epoll_control(epoll, op, fd, interest.contains(.read) ? 1 : 0, interest.contains(.write) ? 1 : 0, id)
    }
    #endif
}

/// The blocking wait of the loop thread over `epoll_wait` or `poll`.
private struct Poller {
    let kind: PollerKind
    let pollFD: Int32
    let wakeRead: Int32
    var readyIDs = [UInt64](repeating: 0, count: 256)
    var readyFlags = [UInt8](repeating: 0, count: 256)
    var pollFDs: [pollfd] = []
    var pollIDs: [UInt64] = []

    init(kind: PollerKind, pollFD: Int32, wakeRead: Int32) {
        self.kind = kind
        self.pollFD = pollFD
        self.wakeRead = wakeRead
    }

    mutating func wait(timeout: Int32, pollRegistrations: [(UInt64, Int32, IOInterest)], into ready: inout [(UInt64, IOReadiness)]) {
        #if canImport(CEpoll)
        if kind == .epoll {
            let count = readyIDs.withUnsafeMutableBufferPointer { ids in
                readyFlags.withUnsafeMutableBufferPointer { flags in
                    openclaw_epoll_wait(pollFD, ids.baseAddress, flags.baseAddress, Int32(ids.count), timeout)
                }
            }
            guard count > 0 else { return }
            for index in 0..<Int(count) {
                let flags = readyFlags[index]
                ready.append((readyIDs[index], IOReadiness(readable: flags & 1 != 0, writable: flags & 2 != 0, hangup: flags & 4 != 0)))
            }
            return
        }
        #endif
        pollFDs.removeAll(keepingCapacity: true)
        pollIDs.removeAll(keepingCapacity: true)
        pollFDs.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
        pollIDs.append(0)
        for (id, fd, interest) in pollRegistrations {
            var events: Int16 = 0
            if interest.contains(.read) { events |= Int16(POLLIN) }
            if interest.contains(.write) { events |= Int16(POLLOUT) }
            pollFDs.append(pollfd(fd: fd, events: events, revents: 0))
            pollIDs.append(id)
        }
        let count = pollFDs.withUnsafeMutableBufferPointer { buffer in
            poll(buffer.baseAddress, nfds_t(buffer.count), timeout)
        }
        guard count > 0 else { return }
        for index in pollFDs.indices where pollFDs[index].revents != 0 {
            let flags = pollFDs[index].revents
            var readiness = IOReadiness()
            readiness.readable = flags & Int16(POLLIN | POLLHUP | POLLERR) != 0
            readiness.writable = flags & Int16(POLLOUT | POLLERR) != 0
            readiness.hangup = flags & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
            ready.append((pollIDs[index], readiness))
        }
    }
}

/// A binary min-heap of timer deadlines. Cancelled timers stay in the heap and are skipped
/// when popped (their id is no longer in the timer table).
struct TimerHeap: Sendable {
    private var items: [(deadline: ContinuousClock.Instant, id: UInt64)] = []

    func peek() -> (ContinuousClock.Instant, UInt64)? { items.first.map { ($0.deadline, $0.id) } }

    mutating func push(deadline: ContinuousClock.Instant, id: UInt64) {
        items.append((deadline, id))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].deadline < items[parent].deadline else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() {
        guard !items.isEmpty else { return }
        items.swapAt(0, items.count - 1)
        items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < items.count, items[left].deadline < items[smallest].deadline { smallest = left }
            if right < items.count, items[right].deadline < items[smallest].deadline { smallest = right }
            if smallest == parent { return }
            items.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
