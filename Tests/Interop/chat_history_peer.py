#!/usr/bin/env python3
"""Independent wire checks of the fake Gateway's chat history contract (Python `websockets` +
`cryptography`), run against `harness serve --pairing auto` (the current profile).

    chat_history_peer.py URL [--seed HEX64] [--timeout SECONDS]

The operator connects (approved at once), then makes each check and prints one JSON line:

    {"check": NAME, "ok": true|false, "detail": ...}

Some checks need the scripted agent: the peer prints {"step": "console", "command": LINE} and
waits for one line on its stdin ("go") after the driving test typed LINE on the console.

    {"step": "done", "ok": true}        after the last check (exit status 0 even if a check failed)

The contract (docs/protocol.md §8.2, §8.5): `chat.history` is a closed object without a
`deltaCursor` member; a tail carries an opaque `deltaCursor` that comes back as `cursor` and is
answered `{kind: "delta", ...}` or `{kind: "reset"}`; user rows name their send in
`__openclaw.idempotencyKey = "<key>:user"`; `inputRunIds` gets `inputReceipts` and
`inputConsumptions`; `pendingInputs` lists accepted sends not yet in history; `chat.send`
`queueMode: "interrupt"` acks `interruptedActiveRun: true`; `chat.message.get`, `chat.startup`,
`sessions.patch`, `sessions.reset` and `sessions.compact`.
"""
import time

from gateway_node_peer import Identity, PeerFailure, checked, connect_until_paired, console, emit, main
from gateway_operator_peer import OPERATOR_CLIENT, OPERATOR_SCOPES


def texts(payload):
    rows = (payload or {}).get("messages") or []
    return [((row.get("content") or [{}])[0] or {}).get("text") for row in rows]


def send(text, key, **extra):
    return {"sessionKey": "main", "message": text, "idempotencyKey": key, **extra}


async def run_checks(url, seed, timeout):
    identity = Identity(seed)
    deadline = time.monotonic() + timeout
    session, _ = await connect_until_paired(url, identity, client=OPERATOR_CLIENT, role="operator",
                                            scopes=OPERATOR_SCOPES, deadline=deadline,
                                            on_pairing_required=lambda *_: None)

    async def call(method, params):
        return await session.request(method, params)

    state = {}

    async def delta_cursor_refused():
        answer = await call("chat.history", {"sessionKey": "main", "deltaCursor": "1"})
        error = answer.get("error") or {}
        return (error.get("code") == "INVALID_REQUEST"
                and "unexpected property 'deltaCursor'" in (error.get("message") or "")), answer

    async def envelope_key():
        await call("chat.send", send("one", "py-1"))
        tail = (await call("chat.history", {"sessionKey": "main"})).get("payload") or {}
        row = (tail.get("messages") or [{}])[0]
        state["first_row"] = (row.get("__openclaw") or {}).get("id")
        state["cursor"] = tail.get("deltaCursor")
        envelope = row.get("__openclaw") or {}
        return (envelope.get("idempotencyKey") == "py-1:user" and "idempotencyKey" not in row
                and isinstance(tail.get("deltaCursor"), str) and "kind" not in tail), tail

    async def cursor_delta():
        await call("chat.send", send("two", "py-2"))
        delta = (await call("chat.history", {"sessionKey": "main", "cursor": state["cursor"]})).get("payload") or {}
        state["cursor"] = delta.get("deltaCursor")
        return (delta.get("kind") == "delta" and texts(delta) == ["two", "echo: two"]
                and isinstance(delta.get("deltaCursor"), str) and "sessionInfo" in delta), delta

    async def cursor_of_another_session():
        answer = (await call("chat.history", {"sessionKey": "side", "cursor": state["cursor"]})).get("payload")
        return answer == {"kind": "reset"}, answer

    async def pending_inputs():
        await console("chat-hold")
        for text, key in (("a", "py-a"), ("b", "py-b")):
            ack = (await call("chat.send", send(text, key))).get("payload")
            if ack != {"runId": key, "status": "started"}:
                return False, ack
        answer = (await call("chat.history", {"sessionKey": "main", "inputRunIds": ["py-a", "py-b"]})).get("payload") or {}
        pending = answer.get("pendingInputs") or {}
        return (answer.get("inputReceipts") == [{"runId": "py-a", "state": "pending"}, {"runId": "py-b", "state": "pending"}]
                and pending.get("total") == 2 and [item.get("state") for item in pending.get("items", [])] == ["queued", "queued"]
                and "a" not in texts(answer)), answer

    async def consumed_receipts():
        await console("chat-release --collect")
        answer = (await call("chat.history", {"sessionKey": "main", "inputRunIds": ["py-a", "py-b"]})).get("payload") or {}
        rows = [row for row in answer.get("messages", []) if (row.get("__openclaw") or {}).get("idempotencyKey") == "py-a:user"]
        if len(rows) != 1:
            return False, answer
        event_id = rows[0]["__openclaw"]["id"]
        expected = [{"runId": "py-a", "state": "consumed", "consumedByEventId": event_id},
                    {"runId": "py-b", "state": "consumed", "consumedByEventId": event_id}]
        return (answer.get("inputReceipts") == expected
                and answer.get("inputConsumptions") == [{"runId": "py-a", "consumedByEventId": event_id},
                                                        {"runId": "py-b", "consumedByEventId": event_id}]
                and "pendingInputs" not in answer), answer

    async def interrupt_ack():
        await console("chat-hold")
        await call("chat.send", send("waiting", "py-w"))
        ack = (await call("chat.send", send("now", "py-i", queueMode="interrupt"))).get("payload")
        answer = (await call("chat.history", {"sessionKey": "main"})).get("payload") or {}
        states = [item.get("state") for item in (answer.get("pendingInputs") or {}).get("items", [])]
        return (ack == {"runId": "py-i", "status": "started", "interruptedActiveRun": True}
                and states == ["interrupted"]), {"ack": ack, "states": states}

    async def compaction_resets_cursor():
        cursor = ((await call("chat.history", {"sessionKey": "main"})).get("payload") or {}).get("deltaCursor")
        compacted = (await call("sessions.compact", {"key": "main", "maxLines": 2})).get("payload")
        answer = (await call("chat.history", {"sessionKey": "main", "cursor": cursor})).get("payload")
        return (compacted == {"ok": True, "key": "main", "compacted": True, "kept": 2}
                and answer == {"kind": "reset"}), {"compact": compacted, "history": answer}

    async def message_get():
        missing = (await call("chat.message.get", {"sessionKey": "main", "messageId": "nope"})).get("payload")
        hidden = (await call("chat.message.get", {"sessionKey": "main", "messageId": state["first_row"]})).get("payload")
        tail = (await call("chat.history", {"sessionKey": "main"})).get("payload") or {}
        last = tail["messages"][-1]["__openclaw"]["id"]
        found = (await call("chat.message.get", {"sessionKey": "main", "messageId": last})).get("payload") or {}
        small = (await call("chat.message.get", {"sessionKey": "main", "messageId": last, "maxChars": 1})).get("payload")
        return (missing == {"ok": False, "unavailableReason": "not_found"}
                and hidden == {"ok": False, "unavailableReason": "not_visible"}
                and found.get("ok") is True and small == {"ok": False, "unavailableReason": "oversized"}), \
            {"missing": missing, "hidden": hidden, "small": small}

    async def startup():
        answer = (await call("chat.startup", {"sessionKey": "main", "limit": 1})).get("payload") or {}
        return len(answer.get("messages") or []) == 1 and isinstance(answer.get("deltaCursor"), str), answer

    async def patch():
        patched = (await call("sessions.patch", {"key": "main", "label": "Python"})).get("payload") or {}
        unknown = (await call("sessions.patch", {"key": "main", "nickname": "x"})).get("error") or {}
        return (patched.get("ok") is True and (patched.get("entry") or {}).get("label") == "Python"
                and unknown.get("code") == "INVALID_REQUEST"), {"patched": patched, "unknown": unknown}

    async def reset():
        before = ((await call("chat.history", {"sessionKey": "main"})).get("payload") or {})
        reset_answer = (await call("sessions.reset", {"key": "main"})).get("payload") or {}
        answer = (await call("chat.history", {"sessionKey": "main", "cursor": before.get("deltaCursor")})).get("payload")
        return (reset_answer.get("ok") is True
                and (reset_answer.get("entry") or {}).get("sessionId") != before.get("sessionId")
                and answer == {"kind": "reset"}), {"reset": reset_answer, "history": answer}

    async def run_id_bounds():
        many = (await call("chat.history", {"sessionKey": "main", "inputRunIds": [f"r{i}" for i in range(51)]})).get("error") or {}
        twice = (await call("chat.history", {"sessionKey": "main", "inputRunIds": ["r", "r"]})).get("error") or {}
        return many.get("code") == "INVALID_REQUEST" and twice.get("code") == "INVALID_REQUEST", {"many": many, "twice": twice}

    for name, body in (("delta-cursor-refused", delta_cursor_refused), ("envelope-key", envelope_key),
                       ("cursor-delta", cursor_delta), ("cursor-of-another-session", cursor_of_another_session),
                       ("pending-inputs", pending_inputs), ("consumed-receipts", consumed_receipts),
                       ("interrupt-ack", interrupt_ack), ("compaction-resets-cursor", compaction_resets_cursor),
                       ("message-get", message_get), ("startup", startup), ("patch", patch), ("reset", reset),
                       ("run-id-bounds", run_id_bounds)):
        await checked(name, body)
    await session.close()


if __name__ == "__main__":
    main(run_checks)
