#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bytes waiting to be written to a socket, as a queue of segments. Each segment goes out
/// with its own `send` call; small ordinary frames are merged into one segment so that many
/// small messages cost few system calls, while fault segments (split writes) never merge.
struct OutboundQueue: Sendable {
    private struct Segment: Sendable {
        var bytes: [UInt8]
        var offset = 0
        var mergeable: Bool
    }

    private var segments: [Segment] = []
    private var head = 0
    /// Bytes queued and not yet written.
    private(set) var byteCount = 0

    /// Whether nothing is waiting.
    var isEmpty: Bool { byteCount == 0 && head >= segments.count }

    private static let mergeLimit = 64 * 1024

    /// Queues bytes; `separateWrite` keeps them in a write of their own.
    mutating func append(_ bytes: [UInt8], separateWrite: Bool) {
        if bytes.isEmpty { return }
        byteCount += bytes.count
        if !separateWrite, bytes.count < Self.mergeLimit, head < segments.count,
           segments[segments.count - 1].mergeable,
           segments[segments.count - 1].bytes.count < Self.mergeLimit {
            segments[segments.count - 1].bytes.append(contentsOf: bytes)
            return
        }
        segments.append(Segment(bytes: bytes, mergeable: !separateWrite))
    }

    /// The result of writing as much as the socket takes.
    enum WriteOutcome: Sendable, Hashable {
        /// Everything was written.
        case drained
        /// The socket buffer is full; wait for writability.
        case wouldBlock
        /// The connection is gone (`EPIPE`, `ECONNRESET`, ...).
        case failed(Int32)
    }

    /// Writes queued segments until done or the socket would block.
    mutating func write(to fd: Int32) -> WriteOutcome {
        while head < segments.count {
            let written = segments[head].bytes.withUnsafeBytes { raw in
                Socket.send(fd, UnsafeRawBufferPointer(rebasing: raw[segments[head].offset...]))
            }
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
                return .failed(code)
            }
            byteCount -= written
            segments[head].offset += written
            if segments[head].offset >= segments[head].bytes.count {
                segments[head] = Segment(bytes: [], mergeable: false)
                head += 1
            } else {
                return .wouldBlock
            }
        }
        segments.removeAll(keepingCapacity: true)
        head = 0
        return .drained
    }

    /// Takes every queued byte out, one array per write a socket would make (split-write
    /// faults keep their pieces apart): what an in-memory connection hands to its peer.
    mutating func takeAll() -> [[UInt8]] {
        var writes: [[UInt8]] = []
        while head < segments.count {
            let segment = segments[head]
            if segment.offset < segment.bytes.count {
                writes.append(segment.offset == 0 ? segment.bytes : Array(segment.bytes[segment.offset...]))
            }
            head += 1
        }
        removeAll()
        return writes
    }

    /// Takes every queued byte out as its write units, each with whether it must stay a write
    /// of its own (split-write faults): what TLS encrypts record by record.
    mutating func takeAllSegments() -> [(bytes: [UInt8], separate: Bool)] {
        var units: [(bytes: [UInt8], separate: Bool)] = []
        while head < segments.count {
            let segment = segments[head]
            if segment.offset < segment.bytes.count {
                units.append((segment.offset == 0 ? segment.bytes : Array(segment.bytes[segment.offset...]), !segment.mergeable))
            }
            head += 1
        }
        removeAll()
        return units
    }

    /// Discards everything.
    mutating func removeAll() {
        segments = []
        head = 0
        byteCount = 0
    }
}

/// Received messages waiting for the consumer, and the consumers waiting for messages.
struct InboundQueue: Sendable {
    private var messages: [WebSocketReceivedMessage] = []
    private var head = 0
    /// Payload bytes of the waiting messages.
    private(set) var byteCount = 0
    private var waiters: [(id: UInt64, continuation: CheckedContinuation<WebSocketReceivedMessage?, Never>)] = []
    /// Whether the connection has ended (no message will be added).
    private(set) var isFinished = false

    /// Keeps a message, or returns the longest-waiting consumer that must be given it. The
    /// caller resumes that consumer after releasing its lock: resuming under the lock deadlocks
    /// with a consumer whose cancellation handler takes the same lock.
    mutating func deliver(_ message: WebSocketReceivedMessage) -> CheckedContinuation<WebSocketReceivedMessage?, Never>? {
        if !waiters.isEmpty {
            return waiters.removeFirst().continuation
        }
        messages.append(message)
        byteCount += message.message.byteCount
        return nil
    }

    /// The oldest waiting message.
    mutating func pop() -> WebSocketReceivedMessage? {
        guard head < messages.count else { return nil }
        let message = messages[head]
        messages[head] = WebSocketReceivedMessage(.binary([]))
        head += 1
        byteCount -= message.message.byteCount
        if head == messages.count {
            messages.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024, head * 2 > messages.count {
            messages.removeFirst(head)
            head = 0
        }
        return message
    }

    /// Parks a consumer.
    mutating func addWaiter(id: UInt64, _ continuation: CheckedContinuation<WebSocketReceivedMessage?, Never>) {
        waiters.append((id, continuation))
    }

    /// Takes a parked consumer out (cancellation).
    mutating func removeWaiter(id: UInt64) -> CheckedContinuation<WebSocketReceivedMessage?, Never>? {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return waiters.remove(at: index).continuation
    }

    /// Marks the end and returns the parked consumers, which the caller resumes with `nil` after
    /// releasing its lock. Queued messages stay readable.
    mutating func finish() -> [CheckedContinuation<WebSocketReceivedMessage?, Never>] {
        isFinished = true
        let parked = waiters.map(\.continuation)
        waiters.removeAll()
        return parked
    }
}
