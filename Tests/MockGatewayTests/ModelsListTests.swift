import Foundation
import GatewayProtocol
import MockGateway
import Testing

/// `models.list` over a real socket: one registry entry and one pure handler (`ModelsList`).
@Suite("models.list")
struct ModelsListTests {
    static let catalogue: JSONValue = ["models": [["id": "mock-echo", "name": "Mock Gateway echo agent", "provider": "mock-gateway"]]]

    @Test("advertised on both profiles; answers the catalogue with or without a view", arguments: GatewayProfile.builtIn)
    func listsTheCatalogue(profile: GatewayProfile) async throws {
        try await Gateway.withGateway(GatewayConfiguration(profile: profile)) { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x78),
                                                                scopes: [OperatorScope.read.rawValue])
            #expect(reader.hello.features.methods.contains(GatewayMethod.modelsList.rawValue))
            for params: JSONValue? in [nil, [:], ["view": "default"], ["view": "configured"], ["view": "all"]] {
                let response = try await reader.client.request(GatewayMethod.modelsList.rawValue, params: params)
                #expect(response.ok, "\(String(describing: params))")
                #expect(response.payload == Self.catalogue, "\(String(describing: params))")
            }
        }
    }

    @Test("the params schema is closed: an unknown member, a view outside the enum or a non-object is INVALID_REQUEST")
    func refusesBadParams() async throws {
        try await Gateway.withGateway { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x79),
                                                                scopes: [OperatorScope.read.rawValue])
            let cases: [(JSONValue, String)] = [
                (["view": "default", "agentId": "main"], "invalid models.list params: at root: unexpected property 'agentId'"),
                (["view": "everything"], "invalid models.list params: at /view: must be equal to one of the allowed values"),
                (["view": 3], "invalid models.list params: at /view: must be equal to one of the allowed values"),
                (["default"], "invalid models.list params: at root: must be object"),
            ]
            for (params, message) in cases {
                let response = try await reader.client.request(GatewayMethod.modelsList.rawValue, params: params)
                #expect(response.error == ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: message), "\(params)")
            }
        }
    }

    @Test("needs operator.read: a session with only operator.approvals gets the missing-scope error")
    func needsRead() async throws {
        try await Gateway.withGateway { gateway in
            let approver = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x7A),
                                                                  scopes: [OperatorScope.approvals.rawValue])
            let response = try await approver.client.request(GatewayMethod.modelsList.rawValue, params: [:])
            #expect(response.error?.code == ErrorCode.forbidden.rawValue)
            #expect(response.error?.message == "missing scope: operator.read")
        }
    }
}
