/// Frame-level misbehaviour for one send, for conformance tests and the fake Gateway.
///
/// Faults combine: `SendFault.fragmented(into: 3).combined(with: .byteByByte)` sends three
/// fragments, each byte in its own TCP write.
public struct SendFault: Sendable, Hashable {
    /// How the bytes of one send are cut into TCP writes.
    public struct WriteSplit: Sendable, Hashable {
        enum Mode: Sendable, Hashable {
            case none
            case byteByByte
            case offsets([Int])
        }

        let mode: Mode

        /// One write for the whole send (the default).
        public static let none = WriteSplit(mode: .none)
        /// One write per byte.
        public static let byteByByte = WriteSplit(mode: .byteByByte)
        /// A new write starts at each of these byte offsets into the encoded frames.
        public static func atOffsets(_ offsets: [Int]) -> WriteSplit { WriteSplit(mode: .offsets(offsets)) }
    }

    /// Send the message as this many WebSocket fragments (1 = not fragmented). The payload is
    /// cut into nearly equal parts at byte positions, so text may split inside a code point.
    public var fragmentCount: Int
    /// Put a ping frame between the fragments (control frames interleaved with a message).
    public var interleavedPings: Bool
    /// How the encoded bytes are cut into TCP writes.
    public var writeSplit: WriteSplit
    /// Wait this long before queueing the send (the sending task sleeps; later sends from
    /// other tasks may overtake it).
    public var delay: Duration?
    /// Discard the message: the send succeeds but nothing reaches the wire.
    public var drop: Bool

    /// Creates a fault; the defaults change nothing.
    public init(
        fragmentCount: Int = 1, interleavedPings: Bool = false, writeSplit: WriteSplit = .none,
        delay: Duration? = nil, drop: Bool = false
    ) {
        self.fragmentCount = fragmentCount
        self.interleavedPings = interleavedPings
        self.writeSplit = writeSplit
        self.delay = delay
        self.drop = drop
    }

    /// Fragment the message into `count` frames, optionally with pings in between.
    public static func fragmented(into count: Int, interleavingPings: Bool = false) -> SendFault {
        SendFault(fragmentCount: count, interleavedPings: interleavingPings)
    }

    /// Write every byte with its own TCP write.
    public static let byteByByte = SendFault(writeSplit: .byteByByte)

    /// Start a new TCP write at each of these byte offsets of the encoded frames.
    public static func splitWrites(at offsets: [Int]) -> SendFault { SendFault(writeSplit: .atOffsets(offsets)) }

    /// Wait before sending.
    public static func delayed(by delay: Duration) -> SendFault { SendFault(delay: delay) }

    /// Silently discard the message.
    public static let drop = SendFault(drop: true)

    /// This fault plus the non-default settings of `other`.
    public func combined(with other: SendFault) -> SendFault {
        var result = self
        if other.fragmentCount != 1 { result.fragmentCount = other.fragmentCount }
        if other.interleavedPings { result.interleavedPings = true }
        if other.writeSplit != .none { result.writeSplit = other.writeSplit }
        if let delay = other.delay { result.delay = delay }
        if other.drop { result.drop = true }
        return result
    }

    /// Cuts `bytes` into the TCP writes this fault asks for.
    func writes(of bytes: [UInt8]) -> [[UInt8]] {
        switch writeSplit.mode {
        case .none:
            return [bytes]
        case .byteByByte:
            return bytes.map { [$0] }
        case .offsets(let offsets):
            let cuts = Set(offsets.filter { $0 > 0 && $0 < bytes.count }).sorted()
            var writes: [[UInt8]] = []
            var start = 0
            for cut in cuts {
                writes.append(Array(bytes[start..<cut]))
                start = cut
            }
            writes.append(Array(bytes[start...]))
            return writes
        }
    }
}
