import Foundation
import GatewayProtocol

/// One case of the shared device-auth vectors (`Tests/GatewayProtocolTests/Fixtures/device-auth.json`,
/// a copy of upstream's), read once for the proof verifier's tests and the handshake's.
public struct DeviceAuthVector: Sendable, CustomStringConvertible {
    /// The case's name (also how a parameterised test shows it).
    public var name: String
    /// Whether the proof verifies.
    public var valid: Bool
    /// The Ed25519 seed, hex.
    public var seedHex: String
    /// The raw public key, hex.
    public var publicKeyHex: String
    /// The payload version the signature covers (`v2`, `v3`).
    public var payloadVersion: String
    /// The signed payload.
    public var payload: String
    /// The `connect` params, as sent.
    public var connectParams: JSONValue
    /// The challenge's nonce.
    public var challengeNonce: String
    /// The challenge's time (ms), also the verifier's "now".
    public var challengeTs: Int
    /// `details.code` of the refusal (invalid cases).
    public var expectDetailsCode: String?
    /// The schema error the current Gateway answers instead (a vector without `device.nonce`).
    public var currentSchemaError: String?

    /// The name.
    public var description: String { name }

    /// Reads every case; throws when the file or a case is malformed.
    public static func loadAll() throws -> [DeviceAuthVector] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../GatewayProtocolTests/Fixtures/device-auth.json").standardizedFileURL
        let root = try JSONValue(parsing: Data(contentsOf: url))
        guard let cases = root["cases"]?.arrayValue else { throw FrameDecodingError("vectors file has no cases") }
        return try cases.map { item in
            guard let name = item["name"]?.stringValue, let valid = item["valid"]?.boolValue,
                let seedHex = item["seedHex"]?.stringValue, let publicKeyHex = item["publicKeyHex"]?.stringValue,
                let payloadVersion = item["payloadVersion"]?.stringValue, let payload = item["payload"]?.stringValue,
                let params = item["connectParams"], let nonce = item["challenge"]?["nonce"]?.stringValue,
                let ts = item["challenge"]?["ts"]?.int64Value
            else { throw FrameDecodingError("malformed vector \(item.jsonString)") }
            return DeviceAuthVector(
                name: name, valid: valid, seedHex: seedHex, publicKeyHex: publicKeyHex, payloadVersion: payloadVersion,
                payload: payload, connectParams: params, challengeNonce: nonce, challengeTs: Int(ts),
                expectDetailsCode: item["expectDetailsCode"]?.stringValue, currentSchemaError: item["currentSchemaError"]?.stringValue)
        }
    }

    /// Every case (none when the file does not load: the loading test then fails).
    public static let all: [DeviceAuthVector] = (try? loadAll()) ?? []
    /// The cases whose proof verifies.
    public static var validCases: [DeviceAuthVector] { all.filter(\.valid) }
    /// The cases whose proof is refused.
    public static var invalidCases: [DeviceAuthVector] { all.filter { !$0.valid } }
}
