#!/usr/bin/env python3
"""An independent OpenClaw node and operator (Python `websockets` + `cryptography`) that check the
Gateway's node command policy on the wire, against `harness serve --pairing auto
--node-command-deny location.get`.

    gateway_policy_peer.py URL [--seed HEX64] [--timeout SECONDS]

One JSON line per check on stdout, {"check": NAME, "ok": BOOL, "detail": ...}, then steps:

    {"step": "console_ready", "nodeId": ...}  the node waits for the console's invoke --force
    {"step": "forced_invoke", "command": ...}  the forced command reached the node and was answered
    {"step": "done", "ok": true}
    {"step": "error", "message": ...}          (exit status 1)
"""
import json
import time

from gateway_node_peer import Identity, PeerFailure, Session, emit, main

IPHONE_CLIENT = {"id": "openclaw-ios", "displayName": "Python interop iPhone", "version": "2026.8.1",
                 "platform": "iOS 18.4.0", "deviceFamily": "iPhone", "mode": "node"}
OPERATOR_CLIENT = {"id": "cli", "displayName": "Python interop operator", "version": "2026.8.1",
                   "platform": "linux", "mode": "cli"}
DECLARED = ["system.which", "device.info", "location.get", "camera.snap"]


def check(name, ok, detail):
    emit(check=name, ok=bool(ok), detail=detail)


async def invoke(operator, node_id, command, params=None):
    request = {"nodeId": node_id, "command": command, "idempotencyKey": f"policy-{command}"}
    if params is not None:
        request["params"] = params
    return await operator.request("node.invoke", request)


def refusal(response):
    error = response.get("error") or {}
    return error, error.get("details") or {}


async def run_policy(url, seed, timeout):
    deadline = time.monotonic() + timeout
    node_identity = Identity(seed)
    operator_identity = Identity(bytes(31) + b"\x09")
    node = await Session.open(url)
    hello = await node.connect(node_identity, client=IPHONE_CLIENT, role="node", scopes=[], caps=["device", "camera"],
                               commands=DECLARED)
    if not hello.get("ok"):
        raise PeerFailure(f"the node was refused (serve needs --pairing auto): {hello.get('error')}")
    operator = await Session.open(url)
    hello = await operator.connect(operator_identity, client=OPERATOR_CLIENT, role="operator",
                                   scopes=["operator.read", "operator.write"])
    if not hello.get("ok"):
        raise PeerFailure(f"the operator was refused: {hello.get('error')}")
    node_id = node_identity.device_id
    prefix = lambda command: f'node command not allowed: "{command}" on node "{node_id}" (platform: iOS 18.4.0)'

    # A dangerous command the node declared, without gateway.nodes.commands.allow.
    error, details = refusal(await invoke(operator, node_id, "camera.snap"))
    check("dangerous-declared-camera-snap",
          error.get("code") == "INVALID_REQUEST"
          and details == {"reason": "command not allowlisted", "command": "camera.snap"}
          and error.get("message", "").startswith(prefix("camera.snap") + " requires explicit gateway.nodes.commands.allow opt-in"),
          error)

    # An undeclared command that is not on the iOS allowlist either.
    error, details = refusal(await invoke(operator, node_id, "sms.send"))
    check("undeclared-sms-send",
          error.get("code") == "INVALID_REQUEST" and details == {"reason": "command not allowlisted", "command": "sms.send"},
          error)

    # A declared command on the allowlist, removed by gateway.nodes.commands.deny.
    error, details = refusal(await invoke(operator, node_id, "location.get"))
    check("denied-location-get",
          details == {"reason": "command not allowlisted", "command": "location.get"}
          and "is blocked by gateway.nodes.commands.deny" in error.get("message", ""),
          error)

    # On the iOS allowlist but not declared.
    error, details = refusal(await invoke(operator, node_id, "contacts.search"))
    check("allowlisted-not-declared",
          details == {"reason": "command not declared by node", "command": "contacts.search"}
          and error.get("message", "").startswith(prefix("contacts.search") + " does not support this command"),
          error)

    # Never invocable, whatever the node declares; checked before the node is looked up.
    for target in (node_id, "no-such-node"):
        error, details = refusal(await invoke(operator, target, "system.execApprovals.get"))
        check(f"exec-approvals-{'connected' if target == node_id else 'unknown-node'}",
              error.get("code") == "INVALID_REQUEST"
              and error.get("message") == "node.invoke does not allow system.execApprovals.*; use exec.approvals.node.*"
              and details == {"command": "system.execApprovals.get"},
              error)

    # None of the refused commands reached the node: frames on one socket arrive in order, so
    # after the answer to the node's own request anything sent to it before is in.
    await node.request("node.pending.pull", {})
    delivered = [frame for frame in node.events if frame.get("event") == "node.invoke.request"]
    check("nothing-delivered", not delivered, delivered)

    # A declared, allowlisted command goes through.
    await operator.ws.send(json.dumps({"type": "req", "id": "allowed", "method": "node.invoke", "params": {
        "nodeId": node_id, "command": "device.info", "idempotencyKey": "policy-allowed"}}))
    request = (await node.event("node.invoke.request", timeout=max(1, deadline - time.monotonic())))["payload"]
    await node.request("node.invoke.result", {"id": request["id"], "nodeId": node_id, "ok": True,
                                              "payloadJSON": json.dumps({"model": "PythonPhone"})})
    while True:
        frame = await operator.next_frame()
        if frame.get("type") == "res" and frame.get("id") == "allowed":
            break
    check("declared-allowlisted-delivered", request.get("command") == "device.info" and frame.get("ok") is True, frame)

    # The console's invoke refuses camera.snap; invoke --force sends it.
    emit(step="console_ready", nodeId=node_id)
    forced = (await node.event("node.invoke.request", timeout=max(1, deadline - time.monotonic())))["payload"]
    await node.request("node.invoke.result", {"id": forced["id"], "nodeId": node_id, "ok": True,
                                              "payloadJSON": json.dumps({"format": "jpg"})})
    emit(step="forced_invoke", command=forced.get("command"))
    await node.close()
    await operator.close()


if __name__ == "__main__":
    main(run_policy)
