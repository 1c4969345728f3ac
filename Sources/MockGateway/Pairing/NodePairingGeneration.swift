import Foundation
import GatewayProtocol

/// The node pairing generation of a paired device: the key that binds a node connection, its
/// `node.presence.alive` throttle window and its push registration to one pairing.
///
/// Upstream (read for facts, nothing copied): `resolveNodePairingGeneration` in
/// src/infra/device-pairing-identity.ts @c69e8b1570b4032962eaa9202041a9d677fff544 is `null` unless
/// the device has the node role with an active (unrevoked) node token and an approved node
/// surface; otherwise its key is the SHA-256 hex of the device's public key, the record's
/// `createdAtMs`, the node token's value and `revokedAtMs`, and the node surface's `createdAtMs`
/// and `approvedAtMs`, joined with NUL. Device-wide approval time is left out on purpose, so an
/// unrelated operator upgrade keeps node work valid. src/gateway/server-node-events.ts keys the beacon throttle by `deviceId + NUL + generation.key`.
///
/// So the generation changes when the device re-pairs with a new key, when its record is removed
/// and created again, when the node token is re-issued or revoked, and when an approval grants the
/// node role again (``NodeSurfaceApproval/approvedAtMs``); a metadata refresh, a beacon or an
/// operator-only approval leaves it alone.
public enum NodePairingGeneration {
    /// The generation key of `device` with its node token, or `nil` when the device holds no
    /// node pairing (no node role, no active node token, or no approved node surface).
    public static func key(device: PairedDevice?, nodeToken: DeviceToken?) -> String? {
        guard let device, device.hasRole(.node), let nodeToken, nodeToken.role == .node, !nodeToken.isRevoked,
              let surface = device.nodeSurface
        else { return nil }
        let fields = [
            device.publicKey, String(device.createdAtMs), nodeToken.token, nodeToken.revokedAtMs.map { String($0) } ?? "",
            String(surface.createdAtMs), String(surface.approvedAtMs),
        ]
        return SHA256Digest.hex(Data(fields.joined(separator: "\u{0}").utf8))
    }
}

extension PairingStore {
    /// The node pairing generation of `deviceId` now (see ``NodePairingGeneration``).
    public func nodePairingGeneration(deviceId: String) -> String? {
        NodePairingGeneration.key(device: pairedDevice(deviceId), nodeToken: tokens.token(deviceId: deviceId, role: .node))
    }
}
