import GatewayProtocol

/// One attempt to resolve an approval or a question, from the wire or from the scripting API, as
/// scenarios observe it ("who tried what, when, and did it win").
public struct ResolveAttempt: Sendable, Hashable {
    /// The API used.
    public enum Channel: Sendable, Hashable {
        /// `approval.resolve`.
        case unifiedApproval
        /// `exec.approval.resolve`.
        case execApproval
        /// `question.resolve`.
        case question
        /// A scripted resolve, expiry or cancellation.
        case script

        /// The method name, or `script`.
        public var rawValue: String {
            switch self {
            case .unifiedApproval: GatewayMethod.approvalResolve.rawValue
            case .execApproval: GatewayMethod.execApprovalResolve.rawValue
            case .question: GatewayMethod.questionResolve.rawValue
            case .script: "script"
            }
        }
    }

    /// What became of the attempt.
    public enum Result: Sendable, Hashable {
        /// This attempt ended the record.
        case applied
        /// The record was already terminal; the loser got the family's loser answer (unified
        /// `applied:false`; legacy `APPROVAL_ALREADY_RESOLVED`; questions
        /// `QUESTION_ALREADY_TERMINAL`). `winnerStatus` is the recorded terminal status.
        case lost(winnerStatus: String)
        /// An identical retry of the recorded outcome (legacy `{ok:true}`).
        case idempotentRetry
        /// Rejected without changing the record (unknown id, invalid answer, unavailable decision).
        case rejected(code: String, reason: String?)
    }


    /// Approval or question.
    public var recordKind: OperatorRecordKind
    /// The id the caller named (for legacy, possibly a prefix).
    public var requestedId: String
    /// The record's full id, when one was found.
    public var recordId: String?
    /// The caller's surface (connection id or scripted surface name).
    public var surface: String
    /// The API used.
    public var channel: Channel
    /// What was asked: the decision (`allow-once`, ...), `answer <JSON>`, or `cancel`.
    public var requested: String
    /// The result.
    public var result: Result
    /// Gateway clock.
    public var atMs: Int64

    /// Creates an attempt.
    public init(recordKind: OperatorRecordKind, requestedId: String, recordId: String?, surface: String,
                channel: Channel, requested: String, result: Result, atMs: Int64) {
        self.recordKind = recordKind
        self.requestedId = requestedId
        self.recordId = recordId
        self.surface = surface
        self.channel = channel
        self.requested = requested
        self.result = result
        self.atMs = atMs
    }

    /// Whether this attempt ended the record.
    public var applied: Bool { result == .applied }

    /// The attempt as a scenario-observable gateway event.
    public func recordEvent(status: OperatorRecordStatus) -> OperatorRecordEvent {
        OperatorRecordEvent(kind: recordKind, id: recordId ?? requestedId, action: .resolveAttempt, status: status,
                            decision: requested, surface: surface, applied: applied, method: channel.rawValue)
    }
}

extension ResolveAttempt.Result: CustomStringConvertible {
    /// `applied`, `lost to allowed`, `idempotent retry`, `rejected INVALID_REQUEST (APPROVAL_NOT_FOUND)`.
    public var description: String {
        switch self {
        case .applied: "applied"
        case .lost(let winner): "lost to \(winner)"
        case .idempotentRetry: "idempotent retry"
        case .rejected(let code, let reason): "rejected \(code)\(reason.map { " (\($0))" } ?? "")"
        }
    }
}
