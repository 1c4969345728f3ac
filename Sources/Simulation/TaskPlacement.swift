/// Where the tasks of a run go.
///
/// A simulated run (``SimulationExecutor``) must see every task its Gateway, its client and its
/// scenario create, or it cannot know when the run is idle. Child tasks (`async let`, task groups)
/// inherit the run's executor by themselves; unstructured tasks do not, so the code that runs in
/// simulations creates them with ``spawnTask(priority:_:)``, which places them on the executor of
/// the run it is called from.
public enum TaskPlacement {
    /// The executor of the simulated run the current task belongs to, if any.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @TaskLocal public static var executor: (any TaskExecutor)?

    /// Whether the current task belongs to a simulated run.
    public static var isSimulated: Bool {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) { return executor != nil }
        return false
    }
}

/// Creates an unstructured task like `Task { }` (it inherits the caller's actor and task-local
/// values), placed on the executor of the simulated run the caller belongs to, if any.
/// - Parameters:
///   - priority: the task's priority.
///   - operation: the work.
/// - Returns: the task.
@discardableResult
public func spawnTask<Success: Sendable>(
    priority: TaskPriority? = nil,
    @_inheritActorContext _ operation: sending @escaping @isolated(any) () async -> Success
) -> Task<Success, Never> {
    if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) {
        return Task(executorPreference: TaskPlacement.executor, priority: priority, operation: operation)
    }
    return Task(priority: priority, operation: operation)
}

/// The throwing variant of ``spawnTask(priority:_:)``.
/// - Returns: the task.
@discardableResult
public func spawnThrowingTask<Success: Sendable>(
    priority: TaskPriority? = nil,
    @_inheritActorContext _ operation: sending @escaping @isolated(any) () async throws -> Success
) -> Task<Success, any Error> {
    if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) {
        return Task(executorPreference: TaskPlacement.executor, priority: priority, operation: operation)
    }
    return Task(priority: priority, operation: operation)
}
