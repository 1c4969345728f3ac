#!/usr/bin/env python3
"""An independent OpenClaw operator client (Python `websockets` + `cryptography`) for interop
tests against `harness serve`.

    gateway_operator_peer.py URL [--seed HEX64] [--timeout SECONDS]

Steps, one JSON line each on stdout (the driving test types console commands in between):

    {"step": "pairing_required", ...}        the operator is waiting for `approve latest`
    {"step": "operator_ready", ...}          paired; sessions A and B (full scopes) and C
                                             (operator.read only) are open
    {"step": "node_approved", ...}           a node's pending request was listed and approved
                                             over the wire (device.pair.list / .approve)
    {"step": "approval_resolved", ...}       an approval made on the console (`approval ...`)
                                             was resolved with approval.resolve
    {"step": "question_answered", ...}       a console question was answered with question.resolve
    {"step": "question_pending", "id": ...}  a second question arrived; waiting for its expiry
    {"step": "question_expired", ...}        question.resolved expired reached A and B, not C
    {"step": "late_answer_rejected", ...}    a late answer got the spec's error
    {"step": "done", "ok": true}
    {"step": "error", "message": ...}        (exit status 1)
"""
import asyncio
import time

from gateway_node_peer import (NODE_CLIENT, Identity, PeerFailure, Session, connect_until_paired, emit, main)

OPERATOR_CLIENT = {"id": "cli", "displayName": "Python interop operator", "version": "2026.8.1",
                   "platform": "linux", "mode": "cli"}
OPERATOR_SCOPES = ["operator.admin", "operator.approvals", "operator.pairing", "operator.questions",
                   "operator.read", "operator.write"]


async def open_operator(url, identity, token, scopes):
    session = await Session.open(url)
    response = await session.connect(identity, client=OPERATOR_CLIENT, role="operator", scopes=scopes, token=token)
    if not response.get("ok"):
        raise PeerFailure(f"operator reconnect with scopes {scopes} failed: {response.get('error')}")
    return session


def expect_ok(response, what):
    if not response.get("ok"):
        raise PeerFailure(f"{what} failed: {response.get('error')}")
    return response.get("payload") or {}


async def pair_node_over_the_wire(url, operator, node_seed):
    """A fresh node is refused; the operator lists and approves it; the node then gets hello-ok."""
    node = Identity(node_seed)
    session = await Session.open(url)
    refused = await session.connect(node, client=NODE_CLIENT, role="node", scopes=[], caps=["device"],
                                    commands=["device.info"])
    details = (refused.get("error") or {}).get("details") or {}
    if refused.get("ok") or details.get("code") != "PAIRING_REQUIRED":
        raise PeerFailure(f"a fresh node was not asked to pair: {refused}")
    request_id = details.get("requestId")
    await session.close()

    listing = expect_ok(await operator.request("device.pair.list", {}), "device.pair.list")
    pending = [entry for entry in listing.get("pending", []) if entry.get("requestId") == request_id]
    if len(pending) != 1 or pending[0].get("deviceId") != node.device_id:
        raise PeerFailure(f"device.pair.list does not show the node's request {request_id}: {listing}")
    approved = expect_ok(await operator.request("device.pair.approve", {"requestId": request_id}), "device.pair.approve")
    if approved.get("requestId") != request_id:
        raise PeerFailure(f"device.pair.approve answered for another request: {approved}")
    resolved = await operator.event("device.pair.resolved", lambda p: (p or {}).get("requestId") == request_id)
    if resolved["payload"].get("decision") != "approved":
        raise PeerFailure(f"device.pair.resolved is not approved: {resolved}")

    session = await Session.open(url)
    hello = await session.connect(node, client=NODE_CLIENT, role="node", scopes=[], caps=["device"],
                                  commands=["device.info"])
    if not hello.get("ok"):
        raise PeerFailure(f"the approved node was refused: {hello.get('error')}")
    await session.close()
    emit(step="node_approved", requestId=request_id, nodeDeviceId=node.device_id)


async def run_operator(url, seed, timeout):
    identity = Identity(seed)
    deadline = time.monotonic() + timeout

    def pairing_required(request_id, details):
        emit(step="pairing_required", requestId=request_id, deviceId=identity.device_id,
             requestedScopes=details.get("requestedScopes"))

    session_a, hello = await connect_until_paired(url, identity, client=OPERATOR_CLIENT, role="operator",
                                                  scopes=OPERATOR_SCOPES, deadline=deadline,
                                                  on_pairing_required=pairing_required)
    auth = hello.get("auth") or {}
    token = auth.get("deviceToken")
    if auth.get("role") != "operator" or sorted(auth.get("scopes") or []) != OPERATOR_SCOPES or not token:
        raise PeerFailure(f"hello-ok.auth is not the requested operator grant: {auth}")
    session_b = await open_operator(url, identity, token, OPERATOR_SCOPES)
    session_c = await open_operator(url, identity, token, ["operator.read"])
    emit(step="operator_ready", deviceId=identity.device_id, scopes=auth.get("scopes"))

    await pair_node_over_the_wire(url, session_a, bytes(31) + b"\x07")

    # An approval created on the console (`approval ...`), resolved over the wire.
    requested = await session_a.event("exec.approval.requested", timeout=max(1, deadline - time.monotonic()))
    approval_id = requested["payload"]["id"]
    result = expect_ok(await session_a.request("approval.resolve", {"id": approval_id, "kind": "exec",
                                                                     "decision": "allow-once"}), "approval.resolve")
    approval = result.get("approval") or {}
    if result.get("applied") is not True or approval.get("status") != "allowed" or approval.get("decision") != "allow-once":
        raise PeerFailure(f"approval.resolve did not apply allow-once: {result}")
    emit(step="approval_resolved", id=approval_id, applied=True, status=approval.get("status"))

    # A question created on the console (`question ...`), answered over the wire.
    question = await session_a.event("question.requested", timeout=max(1, deadline - time.monotonic()))
    question_id = question["payload"]["id"]
    first_item = question["payload"]["questions"][0]
    choice = first_item["options"][0]["label"]
    answer = expect_ok(await session_a.request("question.resolve", {
        "id": question_id, "answers": {"answers": {first_item["questionId"]: [choice]}}, "resolvedBy": "python",
    }), "question.resolve")
    if answer.get("status") != "answered":
        raise PeerFailure(f"question.resolve did not answer: {answer}")
    emit(step="question_answered", id=question_id, answers=answer.get("answers"))

    # A question that expires: the console advances the clock past its deadline.
    expiring = await session_a.event("question.requested", lambda p: (p or {}).get("id") != question_id,
                                      timeout=max(1, deadline - time.monotonic()))
    expiring_id = expiring["payload"]["id"]
    emit(step="question_pending", id=expiring_id, expiresAtMs=expiring["payload"].get("expiresAtMs"))
    is_expiry = lambda p: (p or {}).get("id") == expiring_id and (p or {}).get("status") == "expired"
    seen_by_a = await session_a.event("question.resolved", is_expiry, timeout=max(1, deadline - time.monotonic()))
    await session_b.event("question.resolved", is_expiry)
    # Frames on one socket arrive in order: once C's reply to a later request is in, any event
    # sent to C before it is in too.
    expect_ok(await session_c.request("node.list", {}), "node.list on the read-only session")
    leaked = [frame for frame in session_c.events if frame.get("event", "").startswith("question.")]
    if leaked:
        raise PeerFailure(f"a session without operator.questions received {leaked}")
    emit(step="question_expired", id=expiring_id, status=seen_by_a["payload"]["status"], sessions=["A", "B"])

    late = await session_a.request("question.resolve", {"id": expiring_id, "answers": {"answers": {"q1": [choice]}}})
    error = late.get("error") or {}
    if late.get("ok") is not False:
        raise PeerFailure(f"a late answer was accepted: {late}")
    emit(step="late_answer_rejected", id=expiring_id, code=error.get("code"), message=error.get("message"),
         reason=(error.get("details") or {}).get("reason"))

    for session in (session_a, session_b, session_c):
        await session.close()


if __name__ == "__main__":
    main(run_operator)
