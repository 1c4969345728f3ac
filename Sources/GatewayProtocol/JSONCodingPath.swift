/// A coding key built by the JSON encoder and decoder: array positions (`Index 3`, as Foundation
/// names them), dictionary keys and `super`.
struct JSONCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }

    /// The key of an array element, as Foundation's JSON coders name it.
    init(index: Int) {
        self.stringValue = "Index \(index)"
        self.intValue = index
    }

    static let superKey = JSONCodingKey(stringValue: "super")
}

/// A coding path as a linked list, so that descending costs one node and the `[CodingKey]` array
/// is built only when asked for (errors, `codingPath`).
indirect enum JSONCodingPath {
    case root
    case key(any CodingKey, JSONCodingPath)
    case index(Int, JSONCodingPath)

    func appending(_ key: any CodingKey) -> JSONCodingPath { .key(key, self) }
    func appending(index: Int) -> JSONCodingPath { .index(index, self) }

    var keys: [any CodingKey] {
        var reversed: [any CodingKey] = []
        var node = self
        while true {
            switch node {
            case .root: return reversed.reversed()
            case .key(let key, let parent):
                reversed.append(key)
                node = parent
            case .index(let index, let parent):
                reversed.append(JSONCodingKey(index: index))
                node = parent
            }
        }
    }
}

/// One step of a path inside a `JSONValue` (cheap to push and pop while walking a tree).
enum JSONPathStep {
    case key(String)
    case index(Int)

    var codingKey: any CodingKey {
        switch self {
        case .key(let key): JSONCodingKey(stringValue: key)
        case .index(let index): JSONCodingKey(index: index)
        }
    }
}

/// Where a value sits, for error messages: a path plus one more step, turned into coding keys
/// only when an error is thrown.
struct JSONErrorPath {
    enum Last {
        case none
        case key(any CodingKey)
        case index(Int)
    }

    var base: JSONCodingPath
    var last: Last = .none

    var keys: [any CodingKey] {
        var keys = base.keys
        switch last {
        case .none: break
        case .key(let key): keys.append(key)
        case .index(let index): keys.append(JSONCodingKey(index: index))
        }
        return keys
    }
}
