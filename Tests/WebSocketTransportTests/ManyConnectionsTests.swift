#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@testable import WebSocketTransport

/// Raises the soft descriptor limit to at least `wanted` (bounded by the hard limit) and
/// returns the limit now in force.
func raiseDescriptorLimit(to wanted: UInt64) -> UInt64 {
    var limit = rlimit()
    #if canImport(Glibc)
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    let resource = RLIMIT_NOFILE
    #endif
    guard getrlimit(resource, &limit) == 0 else { return 0 }
    if UInt64(limit.rlim_cur) < wanted {
        limit.rlim_cur = rlim_t(min(wanted, UInt64(limit.rlim_max)))
        _ = setrlimit(resource, &limit)
        _ = getrlimit(resource, &limit)
    }
    return UInt64(limit.rlim_cur)
}

/// One multiplexer at a time (`.serialized`), so that the descriptor limit holds for each.
@Suite(.serialized)
struct ManyConnectionsTests {
    @Test(arguments: PollerKind.allCases)
    func oneServerHoldsTwoThousandConnectionsAndAMalformedFrameDisturbsOnlyItsOwn(poller: PollerKind) async throws {
        let count = 2000
        // Each connection needs two descriptors here (client and server side).
        let limit = raiseDescriptorLimit(to: 8192)
        try #require(limit >= UInt64(2 * count + 200), "the descriptor limit \(limit) is too low for \(count) connections")

        try await withEchoServer(poller: poller, deadline: 120) { server in
            // Connect in batches so the listen backlog is never the bottleneck.
            var clients: [WebSocketConnection] = []
            for batchStart in stride(from: 0, to: count, by: 250) {
                let batch = try await withThrowingTaskGroup(of: WebSocketConnection.self) { group in
                    for _ in batchStart..<min(count, batchStart + 250) {
                        group.addTask { try await server.connect() }
                    }
                    var batch: [WebSocketConnection] = []
                    for try await client in group { batch.append(client) }
                    return batch
                }
                clients += batch
            }
            #expect(clients.count == count)

            // Every connection echoes concurrently.
            try await roundTrip(clients, tag: "first")

            // One connection sends a malformed frame; only it ends, with 1002.
            let victim = clients[count / 2]
            try await victim.sendRaw(WebSocketFrame(opcode: .text, payload: Array("unmasked".utf8)).encoded())
            let info = await victim.waitUntilClosed()
            #expect(info.received?.code == .protocolError)

            var survivors = clients
            survivors.remove(at: count / 2)
            try await roundTrip(survivors, tag: "second")
            for client in survivors { #expect(client.closeInfo == nil) }

            await withTaskGroup(of: WebSocketCloseInfo.self) { group in
                for client in survivors { group.addTask { await client.close() } }
                for await info in group { #expect(info.code == .normal) }
            }
        }
    }

    private func roundTrip(_ clients: [WebSocketConnection], tag: String) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for (index, client) in clients.enumerated() {
                group.addTask {
                    let text = "\(tag) \(index)"
                    try await client.send(text: text)
                    return try await nextMessage(client) == .text(text)
                }
            }
            var good = 0
            for try await ok in group where ok { good += 1 }
            #expect(good == clients.count)
        }
    }
}
