#!/usr/bin/env python3
"""A hostile client (Python `websockets`) for tests of `harness serve`: it plants secrets where
a Gateway must not record or print them, and sends frames a JSON parser refuses.

    hostile_peer.py URL --token SHARED_TOKEN --tag TAG [--timeout SECONDS]

Every secret it plants contains TAG (QUERYSECRET-TAG, HEADERSECRET-TAG, COOKIESECRET-TAG,
RAWSECRET-TAG, RAWPASSWORD-TAG), so the test can search for it. Steps, one JSON line each:

    {"step": "preauth_truncated", "closeCode": .., "closeReason": .., "responses": [..]}
        a cut-off `connect` carrying a token, sent on an upgrade with a token in the query and
        in headers: no response, a close with a reason
    {"step": "preauth_deep", ...}            the same for a `connect` nested 600 levels deep
    {"step": "authenticated", ...}           a device-less operator with the shared token
    {"step": "postauth_truncated", "response": {..}}   a cut-off request with an id and a password
    {"step": "postauth_deep", "response": {..}}        a request nested 600 levels deep
    {"step": "postauth_echo", "response": {..}}        a valid request quoting the planted token
    {"step": "done", "ok": true}
    {"step": "error", "message": ...}        (exit status 1)
"""
import argparse
import asyncio
import json

try:  # websockets >= 13
    from websockets.asyncio.client import connect as ws_connect
except ImportError:  # pragma: no cover - websockets 12
    from websockets import connect as ws_connect  # type: ignore

from websockets.exceptions import ConnectionClosed

from gateway_node_peer import PeerFailure, emit, run_reporting

STEP_TIMEOUT = 30
DEPTH = 600


async def open_socket(url, headers=None):
    kwargs = {"compression": None, "max_size": None, "open_timeout": STEP_TIMEOUT}
    if headers:
        try:
            ws = await ws_connect(url, additional_headers=headers, **kwargs)
        except TypeError:  # pragma: no cover - websockets 12
            ws = await ws_connect(url, extra_headers=headers, **kwargs)
    else:
        ws = await ws_connect(url, **kwargs)
    challenge = json.loads(await asyncio.wait_for(ws.recv(), STEP_TIMEOUT))
    if challenge.get("event") != "connect.challenge":
        raise PeerFailure(f"first frame is not connect.challenge: {challenge}")
    return ws


async def until_closed(ws):
    """Every frame received until the server closes; then the close code and reason."""
    responses = []
    try:
        while True:
            responses.append(json.loads(await asyncio.wait_for(ws.recv(), STEP_TIMEOUT)))
    except ConnectionClosed:
        pass
    return responses, ws.close_code, ws.close_reason


async def response_to(ws, request_id):
    while True:
        frame = json.loads(await asyncio.wait_for(ws.recv(), STEP_TIMEOUT))
        if frame.get("type") == "res" and frame.get("id") == request_id:
            return frame


def deep(depth=DEPTH):
    return "[" * depth + "]" * depth


async def run(url, token, tag):
    # Before authentication: secrets in the query, in headers, and in a frame cut off inside
    # the connect params.
    headers = {"Authorization": f"Bearer HEADERSECRET-{tag}", "X-OpenClaw-Token": f"HEADERSECRET-{tag}",
               "Cookie": f"session=COOKIESECRET-{tag}"}
    ws = await open_socket(f"{url}/?token=QUERYSECRET-{tag}&client=hostile", headers)
    await ws.send('{"type":"req","id":"trunc-1","method":"connect","params":{"minProtocol":3,"maxProtocol":4,'
                  f'"auth":{{"token":"RAWSECRET-{tag}","password":"RAWPASSWORD-{tag}'  # cut off here
                  )
    responses, code, reason = await until_closed(ws)
    emit(step="preauth_truncated", closeCode=code, closeReason=reason, responses=responses)

    ws = await open_socket(url)
    await ws.send('{"type":"req","id":"deep-1","method":"connect","params":' + deep() + "}")
    responses, code, reason = await until_closed(ws)
    emit(step="preauth_deep", closeCode=code, closeReason=reason, responses=responses)

    # After authentication.
    ws = await open_socket(url)
    connect = {"type": "req", "id": "c1", "method": "connect",
               "params": {"minProtocol": 3, "maxProtocol": 4, "role": "operator", "scopes": [],
                          "client": {"id": "cli", "version": "1", "platform": "linux", "mode": "cli"},
                          "auth": {"token": token}}}
    await ws.send(json.dumps(connect))
    hello = await response_to(ws, "c1")
    if not hello.get("ok"):
        raise PeerFailure(f"the shared token was refused: {hello}")
    emit(step="authenticated", ok=True)

    await ws.send(f'{{"type":"req","id":"trunc-2","method":"node.list","params":{{"password":"RAWPASSWORD-{tag}')
    emit(step="postauth_truncated", response=await response_to(ws, "trunc-2"))
    await ws.send('{"type":"req","id":"deep-2","method":"node.list","params":' + deep() + "}")
    emit(step="postauth_deep", response=await response_to(ws, "deep-2"))
    # A valid frame that quotes the planted token where no key says it is a secret: it is
    # redacted by value.
    await ws.send(json.dumps({"type": "req", "id": "echo-1", "method": "node.list",
                              "params": {"note": f"my token is RAWSECRET-{tag}"}}))
    emit(step="postauth_echo", response=await response_to(ws, "echo-1"))
    await ws.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--token", required=True)
    parser.add_argument("--tag", required=True)
    parser.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args()
    run_reporting(lambda: asyncio.run(asyncio.wait_for(run(args.url.rstrip("/"), args.token, args.tag), args.timeout)))


if __name__ == "__main__":
    main()
