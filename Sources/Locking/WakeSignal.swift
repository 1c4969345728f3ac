/// Wakes waiting tasks: ``wait()`` returns when ``signal()`` is called (or was called since the
/// last ``reset()``), once ``open()`` has been called, or when the waiting task is cancelled.
///
/// Used as a reusable wake-up (``signal()``: one pending wake-up, consumed by the next waiter) and
/// as a one-shot gate (``open()``: every wait from then on returns at once). Waiters are resumed
/// in the order they came, so simulated runs replay the same way.
package final class WakeSignal: Sendable {
    private struct State {
        var signalled = false
        var isOpen = false
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]

        /// Takes every waiter, in the order they came.
        mutating func takeWaiters() -> [CheckedContinuation<Void, Never>] {
            defer { waiters = [:] }
            return waiters.sorted { $0.key < $1.key }.map(\.value)
        }
    }

    // Waiters and the flags live behind this lock.
    private let state = Locked(State())

    /// Creates a signal that is neither signalled nor open.
    package init() {}

    /// Whether ``open()`` was called.
    package var isOpen: Bool { state.withLock { $0.isOpen } }

    /// Forgets a signal that nobody waited for (an open gate stays open).
    package func reset() { state.withLock { $0.signalled = false } }

    /// Wakes every waiter, or the next one to wait if none is waiting now.
    package func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.waiters.isEmpty {
                state.signalled = true
                return []
            }
            return state.takeWaiters()
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Opens for good: wakes every waiter, and every later ``wait()`` returns at once.
    package func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            return state.takeWaiters()
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits for a signal, the open gate, or cancellation.
    package func wait() async {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.isOpen || Task.isCancelled { return true }
                    if state.signalled {
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
