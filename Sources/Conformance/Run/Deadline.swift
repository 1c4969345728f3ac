import Simulation
import Locking

/// Runs `operation`; returns its result, or throws `timeoutError` when `duration` passes first
/// on `timeline`, or `CancellationError` when the calling task is cancelled first.
///
/// The operation runs in an unstructured task that is cancelled (and not awaited) when the
/// deadline or a cancellation wins: an operation that ignores cancellation (a client's stimulus
/// handler, a wait with its own deadline) then cannot hold the run beyond its deadline. On a
/// simulated run's virtual time the deadline also ends at once when nothing else can happen.
func withDeadline<T: Sendable>(
    _ duration: Duration?, on timeline: any Timeline = WallTimeline(), _ timeoutError: any Error,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let once = ResumeOnce<T>()
    let work = spawnTask {
        do { once.resume(.success(try await operation())) } catch { once.resume(.failure(error)) }
    }
    let timer: Task<Void, Never>? = duration.map { duration in
        spawnTask {
            // A cancelled timer means the operation finished first.
            if await timeline.sleep(for: duration, purpose: .deadline) != .cancelled {
                once.resume(.failure(timeoutError))
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
