import Locking
import Testing

/// The wake-up the reference client's sessions wait on (a reconnect wake and the operator
/// session's start gate).
@Suite("Wake signal")
struct WakeSignalTests {
    @Test func aSignalWithoutWaiterWakesTheNextWait() async {
        let signal = WakeSignal()
        signal.signal()
        await signal.wait()  // returns at once: the signal was pending (it would hang otherwise)
        // A waiter that came first is woken by the next signal, whichever runs first.
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await signal.wait() }
            signal.signal()
            await group.next()
        }
        #expect(!signal.isOpen)
    }

    @Test func anOpenGateLetsEveryLaterWaitThrough() async {
        let gate = WakeSignal()
        gate.open()
        #expect(gate.isOpen)
        gate.reset()
        await gate.wait()
        await gate.wait()
        #expect(gate.isOpen)
    }

    @Test func cancellationEndsAWait() async {
        let signal = WakeSignal()
        let waiter = Task { await signal.wait() }
        waiter.cancel()
        await waiter.value
        #expect(!signal.isOpen)
    }
}
