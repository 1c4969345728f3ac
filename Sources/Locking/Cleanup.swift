/// Runs `body`, then `cleanup`, whether `body` returned or threw: the `defer` of a resource that
/// is released asynchronously (a `defer` block cannot `await`). The one place for the
/// `with…` helpers that start something, hand it to a closure and always stop it afterwards
/// (a Gateway, a WebSocket server or connection, a test's peer process).
package func withCleanup<Result>(
    isolation: isolated (any Actor)? = #isolation,
    _ body: () async throws -> Result,
    cleanup: () async -> Void
) async rethrows -> Result {
    let result: Result
    do {
        result = try await body()
    } catch {
        await cleanup()
        throw error
    }
    await cleanup()
    return result
}
