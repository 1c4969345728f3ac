import Foundation
import Testing

@testable import GatewayProtocol

/// The Codable bridges, `JSONValue(encoding:)` and `decode(as:)`, against Foundation's
/// `JSONEncoder` and `JSONDecoder` through text (kept in `JSONCoding.foundation…` as the
/// reference). The parser and the writer follow JavaScript instead: `JSONDifferentialTests`.
@Suite("JSON coders' equivalence with Foundation")
struct JSONEquivalenceTests {
    static func nested(_ depth: Int, object: Bool) -> String {
        JSONDifferentialCorpus.nested(depth, object: object)
    }

    @Test func bridgeDepthLimitMatchesJSONEncoder() throws {
        let deepest = try JSONValue.parse(Self.nested(511, object: true))
        let tooDeepToEncode = try JSONValue.parse(Self.nested(512, object: false))
        #expect(try JSONValue(encoding: deepest) == (try JSONCoding.foundationValue(encoding: deepest)))
        // JSONEncoder refuses 512 levels; the bridges do too, or read the value as null.
        #expect(Outcome { try JSONValue(encoding: tooDeepToEncode) } == Outcome { try JSONCoding.foundationValue(encoding: tooDeepToEncode) })
        #expect(try tooDeepToEncode.decode(as: JSONValue.self) == .null)
        #expect(Outcome { try tooDeepToEncode.decode(as: [JSONValue].self) }
            == Outcome { try JSONCoding.foundationDecode(tooDeepToEncode, as: [JSONValue].self) })
        // encoded() itself writes every depth the parser reads.
        #expect(tooDeepToEncode.jsonString == Self.nested(512, object: false))
    }

    // MARK: Encoder and decoder on JSONValue trees

    @Test func encodingTreesAgreesWithJSONEncoderRoundTrip() {
        var generator = JSONTreeGenerator(seed: 7, allowNonFinite: true)
        for _ in 0 ..< 500 {
            let value = generator.value()
            let ours = Outcome { try JSONValue(encoding: value) }
            let theirs = Outcome { try JSONCoding.foundationValue(encoding: value) }
            #expect(ours == theirs, "\(value)")
            // Through containers too.
            #expect(Outcome { try JSONValue(encoding: ["wrapped": [value]]) }
                == Outcome { try JSONCoding.foundationValue(encoding: ["wrapped": [value]]) })
        }
    }

    @Test func decodingTreesAgreesWithJSONDecoder() {
        var generator = JSONTreeGenerator(seed: 8, allowNonFinite: true)
        for _ in 0 ..< 400 {
            let value = generator.value()
            #expect(Outcome { try value.decode(as: JSONValue.self) } == Outcome { try JSONCoding.foundationDecode(value, as: JSONValue.self) })
            #expect(Outcome { try value.decode(as: [String: JSONValue].self) }
                == Outcome { try JSONCoding.foundationDecode(value, as: [String: JSONValue].self) })
            #expect(Outcome { try value.decode(as: [JSONValue?].self) }
                == Outcome { try JSONCoding.foundationDecode(value, as: [JSONValue?].self) })
            // Which member's error a dictionary reports depends on its iteration order (hash
            // seeds differ between the two dictionaries), so only success or failure is compared.
            let oursMap = Outcome { try value.decode(as: [String: Int].self) }
            let theirsMap = Outcome { try JSONCoding.foundationDecode(value, as: [String: Int].self) }
            switch (oursMap, theirsMap) {
            case (.value(let a), .value(let b)): #expect(a == b)
            case (.failure, .failure): break
            default: Issue.record("\(value) as [String: Int]: ours \(oursMap), foundation \(theirsMap)")
            }
            #expect(Outcome { try value.decode(as: [Double?].self) }
                == Outcome { try JSONCoding.foundationDecode(value, as: [Double?].self) })
            #expect(Outcome { try value.decode(as: [String].self) }
                == Outcome { try JSONCoding.foundationDecode(value, as: [String].self) })
        }
    }

    @Test func numbersDecodeAsJSONDecoderConvertsThem() {
        var generator = JSONTreeGenerator(seed: 9, allowNonFinite: true)
        func random(_ generator: inout JSONTreeGenerator) -> JSONValue {
            generator.random.chance(0.5) ? .double(generator.double()) : .int(generator.int())
        }
        var numbers: [JSONValue] = JSONTreeGenerator.interestingDoubles.map(JSONValue.double)
            + JSONTreeGenerator.interestingInts.map(JSONValue.int) + [.double(.nan), .double(.infinity), "1", true, .null]
        for _ in 0 ..< 300 { numbers.append(random(&generator)) }
        for number in numbers {
            func check<T: Decodable & Equatable>(_ type: T.Type) {
                let ours = Outcome { try number.decode(as: T.self) }
                let theirs = Outcome { try JSONCoding.foundationDecode(number, as: T.self) }
                #expect(ours == theirs, "\(number) as \(T.self)")
            }
            check(Int.self); check(Int8.self); check(Int16.self); check(Int32.self); check(Int64.self)
            check(UInt.self); check(UInt8.self); check(UInt16.self); check(UInt32.self); check(UInt64.self)
            check(Double.self); check(Float.self); check(Decimal.self); check(Bool.self); check(String.self)
            check(Date.self); check(Int?.self); check([Int].self)
            if #available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *) {
                check(Int128.self)
                check(UInt128.self)
            }
        }
    }

    @Test func numbersEncodeAsJSONEncoderWritesThem() {
        var generator = JSONTreeGenerator(seed: 10, allowNonFinite: true)
        for _ in 0 ..< 300 {
            let double = generator.double()
            let float = Float(double)
            let integer = generator.int()
            #expect(Outcome { try JSONValue(encoding: double) } == Outcome { try JSONCoding.foundationValue(encoding: double) }, "\(double)")
            #expect(Outcome { try JSONValue(encoding: float) } == Outcome { try JSONCoding.foundationValue(encoding: float) }, "\(float)")
            #expect(Outcome { try JSONValue(encoding: [float]) } == Outcome { try JSONCoding.foundationValue(encoding: [float]) }, "\(float)")
            #expect(Outcome { try JSONValue(encoding: UInt64(bitPattern: integer)) }
                == Outcome { try JSONCoding.foundationValue(encoding: UInt64(bitPattern: integer)) })
            #expect(Outcome { try JSONValue(encoding: ["d": double]) } == Outcome { try JSONCoding.foundationValue(encoding: ["d": double]) })
            if let decimal = Decimal(string: JSONNumber.text(double.isFinite ? double : 0)) {
                #expect(Outcome { try JSONValue(encoding: decimal) } == Outcome { try JSONCoding.foundationValue(encoding: decimal) }, "\(decimal)")
            }
            if #available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *) {
                let wide = Int128(integer) * Int128(generator.random.int(1 ... 1_000_000))
                #expect(Outcome { try JSONValue(encoding: wide) } == Outcome { try JSONCoding.foundationValue(encoding: wide) })
            }
        }
    }
}
