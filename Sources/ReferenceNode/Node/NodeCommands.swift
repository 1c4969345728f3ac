import Foundation
import GatewayProtocol

/// The answer to one `node.invoke.request`, before it is put on the wire.
public struct NodeInvokeOutcome: Sendable, Hashable {
    /// Success flag.
    public var ok: Bool
    /// The result as a JSON string (success only).
    public var payloadJSON: String?
    /// Error code (failure only).
    public var errorCode: String?
    /// Error message (failure only).
    public var errorMessage: String?

    /// A success with `payload` serialised into `payloadJSON`.
    public static func success(_ payload: JSONValue) -> NodeInvokeOutcome {
        NodeInvokeOutcome(ok: true, payloadJSON: payload.jsonString, errorCode: nil, errorMessage: nil)
    }

    /// A failure.
    public static func failure(_ code: String, _ message: String) -> NodeInvokeOutcome {
        NodeInvokeOutcome(ok: false, payloadJSON: nil, errorCode: code, errorMessage: message)
    }

    /// The `node.invoke.result` params (docs/protocol.md §6.4): `{id, nodeId, ok,
    /// payloadJSON?, error?{code, message}}`.
    func resultParams(id: String, nodeId: String, configuration: ReferenceConfiguration) -> JSONValue {
        var object: [String: JSONValue] = ["id": .string(id), "nodeId": .string(nodeId), "ok": .bool(ok)]
        if let payloadJSON { object["payloadJSON"] = .string(payloadJSON) }
        if !ok {
            var error: [String: JSONValue] = ["message": .string(errorMessage ?? "failed")]
            if !configuration.has(.errorWithoutCode) { error["code"] = .string(errorCode ?? ErrorCode.unavailable.rawValue) }
            object["error"] = .object(error)
        }
        return .object(object)
    }
}

/// The node commands of the reference client, with fake data (docs/protocol.md §6.3-6.4, §3.13).
enum NodeCommands {
    /// The commands declared in `connect.commands`.
    static let declared = [
        NodeCommandName.deviceInfo, .deviceStatus, .systemNotify, .locationGet, .canvasPresent, .canvasNavigate,
        .cameraList, .cameraSnap, .screenRecord, .debugSlow, .debugCounter,
    ].map(\.rawValue)

    /// Foreground-only command families (`canvas.*`, `camera.*`, `screen.*`, docs/protocol.md §6.9).
    static func isForegroundOnly(_ command: String) -> Bool {
        command.hasPrefix("canvas.") || command.hasPrefix("camera.") || command.hasPrefix("screen.")
    }

    /// The refusal a foreground-only command gets in the background, if any.
    static func backgroundRefusal(for command: String, inBackground: Bool, configuration: ReferenceConfiguration) -> NodeInvokeOutcome? {
        guard inBackground, isForegroundOnly(command), !configuration.has(.ignoreBackground) else { return nil }
        return .failure("NODE_BACKGROUND_UNAVAILABLE", "app is in the background")
    }

    /// How long the client may work on an invoke before it must answer with an error:
    /// a little before `timeoutMs` (30 s when absent), `nil` when `timeoutMs` is 0 (unbounded).
    static func answerDeadlineMs(timeoutMs: Int?) -> Int64? {
        let timeout = Int64(timeoutMs ?? Int(ClientTimers.defaultInvokeTimeoutMs))
        guard timeout > 0 else { return nil }
        return timeout - min(1_000, timeout / 5)
    }

    /// The error sent when a command does not finish in time (as Swift sends it).
    static let timedOut = NodeInvokeOutcome.failure(ErrorCode.unavailable.rawValue, "node invoke timed out")

    /// Runs `command`. `counter` is the number of times commands with side effects ran before.
    /// - Returns: the outcome, or `nil` for an unknown command under the `unknown-command-silence` mutant.
    static func run(_ command: String, paramsJSON: String?, persona: ClientPersona, deviceId: String, counter: Int,
                    clock: any ClientClock, configuration: ReferenceConfiguration) async -> NodeInvokeOutcome? {
        // A client configured with its own command set implements only what it declares.
        if let declared = configuration.declaredCommands, !declared.contains(command) {
            return unknown(command, configuration: configuration)
        }
        let params = paramsJSON.flatMap { try? JSONValue(parsing: $0) }
        switch command {
        case NodeCommandName.deviceInfo.rawValue:
            return .success([
                "deviceName": .string(persona.displayName), "modelIdentifier": persona.modelIdentifier.map(JSONValue.string) ?? .null,
                "systemName": "iOS", "systemVersion": "18.4.0", "appVersion": .string(persona.version),
                "deviceId": .string(deviceId),
            ])
        case NodeCommandName.deviceStatus.rawValue:
            return .success([
                "battery": ["level": 0.82, "state": "unplugged", "lowPowerModeEnabled": false],
                "thermalState": "nominal", "storage": ["totalBytes": 128_000_000_000, "freeBytes": 64_000_000_000],
                "network": ["status": "satisfied", "isExpensive": false],
            ])
        case NodeCommandName.systemNotify.rawValue:
            guard let title = params?["title"]?.stringValue ?? params?["body"]?.stringValue, !title.isEmpty else {
                return .failure(ErrorCode.invalidRequest.rawValue, "system.notify needs a title or body")
            }
            return .success(["delivered": true])
        case NodeCommandName.locationGet.rawValue:
            return .success([
                "lat": 48.8566, "lon": 2.3522, "accuracyMeters": 35, "altitudeMeters": 35,
                "timestamp": .int(clock.nowMs), "isPrecise": true, "source": "gps",
            ])
        case NodeCommandName.canvasPresent.rawValue:
            return .success(["presented": true])
        case NodeCommandName.canvasNavigate.rawValue:
            guard let url = params?["url"]?.stringValue, !url.isEmpty else {
                return .failure(ErrorCode.invalidRequest.rawValue, "canvas.navigate needs a url")
            }
            return .success(["url": .string(url)])
        case NodeCommandName.cameraList.rawValue:
            return .success(["devices": [["id": "back", "position": "back"], ["id": "front", "position": "front"]]])
        case NodeCommandName.cameraSnap.rawValue:
            // A 1x1 JPEG stand-in; the snap number shows whether the command really ran again.
            return .success([
                "format": "jpg", "width": 1, "height": 1, "base64": "/9j/4AAQSkZJRgABAQAAAQABAAD/2Q==",
                "snap": .int(Int64(counter + 1)),
            ])
        case NodeCommandName.screenRecord.rawValue:
            return .success(["format": "mp4", "durationMs": 1_000, "base64": "AAAAGGZ0eXBtcDQy"])
        case NodeCommandName.debugSlow.rawValue:
            // Takes `durationMs` (default 10 minutes) on the client clock: longer than any
            // ordinary timeout, to exercise the answer-before-timeoutMs rule.
            let duration = params?["durationMs"]?.int64Value ?? 600_000
            let deadline = clock.nowMs + duration
            do { try await clock.sleep(untilMs: deadline) } catch { return .failure(ErrorCode.unavailable.rawValue, "cancelled") }
            return .success(["sleptMs": .int(duration)])
        case NodeCommandName.debugCounter.rawValue:
            return .success(["count": .int(Int64(counter + 1))])
        default:
            return unknown(command, configuration: configuration)
        }
    }

    /// The answer to a command the client does not implement (`nil`: silence, under the
    /// `unknown-command-silence` mutant).
    static func unknown(_ command: String, configuration: ReferenceConfiguration) -> NodeInvokeOutcome? {
        if configuration.has(.unknownCommandSilence) { return nil }
        return .failure(ErrorCode.invalidRequest.rawValue, "unknown command: \(command)")
    }
}
