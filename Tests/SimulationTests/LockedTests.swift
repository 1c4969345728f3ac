import Foundation
import Locking
import Testing

@Suite("Locked")
struct LockedTests {
    /// `withLockIfAvailable` never waits: with the lock held elsewhere it returns `nil` at once,
    /// and with the lock free it runs its body.
    @Test func withLockIfAvailableSkipsAHeldLockAndRunsOnAFreeOne() async {
        let counter = Locked(0)
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Thread {
            counter.withLock { value in
                value += 1
                held.signal()
                release.wait()
            }
        }
        holder.start()
        await withCheckedContinuation { continuation in
            Thread { held.wait(); continuation.resume() }.start()
        }
        #expect(counter.withLockIfAvailable { value -> Int in value += 10; return value } == nil, "the held lock was waited for")
        release.signal()
        #expect(counter.withLock { $0 } == 1)
        #expect(counter.withLockIfAvailable { value -> Int in value += 10; return value } == 11)
    }
}
