/// A name that travels on the wire as a bare JSON string (a method, an event, an error code, a
/// role, a client id, ...): an open set of values, written as string literals in code.
///
/// A conforming type declares only its `rawValue` and `init(rawValue:)`; the literal
/// initialiser, `description` (the wire value) and `Codable` (a single string) come from here,
/// so each name type is its constants and nothing else.
public protocol WireName: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral,
    CustomStringConvertible where RawValue == String, StringLiteralType == String
{
    /// Wraps a wire value.
    init(rawValue: String)
}

extension WireName {
    /// Wraps a wire value given as a literal.
    public init(stringLiteral value: String) { self.init(rawValue: value) }
    /// The wire value.
    public var description: String { rawValue }
}
