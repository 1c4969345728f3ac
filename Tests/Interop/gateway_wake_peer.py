#!/usr/bin/env python3
"""Independent checks (Python `websockets` + `cryptography`) of `node.invoke`'s wake of an absent
node and of the protocol-3 Gateway generation, run against `harness serve`.

    gateway_wake_peer.py URL --suite wake|protocol3

* `wake` (`harness serve --pairing auto`): a node pairs, registers a direct push token with
  `push.apns.register` and leaves; an operator invokes it with `timeoutMs` 60000. Prints
  {"step": "invoke_sent", "nodeId": ...}; the driving test moves the Gateway clock on the console
  (`advance`) while it watches the `push.sent` events; then prints
  {"step": "invoke_answered", "error": {...}} with the answer.
* `protocol3` (`harness serve --profile protocol3 --pairing auto`): prints one
  {"check": NAME, "ok": ..., "detail": ...} line per check: a node offering 4..4 is refused with
  PROTOCOL_MISMATCH, expectedProtocol 3 and close 1002; the same node falling back to 3..3 (as
  upstream's node host does on that answer) gets hello-ok protocol 3; an operator offering 3..4
  gets hello-ok protocol 3.

Ends with {"step": "done", "ok": true} (exit status 0), or {"step": "error", "message": ...}
(exit status 1).
"""
import argparse
import asyncio
import json
import os
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gateway_node_peer import NODE_CLIENT, Identity, PeerFailure, Session, connect_until_paired, emit  # noqa: E402

try:
    from websockets.exceptions import ConnectionClosed
except ImportError:  # pragma: no cover
    ConnectionClosed = Exception  # type: ignore

TIMEOUT = 10
OPERATOR_CLIENT = {"id": "cli", "displayName": "Python interop operator", "version": "2026.8.1",
                   "platform": "linux", "mode": "cli"}


def never_pending(request_id, details):
    raise PeerFailure(f"unexpected pairing request {request_id}: {details}")


async def run_wake(url):
    deadline = time.monotonic() + 60
    node_identity = Identity(os.urandom(32))
    node, _ = await connect_until_paired(url, node_identity, client=NODE_CLIENT, role="node", scopes=[],
                                         deadline=deadline, on_pairing_required=never_pending)
    registration = {"token": "ab" * 32, "topic": "ai.openclaw.ios", "environment": "sandbox"}
    reply = await node.request("node.event", {"event": "push.apns.register", "payloadJSON": json.dumps(registration)})
    if not reply.get("ok"):
        raise PeerFailure(f"push.apns.register refused: {reply}")
    await node.close()

    operator, _ = await connect_until_paired(url, Identity(os.urandom(32)), client=OPERATOR_CLIENT, role="operator",
                                             scopes=["operator.write"], deadline=deadline,
                                             on_pairing_required=never_pending)
    request_id = str(uuid.uuid4())
    await operator.ws.send(json.dumps({"type": "req", "id": request_id, "method": "node.invoke", "params": {
        "nodeId": node_identity.device_id, "command": "device.info", "idempotencyKey": request_id,
        "timeoutMs": 60000}}))
    emit(step="invoke_sent", nodeId=node_identity.device_id)
    # Real time only bounds a stuck run; the Gateway's answer comes when the console moves its clock.
    limit = time.monotonic() + 120
    while True:
        remaining = limit - time.monotonic()
        if remaining <= 0:
            raise PeerFailure("no answer to node.invoke")
        frame = await operator.next_frame(remaining)
        if frame.get("type") == "res" and frame.get("id") == request_id:
            emit(step="invoke_answered", ok=frame.get("ok"), error=frame.get("error"))
            break
    await operator.close()


async def refused_close(session):
    try:
        while True:
            await asyncio.wait_for(session.ws.recv(), TIMEOUT)
    except ConnectionClosed as closed:
        return closed.rcvd.code if getattr(closed, "rcvd", None) is not None else None


async def connect_with_range(url, identity, *, client, role, scopes, low, high):
    session = await Session.open(url)
    params = {
        "minProtocol": low, "maxProtocol": high, "client": client, "role": role, "scopes": scopes,
        "caps": [], "locale": "en-US", "userAgent": "python-interop",
        "device": identity.proof(client=client, role=role, scopes=scopes, token=None,
                                 nonce=session.challenge["nonce"], signed_at=session.challenge["ts"]),
    }
    if role == "node":
        params["commands"] = ["device.info"]
    return session, await session.request("connect", params, timeout=TIMEOUT)


async def run_protocol3(url):
    identity = Identity(os.urandom(32))
    session, response = await connect_with_range(url, identity, client=NODE_CLIENT, role="node", scopes=[],
                                                 low=4, high=4)
    error = response.get("error") or {}
    details = error.get("details") or {}
    code = await refused_close(session)
    emit(check="offer-4-refused-expected-3",
         ok=(not response.get("ok") and error.get("code") == "INVALID_REQUEST"
             and details.get("code") == "PROTOCOL_MISMATCH" and details.get("expectedProtocol") == 3 and code == 1002),
         detail={"error": error, "close": code})

    # Upstream's node host retries with its protocol-3 envelope when expectedProtocol is 3.
    session, response = await connect_with_range(url, identity, client=NODE_CLIENT, role="node", scopes=[],
                                                 low=3, high=3)
    hello = response.get("payload") or {}
    emit(check="fallback-to-3", ok=bool(response.get("ok")) and hello.get("protocol") == 3,
         detail={"protocol": hello.get("protocol"), "error": response.get("error")})
    await session.close()

    session, response = await connect_with_range(url, Identity(os.urandom(32)), client=OPERATOR_CLIENT,
                                                 role="operator", scopes=["operator.read"], low=3, high=4)
    hello = response.get("payload") or {}
    emit(check="operator-3-4-gets-3", ok=bool(response.get("ok")) and hello.get("protocol") == 3,
         detail={"protocol": hello.get("protocol"), "error": response.get("error")})
    await session.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--suite", choices=["wake", "protocol3"], required=True)
    arguments = parser.parse_args()
    try:
        asyncio.run(run_wake(arguments.url) if arguments.suite == "wake" else run_protocol3(arguments.url))
    except Exception as error:  # noqa: BLE001 - reported as a step
        emit(step="error", message=f"{type(error).__name__}: {error}")
        sys.exit(1)
    emit(step="done", ok=True)


if __name__ == "__main__":
    main()
