import Foundation
import Locking

/// The Watch polls the Gateway holds, each waiting for its answer (an event, its 20 s, a newer
/// poll, a closed session) or for its client to go away.
///
/// The waiting and the client's departure meet here, under a lock, so that a cancelled poll
/// never needs a task of its own: the cancellation handler only resumes the waiting request with
/// `nil`, and the request's own task (the one the transport runs, part of a simulated run when
/// there is one) then tells the Gateway. A `Task { }` started from the cancellation handler would
/// run outside the simulation, and virtual time could jump past the poll's deadlines before the
/// Gateway heard that its client had gone: the same seed would not give the same run.
final class HeldWatchPolls: Sendable {
    private enum Slot {
        /// Held; nobody waits on it yet.
        case held
        /// Answered before its request started waiting.
        case answered(WatchHTTPResponse)
        /// Its client went away before its request started waiting.
        case abandoned
        /// Its request waits.
        case waiting(CheckedContinuation<WatchHTTPResponse?, Never>)
    }

    // The slots by request id; continuations are resumed after the lock is released.
    private let slots = Locked<[Int: Slot]>([:])

    /// Registers `requestId` as held (before the machine can answer it).
    func hold(_ requestId: Int) {
        slots.withLock { $0[requestId] = .held }
    }

    /// Waits for the answer of held poll `requestId`: the response, or `nil` when the waiting
    /// task was cancelled first (the client went away).
    func wait(_ requestId: Int) async -> WatchHTTPResponse? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<WatchHTTPResponse?, Never>) in
                let ready: WatchHTTPResponse?? = slots.withLock { slots in
                    switch slots[requestId] {
                    case .answered(let response):
                        slots[requestId] = nil
                        return .some(response)
                    case .abandoned, nil:
                        slots[requestId] = nil
                        return .some(nil)
                    case .held, .waiting:
                        if Task.isCancelled {
                            slots[requestId] = nil
                            return .some(nil)
                        }
                        slots[requestId] = .waiting(continuation)
                        return .none
                    }
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiting: CheckedContinuation<WatchHTTPResponse?, Never>? = slots.withLock { slots in
                switch slots[requestId] {
                case .waiting(let continuation):
                    slots[requestId] = nil
                    return continuation
                case .held:
                    slots[requestId] = .abandoned
                    return nil
                case .answered, .abandoned, nil:
                    return nil
                }
            }
            waiting?.resume(returning: nil)
        }
    }

    /// Answers held poll `requestId`; `false` when it is not held (already answered, or its
    /// client went away).
    @discardableResult
    func answer(_ requestId: Int, with response: WatchHTTPResponse) -> Bool {
        let waiting: CheckedContinuation<WatchHTTPResponse?, Never>?? = slots.withLock { slots in
            switch slots[requestId] {
            case .waiting(let continuation):
                slots[requestId] = nil
                return .some(continuation)
            case .held:
                slots[requestId] = .answered(response)
                return .some(nil)
            case .answered, .abandoned, nil:
                return .none
            }
        }
        guard let waiting else { return false }
        waiting?.resume(returning: response)
        return true
    }

    /// How many polls are held.
    var count: Int { slots.withLock { $0.count } }
}
