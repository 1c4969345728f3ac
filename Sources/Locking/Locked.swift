import Foundation

/// A value that many threads share, read and written only while a lock is held.
///
/// This is the package's replacement for `Synchronization.Mutex`, which needs macOS 15 / iOS 18:
/// the package supports macOS 14 and iOS 17, so every module uses this type instead (a test keeps
/// `import Synchronization` out of `Sources/`). The interface is the subset of `Mutex` the package
/// uses: `Locked(initial)` and `withLock { state in ... }`.
///
/// ```swift
/// private let state = Locked(State())
/// let count = state.withLock { state in
///     state.count += 1
///     return state.count
/// }
/// ```
@usableFromInline
package final class Locked<Value: ~Copyable>: @unchecked Sendable {
    // Safe to share across threads: `value` is only read or written inside `withLock`, while
    // `lock` is held, so no two threads ever access it at once. As with `Mutex`, the closure must
    // not let a reference to non-Sendable state escape; every use in the package keeps Sendable
    // values in the state or hands continuations out to be resumed after the lock is released.
    // `@usableFromInline` so that `withLock` is inlined and specialized where it is called: a
    // generic call across the module boundary cost a closure context, type-metadata lookups
    // and an indirect call per use, several per frame (Benchmarks/README.md).
    @usableFromInline let lock = NSLock()
    @usableFromInline var value: Value

    /// Wraps `value`.
    @usableFromInline
    package init(_ value: consuming Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value and returns what it returns.
    /// - Throws: what `body` throws.
    @inlinable
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// Runs `body` with exclusive access to the value if the lock is free at once; otherwise
    /// returns `nil` without waiting (as `Mutex.withLockIfAvailable` does). For a cache that a
    /// thread may skip rather than wait for: a waiter of higher priority could otherwise be held
    /// up by a holder of lower priority that the scheduler keeps off the CPU.
    /// - Throws: what `body` throws.
    @inlinable
    package func withLockIfAvailable<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result? {
        guard lock.try() else { return nil }
        defer { lock.unlock() }
        return try body(&value)
    }
}
