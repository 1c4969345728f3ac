#!/usr/bin/env python3
"""An independent WebSocket peer (the Python `websockets` package) for interop tests.

    ws_peer.py client URL_BASE [--pin SHA256]
                                 run every client scenario against a server at URL_BASE
                                 (e.g. ws://127.0.0.1:1234, or wss://… trusting only the
                                 certificate with that fingerprint) and print one JSON line
                                 per scenario: {"scenario": ..., "ok": true/false, ...}
    ws_peer.py server [--tls CERT KEY]
                                 serve on 127.0.0.1, port 0 (over TLS with that PEM
                                 certificate and key); the first line is {"port": N};
                                 then one JSON line per finished connection:
                                 {"event": "closed", "path": ..., "received": code, ...}

Both modes stop on their own after a global timeout so that nothing is left running.
"""
import asyncio
import json
import sys

import websockets
from websockets.exceptions import ConnectionClosed

import tls_pin

try:  # websockets >= 13
    from websockets.asyncio.client import connect
    from websockets.asyncio.server import serve
except ImportError:  # pragma: no cover - websockets 12
    from websockets import connect, serve  # type: ignore

# Deadlines for events that must come; they only matter when something is wrong. Generous,
# because the Swift side shares a 2-core machine with a thousand parallel tests whose CPU-bound
# work can hold its cooperative pool for seconds.
GLOBAL_TIMEOUT = 600
PIN = None  # the pinned server fingerprint of client mode (wss:// only)
STEP_TIMEOUT = 60
ONE_MIB = 1 << 20


def emit(**fields):
    print(json.dumps(fields), flush=True)


def close_codes(source):
    """(received code, received reason, sent code) of a closed connection or its exception."""
    if isinstance(source, ConnectionClosed):
        rcvd, sent = source.rcvd, source.sent
    else:
        protocol = getattr(source, "protocol", source)  # the sans-I/O state (websockets >= 13)
        rcvd = getattr(protocol, "close_rcvd", None)
        sent = getattr(protocol, "close_sent", None)
    return (
        rcvd.code if rcvd else None,
        rcvd.reason if rcvd else None,
        sent.code if sent else None,
    )


def masked(opcode_byte, payload):
    """A masked client frame with a zero key (masking with zeros leaves the payload as is)."""
    assert len(payload) < 126
    return bytes([opcode_byte, 0x80 | len(payload), 0, 0, 0, 0]) + payload


# ---------------------------------------------------------------- client mode


async def write_raw(ws, data):
    """Writes bytes to the socket behind the library's back (malformed frames)."""
    ws.transport.write(data)


async def expect_close(ws, action=None):
    """Runs `action`, then reads until the server closes; returns the close codes."""
    try:
        if action is not None:
            await action()
        while True:
            await asyncio.wait_for(ws.recv(), STEP_TIMEOUT)
    except ConnectionClosed as exc:
        return close_codes(exc)


async def scenario_text(base):
    async with tls_pin.connect_pinned(base + "/echo", PIN, compression=None) as ws:
        await ws.send("héllo wörld 🎉")
        reply = await asyncio.wait_for(ws.recv(), STEP_TIMEOUT)
        return reply == "héllo wörld 🎉", {"reply": reply}


async def scenario_binary(base):
    async with tls_pin.connect_pinned(base + "/echo", PIN, compression=None) as ws:
        payload = bytes(range(256))
        await ws.send(payload)
        reply = await asyncio.wait_for(ws.recv(), STEP_TIMEOUT)
        return reply == payload, {"length": len(reply)}


async def scenario_large(base):
    async with tls_pin.connect_pinned(base + "/echo", PIN, compression=None, max_size=None) as ws:
        payload = bytes(i * 31 % 251 for i in range(ONE_MIB))
        await ws.send(payload)
        reply = await asyncio.wait_for(ws.recv(), STEP_TIMEOUT)
        return reply == payload, {"length": len(reply)}


async def scenario_fragmented(base):
    async with tls_pin.connect_pinned(base + "/echo", PIN, compression=None) as ws:
        await ws.send(["frag", "mented ", "日本", "語"])  # an iterable is sent as fragments
        reply = await asyncio.wait_for(ws.recv(), STEP_TIMEOUT)
        return reply == "fragmented 日本語", {"reply": reply}


async def scenario_ping(base):
    async with tls_pin.connect_pinned(base + "/echo", PIN, compression=None) as ws:
        waiter = await ws.ping(b"python ping")
        await asyncio.wait_for(waiter, STEP_TIMEOUT)
        return True, {}


async def scenario_server_ping(base):
    # The server pings us, waits for our automatic pong, then tells us.
    async with tls_pin.connect_pinned(base + "/ping-me", PIN, compression=None) as ws:
        reply = await asyncio.wait_for(ws.recv(), STEP_TIMEOUT)
        return reply == "pong received", {"reply": reply}


async def scenario_close_1000(base):
    async with tls_pin.connect_pinned(base + "/echo", PIN, compression=None) as ws:
        await ws.close(1000, "bye from python")
        received, reason, sent = close_codes(ws)
        return received == 1000 and sent == 1000, {"received": received, "reason": reason, "sent": sent}


async def scenario_close_1009(base):
    async with tls_pin.connect_pinned(base + "/small", PIN, compression=None) as ws:
        # The server lowers its limit to 1 KiB for this connection, then says "ready".
        ready = await asyncio.wait_for(ws.recv(), STEP_TIMEOUT)
        if ready != "ready":
            return False, {"reply": ready}
        received, reason, _ = await expect_close(ws, lambda: ws.send(b"x" * 2048))
        return received == 1009, {"received": received, "reason": reason}


async def scenario_close_1002_unmasked(base):
    async with tls_pin.connect_pinned(base + "/echo", PIN, compression=None) as ws:
        received, reason, _ = await expect_close(ws, lambda: write_raw(ws, b"\x81\x01x"))
        return received == 1002, {"received": received, "reason": reason}


async def scenario_close_1002_opcode(base):
    async with tls_pin.connect_pinned(base + "/echo", PIN, compression=None) as ws:
        received, reason, _ = await expect_close(ws, lambda: write_raw(ws, masked(0x83, b"?")))
        return received == 1002, {"received": received, "reason": reason}


async def scenario_close_1007(base):
    async with tls_pin.connect_pinned(base + "/echo", PIN, compression=None) as ws:
        received, reason, _ = await expect_close(ws, lambda: write_raw(ws, masked(0x81, b"\xff\xfe")))
        return received == 1007, {"received": received, "reason": reason}


async def scenario_server_close_4000(base):
    async with tls_pin.connect_pinned(base + "/close-4000", PIN, compression=None) as ws:
        received, reason, sent = await expect_close(ws)
        return received == 4000 and reason == "bye from swift", {"received": received, "reason": reason, "sent": sent}


async def scenario_server_malformed(base):
    # The server sends a frame with RSV1 set (no extension negotiated): we must fail with 1002.
    async with tls_pin.connect_pinned(base + "/malformed", PIN, compression=None) as ws:
        received, reason, sent = await expect_close(ws)
        return sent == 1002, {"received": received, "reason": reason, "sent": sent}


async def scenario_server_fragmented(base):
    async with tls_pin.connect_pinned(base + "/fragmented", PIN, compression=None) as ws:
        reply = await asyncio.wait_for(ws.recv(), STEP_TIMEOUT)
        return reply == "fragmented by swift ✓", {"reply": reply}


CLIENT_SCENARIOS = [
    ("text", scenario_text),
    ("binary", scenario_binary),
    ("large", scenario_large),
    ("fragmented", scenario_fragmented),
    ("ping", scenario_ping),
    ("server_ping", scenario_server_ping),
    ("close_1000", scenario_close_1000),
    ("close_1009", scenario_close_1009),
    ("close_1002_unmasked", scenario_close_1002_unmasked),
    ("close_1002_opcode", scenario_close_1002_opcode),
    ("close_1007", scenario_close_1007),
    ("server_close_4000", scenario_server_close_4000),
    ("server_malformed", scenario_server_malformed),
    ("server_fragmented", scenario_server_fragmented),
]


async def scenario_wrong_pin(base):
    """A pin that differs from the server's certificate in one digit: the connect is refused."""
    wrong = ("0" if tls_pin.normalized(PIN)[0] != "0" else "1") + tls_pin.normalized(PIN)[1:]
    try:
        async with tls_pin.connect_pinned(base + "/echo", wrong, compression=None):
            return False, {"error": "connected despite the wrong pin"}
    except tls_pin.PinMismatch as error:
        return True, {"refused": str(error)}


async def run_client(base):
    scenarios = CLIENT_SCENARIOS + ([("wrong_pin", scenario_wrong_pin)] if PIN else [])
    for name, scenario in scenarios:
        try:
            ok, details = await asyncio.wait_for(scenario(base), STEP_TIMEOUT * 2)
            emit(scenario=name, ok=bool(ok), **details)
        except Exception as exc:  # report, never crash: the Swift test asserts on the lines
            emit(scenario=name, ok=False, error=f"{type(exc).__name__}: {exc}")
    emit(done=True)


# ---------------------------------------------------------------- server mode


def request_path(ws):
    request = getattr(ws, "request", None)
    return request.path if request is not None else getattr(ws, "path", "?")


async def handler(ws):
    path = request_path(ws)
    try:
        if path == "/fragmented":
            await ws.send(["frag", "mented ", "by ", "python ", "✓"])
        elif path == "/ping-you":
            waiter = await ws.ping(b"from python")
            await asyncio.wait_for(waiter, STEP_TIMEOUT)
            await ws.send("pong received")
        elif path == "/close-1001":
            await ws.close(1001, "python going away")
        elif path == "/malformed":
            ws.transport.write(b"\xc1\x01x")  # RSV1 set on a text frame
        async for message in ws:
            await ws.send(message)
    except ConnectionClosed:
        pass
    finally:
        await ws.wait_closed()
        received, reason, sent = close_codes(ws)
        emit(event="closed", path=path, received=received, reason=reason, sent=sent)


async def run_server(tls):
    # 1.5 MiB: a 1 MiB message passes, a 2 MiB one is closed with 1009.
    context = tls_pin.server_context(*tls) if tls else None
    async with serve(handler, "127.0.0.1", 0, compression=None, max_size=ONE_MIB + ONE_MIB // 2, ssl=context) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        emit(port=port)
        await asyncio.sleep(GLOBAL_TIMEOUT)


def main():
    global PIN
    if len(sys.argv) >= 3 and sys.argv[1] == "client":
        if len(sys.argv) >= 5 and sys.argv[3] == "--pin":
            PIN = sys.argv[4]
        asyncio.run(asyncio.wait_for(run_client(sys.argv[2].rstrip("/")), GLOBAL_TIMEOUT))
    elif len(sys.argv) >= 2 and sys.argv[1] == "server":
        tls = sys.argv[3:5] if len(sys.argv) >= 5 and sys.argv[2] == "--tls" else None
        try:
            asyncio.run(run_server(tls))
        except KeyboardInterrupt:
            pass
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
