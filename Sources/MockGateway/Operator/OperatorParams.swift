import Foundation
import GatewayProtocol

/// Why request params failed validation; becomes `invalid <method> params: <detail>`.
struct ParamError: Error, Sendable {
    var detail: String
}

/// A typed reader over a request's `params` object.
///
/// Upstream validators are JSON-schema based; the detail wording after `invalid <method> params:`
/// is ⚠️ UNCONFIRMED here (clients match on the code and the prefix). Unknown keys are ignored:
/// the most tolerant reading, since whether each schema is closed was not confirmed.
struct OperatorParams: Sendable {
    let object: [String: JSONValue]

    /// Reads `params`; absent params count as `{}`.
    init(_ params: JSONValue?) throws(ParamError) {
        switch params {
        case nil, .null?: object = [:]
        case .object(let members)?: object = members
        default: throw ParamError(detail: "params must be an object")
        }
    }

    func has(_ key: String) -> Bool { object[key] != nil && object[key] != .null }

    /// A string member; `nil` when absent. Blank strings count as absent unless `allowBlank`.
    func string(_ key: String, required: Bool = false, allowBlank: Bool = false) throws(ParamError) -> String? {
        guard let value = object[key], value != .null else {
            if required { throw ParamError(detail: "\(key) is required") }
            return nil
        }
        guard let text = value.stringValue else { throw ParamError(detail: "\(key) must be a string") }
        if !allowBlank && text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            if required { throw ParamError(detail: "\(key) must be a non-empty string") }
            return nil
        }
        return text
    }

    /// An integer member within `range`; `nil` when absent.
    func int(_ key: String, in range: ClosedRange<Int64>) throws(ParamError) -> Int64? {
        guard let value = object[key], value != .null else { return nil }
        guard let number = value.int64Value, range.contains(number) else {
            throw ParamError(detail: "\(key) must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    /// A boolean member; `nil` when absent.
    func bool(_ key: String) throws(ParamError) -> Bool? {
        guard let value = object[key], value != .null else { return nil }
        guard let flag = value.boolValue else { throw ParamError(detail: "\(key) must be a boolean") }
        return flag
    }

    /// An array of strings; `nil` when absent.
    func strings(_ key: String) throws(ParamError) -> [String]? {
        guard let value = object[key], value != .null else { return nil }
        guard let items = value.arrayValue else { throw ParamError(detail: "\(key) must be an array of strings") }
        var result: [String] = []
        for item in items {
            guard let text = item.stringValue else { throw ParamError(detail: "\(key) must be an array of strings") }
            result.append(text)
        }
        return result
    }

    /// An object member; `nil` when absent.
    func objectMember(_ key: String) throws(ParamError) -> [String: JSONValue]? {
        guard let value = object[key], value != .null else { return nil }
        guard let members = value.objectValue else { throw ParamError(detail: "\(key) must be an object") }
        return members
    }
}


/// A record id compared as exact UTF-8 bytes. Swift's `String ==` treats canonically equivalent
/// strings (composed and decomposed "é") as equal, but approval ids must be compared as exact
/// bytes (docs/protocol.md §7.2), so stores key their records by this.
struct ExactID: Hashable, Sendable {
    let bytes: [UInt8]
    init(_ id: String) { bytes = Array(id.utf8) }
}

extension String {
    /// Byte-exact equality (no Unicode canonical equivalence).
    func isExactly(_ other: String) -> Bool { utf8.elementsEqual(other.utf8) }
    /// Byte-exact prefix test.
    func hasExactPrefix(_ prefix: String) -> Bool { utf8.starts(with: prefix.utf8) }
}
