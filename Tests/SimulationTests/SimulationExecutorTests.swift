import Foundation
import Simulation
import Locking
import Testing

/// A log of strings shared by the tasks of one simulated run.
private final class Trace: Sendable {
    private let items = Locked<[String]>([])
    func add(_ item: String) { items.withLock { $0.append(item) } }
    var all: [String] { items.withLock { $0 } }
}

private actor Counter {
    var value = 0
    func bump() -> Int {
        value += 1
        return value
    }
}

@Suite("Simulation executor")
struct SimulationExecutorTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func rootTaskResultIsReturned() async throws {
        let simulation = SimulationExecutor(seed: 1, timeline: VirtualTimeline())
        let value = try await simulation.run { 6 * 7 }
        #expect(value == 42)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func sleepingJumpsVirtualTimeWithoutRealWaiting() async throws {
        let start: Int64 = 1_000
        let timeline = VirtualTimeline(startMs: start)
        let simulation = SimulationExecutor(seed: 1, timeline: timeline)
        let woke = try await simulation.run { () -> [Int64] in
            var stamps: [Int64] = []
            await timeline.sleep(for: .seconds(3600))
            stamps.append(timeline.nowMs)
            await timeline.sleep(for: .milliseconds(250))
            stamps.append(timeline.nowMs)
            return stamps
        }
        // `start` is typed: the same sums of untyped literals took the type checker 3.5 s.
        #expect(woke == [start + 3_600_000, start + 3_600_250])
        // The run took no hour of real time: the suite would not finish otherwise.
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func sleepersWakeInDeadlineOrder() async throws {
        let timeline = VirtualTimeline(startMs: 0)
        let simulation = SimulationExecutor(seed: 7, timeline: timeline)
        let trace = Trace()
        try await simulation.run {
            await withTaskGroup(of: Void.self) { group in
                for delay in [300, 100, 200] {
                    group.addTask {
                        await timeline.sleep(for: .milliseconds(Int64(delay)))
                        trace.add("\(delay)@\(timeline.nowMs)")
                    }
                }
            }
        }
        #expect(trace.all == ["100@100", "200@200", "300@300"])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func unstructuredTasksFromSpawnTaskJoinTheRun() async throws {
        let timeline = VirtualTimeline(startMs: 0)
        let simulation = SimulationExecutor(seed: 3, timeline: timeline)
        let counter = Counter()
        let result = try await simulation.run { () -> Int in
            let task = spawnTask { () -> Int in
                await timeline.sleep(for: .seconds(10))
                return await counter.bump()
            }
            return await task.value
        }
        #expect(result == 1)
        #expect(timeline.nowMs == 10_000)
    }

    /// Three tasks become ready at once and each records its name: the order is the seed's.
    private func raceOrder(seed: UInt64) async throws -> [String] {
        let timeline = VirtualTimeline(startMs: 0)
        let simulation = SimulationExecutor(seed: seed, timeline: timeline)
        let trace = Trace()
        try await simulation.run {
            await withTaskGroup(of: Void.self) { group in
                for name in ["a", "b", "c", "d"] {
                    group.addTask {
                        await timeline.sleep(for: .seconds(1))
                        trace.add(name)
                        await Task.yield()
                        trace.add(name.uppercased())
                    }
                }
            }
        }
        return trace.all
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func theSeedDecidesTheOrderOfReadyTasks() async throws {
        let first = try await raceOrder(seed: 11)
        for _ in 0..<5 { #expect(try await raceOrder(seed: 11) == first) }
        var orders: Set<[String]> = []
        for seed in UInt64(1)...20 { orders.insert(try await raceOrder(seed: seed)) }
        #expect(orders.count > 1, "different seeds should explore different interleavings")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func aWaitThatNothingCanSatisfyEndsAtOnce() async throws {
        let timeline = VirtualTimeline(startMs: 5_000)
        let simulation = SimulationExecutor(seed: 1, timeline: timeline)
        let log = EventLog<Int>()
        let outcome = try await simulation.run { () -> String in
            switch await log.wait(from: 0, timeout: .seconds(30), on: timeline, where: { $0 == 1 }) {
            case .timedOut(let reason): return "\(reason)"
            default: return "other"
            }
        }
        #expect(outcome == "nothingPending")
        #expect(timeline.nowMs == 5_000, "time does not move when nothing is pending")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func aWaitTimesOutAtItsDeadlineWhileOtherTimersRun() async throws {
        let timeline = VirtualTimeline(startMs: 0)
        let simulation = SimulationExecutor(seed: 1, timeline: timeline)
        let log = EventLog<Int>()
        let (reason, now) = try await simulation.run { () -> (String, Int64) in
            // Something keeps happening every second, but never the awaited value.
            let ticker = spawnTask {
                while !Task.isCancelled {
                    await timeline.sleep(for: .seconds(1))
                    log.append(0)
                }
            }
            defer { ticker.cancel() }
            let wait = await log.wait(from: 0, timeout: .milliseconds(4_500), on: timeline) { $0 == 1 }
            guard case .timedOut(let reason) = wait else { return ("other", timeline.nowMs) }
            return ("\(reason)", timeline.nowMs)
        }
        #expect(reason == "reached")
        #expect(now == 4_500)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func aRunWaitingForSomethingOutsideStallsWithAnError() async throws {
        let simulation = SimulationExecutor(seed: 1, timeline: VirtualTimeline())
        await #expect(throws: SimulationError.self) {
            try await simulation.run {
                // Nobody ever opens this stream.
                let (stream, continuation) = AsyncStream<Int>.makeStream()
                _ = continuation
                for await _ in stream {}
            }
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func aBusyLoopStillLetsTimePass() async throws {
        let timeline = VirtualTimeline(startMs: 0)
        let simulation = SimulationExecutor(seed: 1, timeline: timeline, limits: .init(jobsPerInstant: 500))
        let spins = try await simulation.run { () -> Int in
            let deadline = spawnTask { await timeline.sleep(for: .seconds(1)) }
            var spins = 0
            // Never sleeps: only the per-instant job limit moves time.
            while timeline.nowMs < 1_000 {
                spins += 1
                await Task.yield()
            }
            _ = await deadline.value
            return spins
        }
        #expect(spins > 0)
        #expect(timeline.nowMs == 1_000)
    }
}
