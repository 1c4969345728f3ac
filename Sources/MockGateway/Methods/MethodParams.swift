import GatewayProtocol

/// The params of one request read against a closed object schema (upstream `closedObject` of
/// `packages/gateway-protocol/src/schema/closed-object.ts`), with the refusal upstream's
/// `assertValidParams` sends (`src/gateway/server-methods/validation.ts`):
/// `INVALID_REQUEST "invalid <method> params: at <pointer>: <problem>"`, the problem worded as
/// `formatValidationErrors` does (`must be object`, `must have required property 'x'`,
/// `unexpected property 'x'`, `must be string`, `must be integer`, `must be >= N`,
/// `must NOT have fewer than 1 characters`).
///
/// The checks run in this order: object, required members, unknown members, then each member's
/// type as it is read; the first failure is the answer.
struct MethodParams: Sendable {
    /// The method whose params these are (named in the refusal).
    let method: GatewayMethod
    /// The members.
    let object: [String: JSONValue]

    /// Reads `params` (absent params are an empty object) as a closed object of `members`, of
    /// which `required` must be present.
    init(_ params: JSONValue?, method: GatewayMethod, members: [String], required: [String] = [])
        throws(GatewayError)
    {
        self.method = method
        guard let object = params.map({ $0.objectValue }) ?? [:] else {
            throw Self.invalid(method, at: "", "must be object")
        }
        for key in required where object[key] == nil {
            throw Self.invalid(method, at: "", "must have required property '\(key)'")
        }
        let known = Set(members)
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw Self.invalid(method, at: "", "unexpected property '\(unknown)'")
        }
        self.object = object
    }

    /// An optional string member; with `nonEmpty`, at least one character (`NonEmptyString`).
    func string(_ key: String, nonEmpty: Bool = false) throws(GatewayError) -> String? {
        guard let value = object[key] else { return nil }
        guard let text = value.stringValue else { throw Self.invalid(method, at: "/\(key)", "must be string") }
        if nonEmpty, text.isEmpty { throw Self.invalid(method, at: "/\(key)", "must NOT have fewer than 1 characters") }
        return text
    }

    /// A required non-empty string member (the presence was checked by `init`).
    func requiredString(_ key: String) throws(GatewayError) -> String {
        guard let text = try string(key, nonEmpty: true) else {
            throw Self.invalid(method, at: "", "must have required property '\(key)'")
        }
        return text
    }

    /// An optional integer member of at least `minimum`.
    func integer(_ key: String, minimum: Int) throws(GatewayError) -> Int? {
        guard let value = object[key] else { return nil }
        guard let number = value.int64Value, let integer = Int(exactly: number) else {
            throw Self.invalid(method, at: "/\(key)", "must be integer")
        }
        guard integer >= minimum else { throw Self.invalid(method, at: "/\(key)", "must be >= \(minimum)") }
        return integer
    }

    /// `INVALID_REQUEST "invalid <method> params: at <pointer>: <problem>"` (`at root` for the
    /// empty pointer).
    static func invalid(_ method: GatewayMethod, at pointer: String, _ problem: String) -> GatewayError {
        let location = pointer.isEmpty ? "at root" : "at \(pointer)"
        return GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue,
                                       message: "invalid \(method.rawValue) params: \(location): \(problem)"))
    }
}
