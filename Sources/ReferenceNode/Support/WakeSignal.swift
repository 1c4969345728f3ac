import Locking

/// A reusable wake-up: ``wait()`` returns when ``signal()`` is called (or was called since the
/// last ``reset()``), or when the waiting task is cancelled.
final class WakeSignal: Sendable {
    private struct State {
        var signalled = false
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    // Waiters and the pending flag live behind this lock.
    private let state = Locked(State())

    /// Forgets a signal that nobody waited for.
    func reset() { state.withLock { $0.signalled = false } }

    /// Wakes every waiter, or the next one to wait if none is waiting now.
    func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.waiters.isEmpty {
                state.signalled = true
                return []
            }
            defer { state.waiters = [:] }
            // In the order the waiters came, not the dictionary's (simulated runs replay it).
            return state.waiters.sorted { $0.key < $1.key }.map(\.value)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits for a signal or cancellation.
    func wait() async {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.signalled || Task.isCancelled {
                        state.signalled = false
                        return true
                    }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}

/// A one-shot gate: ``wait()`` returns once ``open()`` has been called (or on cancellation).
final class Latch: Sendable {
    private struct State {
        var isOpen = false
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    // Waiters and the open flag live behind this lock.
    private let state = Locked(State())

    /// Whether ``open()`` was called.
    var isOpen: Bool { state.withLock { $0.isOpen } }

    /// Opens the gate for good.
    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters = [:] }
            // In the order the waiters came, not the dictionary's (simulated runs replay it).
            return state.waiters.sorted { $0.key < $1.key }.map(\.value)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until the gate is open or the task is cancelled.
    func wait() async {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.isOpen || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}
