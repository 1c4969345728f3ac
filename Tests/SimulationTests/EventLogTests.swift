import Simulation
import Locking
import Testing

/// Runs `operation` with a real-time guard, so that a wait that never ends fails the test
/// instead of hanging the suite (the guard is a hang detector, not a timing assertion).
private func guarded<T: Sendable>(_ operation: @escaping @Sendable () async -> T) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await operation() }
        group.addTask {
            try? await Task.sleep(for: .seconds(20))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

@Suite("Event log waits")
struct EventLogTests {
    @Test func aZeroTimeoutReturnsAtOnce() async {
        let log = EventLog<Int>()
        log.append(1)
        let outcome = await guarded { await log.wait(from: 0, timeout: .zero) { $0 == 2 } }
        guard case .timedOut? = outcome else {
            Issue.record("a zero-timeout wait for a missing value must time out at once, got \(String(describing: outcome))")
            return
        }
    }

    @Test func aZeroTimeoutStillSeesWhatIsThere() async {
        let log = EventLog<Int>()
        log.append(5)
        let outcome = await guarded { await log.first(from: 0, timeout: .zero) { $0 == 5 } }
        #expect(outcome??.element == 5)
    }

    @Test func anAlreadyCancelledCallerReturnsAtOnce() async {
        let log = EventLog<Int>()
        let outcome = await guarded {
            let task = Task { () -> EventLogWait<Int> in
                withUnsafeCurrentTask { $0?.cancel() }
                return await log.wait(from: 0, timeout: .seconds(3600)) { _ in true }
            }
            return await task.value
        }
        guard case .cancelled? = outcome else {
            Issue.record("a cancelled caller must not wait, got \(String(describing: outcome))")
            return
        }
    }

    @Test func cancellingAWaiterEndsIt() async {
        let log = EventLog<Int>()
        let outcome = await guarded {
            let task = Task { await log.wait(from: 0, timeout: .seconds(3600)) { _ in true } }
            // Cancel once it is registered: an append from elsewhere would have ended it too.
            task.cancel()
            return await task.value
        }
        guard case .cancelled? = outcome else {
            Issue.record("cancellation must end the wait, got \(String(describing: outcome))")
            return
        }
    }

    @Test func appendsWakeTheMatchingWaiter() async {
        let log = EventLog<Int>()
        let outcome = await guarded {
            async let waited = log.first(from: 0, timeout: .seconds(3600)) { $0 > 10 }
            for value in [1, 2, 11, 12] {
                await Task.yield()
                log.append(value)
            }
            return await waited
        }
        #expect(outcome??.element == 11)
        #expect(outcome??.position == 2)
    }

    @Test func finishingTheLogEndsWaiters() async {
        let log = EventLog<Int>()
        let outcome = await guarded {
            async let waited = log.wait(from: 0, timeout: .seconds(3600)) { _ in false }
            await Task.yield()
            log.finish()
            return await waited
        }
        guard case .finished? = outcome else {
            Issue.record("finish must end the wait, got \(String(describing: outcome))")
            return
        }
    }
}
