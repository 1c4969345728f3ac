#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@testable import WebSocketTransport

struct SocketTests {
    /// Runs `body` with a socket listening on 127.0.0.1, a raw client connected to it and the
    /// accepted server side of that connection; closes the two server sockets afterwards.
    private static func withAcceptedConnection(_ body: (_ listener: Int32, _ accepted: Int32, _ peer: RawTCPClient) throws -> Void) throws {
        let (listener, port) = try Socket.listen(host: "127.0.0.1", port: 0)
        defer { Socket.closeDescriptor(listener) }
        let peer = try RawTCPClient(port: port)
        var pending = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        try #require(poll(&pending, 1, 10_000) == 1, "no connection to accept")
        guard case .success(let accepted?) = Socket.accept(listener) else {
            Issue.record("accept failed")
            return
        }
        defer { Socket.closeDescriptor(accepted.fd) }
        try body(listener, accepted.fd, peer)
    }

    /// Writing to a peer that has gone fails with an error and never raises SIGPIPE, which would
    /// kill the whole process (a Gateway with many clients): Linux passes `MSG_NOSIGNAL` to each
    /// send, Darwin sets `SO_NOSIGPIPE` on each socket.
    @Test func sendingToAPeerThatHasGoneFailsWithoutSIGPIPE() throws {
        try Self.withAcceptedConnection { _, accepted, peer in
            peer.close()

            // The first send reaches a closed socket, which answers with a reset.
            let chunk = [UInt8](repeating: 0x55, count: 64)
            let first = chunk.withUnsafeBytes { Socket.send(accepted, $0) }
            #expect(first == chunk.count)
            // Wait (bounded) until the reset has arrived: poll reports hang-up and errors even with
            // no events requested.
            var reset = pollfd(fd: accepted, events: 0, revents: 0)
            try #require(poll(&reset, 1, 10_000) == 1, "no reset from the closed peer")
            // Now a send fails; without the no-signal flag it would raise SIGPIPE here.
            let second = chunk.withUnsafeBytes { Socket.send(accepted, $0) }
            let code = errno
            #expect(second == -1)
            #expect(code == EPIPE || code == ECONNRESET, "errno \(code)")
            let third = chunk.withUnsafeBytes { Socket.send(accepted, $0) }
            #expect(third == -1)
            #expect(errno == EPIPE)
        }
    }

    @Test func listeningAndAcceptedSocketsAreNonBlockingAndCloseOnExecAndSuppressSIGPIPE() throws {
        try Self.withAcceptedConnection { listener, accepted, peer in
            defer { peer.close() }
            for fd in [listener, accepted] {
                #expect(fcntl(fd, F_GETFL, 0) & O_NONBLOCK != 0)
                #expect(fcntl(fd, F_GETFD, 0) & FD_CLOEXEC != 0)
            }
            #if canImport(Darwin)
            var value: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            #expect(getsockopt(accepted, SOL_SOCKET, SO_NOSIGPIPE, &value, &length) == 0)
            #expect(value != 0)
            #else
            #expect(Socket.noSignal == Int32(MSG_NOSIGNAL))
            #endif
        }
    }
}
