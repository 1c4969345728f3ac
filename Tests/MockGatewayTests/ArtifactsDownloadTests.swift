import GatewayProtocol
@testable import MockGateway
import Testing

/// `artifacts.download`'s rule as a value: which blocks are artifacts, their ids and how each is
/// downloaded (upstream `src/gateway/server-methods/artifacts.ts@201f71f845dfc599ee786f624969d6cbf0cec5e8`).
@Suite("artifacts.download rule")
struct ArtifactsDownloadTests {
    static func row(seq: Int, runId: String? = nil, blocks: [JSONValue]) -> ChatMessage {
        ChatMessage(id: "msg-\(seq)", seq: seq, sessionKey: "agent:main:main", role: .assistant, text: "t\(seq)",
                    timestampMs: 0, idempotencyKey: nil, runId: runId, blocks: blocks)
    }

    /// The expected literal was computed independently with Python's hashlib:
    /// `"artifact_" + base64.urlsafe_b64encode(hashlib.sha256(b"agent:main:main\0" b"3\0" b"1\0"
    /// b"image\0" b"chart.png").digest()).decode().rstrip("=")[:18]`.
    @Test func theIdIsTheBase64URLSHA256OfTheKeyFields() {
        #expect(ArtifactsDownload.id(sessionKey: "agent:main:main", messageSeq: 3, contentIndex: 1, type: "image",
                                     title: "chart.png") == "artifact_02ngFziCz_Yyl5F6zE")
        // Another order of the fields is another id.
        #expect(ArtifactsDownload.id(sessionKey: "agent:main:main", messageSeq: 3, contentIndex: 1, type: "chart.png",
                                     title: "image") != "artifact_02ngFziCz_Yyl5F6zE")
    }

    @Test func blocksAfterTheTextAreCollectedWithTheirDownloadMode() {
        let rows = [
            Self.row(seq: 1, blocks: []),
            Self.row(seq: 2, runId: "r1", blocks: [["type": "image", "title": "chart.png", "data": "aGVsbG8=", "mimeType": "image/png"]]),
            Self.row(seq: 3, blocks: [["type": "file", "url": "https://example.com/a.pdf"], ["type": "audio"],
                                       ["type": "input_image", "image_url": ["url": "data:image/gif;base64,R0lG"]]]),
        ]
        let all = ArtifactsDownload.collect(rows: rows, sessionKey: "agent:main:main", runId: nil, taskId: nil)
        #expect(all.map(\.mode) == ["bytes", "url", "unsupported", "bytes"])
        #expect(all.map(\.title) == ["chart.png", "file 2", "audio 3", "image 4"])
        #expect(all[0].summary == ["id": .string(all[0].id), "type": "image", "title": "chart.png", "mimeType": "image/png",
                                   "sizeBytes": 5, "sessionKey": "agent:main:main", "runId": "r1", "messageSeq": 2,
                                   "source": "session-transcript", "download": ["mode": "bytes"]])
        #expect(all[0].id == ArtifactsDownload.id(sessionKey: "agent:main:main", messageSeq: 2, contentIndex: 1,
                                                  type: "image", title: "chart.png"))
        #expect(all[1].url == "https://example.com/a.pdf" && all[1].data == nil)
        #expect(all[3].data == "R0lG" && all[3].mimeType == "image/gif")
        #expect(ArtifactsDownload.collect(rows: rows, sessionKey: "agent:main:main", runId: "r1", taskId: nil).count == 1)
        #expect(ArtifactsDownload.collect(rows: rows, sessionKey: "agent:main:main", runId: nil, taskId: "t").isEmpty)
    }

    @Test func onlyHTTPAndAPIPathsAreSafeURLs() {
        #expect(ArtifactsDownload.isSafeURL("https://example.com/x") && ArtifactsDownload.isSafeURL("/api/files/1"))
        #expect(!ArtifactsDownload.isSafeURL("//evil.example/x") && !ArtifactsDownload.isSafeURL("/etc/passwd"))
        #expect(!ArtifactsDownload.isSafeURL("file:///etc/passwd") && !ArtifactsDownload.isSafeURL("data:text/plain,x"))
    }

    @Test func theAnswerHasTheThreeOutcomes() {
        let rows = [Self.row(seq: 1, blocks: [["type": "image", "data": "aGk="], ["type": "file", "url": "/api/f"], ["type": "audio"]])]
        let artifacts = ArtifactsDownload.collect(rows: rows, sessionKey: "agent:main:main", runId: nil, taskId: nil)
        func answer(_ id: String) -> Result<JSONValue, GatewayError> {
            ArtifactsDownload.answer(["sessionKey": "agent:main:main", "artifactId": .string(id)]) { _ in rows }
        }
        #expect((try? answer(artifacts[0].id).get()) == ["artifact": artifacts[0].summary, "encoding": "base64", "data": "aGk="])
        #expect((try? answer(artifacts[1].id).get()) == ["artifact": artifacts[1].summary, "url": "/api/f"])
        guard case .failure(let error) = answer(artifacts[2].id) else {
            Issue.record("a block without data or url is not downloadable")
            return
        }
        #expect(error.shape.message == "artifact download is unsupported")
        #expect(error.shape.details == ["type": "artifact_download_unsupported", "artifactId": .string(artifacts[2].id)])
    }
}
