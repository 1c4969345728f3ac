import TestSupport

/// The raw wire node client that drives `harness serve` in these tests: the shared
/// `WireClient` of `TestSupport` (`open`, `connect(token:)`, `event`, `request`, `close`).
typealias WireNode = WireClient
