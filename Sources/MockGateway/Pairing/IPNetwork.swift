/// Why a text is not an IP address or network.
public struct IPNetworkError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A sentence naming the input and what is wrong with it.
    public var description: String

    init(_ input: String, _ problem: String) {
        description = "invalid IP address or CIDR \"\(input)\": \(problem)"
    }
}

/// An IPv4 or IPv6 address (used by the trusted-CIDR auto-approval, docs/protocol.md §5.10).
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address in network byte order: 4 bytes for IPv4, 16 for IPv6.
    public let bytes: [UInt8]

    /// Parses dotted-quad IPv4 (`192.168.1.5`) or IPv6 (`fd00::1`, `::ffff:10.0.0.1`), tolerating
    /// brackets (`[::1]`) and a zone suffix (`fe80::1%en0`), as socket APIs print them.
    /// - Throws: `IPNetworkError` naming what is wrong.
    public init(parsing text: String) throws(IPNetworkError) {
        var body = text.trimmingASCIIWhitespace()
        if body.hasPrefix("["), body.hasSuffix("]") { body = String(body.dropFirst().dropLast()) }
        if let zone = body.firstIndex(of: "%"), body.contains(":") { body = String(body[..<zone]) }
        if body.contains(":") {
            bytes = try Self.parseIPv6(body, original: text)
        } else {
            bytes = try Self.parseIPv4(body, original: text)
        }
    }

    fileprivate init(bytes: [UInt8]) { self.bytes = bytes }

    /// Whether this is an IPv4 address.
    public var isIPv4: Bool { bytes.count == 4 }

    /// The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`), as dual-stack
    /// sockets report IPv4 peers; `nil` otherwise.
    public var mappedIPv4: IPAddress? {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else { return nil }
        return IPAddress(bytes: Array(bytes[12..<16]))
    }

    /// Whether this is a loopback address (`127.0.0.0/8`, `::1`, or a mapped IPv4 loopback).
    public var isLoopback: Bool {
        if let mapped = mappedIPv4 { return mapped.isLoopback }
        if isIPv4 { return bytes[0] == 127 }
        return bytes.dropLast().allSatisfy { $0 == 0 } && bytes[15] == 1
    }

    /// Dotted-quad for IPv4; RFC 5952 text for IPv6 (lower case, longest zero run compressed).
    public var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: 16, by: 2).map { Int(bytes[$0]) << 8 | Int(bytes[$0 + 1]) }
        var bestStart = -1, bestLength = 0, index = 0
        while index < 8 {
            guard groups[index] == 0 else { index += 1; continue }
            let start = index
            while index < 8, groups[index] == 0 { index += 1 }
            if index - start > bestLength, index - start >= 2 { bestStart = start; bestLength = index - start }
        }
        let hex = groups.map { String($0, radix: 16) }
        guard bestStart >= 0 else { return hex.joined(separator: ":") }
        let head = hex[..<bestStart].joined(separator: ":")
        let tail = hex[(bestStart + bestLength)...].joined(separator: ":")
        return head + "::" + tail
    }

    private static func parseIPv4(_ text: String, original: String) throws(IPNetworkError) -> [UInt8] {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { throw IPNetworkError(original, "an IPv4 address has four dot-separated numbers") }
        var result: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                throw IPNetworkError(original, "\"\(part)\" is not a decimal number from 0 to 255")
            }
            // A leading zero is ambiguous (some parsers read it as octal), so it is refused.
            guard part == "0" || !part.hasPrefix("0"), let value = UInt8(part) else {
                throw IPNetworkError(original, "\"\(part)\" is not a decimal number from 0 to 255")
            }
            result.append(value)
        }
        return result
    }

    private static func parseIPv6(_ text: String, original: String) throws(IPNetworkError) -> [UInt8] {
        var body = text
        var embeddedIPv4: [UInt8]?
        if let lastColon = body.lastIndex(of: ":"), body[body.index(after: lastColon)...].contains(".") {
            // An embedded IPv4 address (`::ffff:10.0.0.1`) stands for the last two groups.
            embeddedIPv4 = try parseIPv4(String(body[body.index(after: lastColon)...]), original: original)
            body = String(body[...lastColon]) + "0:0"
        }
        let halves = body.components(separatedBy: "::")
        guard halves.count <= 2 else { throw IPNetworkError(original, "\"::\" may appear only once") }
        func groups(_ part: String) throws(IPNetworkError) -> [UInt16] {
            if part.isEmpty { return [] }
            var values: [UInt16] = []
            for group in part.split(separator: ":", omittingEmptySubsequences: false) {
                guard (1...4).contains(group.count), group.allSatisfy(\.isHexDigit), let value = UInt16(group, radix: 16) else {
                    throw IPNetworkError(original, "\"\(group)\" is not a group of 1 to 4 hexadecimal digits")
                }
                values.append(value)
            }
            return values
        }
        var values: [UInt16]
        if halves.count == 2 {
            let head = try groups(halves[0]), rest = try groups(halves[1])
            guard head.count + rest.count <= 7 else { throw IPNetworkError(original, "too many groups for an IPv6 address") }
            values = head + Array(repeating: 0, count: 8 - head.count - rest.count) + rest
        } else {
            values = try groups(body)
            guard values.count == 8 else { throw IPNetworkError(original, "an IPv6 address has eight groups or uses \"::\"") }
        }
        var result = values.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        if let embeddedIPv4 { result.replaceSubrange(12..<16, with: embeddedIPv4) }
        return result
    }
}

/// An IP network in CIDR notation (`10.0.0.0/8`, `fd00::/8`) or a single address (`192.168.1.5`,
/// treated as `/32` or `/128`), as configured in `gateway.nodes.pairing.autoApproveCidrs`.
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The network address (host bits cleared).
    public let address: IPAddress
    /// The number of leading bits that must match.
    public let prefixLength: Int

    /// Parses `address/prefix` or a bare address.
    ///
    /// Host bits set under the prefix (`192.168.1.5/24`) are accepted and cleared, the tolerant
    /// reading of a common configuration slip.
    /// - Throws: `IPNetworkError` for a malformed address or a prefix outside 0…32 (IPv4) or 0…128 (IPv6).
    public init(parsing text: String) throws(IPNetworkError) {
        let trimmed = text.trimmingASCIIWhitespace()
        let parts = trimmed.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { throw IPNetworkError(text, "more than one \"/\"") }
        let address = try IPAddress(parsing: String(parts[0]))
        let maximum = address.bytes.count * 8
        var prefix = maximum
        if parts.count == 2 {
            guard let value = Int(parts[1]), parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), (0...maximum).contains(value) else {
                throw IPNetworkError(text, "the prefix length must be a number from 0 to \(maximum)")
            }
            prefix = value
        }
        self.prefixLength = prefix
        self.address = IPAddress(bytes: IPNetwork.masked(address, prefix))
    }

    /// Whether `candidate` lies in this network. An IPv4-mapped IPv6 peer matches IPv4 networks.
    public func contains(_ candidate: IPAddress) -> Bool {
        var candidate = candidate
        if candidate.bytes.count != address.bytes.count, let mapped = candidate.mappedIPv4 { candidate = mapped }
        guard candidate.bytes.count == address.bytes.count else { return false }
        return IPNetwork.masked(candidate, prefixLength) == address.bytes
    }

    /// Whether the address text `candidate` lies in this network; `false` when it does not parse.
    public func contains(_ candidate: String) -> Bool {
        guard let parsed = try? IPAddress(parsing: candidate) else { return false }
        return contains(parsed)
    }

    /// `address/prefix`.
    public var description: String { "\(address)/\(prefixLength)" }

    private static func masked(_ address: IPAddress, _ prefix: Int) -> [UInt8] {
        address.bytes.enumerated().map { index, byte in
            let bits = max(0, min(8, prefix - index * 8))
            return bits == 8 ? byte : byte & UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
        }
    }
}
