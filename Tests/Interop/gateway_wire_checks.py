#!/usr/bin/env python3
"""Independent wire checks of the fake Gateway's admission rules (Python `websockets` +
`cryptography`), run against `harness serve --auth token:SECRET --pairing auto`.

    gateway_wire_checks.py URL SECRET

Each check opens its own connection and prints one JSON line:

    {"check": NAME, "ok": true|false, "detail": ...}
    {"step": "done", "ok": true}        after the last check (exit status 0 even if a check failed)

The rules are the current upstream Gateway's (docs/fidelity.md): the closed connect schema, no
response to a first frame that is not a request frame, the device proof before the token
decision, the signature token `token ?? deviceToken ?? bootstrapToken`, and hello-ok's protocol
and features.capabilities.
"""
import asyncio
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gateway_node_peer import NODE_CLIENT, Identity, Session, emit  # noqa: E402

try:  # websockets >= 13
    from websockets.asyncio.client import connect as ws_connect
except ImportError:  # pragma: no cover - websockets 12
    from websockets import connect as ws_connect  # type: ignore
from websockets.exceptions import ConnectionClosed  # noqa: E402

TIMEOUT = 10


def node_params(identity, challenge, *, token, signed_token=None, nonce=None, client=None, min_protocol=3):
    """Connect params of a node; `signed_token` is the token the proof signs (default `token`)."""
    client = client or NODE_CLIENT
    params = {
        "minProtocol": min_protocol, "maxProtocol": 4, "client": client, "role": "node", "scopes": [],
        "caps": ["device"], "commands": ["device.info"],
        "device": identity.proof(client=client, role="node", scopes=[],
                                 token=token if signed_token is None else signed_token,
                                 nonce=challenge["nonce"] if nonce is None else nonce, signed_at=challenge["ts"]),
    }
    if token is not None:
        params["auth"] = {"token": token}
    return params


async def close_code(session):
    """The close code the Gateway sent, reading (and dropping) frames until the socket ends."""
    try:
        while True:
            await asyncio.wait_for(session.ws.recv(), TIMEOUT)
    except ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd is not None else None


async def refused(url, build):
    """Sends the connect `build(identity, challenge)` returns; (error, close code)."""
    identity = Identity(os.urandom(32))
    session = await Session.open(url)
    response = await session.request("connect", build(identity, session.challenge), timeout=TIMEOUT)
    code = await close_code(session)
    return (None if response.get("ok") else response.get("error") or {}), code, response


def report(name, ok, detail):
    emit(check=name, ok=bool(ok), detail=detail)


async def schema_check(url, secret, name, mutate, expected_message=None):
    def build(identity, challenge):
        params = node_params(identity, challenge, token=secret)
        mutate(params)
        return params
    error, code, _ = await refused(url, build)
    error = error or {}
    message = error.get("message", "")
    ok = (error.get("code") == "INVALID_REQUEST" and message.startswith("invalid connect params: ")
          and (error.get("details") or {}).get("code") is None and code == 1008
          and (expected_message is None or message == expected_message))
    report(name, ok, {"error": error, "close": code})


async def main(url, secret):
    def unknown_member(params):
        params["nickname"] = "x"

    def unknown_client_id(params):
        params["client"] = dict(params["client"], id="not-a-client")

    def empty_display_name(params):
        params["client"] = dict(params["client"], displayName="")

    def missing_nonce(params):
        del params["device"]["nonce"]

    await schema_check(url, secret, "unknown-member", unknown_member)
    await schema_check(url, secret, "unknown-client-id", unknown_client_id)
    await schema_check(url, secret, "empty-display-name", empty_display_name)
    await schema_check(url, secret, "missing-nonce", missing_nonce,
                       "invalid connect params: at /device: must have required property 'nonce'")

    # A blank nonce passes the schema and is refused by the device proof.
    error, code, _ = await refused(url, lambda identity, challenge: node_params(identity, challenge, token=secret,
                                                                                  nonce="  "))
    detail = ((error or {}).get("details") or {}).get("code")
    report("blank-nonce", detail == "DEVICE_AUTH_NONCE_REQUIRED" and code == 1008, {"error": error, "close": code})

    # A first frame that is not a request frame gets no response, only close 1008.
    ws = await ws_connect(url, compression=None, max_size=None, open_timeout=TIMEOUT)
    await asyncio.wait_for(ws.recv(), TIMEOUT)  # connect.challenge
    await ws.send(json.dumps({"type": "event", "event": "hello"}))
    frames, code = [], None
    try:
        while True:
            frames.append(json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT)))
    except ConnectionClosed as closed:
        code = closed.rcvd.code if closed.rcvd is not None else None
    report("not-a-request-frame", not frames and code == 1008, {"frames": frames, "close": code})

    # A bad proof with a bad token is a device-auth failure: the proof is verified first.
    error, code, _ = await refused(url, lambda identity, challenge: node_params(
        identity, challenge, token="not-the-secret", signed_token="something-else"))
    detail = ((error or {}).get("details") or {}).get("code") or ""
    report("proof-before-token", detail.startswith("DEVICE_AUTH_"), {"error": error, "close": code})

    # The signature token: an empty auth.token wins over auth.bootstrapToken.
    def empty_token(signed):
        def build(identity, challenge):
            params = node_params(identity, challenge, token=None, signed_token=signed)
            params["auth"] = {"token": "", "bootstrapToken": "not-a-bootstrap-token"}
            return params
        return build
    over_empty, _, _ = await refused(url, empty_token(""))
    over_bootstrap, _, _ = await refused(url, empty_token("not-a-bootstrap-token"))
    empty_detail = ((over_empty or {}).get("details") or {}).get("code") or ""
    bootstrap_detail = ((over_bootstrap or {}).get("details") or {}).get("code") or ""
    report("signature-token-empty-wins",
           not empty_detail.startswith("DEVICE_AUTH_") and bootstrap_detail == "DEVICE_AUTH_SIGNATURE_INVALID",
           {"signedOverEmpty": over_empty, "signedOverBootstrap": over_bootstrap})

    # hello-ok announces protocol 4 even to a node that offered only 3, and server capabilities.
    identity = Identity(os.urandom(32))
    session = await Session.open(url)
    params = node_params(identity, session.challenge, token=secret)
    params["maxProtocol"] = 3
    response = await session.request("connect", params, timeout=TIMEOUT)
    hello = response.get("payload") or {}
    capabilities = (hello.get("features") or {}).get("capabilities")
    report("hello-protocol-and-capabilities",
           response.get("ok") is True and hello.get("protocol") == 4 and isinstance(capabilities, list) and capabilities,
           {"protocol": hello.get("protocol"), "capabilities": capabilities, "error": response.get("error")})
    await session.close()


if __name__ == "__main__":
    try:
        asyncio.run(asyncio.wait_for(main(sys.argv[1], sys.argv[2]), 120))
    except Exception as exc:  # report every failure as one line, then fail
        emit(step="error", message=f"{type(exc).__name__}: {exc}")
        sys.exit(1)
    emit(step="done", ok=True)
