#!/usr/bin/env python3
"""Independent wire checks of the fake Gateway's session methods (Python `websockets` +
`cryptography`), run against `harness serve --pairing auto` (the current profile).

    sessions_peer.py URL [--seed HEX64] [--timeout SECONDS]

Two operators connect (approved at once): one with every operator scope, subscribed to
`sessions.changed` with `sessions.subscribe`, and one with only `operator.read` and
`operator.write`. Each check prints one JSON line:

    {"check": NAME, "ok": true|false, "detail": ...}

One check needs the console: the peer prints {"step": "console", "command": LINE} and waits for
one line on its stdin ("go") after the driving test typed LINE on the console.

    {"step": "done", "ok": true}        after the last check (exit status 0 even if a check failed)

The contract (docs/protocol.md §8.6): `sessions.delete` has a closed params schema; it needs
`operator.admin`, except an archive-then-delete (`archivedOnly: true` with only `key`,
`agentId`, `deleteTranscript`, `expectedSessionId`), which `operator.write` may do; the main
session is refused, so is `archivedOnly` on a session that is not archived and a stale
`expectedSessionId` (`details.reason: "session-changed"`); a deletion answers
`{ok: true, key, deleted, archived}` and, when a session was removed, sends
`sessions.changed {sessionKey, agentId, reason: "delete", ts}` (no session row) to the
`sessions.subscribe` subscribers; the session leaves `sessions.list`. The session group catalog
(§8.6): `sessions.groups.list/put/rename/delete` with closed schemas, `{groups: [{name,
position}], sectionOrder}` answers, member sessions followed through their `category`, the
refusals (a put dropping a group with members, an unknown group) and `sessions.changed {reason:
"groups", ts}` after each change (a rename or delete sends it also when refused).
`sessions.branches.list` (§8.6): closed `{sessionKey, agentId?}`; `{branches: []}` for a key with
no transcript (unknown, or just reset); otherwise the tip of the transcript as
`{leafEntryId, headline, messageCount, updatedAt, active}` (headline: the newest message's text,
whitespace collapsed, cut to 119 characters and `…`). `sessions.fork {sessionKey, agentId?,
entryId}` (closed): a new session `agent:main:dashboard:<uuid>` holding the transcript before the
user message `entryId` (same entry ids), `{sessionKey, editorText}` (the cut message's text),
`sessions.changed {sessionKey: <fork>, reason: "fork"}`; refusals `session not found: <key>`,
`message entry not found: <id>`, `entry is not a user message: <id>`.
`sessions.rewind {sessionKey, agentId?, entryId}` and `sessions.branches.switch {sessionKey,
agentId?, leafEntryId}` (closed, `operator.admin`): a rewind answers `{editorText}` and leaves the
active path at the cut message's parent, the old tip listed as a second, inactive branch (the
active branch first, then the newest tip first); a switch answers `{}` and makes a tip active;
`sessions.changed` reasons `rewind` / `branch-switch`; refusals `message entry is not on the
active path`, `branch entry not found`, `entry is not a branch tip`, `branch is already active`.
`sessions.create` (closed; `operator.admin` for `execNode`): `{ok, key, sessionId, entry,
runStarted, resolved}`, a dashboard key without `key`, a first `message` started as a run (the
ack's `runId`/`status` in the answer, `sessions.changed` reasons `create` then `send`), `fork`
copying the parent's transcript; refusals `fork requires parentSessionKey`, `unknown parent
session`, `sessions.create cwd must be absolute`, `sessions.create key must differ from
parentSessionKey`. `sessions.observer.visibility {visible}` (closed) answers `{ok: true}`.
"""
import re
import time

from gateway_node_peer import Identity, PeerFailure, checked, connect_until_paired, console, emit, main
from gateway_operator_peer import OPERATOR_CLIENT, OPERATOR_SCOPES

WRITE_SCOPES = ["operator.read", "operator.write"]


async def run_checks(url, seed, timeout):
    deadline = time.monotonic() + timeout
    admin, _ = await connect_until_paired(url, Identity(seed), client=OPERATOR_CLIENT, role="operator",
                                          scopes=OPERATOR_SCOPES, deadline=deadline,
                                          on_pairing_required=lambda *_: None)
    writer_seed = bytes((byte + 1) % 256 for byte in seed)
    writer, _ = await connect_until_paired(url, Identity(writer_seed), client=OPERATOR_CLIENT, role="operator",
                                           scopes=WRITE_SCOPES, deadline=deadline,
                                           on_pairing_required=lambda *_: None)
    subscribed = (await admin.request("sessions.subscribe", {})).get("payload")
    if subscribed != {"subscribed": True}:
        raise PeerFailure(f"sessions.subscribe answered {subscribed}")

    async def create(key):
        ack = await writer.request("chat.send", {"sessionKey": key, "message": f"hello {key}", "idempotencyKey": f"py-{key}"})
        if not ack.get("ok"):
            raise PeerFailure(f"chat.send to {key} failed: {ack}")

    def keys(listing):
        return [row.get("key") for row in ((listing.get("payload") or {}).get("sessions") or [])]

    def error(answer):
        return answer.get("error") or {}

    async def schema_closed():
        answer = error(await admin.request("sessions.delete", {"key": "side", "nickname": "x"}))
        typed = error(await admin.request("sessions.delete", {"key": "side", "deleteTranscript": "yes"}))
        return (answer.get("code") == "INVALID_REQUEST"
                and answer.get("message") == "invalid sessions.delete params: at root: unexpected property 'nickname'"
                and typed.get("code") == "INVALID_REQUEST" and "deleteTranscript" in (typed.get("message") or "")), \
            {"unknown": answer, "typed": typed}

    async def write_scope():
        await create("side")
        plain = error(await writer.request("sessions.delete", {"key": "side"}))
        raised = error(await writer.request("sessions.delete", {"key": "side", "archivedOnly": True,
                                                                "expectedLifecycleRevision": "r1"}))
        archive_gated = error(await writer.request("sessions.delete", {"key": "side", "archivedOnly": True}))
        return ("operator.admin" in (plain.get("message") or "") and "operator.admin" in (raised.get("message") or "")
                and archive_gated.get("code") == "INVALID_REQUEST"
                and archive_gated.get("message") == "Session side is not archived. Archive it first, then delete it."), \
            {"plain": plain, "raised": raised, "archiveGated": archive_gated}

    async def main_refused():
        answer = error(await admin.request("sessions.delete", {"key": "main"}))
        return (answer.get("code") == "INVALID_REQUEST"
                and answer.get("message") == "Cannot delete the main session (main)."), answer

    async def stale_guard():
        answer = error(await admin.request("sessions.delete", {"key": "side", "expectedSessionId": "session-other"}))
        listing = await admin.request("sessions.list", {})
        return (answer.get("code") == "INVALID_REQUEST"
                and answer.get("message") == "Session side changed before deletion. Retry."
                and answer.get("details") == {"reason": "session-changed"} and "side" in keys(listing)), answer

    async def delete_and_event():
        answer = (await admin.request("sessions.delete", {"key": "side", "expectedSessionId": "session-side"})).get("payload")
        event = (await admin.event("sessions.changed", lambda p: (p or {}).get("reason") == "delete")).get("payload") or {}
        listing = await admin.request("sessions.list", {})
        return (answer == {"ok": True, "key": "side", "deleted": True, "archived": []}
                and event.get("sessionKey") == "side" and event.get("agentId") == "main"
                and isinstance(event.get("ts"), int) and "sessionId" not in event
                and "side" not in keys(listing)), {"answer": answer, "event": event, "sessions": keys(listing)}

    async def delete_missing():
        answer = (await admin.request("sessions.delete", {"key": "ghost"})).get("payload")
        await admin.request("sessions.patch", {"key": "main", "label": "after ghost"})
        # The next sessions.changed is the patch: deleting nothing sent no event.
        event = (await admin.event("sessions.changed")).get("payload") or {}
        return (answer == {"ok": True, "key": "ghost", "deleted": False, "archived": []}
                and event.get("reason") == "patch"), {"answer": answer, "next": event}

    async def archive_then_delete():
        await create("old")
        patched = await writer.request("sessions.patch", {"key": "old", "archived": True})
        answer = (await writer.request("sessions.delete", {"key": "old", "archivedOnly": True})).get("payload")
        event = (await admin.event("sessions.changed", lambda p: (p or {}).get("reason") == "delete")).get("payload") or {}
        return (patched.get("ok") is True and answer == {"ok": True, "key": "old", "deleted": True, "archived": []}
                and event.get("sessionKey") == "old"), {"patch": patched, "answer": answer, "event": event}

    async def deleted_elsewhere():
        await create("third")
        await console("session-delete third")
        event = (await admin.event("sessions.changed", lambda p: (p or {}).get("reason") == "delete")).get("payload") or {}
        listing = await admin.request("sessions.list", {})
        return (event.get("sessionKey") == "third" and "third" not in keys(listing)), {"event": event, "sessions": keys(listing)}

    def is_groups_event(payload):
        return (payload or {}).get("reason") == "groups"

    async def groups_schema():
        extra = error(await admin.request("sessions.groups.list", {"x": 1}))
        missing = error(await writer.request("sessions.groups.put", {}))
        long = error(await writer.request("sessions.groups.rename", {"name": "a", "to": "x" * 65}))
        return (extra.get("message") == "invalid sessions.groups.list params: at root: unexpected property 'x'"
                and missing.get("message") == "invalid sessions.groups.put params: at root: must have required property 'names'"
                and long.get("code") == "INVALID_REQUEST"), {"extra": extra, "missing": missing, "long": long}

    async def groups_put():
        answer = (await writer.request("sessions.groups.put", {"names": [" Work ", "Home", "Work"],
                                                               "sectionOrder": ["groups", "category:Work", "category:Nope", "bogus"]})).get("payload")
        event = (await admin.event("sessions.changed", is_groups_event)).get("payload") or {}
        listing = (await admin.request("sessions.groups.list", {})).get("payload")
        groups = [{"name": "Work", "position": 0}, {"name": "Home", "position": 1}]
        return (answer == {"ok": True, "groups": groups, "sectionOrder": ["groups", "category:Work"]}
                and "sessionKey" not in event and isinstance(event.get("ts"), int)
                and listing == {"groups": groups, "sectionOrder": ["groups", "category:Work"]}), \
            {"answer": answer, "event": event, "list": listing}

    async def groups_rename():
        await create("g1")
        await writer.request("sessions.patch", {"key": "g1", "category": "Work"})
        answer = (await writer.request("sessions.groups.rename", {"name": "Work", "to": "Office"})).get("payload")
        await admin.event("sessions.changed", is_groups_event)
        rows = ((await admin.request("sessions.list", {})).get("payload") or {}).get("sessions") or []
        row = next((r for r in rows if r.get("key") == "g1"), {})
        unknown = error(await writer.request("sessions.groups.rename", {"name": "Missing", "to": "X"}))
        after_refusal = (await admin.event("sessions.changed", is_groups_event)).get("payload") or {}
        return (answer == {"ok": True, "groups": [{"name": "Office", "position": 0}, {"name": "Home", "position": 1}],
                           "sectionOrder": ["groups", "category:Office"], "updatedSessions": 1}
                and row.get("category") == "Office"
                and unknown == {"code": "INVALID_REQUEST", "message": "unknown session group: Missing"}
                and after_refusal.get("reason") == "groups"), {"answer": answer, "row": row, "unknown": unknown}

    async def groups_put_keeps_members():
        answer = error(await writer.request("sessions.groups.put", {"names": ["Home"]}))
        return (answer.get("code") == "INVALID_REQUEST"
                and "cannot drop groups that still have member sessions: \"Office\" (1)" in (answer.get("message") or "")), answer

    async def groups_delete():
        answer = (await writer.request("sessions.groups.delete", {"name": "Office"})).get("payload")
        await admin.event("sessions.changed", is_groups_event)
        rows = ((await admin.request("sessions.list", {})).get("payload") or {}).get("sessions") or []
        row = next((r for r in rows if r.get("key") == "g1"), {})
        unknown = error(await writer.request("sessions.groups.delete", {"name": "Office"}))
        await admin.event("sessions.changed", is_groups_event)
        return (answer == {"ok": True, "groups": [{"name": "Home", "position": 0}], "sectionOrder": ["groups"],
                           "updatedSessions": 1}
                and "category" not in row
                and unknown == {"code": "UNAVAILABLE", "message": "unknown session group: Office"}), \
            {"answer": answer, "row": row, "unknown": unknown}

    async def groups_elsewhere():
        await console('session-groups ["Home","Later"]')
        event = (await admin.event("sessions.changed", is_groups_event)).get("payload") or {}
        listing = (await writer.request("sessions.groups.list", {})).get("payload") or {}
        return ([g.get("name") for g in listing.get("groups") or []] == ["Home", "Later"]
                and event.get("reason") == "groups"), {"event": event, "list": listing}

    async def branches_list():
        extra = error(await writer.request("sessions.branches.list", {"sessionKey": "main", "x": 1}))
        missing = error(await writer.request("sessions.branches.list", {}))
        unknown = (await writer.request("sessions.branches.list", {"sessionKey": "nowhere"})).get("payload")
        text = " lots   of\n space " + "y" * 200
        ack = await writer.request("chat.send", {"sessionKey": "twig", "message": text, "idempotencyKey": "py-twig"})
        waited = await admin.request("agent.wait", {"runId": "py-twig", "timeoutMs": 30000})
        history = (await writer.request("chat.history", {"sessionKey": "twig"})).get("payload") or {}
        last_id = ((history.get("messages") or [{}])[-1].get("__openclaw") or {}).get("id")
        listed = (await writer.request("sessions.branches.list", {"sessionKey": " twig "})).get("payload") or {}
        branches = listed.get("branches") or []
        branch = branches[0] if branches else {}
        headline = "echo: lots of space " + "y" * 99 + "\u2026"
        await admin.request("sessions.reset", {"key": "twig"})
        after_reset = (await writer.request("sessions.branches.list", {"sessionKey": "twig"})).get("payload")
        return (extra.get("message") == "invalid sessions.branches.list params: at root: unexpected property 'x'"
                and missing.get("message") == "invalid sessions.branches.list params: at root: must have required property 'sessionKey'"
                and unknown == {"branches": []} and ack.get("ok") and waited.get("ok")
                and len(branches) == 1 and set(branch) == {"leafEntryId", "headline", "messageCount", "updatedAt", "active"}
                and branch.get("leafEntryId") == last_id and branch.get("headline") == headline
                and branch.get("messageCount") == 2 and branch.get("active") is True
                and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", branch.get("updatedAt") or "")
                and after_reset == {"branches": []}), \
            {"extra": extra, "missing": missing, "unknown": unknown, "listed": listed, "lastId": last_id,
             "afterReset": after_reset}

    async def fork():
        missing = error(await writer.request("sessions.fork", {"sessionKey": "stem"}))
        unknown = error(await writer.request("sessions.fork", {"sessionKey": "nowhere", "entryId": "x"}))
        for n, text in enumerate(("first", "second")):
            await writer.request("chat.send", {"sessionKey": "stem", "message": text, "idempotencyKey": f"py-stem-{n}"})
            await admin.request("agent.wait", {"runId": f"py-stem-{n}", "timeoutMs": 30000})
        rows = ((await writer.request("chat.history", {"sessionKey": "stem"})).get("payload") or {}).get("messages") or []
        ids = [(row.get("__openclaw") or {}).get("id") for row in rows]
        no_entry = error(await writer.request("sessions.fork", {"sessionKey": "stem", "entryId": "nope"}))
        not_user = error(await writer.request("sessions.fork", {"sessionKey": "stem", "entryId": ids[-1]}))
        answer = (await writer.request("sessions.fork", {"sessionKey": "stem", "entryId": ids[2]})).get("payload") or {}
        new_key = answer.get("sessionKey") or ""
        event = (await admin.event("sessions.changed", lambda p: (p or {}).get("reason") == "fork")).get("payload") or {}
        forked = ((await writer.request("chat.history", {"sessionKey": new_key})).get("payload") or {}).get("messages") or []
        source = ((await writer.request("chat.history", {"sessionKey": "stem"})).get("payload") or {}).get("messages") or []
        listing = await writer.request("sessions.list", {})
        return (missing.get("message") == "invalid sessions.fork params: at root: must have required property 'entryId'"
                and unknown.get("code") == "INVALID_REQUEST" and unknown.get("message") == "session not found: nowhere"
                and len(ids) == 4 and no_entry.get("message") == "message entry not found: nope"
                and not_user.get("message") == f"entry is not a user message: {ids[-1]}"
                and set(answer) == {"sessionKey", "editorText"} and answer.get("editorText") == "second"
                and re.fullmatch(r"agent:main:dashboard:[0-9a-f-]{36}", new_key)
                and event.get("sessionKey") == new_key
                and [(row.get("__openclaw") or {}).get("id") for row in forked] == ids[:2]
                and len(source) == 4 and new_key in keys(listing)), \
            {"missing": missing, "unknown": unknown, "ids": ids, "noEntry": no_entry, "notUser": not_user,
             "answer": answer, "event": event, "forked": [(r.get("__openclaw") or {}).get("id") for r in forked]}

    def entry_ids(rows):
        return [(row.get("__openclaw") or {}).get("id") for row in rows]

    async def history_ids(key):
        rows = ((await writer.request("chat.history", {"sessionKey": key})).get("payload") or {}).get("messages") or []
        return entry_ids(rows)

    async def branch_tips(key):
        branches = ((await writer.request("sessions.branches.list", {"sessionKey": key})).get("payload") or {}).get("branches") or []
        return [(b.get("leafEntryId"), b.get("active"), b.get("messageCount")) for b in branches]

    tree = {}

    async def rewind():
        extra = error(await admin.request("sessions.rewind", {"sessionKey": "bough", "entryId": "x", "x": 1}))
        missing = error(await admin.request("sessions.rewind", {"sessionKey": "bough"}))
        scope = error(await writer.request("sessions.rewind", {"sessionKey": "bough", "entryId": "x"}))
        unknown = error(await admin.request("sessions.rewind", {"sessionKey": "nowhere", "entryId": "x"}))
        for n, text in enumerate(("first", "second")):
            await writer.request("chat.send", {"sessionKey": "bough", "message": text, "idempotencyKey": f"py-bough-{n}"})
            await admin.request("agent.wait", {"runId": f"py-bough-{n}", "timeoutMs": 30000})
        ids = await history_ids("bough")
        tree["ids"] = ids
        not_user = error(await admin.request("sessions.rewind", {"sessionKey": "bough", "entryId": ids[-1]}))
        answer = (await admin.request("sessions.rewind", {"sessionKey": " bough ", "entryId": ids[2]})).get("payload")
        event = (await admin.event("sessions.changed", lambda p: (p or {}).get("reason") == "rewind")).get("payload") or {}
        after = await history_ids("bough")
        tips = await branch_tips("bough")
        off_path = error(await admin.request("sessions.rewind", {"sessionKey": "bough", "entryId": ids[2]}))
        hidden = (await writer.request("chat.message.get", {"sessionKey": "bough", "messageId": ids[3]})).get("payload")
        return (extra.get("message") == "invalid sessions.rewind params: at root: unexpected property 'x'"
                and missing.get("message") == "invalid sessions.rewind params: at root: must have required property 'entryId'"
                and "operator.admin" in (scope.get("message") or "")
                and unknown == {"code": "INVALID_REQUEST", "message": "session not found: nowhere"}
                and len(ids) == 4 and not_user.get("message") == f"entry is not a user message: {ids[-1]}"
                and answer == {"editorText": "second"} and event.get("sessionKey") == "bough"
                and after == ids[:2] and tips == [(ids[1], True, 2), (ids[3], False, 4)]
                and off_path.get("message") == f"message entry is not on the active path: {ids[2]}"
                and hidden == {"ok": False, "unavailableReason": "not_visible"}), \
            {"hidden": hidden, "extra": extra, "missing": missing, "scope": scope, "unknown": unknown, "ids": ids, "notUser": not_user,
             "answer": answer, "event": event, "after": after, "tips": tips, "offPath": off_path}

    async def branches_switch():
        ids = tree.get("ids") or ["?"] * 4
        extra = error(await admin.request("sessions.branches.switch", {"sessionKey": "bough", "entryId": ids[3]}))
        scope = error(await writer.request("sessions.branches.switch", {"sessionKey": "bough", "leafEntryId": ids[3]}))
        no_branch = error(await admin.request("sessions.branches.switch", {"sessionKey": "bough", "leafEntryId": "nope"}))
        not_tip = error(await admin.request("sessions.branches.switch", {"sessionKey": "bough", "leafEntryId": ids[0]}))
        answer = (await admin.request("sessions.branches.switch", {"sessionKey": "bough", "leafEntryId": ids[3]})).get("payload")
        event = (await admin.event("sessions.changed", lambda p: (p or {}).get("reason") == "branch-switch")).get("payload") or {}
        after = await history_ids("bough")
        tips = await branch_tips("bough")
        again = error(await admin.request("sessions.branches.switch", {"sessionKey": "bough", "leafEntryId": ids[3]}))
        return (extra.get("message") == "invalid sessions.branches.switch params: at root: unexpected property 'entryId'"
                and "operator.admin" in (scope.get("message") or "")
                and no_branch.get("message") == "branch entry not found: nope"
                and not_tip.get("message") == f"entry is not a branch tip: {ids[0]}"
                and answer == {} and event.get("sessionKey") == "bough"
                # Nothing was written after the rewind: its leaf is no tip once inactive (one branch again).
                and after == ids and tips == [(ids[3], True, 4)]
                and again == {"code": "INVALID_REQUEST", "message": f"branch is already active: {ids[3]}"}), \
            {"extra": extra, "scope": scope, "noBranch": no_branch, "notTip": not_tip, "answer": answer,
             "event": event, "after": after, "tips": tips, "again": again}

    async def tree_elsewhere():
        ids = tree.get("ids") or ["?"] * 4
        await console(f"session-rewind bough {ids[2]}")
        event = (await admin.event("sessions.changed", lambda p: (p or {}).get("reason") == "rewind")).get("payload") or {}
        after = await history_ids("bough")
        # A third branch: a message after the rewind, then rewound too; inactive tips newest first.
        await writer.request("chat.send", {"sessionKey": "bough", "message": "third", "idempotencyKey": "py-bough-3"})
        await admin.request("agent.wait", {"runId": "py-bough-3", "timeoutMs": 30000})
        third = await history_ids("bough")
        await admin.request("sessions.rewind", {"sessionKey": "bough", "entryId": third[2]})
        tips = await branch_tips("bough")
        return (event.get("sessionKey") == "bough" and after == ids[:2] and len(third) == 4
                and tips == [(ids[1], True, 2), (third[3], False, 4), (ids[3], False, 4)]), \
            {"event": event, "after": after, "third": third, "tips": tips}

    def is_create(key=None):
        return lambda p: (p or {}).get("reason") == "create" and (key is None or (p or {}).get("sessionKey") == key)

    async def create_session():
        extra = error(await writer.request("sessions.create", {"nickname": "x"}))
        scope = error(await writer.request("sessions.create", {"execNode": "node-1"}))
        orphan = error(await writer.request("sessions.create", {"fork": True}))
        unknown = error(await writer.request("sessions.create", {"parentSessionKey": "nowhere"}))
        relative = error(await writer.request("sessions.create", {"cwd": "work"}))
        plain = (await writer.request("sessions.create", {"label": "Plain"})).get("payload") or {}
        plain_event = (await admin.event("sessions.changed", is_create())).get("payload") or {}
        started = (await writer.request("sessions.create", {"key": "sprout", "message": "hello"})).get("payload") or {}
        created_event = (await admin.event("sessions.changed", is_create("sprout"))).get("payload") or {}
        send_event = (await admin.event("sessions.changed", lambda p: (p or {}).get("reason") == "send")).get("payload") or {}
        waited = await admin.request("agent.wait", {"runId": started.get("runId") or "?", "timeoutMs": 30000})
        rows = ((await writer.request("chat.history", {"sessionKey": "sprout"})).get("payload") or {}).get("messages") or []
        texts = [((row.get("content") or [{}])[0]).get("text") for row in rows]
        key = plain.get("key") or ""
        return (extra.get("message") == "invalid sessions.create params: at root: unexpected property 'nickname'"
                and "operator.admin" in (scope.get("message") or "")
                and orphan == {"code": "INVALID_REQUEST", "message": "fork requires parentSessionKey"}
                and unknown == {"code": "INVALID_REQUEST", "message": "unknown parent session: nowhere"}
                and relative == {"code": "INVALID_REQUEST", "message": "sessions.create cwd must be absolute"}
                and plain.get("ok") is True and re.fullmatch(r"agent:main:dashboard:[0-9a-f-]{36}", key)
                and plain.get("runStarted") is False and isinstance(plain.get("sessionId"), str)
                and (plain.get("entry") or {}).get("label") == "Plain" and set(plain.get("resolved") or {}) == {"modelProvider", "model"}
                and plain_event.get("sessionKey") == key and plain_event.get("agentId") == "main"
                and started.get("key") == "sprout" and started.get("runStarted") is True and started.get("status") == "started"
                and isinstance(started.get("runId"), str) and created_event.get("sessionKey") == "sprout"
                and send_event.get("sessionKey") == "sprout" and waited.get("ok") and texts == ["hello", "echo: hello"]), \
            {"extra": extra, "scope": scope, "orphan": orphan, "unknown": unknown, "relative": relative, "plain": plain,
             "plainEvent": plain_event, "started": started, "createdEvent": created_event, "sendEvent": send_event,
             "texts": texts}

    async def create_fork():
        answer = (await writer.request("sessions.create", {"key": "cutting", "parentSessionKey": "sprout", "fork": True})).get("payload") or {}
        await admin.event("sessions.changed", is_create("cutting"))
        same = error(await writer.request("sessions.create", {"key": "sprout", "parentSessionKey": "sprout"}))
        return ((answer.get("entry") or {}).get("forkedFromParent") is True
                and (answer.get("entry") or {}).get("parentSessionKey") == "sprout"
                and await history_ids("cutting") == await history_ids("sprout")
                and same.get("message") == "sessions.create key must differ from parentSessionKey"), {"answer": answer, "same": same}

    async def created_elsewhere():
        await console('session-create {"key":"console-made","label":"From the console"}')
        event = (await admin.event("sessions.changed", is_create("console-made"))).get("payload") or {}
        listing = await admin.request("sessions.list", {})
        return (event.get("label") == "From the console" and "console-made" in keys(listing)), {"event": event}

    async def observer_visibility():
        missing = error(await writer.request("sessions.observer.visibility", {}))
        typed = error(await writer.request("sessions.observer.visibility", {"visible": "yes"}))
        shown = (await writer.request("sessions.observer.visibility", {"visible": True})).get("payload")
        hidden = (await admin.request("sessions.observer.visibility", {"visible": False})).get("payload")
        return (missing.get("message") == "invalid sessions.observer.visibility params: at root: must have required property 'visible'"
                and typed.get("code") == "INVALID_REQUEST" and shown == {"ok": True} and hidden == {"ok": True}), \
            {"missing": missing, "typed": typed, "shown": shown, "hidden": hidden}

    for name, body in (("schema-closed", schema_closed), ("write-scope", write_scope), ("main-refused", main_refused),
                       ("stale-guard", stale_guard), ("delete-and-event", delete_and_event),
                       ("delete-missing", delete_missing), ("archive-then-delete", archive_then_delete),
                       ("deleted-elsewhere", deleted_elsewhere), ("groups-schema", groups_schema),
                       ("groups-put", groups_put), ("groups-rename", groups_rename),
                       ("groups-put-keeps-members", groups_put_keeps_members), ("groups-delete", groups_delete),
                       ("groups-elsewhere", groups_elsewhere), ("branches-list", branches_list),
                       ("fork", fork), ("rewind", rewind), ("branches-switch", branches_switch),
                       ("tree-elsewhere", tree_elsewhere), ("create", create_session), ("create-fork", create_fork),
                       ("created-elsewhere", created_elsewhere), ("observer-visibility", observer_visibility)):
        await checked(name, body)
    await admin.close()
    await writer.close()


if __name__ == "__main__":
    main(run_checks)
