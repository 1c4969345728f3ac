#!/usr/bin/env python3
"""An independent OpenClaw node and operator (Python `websockets` + `cryptography`) that check the
Gateway's node surface approval on the wire, against `harness serve --pairing auto`.

    gateway_surface_peer.py URL [--seed HEX64] [--timeout SECONDS]

A paired iPhone node reconnects with a widened command surface. The peer checks, one JSON line
per check on stdout ({"check": NAME, "ok": BOOL, "detail": ...}):

    widened-requested       node.pair.requested reaches the operator with the widened surface
    listed                  node.pair.list shows the request (isRepair) and the approved surface
    withheld-refused        an invoke of the withheld command is refused as pending approval
                            and never reaches the node
    approved-served         an invoke of an approved command reaches the node and is answered
    same-surface-kept       a reconnect with the same surface keeps the request, announces nothing
    superseded              another widened surface: node.pair.resolved rejected for the old id,
                            then node.pair.requested with a new id; node.pair.list shows only it
    superseded-unknown      node.pair.approve of the superseded id answers "unknown requestId"
    rejected                node.pair.reject: node.pair.resolved rejected, nothing pending
    approved                node.pair.approve: node.pair.resolved approved, the approved surface
    approved-effective      after the next reconnect the approved command reaches the node
    effective-listed        a reconnect that also declares refused commands (sms.send, camera.snap,
                            canvas.present) opens nothing, and node.describe / node.list show
                            only the allowed commands

then {"step": "done", "ok": true} or {"step": "error", "message": ...} (exit status 1).
"""
import json
import time

from gateway_node_peer import Identity, PeerFailure, Session, emit, main, open_operator

IPHONE_CLIENT = {"id": "openclaw-ios", "displayName": "Python surface iPhone", "version": "2026.8.1",
                 "platform": "iOS 18.4.0", "deviceFamily": "iPhone", "mode": "node"}
OPERATOR_CLIENT = {"id": "cli", "displayName": "Python surface operator", "version": "2026.8.1",
                   "platform": "linux", "mode": "cli"}
APPROVED = ["device.info", "location.get"]
WIDENED = APPROVED + ["contacts.search"]
WIDER = WIDENED + ["calendar.events"]
REFUSED = ["sms.send", "camera.snap", "canvas.present"]


def check(name, ok, detail):
    emit(check=name, ok=bool(ok), detail=detail)


class Peer:
    def __init__(self, url, seed, timeout):
        self.url = url
        self.deadline = time.monotonic() + timeout
        self.node_identity = Identity(seed)
        self.node_id = self.node_identity.device_id
        self.node = None
        self.operator = None
        self.counter = 0

    def remaining(self):
        return max(1, self.deadline - time.monotonic())

    async def connect_node(self, commands):
        if self.node is not None:
            await self.node.close()
        self.node = await Session.open(self.url)
        hello = await self.node.connect(self.node_identity, client=IPHONE_CLIENT, role="node", scopes=[],
                                        caps=["device", "location"], commands=commands)
        if not hello.get("ok"):
            raise PeerFailure(f"the node was refused (serve needs --pairing auto): {hello.get('error')}")

    async def pair_events(self):
        """The node.pair.* events the operator received up to the answer to its own request (frames
        on one socket arrive in order, so everything broadcast before is in)."""
        await self.operator.request("node.pair.list", {})
        events = [frame for frame in self.operator.events if frame.get("event", "").startswith("node.pair.")]
        self.operator.events = [frame for frame in self.operator.events if frame not in events]
        return events

    async def invoke(self, command):
        self.counter += 1
        return await self.operator.request("node.invoke", {
            "nodeId": self.node_id, "command": command, "idempotencyKey": f"surface-{self.counter}"})

    async def invoke_answered(self, command):
        """Invokes `command`, answers it on the node, returns (request payload, response)."""
        self.counter += 1
        request_id = f"surface-req-{self.counter}"
        await self.operator.ws.send(json.dumps({"type": "req", "id": request_id, "method": "node.invoke", "params": {
            "nodeId": self.node_id, "command": command, "idempotencyKey": f"surface-{self.counter}"}}))
        request = (await self.node.event("node.invoke.request", timeout=self.remaining()))["payload"]
        await self.node.request("node.invoke.result", {"id": request["id"], "nodeId": self.node_id, "ok": True,
                                                       "payloadJSON": json.dumps({"served": request.get("command")})})
        while True:
            frame = await self.operator.next_frame(self.remaining())
            if frame.get("type") == "res" and frame.get("id") == request_id:
                return request, frame
            if frame.get("type") == "event":
                self.operator.events.append(frame)

    async def pending_list(self):
        listed = await self.operator.request("node.pair.list", {})
        payload = listed.get("payload") or {}
        return payload.get("pending") or [], payload.get("paired") or []


async def run_surface(url, seed, timeout):
    peer = Peer(url, seed, timeout)
    peer.operator = await open_operator(url, Identity(bytes(31) + b"\x0b"), client=OPERATOR_CLIENT,
                                        scopes=["operator.read", "operator.write", "operator.pairing"])
    node_id = peer.node_id

    # First connect: the surface is approved with the device.
    await peer.connect_node(APPROVED)
    await peer.pair_events()

    # The same node reconnects with one more command: admitted, the widening waits.
    await peer.connect_node(WIDENED)
    events = await peer.pair_events()
    requested = [frame["payload"] for frame in events if frame.get("event") == "node.pair.requested"]
    first = requested[0] if len(requested) == 1 else {}
    check("widened-requested",
          len(events) == 1 and first.get("nodeId") == node_id and first.get("commands") == WIDENED
          and first.get("isRepair") is True and isinstance(first.get("requestId"), str),
          events)
    first_id = first.get("requestId")

    pending, paired = await peer.pending_list()
    mine = [entry for entry in paired if entry.get("nodeId") == node_id]
    check("listed",
          [entry.get("requestId") for entry in pending] == [first_id]
          and mine and mine[0].get("commands") == APPROVED,
          {"pending": pending, "paired": mine})

    response = await peer.invoke("contacts.search")
    error = response.get("error") or {}
    await peer.node.request("node.pending.pull", {})
    delivered = [frame for frame in peer.node.events if frame.get("event") == "node.invoke.request"]
    check("withheld-refused",
          error.get("code") == "INVALID_REQUEST"
          and error.get("details") == {"reason": "command not declared by node", "command": "contacts.search"}
          and "is pending approval" in error.get("message", "") and not delivered,
          {"error": error, "delivered": delivered})

    request, answer = await peer.invoke_answered("device.info")
    check("approved-served", request.get("command") == "device.info" and answer.get("ok") is True, answer)

    # The same surface again (another order): the request stays and nothing is announced.
    await peer.connect_node(list(reversed(WIDENED)))
    events = await peer.pair_events()
    pending, _ = await peer.pending_list()
    check("same-surface-kept", not events and [entry.get("requestId") for entry in pending] == [first_id],
          {"events": events, "pending": pending})

    # Yet another widened surface supersedes the waiting request.
    await peer.connect_node(WIDER)
    events = await peer.pair_events()
    names = [frame.get("event") for frame in events]
    resolved = events[0].get("payload") if events else {}
    second = events[1].get("payload") if len(events) > 1 else {}
    second_id = second.get("requestId")
    pending, _ = await peer.pending_list()
    check("superseded",
          names == ["node.pair.resolved", "node.pair.requested"]
          and resolved == {"requestId": first_id, "nodeId": node_id, "decision": "rejected", "ts": resolved.get("ts")}
          and isinstance(resolved.get("ts"), int)
          and second_id not in (None, first_id) and second.get("commands") == WIDER
          and [entry.get("requestId") for entry in pending] == [second_id],
          {"events": events, "pending": pending})
    stale = await peer.operator.request("node.pair.approve", {"requestId": first_id})
    check("superseded-unknown",
          (stale.get("error") or {}).get("code") == "INVALID_REQUEST"
          and (stale.get("error") or {}).get("message") == "unknown requestId",
          stale)

    # Rejected: the approved surface stays.
    rejected = await peer.operator.request("node.pair.reject", {"requestId": second_id})
    events = await peer.pair_events()
    pending, _ = await peer.pending_list()
    check("rejected",
          rejected.get("ok") is True and [frame.get("event") for frame in events] == ["node.pair.resolved"]
          and events[0]["payload"].get("decision") == "rejected" and events[0]["payload"].get("requestId") == second_id
          and not pending,
          {"reject": rejected, "events": events, "pending": pending})

    # Widened once more, then approved: after the next reconnect the command is served.
    await peer.connect_node(WIDENED)
    events = await peer.pair_events()
    third_id = events[0]["payload"].get("requestId") if events else None
    approved = await peer.operator.request("node.pair.approve", {"requestId": third_id})
    resolved = await peer.pair_events()
    check("approved",
          approved.get("ok") is True and (approved.get("payload") or {}).get("node", {}).get("commands") == WIDENED
          and [frame.get("event") for frame in resolved] == ["node.pair.resolved"]
          and resolved[0]["payload"].get("decision") == "approved",
          {"approve": approved, "events": resolved})

    await peer.connect_node(WIDENED)
    request, answer = await peer.invoke_answered("contacts.search")
    check("approved-effective", request.get("command") == "contacts.search" and answer.get("ok") is True, answer)

    # Nothing pending: commands the policy refuses (not on an iPhone's allowlist, dangerous, or
    # macOS-only) are declared but never registered, so node.list/node.describe leave them out.
    await peer.connect_node(WIDENED + REFUSED)
    events = await peer.pair_events()
    described = await peer.operator.request("node.describe", {"nodeId": node_id})
    listed = await peer.operator.request("node.list", {})
    entry = [node for node in (listed.get("payload") or {}).get("nodes") or [] if node.get("nodeId") == node_id]
    check("effective-listed",
          not events and (described.get("payload") or {}).get("commands") == WIDENED
          and entry and entry[0].get("commands") == WIDENED,
          {"events": events, "describe": described.get("payload"), "list": entry})
    await peer.node.close()
    await peer.operator.close()


if __name__ == "__main__":
    main(run_surface)
