import Synchronization

/// Resumes a continuation exactly once, whichever side comes first; a result that arrives
/// before the continuation is installed is kept for it.
final class ResumeOnce<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var pending: Result<T, any Error>?
        var done = false
    }

    // All state is behind the mutex; the continuation is resumed outside of it.
    private let state = Mutex(State())

    func install(_ continuation: CheckedContinuation<T, any Error>) {
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

    func resume(_ result: Result<T, any Error>) {
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

/// Runs `operation`; returns its result, or throws `timeoutError` when `duration` passes first,
/// or `CancellationError` when the calling task is cancelled first.
///
/// The operation runs in an unstructured task that is cancelled (and not awaited) when the
/// deadline or a cancellation wins: an operation that ignores cancellation (a client's stimulus
/// handler, a wait with its own deadline) then cannot hold the run beyond its deadline.
func withDeadline<T: Sendable>(
    _ duration: Duration?, _ timeoutError: any Error,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let once = ResumeOnce<T>()
    let work = Task {
        do { once.resume(.success(try await operation())) } catch { once.resume(.failure(error)) }
    }
    let timer: Task<Void, Never>? = duration.map { duration in
        Task {
            do {
                try await Task.sleep(for: duration)
                once.resume(.failure(timeoutError))
            } catch {
                // Cancelled: the operation finished first.
            }
        }
    }
    defer {
        timer?.cancel()
        work.cancel()
    }
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { once.install($0) }
    } onCancel: {
        once.resume(.failure(CancellationError()))
    }
}
