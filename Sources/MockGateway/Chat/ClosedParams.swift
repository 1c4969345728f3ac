import GatewayProtocol

/// The type rule of one member of a closed params object (a TypeBox `closedObject` /
/// `additionalProperties: false` schema upstream).
enum ParamRule: Sendable, Hashable {
    /// A string of at least one character.
    case nonEmptyString
    /// Any string.
    case string
    /// A non-empty string or `null`.
    case nonEmptyStringOrNull
    /// A string or `null`.
    case stringOrNull
    /// A string of at most `max` characters, or `null`.
    case boundedStringOrNull(max: Int)
    /// A boolean.
    case bool
    /// A boolean or `null`.
    case boolOrNull
    /// An integer within `min...max`.
    case integer(min: Int64, max: Int64)
    /// A number.
    case number
    /// A number `>= 0`.
    case nonNegativeNumber
    /// A string of `1...max` characters.
    case boundedString(max: Int)
    /// An array of strings of `1...max` characters each.
    case boundedStrings(max: Int)
    /// One of these strings.
    case oneOf([String])
    /// One of these strings, or `null`.
    case oneOfOrNull([String])
    /// An array of unique strings of `1...maxChars` characters, `minItems...maxItems` long.
    case uniqueStrings(minItems: Int, maxItems: Int, maxChars: Int)
    /// An array of non-empty strings, or `null`.
    case nonEmptyStringsOrNull
    /// An array of non-empty strings.
    case nonEmptyStrings
    /// Any JSON value (an open member upstream, `Type.Unknown()` or a nested object the fake does
    /// not inspect).
    case any

    /// What is wrong with `value` (`nil` when it conforms).
    func problem(_ value: JSONValue) -> String? {
        switch self {
        case .nonEmptyString:
            guard let text = value.stringValue else { return "must be string" }
            return text.isEmpty ? "must NOT have fewer than 1 characters" : nil
        case .string:
            return value.stringValue == nil ? "must be string" : nil
        case .nonEmptyStringOrNull:
            if value == .null { return nil }
            return ParamRule.nonEmptyString.problem(value)
        case .stringOrNull:
            return value == .null || value.stringValue != nil ? nil : "must be string or null"
        case .boundedStringOrNull(let max):
            if value == .null { return nil }
            guard let text = value.stringValue else { return "must be string or null" }
            return text.count > max ? "must NOT have more than \(max) characters" : nil
        case .bool:
            return value.boolValue == nil ? "must be boolean" : nil
        case .boolOrNull:
            return value == .null || value.boolValue != nil ? nil : "must be boolean or null"
        case .integer(let min, let max):
            guard let number = value.int64Value else { return "must be integer" }
            if number < min { return "must be >= \(min)" }
            return number > max ? "must be <= \(max)" : nil
        case .number:
            return value.doubleValue == nil ? "must be number" : nil
        case .nonNegativeNumber:
            guard let number = value.doubleValue else { return "must be number" }
            return number < 0 ? "must be >= 0" : nil
        case .boundedString(let max):
            if let problem = ParamRule.nonEmptyString.problem(value) { return problem }
            return (value.stringValue?.count ?? 0) > max ? "must NOT have more than \(max) characters" : nil
        case .boundedStrings(let max):
            guard let items = value.arrayValue else { return "must be array" }
            for item in items {
                if let problem = ParamRule.boundedString(max: max).problem(item) { return "items \(problem)" }
            }
            return nil
        case .oneOf(let allowed):
            guard let text = value.stringValue, allowed.contains(text) else {
                return "must be equal to one of the allowed values (\(allowed.joined(separator: ", ")))"
            }
            return nil
        case .oneOfOrNull(let allowed):
            if value == .null { return nil }
            return ParamRule.oneOf(allowed).problem(value)
        case .uniqueStrings(let minItems, let maxItems, let maxChars):
            guard let items = value.arrayValue else { return "must be array" }
            if items.count < minItems { return "must NOT have fewer than \(minItems) items" }
            if items.count > maxItems { return "must NOT have more than \(maxItems) items" }
            var seen = Set<String>()
            for item in items {
                guard let text = item.stringValue, !text.isEmpty, text.count <= maxChars else {
                    return "items must be strings of 1 to \(maxChars) characters"
                }
                guard seen.insert(text).inserted else { return "must NOT have duplicate items" }
            }
            return nil
        case .nonEmptyStringsOrNull:
            if value == .null { return nil }
            return ParamRule.nonEmptyStrings.problem(value)
        case .nonEmptyStrings:
            guard let items = value.arrayValue else { return "must be array" }
            return items.allSatisfy({ ($0.stringValue?.isEmpty ?? true) == false }) ? nil : "items must be non-empty strings"
        case .any:
            return nil
        }
    }
}

/// A closed params schema: the members a method takes, which are required, and nothing else.
/// A violation answers `INVALID_REQUEST "invalid <method> params: at <where>: <problem>"` (the
/// shape of upstream's `formatValidationErrors`).
struct ClosedParams: Sendable {
    /// The method, for the error message.
    let method: String
    /// Member → rule.
    let members: [String: ParamRule]
    /// Members that must be present.
    let required: [String]

    /// Checks `params` (absent params are an empty object).
    /// - Returns: the members, or the `INVALID_REQUEST` message.
    func validate(_ params: JSONValue?) -> Result<[String: JSONValue], ChatStore.ParamsError> {
        let object: [String: JSONValue]
        switch params {
        case nil, .null?: object = [:]
        case .object(let members)?: object = members
        default: return .failure(error("at root: must be object"))
        }
        if let unknown = object.keys.sorted().first(where: { members[$0] == nil }) {
            return .failure(error("at root: unexpected property '\(unknown)'"))
        }
        if let missing = required.first(where: { object[$0] == nil }) {
            return .failure(error("at root: must have required property '\(missing)'"))
        }
        for name in object.keys.sorted() {
            guard let rule = members[name], let value = object[name] else { continue }
            if let problem = rule.problem(value) { return .failure(error("at /\(name): \(problem)")) }
        }
        return .success(object)
    }

    private func error(_ detail: String) -> ChatStore.ParamsError {
        ChatStore.ParamsError(message: "invalid \(method) params: \(detail)")
    }
}
