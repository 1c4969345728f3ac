import AcmeNode
import ConformanceTesting
import XCTest

/// The same suite from XCTest: `failures()` runs every selected case and returns the failing
/// results; `ConformanceSuite.describe` gives each one's requirement, expected, actual and seed.
final class AcmeXCTests: XCTestCase {
    func testTheWeatherScenarioPasses() async throws {
        let weather = ConformanceSuite("acme", scenarios: catalogue, filters: ["X-ACME-*"]) { AcmeNode() }
        let failures = try await weather.failures()
        XCTAssertTrue(failures.isEmpty, failures.map(ConformanceSuite.describe).joined(separator: "\n\n"))
    }
}
