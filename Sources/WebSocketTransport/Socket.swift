#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over the POSIX socket calls the transport needs. Every socket is
/// non-blocking and close-on-exec; writes never raise SIGPIPE.
enum Socket {
    #if canImport(Glibc)
    static let streamType = Int32(SOCK_STREAM.rawValue)
    /// Linux has no per-socket SIGPIPE switch: every send passes `MSG_NOSIGNAL`.
    static let noSignal = Int32(MSG_NOSIGNAL)
    #else
    static let streamType = SOCK_STREAM
    /// Darwin sets `SO_NOSIGPIPE` on each socket instead (``configureAccepted(_:)``).
    static let noSignal: Int32 = 0
    #endif

    /// A resolved socket address.
    struct Address: Sendable {
        var storage: sockaddr_storage
        var length: socklen_t
        var family: Int32 { Int32(storage.ss_family) }
    }

    /// The current `errno` as text, e.g. `connect(): Connection refused`.
    static func errorText(_ call: String, _ code: Int32 = errno) -> String {
        "\(call): \(String(cString: strerror(code)))"
    }

    /// Resolves `host` and `port` to stream socket addresses (numeric hosts stay numeric).
    static func resolve(host: String, port: Int, passive: Bool) throws(WebSocketError) -> [Address] {
        var hints = addrinfo()
        hints.ai_socktype = streamType
        hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0)
        hints.ai_family = AF_UNSPEC
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let first = result else {
            throw WebSocketError.addressResolutionFailed.with(detail: "\(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var addresses: [Address] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let address = entry.pointee.ai_addr,
               entry.pointee.ai_family == AF_INET || entry.pointee.ai_family == AF_INET6 {
                var storage = sockaddr_storage()
                let length = min(Int(entry.pointee.ai_addrlen), MemoryLayout<sockaddr_storage>.size)
                withUnsafeMutableBytes(of: &storage) { target in
                    target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: length))
                }
                addresses.append(Address(storage: storage, length: socklen_t(length)))
            }
            cursor = entry.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw WebSocketError.addressResolutionFailed.with(detail: "\(host): no IPv4/IPv6 address") }
        return addresses
    }

    /// A new non-blocking, close-on-exec TCP socket.
    static func makeStreamSocket(family: Int32) throws(WebSocketError) -> Int32 {
        let fd = socket(family, streamType, 0)
        guard fd >= 0 else { throw WebSocketError.socketFailed.with(detail: errorText("socket()")) }
        configureAccepted(fd)
        return fd
    }

    /// Makes a socket non-blocking and close-on-exec, disables Nagle (frames go out at once,
    /// which also keeps split-write faults visible), and on Darwin suppresses SIGPIPE with
    /// `SO_NOSIGPIPE` (Linux passes `MSG_NOSIGNAL` to each send instead).
    static func configureAccepted(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFL, 0)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        #if canImport(Darwin)
        setOption(fd, SOL_SOCKET, SO_NOSIGPIPE, 1)
        #endif
    }

    static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) {
        var value = value
        _ = setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// A listening socket bound to `host:port` (port 0 picks a free port).
    static func listen(host: String, port: Int, backlog: Int32 = 4096) throws(WebSocketError) -> (fd: Int32, port: Int) {
        var lastError = WebSocketError.socketFailed
        for address in try resolve(host: host, port: port, passive: true) {
            let fd: Int32
            do { fd = try makeStreamSocket(family: address.family) } catch { lastError = error; continue }
            setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
            if address.family == AF_INET6 { setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1) }
            var storage = address.storage
            let bound = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, address.length) }
            }
            guard bound == 0 else {
                lastError = WebSocketError.socketFailed.with(detail: errorText("bind(\(host):\(port))"))
                _ = close(fd)
                continue
            }
            guard systemListen(fd, backlog) == 0 else {
                lastError = WebSocketError.socketFailed.with(detail: errorText("listen()"))
                _ = close(fd)
                continue
            }
            return (fd, localPort(fd) ?? port)
        }
        throw lastError
    }

    /// The local port of a bound socket.
    static func localPort(_ fd: Int32) -> Int? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard status == 0 else { return nil }
        return describe(storage).port
    }

    /// The numeric host and port of an address.
    static func describe(_ storage: sockaddr_storage) -> (host: String, port: Int) {
        var storage = storage
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    var address = pointer.pointee.sin_addr
                    _ = inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count))
                    return (String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                            Int(UInt16(bigEndian: pointer.pointee.sin_port)))
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    var address = pointer.pointee.sin6_addr
                    _ = inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count))
                    return (String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                            Int(UInt16(bigEndian: pointer.pointee.sin6_port)))
                }
            }
        default:
            return ("", 0)
        }
    }

    /// Accepts one pending connection: the descriptor and the peer address, `nil` when none is
    /// pending, or the `errno` of a failure.
    static func accept(_ listener: Int32) -> Result<(fd: Int32, host: String, port: Int)?, SystemError> {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemAccept(listener, $0, &length) }
        }
        if fd < 0 {
            let code = errno
            if code == EAGAIN || code == EWOULDBLOCK || code == EINTR || code == ECONNABORTED { return .success(nil) }
            return .failure(SystemError(code: code))
        }
        configureAccepted(fd)
        let peer = describe(storage)
        return .success((fd, peer.host, peer.port))
    }

    /// Starts a non-blocking connect; `true` when already connected, `false` when in progress.
    static func startConnect(_ fd: Int32, to address: Address) -> Result<Bool, SystemError> {
        var storage = address.storage
        let status = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, address.length) }
        }
        if status == 0 { return .success(true) }
        let code = errno
        if code == EINPROGRESS || code == EINTR { return .success(false) }
        return .failure(SystemError(code: code))
    }

    /// The pending error of a socket (`SO_ERROR`), 0 when none.
    static func pendingError(_ fd: Int32) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) == 0 else { return errno }
        return value
    }

    /// Arms an abortive close: `close` then sends a TCP RST instead of a FIN.
    static func setLingerZero(_ fd: Int32) {
        var value = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &value, socklen_t(MemoryLayout<linger>.size))
    }

    /// Sends without raising SIGPIPE.
    static func send(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        #if canImport(Glibc)
        return Glibc.send(fd, base, buffer.count, noSignal)
        #else
        return Darwin.send(fd, base, buffer.count, noSignal)
        #endif
    }

    /// Reads into `buffer`.
    static func receive(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        return read(fd, base, buffer.count)
    }

    /// Half-closes the sending direction (sends a FIN after the queued bytes).
    static func shutdownWrite(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// Closes a descriptor.
    static func closeDescriptor(_ fd: Int32) {
        _ = close(fd)
    }
}

/// An `errno` value.
struct SystemError: Error, Sendable, Hashable {
    var code: Int32
    var text: String { String(cString: strerror(code)) }
}

#if canImport(Glibc)
private func systemListen(_ fd: Int32, _ backlog: Int32) -> Int32 { Glibc.listen(fd, backlog) }
private func systemAccept(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
    Glibc.accept(fd, address, length)
}
#else
private func systemListen(_ fd: Int32, _ backlog: Int32) -> Int32 { Darwin.listen(fd, backlog) }
private func systemAccept(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
    Darwin.accept(fd, address, length)
}
#endif
