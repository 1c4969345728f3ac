// The transcript of one session as a tree of entries with parent ids, as upstream stores it
// (read for facts, nothing copied): every entry names its parent; the active leaf selects one
// path, root to leaf, which is what history, branch listing and forks read. A rewind moves the
// leaf to the parent of a user message, a branch switch to another tip; a later message is a child
// of the leaf, so the old tip stays in the tree as a second branch.
// Upstream: `scanSessionTranscriptTree`, `selectSessionTranscriptTreePathNodes` in
// src/config/sessions/transcript-tree.ts@021887e1fbbcf1d997431068678135525b254dce; the tips
// (`sessionBranchTipNodes`: every entry no other entry names as its parent, and the active leaf)
// and their order (active first, then the newest written first, `summarizeSessionBranches`) in
// src/config/sessions/session-accessor.sqlite-message-cut.ts@c11e5d63df35ec51de9d44d9990671e083ab3baa.

/// A session's transcript entries with their parents, and the active leaf.
struct TranscriptTree: Sendable, Hashable {
    /// One entry: the row and the entry it continues (`nil`: a root).
    struct Node: Sendable, Hashable {
        /// The row.
        var message: ChatMessage
        /// The parent entry's id.
        var parentId: String?
        /// Write order within the transcript, from 0.
        var index: Int
    }

    /// Every entry by id.
    private(set) var nodes: [String: Node] = [:]
    /// Entry ids in write order.
    private(set) var order: [String] = []
    /// The active leaf (`nil`: the active path is empty, e.g. after rewinding to the first message).
    private(set) var leafId: String?

    /// An empty transcript.
    init() {}

    /// A transcript that is one path: `rows` oldest first, the last one the leaf.
    init(linear rows: [ChatMessage]) {
        for row in rows { append(row) }
    }

    /// Whether the tree holds `id`.
    func contains(_ id: String) -> Bool { nodes[id] != nil }

    /// Writes `message` as a child of the active leaf and makes it the leaf.
    mutating func append(_ message: ChatMessage) {
        nodes[message.id] = Node(message: message, parentId: leafId, index: order.count)
        order.append(message.id)
        leafId = message.id
    }

    /// The path from the root to `leaf`, oldest first (empty for `nil`).
    func path(to leaf: String?) -> [ChatMessage] {
        var path: [ChatMessage] = []
        var seen: Set<String> = []
        var current = leaf
        while let id = current, let node = nodes[id], seen.insert(id).inserted {
            path.append(node.message)
            current = node.parentId
        }
        return path.reversed()
    }

    /// The active path, oldest first.
    var activePath: [ChatMessage] { path(to: leafId) }

    /// The branch tips: every entry no other entry continues, and the active leaf; the active one
    /// first, then the newest written first.
    var tips: [String] {
        let parents = Set(nodes.values.compactMap(\.parentId))
        let tips = order.filter { $0 == leafId || !parents.contains($0) }
        return tips.sorted { left, right in
            if (left == leafId) != (right == leafId) { return left == leafId }
            return (nodes[left]?.index ?? 0) > (nodes[right]?.index ?? 0)
        }
    }

    /// The parent of `id` (`nil` for a root or an unknown id).
    func parent(of id: String) -> String? { nodes[id]?.parentId }

    /// Moves the active leaf (a rewind or a branch switch); later entries continue from it.
    mutating func moveLeaf(to id: String?) {
        leafId = id
    }
}
