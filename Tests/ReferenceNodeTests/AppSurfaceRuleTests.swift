import GatewayProtocol
import Testing
@testable import ReferenceNode

struct WorkspaceViewTests {
    @Test func pagesWithoutALimitUntilEveryEntryIsShown() {
        var view = WorkspaceView()
        view.open(folder: "", agentId: "main")
        let configuration = TestSupport.configuration()
        #expect(view.listParams(offset: 0, configuration: configuration) == ["agentId": "main"])
        let first: JSONValue = ["entries": [["path": "a"], ["path": "b"]], "totalEntries": 3, "offset": 0]
        #expect(view.applyPage(first) == 2)
        #expect(view.listParams(offset: 2, configuration: configuration) == ["agentId": "main", "offset": 2])
        let last: JSONValue = ["entries": [["path": "c"]], "totalEntries": 3, "offset": 2]
        #expect(view.applyPage(last) == nil)
        #expect(view.folder?.entries == ["a", "b", "c"])
        // The mutant asks for more than the Gateway's 500 a page.
        let mutant = view.listParams(offset: 0, configuration: TestSupport.configuration([.workspaceLimitOverMax]))
        #expect(mutant["limit"] == 1_000)
    }

    @Test func aTooLargeRefusalIsShownWithItsSizes() {
        var view = WorkspaceView()
        let error = ErrorShape(code: "INVALID_REQUEST", message: "workspace file is too large to preview",
                               details: ["type": "workspace_file_too_large", "maxBytes": 262_144, "path": "big.txt", "size": 307_200])
        let preview = view.applyPreview(path: "big.txt", result: .failure(.gateway(error)))
        #expect(preview == .tooLarge(path: "big.txt", size: 307_200, maxBytes: 262_144))
        #expect(preview.refusal?.contains("too large") == true)
        #expect(view.applyPreview(path: "n.md", result: .success(["file": ["mimeType": "text/plain", "size": 3]])).refusal == nil)
    }
}

struct VoiceWakeBookTests {
    @Test func aChangeFromElsewhereReplacesTheLocalEdit() {
        var book = VoiceWakeBook()
        book.edit(["alpha"])
        #expect(book.applyChanged(["triggers": ["gamma"]], configuration: TestSupport.configuration()) == .adopted(["gamma"]))
        #expect(book.triggers == ["gamma"])
        #expect(book.applyChanged(["triggers": ["gamma"]], configuration: TestSupport.configuration()) == .unchanged)
        #expect(book.applyChanged(["triggers": [1]], configuration: TestSupport.configuration()) == .unchanged)
    }

    @Test func theMutantWritesItsOwnListBack() {
        var book = VoiceWakeBook()
        book.edit(["alpha"])
        let decision = book.applyChanged(["triggers": ["gamma"]], configuration: TestSupport.configuration([.overwriteVoiceWakeTriggers]))
        #expect(decision == .writeBack(["alpha"]))
        #expect(book.triggers == ["alpha"])
    }
}
