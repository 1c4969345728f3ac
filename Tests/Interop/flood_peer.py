#!/usr/bin/env python3
"""A flood of connections against `harness serve` (Python `websockets`), in steps that the
driving test paces: after each step line it waits for one line on stdin before going on, so the
test can measure the server between steps.

    flood_peer.py URL --token SHARED_TOKEN [--refused 2000] [--concurrency 50] [--every 400]
                  [--frames 30] [--frame-mib 20] [--sessions 2]

Steps, one JSON line each on stdout:

    {"step": "warm"}                              one refused and one authenticated exchange done
    {"step": "refused", "done": N, "codes": {..}} N connections refused so far (close codes seen)
    {"step": "large", "done": N}                  N frames of FRAME_MIB MiB answered so far
    {"step": "closed"}                            the authenticated sessions are closed
    {"step": "done", "ok": true}
    {"step": "error", "message": ...}             (exit status 1)
"""
import argparse
import asyncio
import json
import sys

try:  # websockets >= 13
    from websockets.asyncio.client import connect as ws_connect
except ImportError:  # pragma: no cover - websockets 12
    from websockets import connect as ws_connect  # type: ignore

from websockets.exceptions import ConnectionClosed

from gateway_node_peer import emit, run_reporting

STEP_TIMEOUT = 60


async def paced(**fields):
    """Reports a step and waits for the test's go-ahead on stdin."""
    emit(**fields)
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    if not line:
        raise SystemExit(0)


async def open_socket(url):
    ws = await ws_connect(url, compression=None, max_size=None, open_timeout=STEP_TIMEOUT)
    challenge = json.loads(await asyncio.wait_for(ws.recv(), STEP_TIMEOUT))
    if challenge.get("event") != "connect.challenge":
        raise RuntimeError(f"first frame is not connect.challenge: {challenge}")
    return ws


async def refused_connection(url, padding):
    """A 60 KiB connect with a wrong token; returns the close code."""
    ws = await open_socket(url)
    await ws.send('{"type":"req","id":"c1","method":"connect","params":{"minProtocol":3,"maxProtocol":4,'
                  '"client":{"id":"cli","version":"1","platform":"linux","mode":"cli","displayName":"'
                  + padding + '"},"role":"operator","scopes":[],"auth":{"token":"wrong-token-wrong"}}}')
    try:
        while True:
            await asyncio.wait_for(ws.recv(), STEP_TIMEOUT)
    except ConnectionClosed:
        pass
    return ws.close_code


async def authenticated(url, token):
    ws = await open_socket(url)
    await ws.send(json.dumps({"type": "req", "id": "c1", "method": "connect",
                              "params": {"minProtocol": 3, "maxProtocol": 4, "role": "operator", "scopes": [],
                                         "client": {"id": "cli", "version": "1", "platform": "linux", "mode": "cli"},
                                         "auth": {"token": token}}}))
    hello = await response_to(ws, "c1")
    if not hello.get("ok"):
        raise RuntimeError(f"the shared token was refused: {hello}")
    return ws


async def response_to(ws, request_id):
    while True:
        frame = json.loads(await asyncio.wait_for(ws.recv(), STEP_TIMEOUT))
        if frame.get("type") == "res" and frame.get("id") == request_id:
            return frame


async def large_request(ws, request_id, size):
    """A node.list request of about `size` bytes, as a binary message (as Swift clients send)."""
    head = ('{"type":"req","id":"' + request_id + '","method":"node.list","params":{"blob":"').encode()
    await ws.send(head + b"A" * size + b'"}}')
    answer = await response_to(ws, request_id)
    if answer.get("type") != "res":
        raise RuntimeError(f"no answer to {request_id}")


async def run(args):
    padding = "p" * (60 * 1024)
    await refused_connection(args.url, padding)
    warm = await authenticated(args.url, args.token)
    await large_request(warm, "warm", 1 << 20)
    await warm.close()
    await paced(step="warm")

    codes = {}
    done = 0
    while done < args.refused:
        batch = min(args.concurrency, args.refused - done)
        for code in await asyncio.gather(*(refused_connection(args.url, padding) for _ in range(batch))):
            codes[str(code)] = codes.get(str(code), 0) + 1
        done += batch
        if done % args.every == 0 or done == args.refused:
            await paced(step="refused", done=done, codes=codes)

    sessions = [await authenticated(args.url, args.token) for _ in range(args.sessions)]
    size = args.frame_mib << 20
    answered = 0
    for round_index in range(args.frames // args.sessions):
        await asyncio.gather(*(large_request(ws, f"big-{round_index}-{index}", size) for index, ws in enumerate(sessions)))
        answered += len(sessions)
        if answered % 6 == 0 or answered == args.frames:
            await paced(step="large", done=answered)
    for ws in sessions:
        await ws.close()
    await paced(step="closed")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--token", required=True)
    parser.add_argument("--refused", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--every", type=int, default=400)
    parser.add_argument("--frames", type=int, default=30)
    parser.add_argument("--frame-mib", type=int, default=20)
    parser.add_argument("--sessions", type=int, default=2)
    args = parser.parse_args()
    args.url = args.url.rstrip("/")
    run_reporting(lambda: asyncio.run(run(args)))


if __name__ == "__main__":
    main()
