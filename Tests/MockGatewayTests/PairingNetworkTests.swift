import GatewayProtocol
@testable import MockGateway
import Testing

@Suite("IP addresses and CIDR networks for trusted-CIDR approval")
struct PairingNetworkTests {
    @Test func ipv4NetworksMatchTheirPrefix() throws {
        let network = try IPNetwork(parsing: "192.168.0.0/16")
        #expect(network.contains("192.168.0.1"))
        #expect(network.contains("192.168.255.255"))
        #expect(!network.contains("192.169.0.1"))
        #expect(!network.contains("10.0.0.1"))
        #expect(try IPNetwork(parsing: "0.0.0.0/0").contains("8.8.8.8"))
        #expect(try IPNetwork(parsing: "10.1.2.3/31").contains("10.1.2.2"))
        #expect(!(try IPNetwork(parsing: "10.1.2.3/31").contains("10.1.2.4")))
    }

    @Test func ipv6NetworksMatchTheirPrefix() throws {
        let network = try IPNetwork(parsing: "fd00::/8")
        #expect(network.contains("fd12:3456::1"))
        #expect(!network.contains("fe80::1"))
        #expect(!network.contains("10.0.0.1"))
        let narrow = try IPNetwork(parsing: "2001:db8:abcd:12::/64")
        #expect(narrow.contains("2001:db8:abcd:12:ffff:ffff:ffff:ffff"))
        #expect(!narrow.contains("2001:db8:abcd:13::1"))
    }

    @Test func aBareAddressIsAnExactMatch() throws {
        let v4 = try IPNetwork(parsing: "192.168.1.5")
        #expect(v4.prefixLength == 32)
        #expect(v4.contains("192.168.1.5"))
        #expect(!v4.contains("192.168.1.6"))
        let v6 = try IPNetwork(parsing: "fd00::5")
        #expect(v6.prefixLength == 128)
        #expect(v6.contains("fd00:0:0:0:0:0:0:5"))
        #expect(!v6.contains("fd00::6"))
    }

    @Test func mappedIPv4PeersMatchIPv4Networks() throws {
        let network = try IPNetwork(parsing: "10.0.0.0/8")
        #expect(network.contains("::ffff:10.2.3.4"))
        #expect(!network.contains("::ffff:11.2.3.4"))
        #expect(try IPAddress(parsing: "::ffff:10.2.3.4").mappedIPv4?.description == "10.2.3.4")
    }

    @Test func socketFormsAreTolerated() throws {
        #expect(try IPAddress(parsing: "[::1]").isLoopback)
        #expect(try IPAddress(parsing: "fe80::1%en0").description == "fe80::1")
        #expect(try IPAddress(parsing: " 127.0.0.2 ").isLoopback)
        #expect(try IPAddress(parsing: "::ffff:127.0.0.1").isLoopback)
        #expect(!(try IPAddress(parsing: "10.0.0.1").isLoopback))
    }

    @Test func hostBitsAreClearedAndAddressesPrintCanonically() throws {
        #expect(try IPNetwork(parsing: "192.168.1.5/24").description == "192.168.1.0/24")
        #expect(try IPNetwork(parsing: "FD00:0:0::1/8").description == "fd00::/8")
        #expect(try IPAddress(parsing: "2001:0db8:0000:0000:0001:0000:0000:0001").description == "2001:db8::1:0:0:1")
        #expect(try IPAddress(parsing: "::").description == "::")
        #expect(try IPAddress(parsing: "1::").description == "1::")
        #expect(try IPAddress(parsing: "1:0:1:0:1:0:1:0").description == "1:0:1:0:1:0:1:0")
    }

    @Test(arguments: [
        "", "abc", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.-4", "10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/",
        "10.0.0.0/8/8", "10.0.0.0/x", "1:::2", "1::2::3", "12345::", "g::1", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7",
        "fd00::/129", "::ffff:1.2.3", "+1::", "1.2.3.4:80",
    ])
    func badInputIsRejectedWithAClearError(_ text: String) {
        let error = #expect(throws: IPNetworkError.self) { _ = try IPNetwork(parsing: text) }
        #expect(error?.description.hasPrefix("invalid IP address or CIDR \"\(text)\": ") == true)
    }

    @Test func aPolicyRejectsTheFirstBadEntry() {
        #expect(throws: IPNetworkError.self) { _ = try AutoApprovalPolicy.trustedCIDRs(parsing: ["10.0.0.0/8", "bogus"]) }
    }
}
