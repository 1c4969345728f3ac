#!/usr/bin/env python3
"""An independent OpenClaw node client (Python `websockets` + `cryptography`) for interop tests
against `harness serve`.

    gateway_node_peer.py URL [--seed HEX64] [--timeout SECONDS] [--pin SHA256]

For a `wss://` URL with `--pin`, it trusts only the server certificate with that SHA-256
fingerprint (`harness serve --tls` prints it): another certificate ends the run with
{"step": "error", "message": "PinMismatch: ..."} before any Gateway frame is sent.

It runs the whole node flow and prints one JSON line per step on stdout:

    {"step": "pairing_required", "requestId": ..., "deviceId": ...}   (once per requestId)
    {"step": "paired", "deviceId": ..., "deviceToken": ...}           hello-ok after approval
    {"step": "ready", "deviceId": ...}                                 reconnected with the token
    {"step": "invoke", "id": ..., "command": ..., "paramsJSON": ...}  answered
    {"step": "presence", "handled": true, "reason": "persisted"}
    {"step": "done", "ok": true}
    {"step": "error", "message": ...}                                  (exit status 1)

While the device is not approved it retries on its own with backoff, as a real node does. The
signature is the v3 device-auth payload, signed with Ed25519 over the challenge nonce, with the
challenge `ts` as `signedAt`. The module also serves `gateway_operator_peer.py` as a library.
"""
import argparse
import asyncio
import base64
import hashlib
import json
import sys
import time
import uuid

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

try:  # websockets >= 13
    from websockets.asyncio.client import connect as ws_connect
except ImportError:  # pragma: no cover - websockets 12
    from websockets import connect as ws_connect  # type: ignore

import tls_pin

STEP_TIMEOUT = 30
PIN = None  # the pinned certificate fingerprint for wss:// URLs (--pin)


class PeerFailure(Exception):
    """A step did not go as the protocol says."""


def emit(**fields):
    print(json.dumps(fields, sort_keys=True), flush=True)


def report(name, ok, detail):
    """One check's line for the driving test: {"check": name, "ok": ..., "detail": ...}."""
    emit(check=name, ok=bool(ok), detail=detail)


async def checked(name, body):
    """Runs one check; an exception is reported as that check's failure, and the suite goes on."""
    try:
        ok, detail = await body()
    except Exception as exc:  # noqa: BLE001 - one failed check must not hide the others
        ok, detail = False, {"exception": f"{type(exc).__name__}: {exc}"}
    report(name, ok, detail)
    return ok


def run_reporting(action):
    """Runs a peer (`action`, no arguments): any failure is one `error` line and exit status 1,
    success a `done` line."""
    try:
        action()
    except Exception as exc:  # report every failure as one line, then fail
        emit(step="error", message=f"{type(exc).__name__}: {exc}")
        sys.exit(1)
    emit(step="done", ok=True)


async def console(command):
    """Asks the driving test to type `command` on the console and waits for its "go"."""
    emit(step="console", command=command)
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    if line.strip() != "go":
        raise PeerFailure(f"expected 'go' after {command!r}, got {line!r}")


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def normalize_metadata(value):
    """v3 payload metadata: trimmed, ASCII A-Z lower-cased, other characters untouched."""
    text = (value or "").strip()
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


class Identity:
    """An Ed25519 device identity: id = hex SHA-256 of the raw public key."""

    def __init__(self, seed: bytes):
        self.key = Ed25519PrivateKey.from_private_bytes(seed)
        raw = self.key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.public_key = b64url(raw)
        self.device_id = hashlib.sha256(raw).hexdigest()

    def proof(self, *, client, role, scopes, token, nonce, signed_at):
        payload = "|".join([
            "v3", self.device_id, client["id"], client["mode"], role, ",".join(scopes), str(signed_at),
            token or "", nonce, normalize_metadata(client.get("platform")),
            normalize_metadata(client.get("deviceFamily")),
        ])
        signature = self.key.sign(payload.encode("utf-8"))
        return {"id": self.device_id, "publicKey": self.public_key, "signature": b64url(signature),
                "signedAt": signed_at, "nonce": nonce}


NODE_CLIENT = {"id": "node-host", "displayName": "Python interop node", "version": "2026.8.1",
               "platform": "macOS 15.3.0", "deviceFamily": "Mac", "mode": "node"}


class Session:
    """One WebSocket connection: requests matched to responses by id, events kept in order."""

    def __init__(self, ws, challenge):
        self.ws = ws
        self.challenge = challenge
        self.events = []  # events seen while waiting for responses, not yet consumed

    @classmethod
    async def open(cls, url):
        if url.startswith("wss://"):
            ws = await tls_pin.connect_pinned(url, PIN, compression=None, max_size=None, open_timeout=STEP_TIMEOUT)
        else:
            ws = await ws_connect(url, compression=None, max_size=None, open_timeout=STEP_TIMEOUT)
        frame = json.loads(await asyncio.wait_for(ws.recv(), STEP_TIMEOUT))
        if frame.get("type") != "event" or frame.get("event") != "connect.challenge":
            raise PeerFailure(f"first frame is not connect.challenge: {frame}")
        payload = frame.get("payload") or {}
        if not isinstance(payload.get("nonce"), str) or not isinstance(payload.get("ts"), int):
            raise PeerFailure(f"malformed connect.challenge: {frame}")
        return cls(ws, payload)

    async def next_frame(self, timeout=STEP_TIMEOUT):
        return json.loads(await asyncio.wait_for(self.ws.recv(), timeout))

    async def request(self, method, params=None, timeout=STEP_TIMEOUT):
        request_id = str(uuid.uuid4())
        frame = {"type": "req", "id": request_id, "method": method}
        if params is not None:
            frame["params"] = params
        await self.ws.send(json.dumps(frame))
        return await self.next_matching(lambda frame: frame.get("type") == "res" and frame.get("id") == request_id,
                                        timeout, f"no response to {method}")

    async def event(self, name, where=lambda payload: True, timeout=STEP_TIMEOUT):
        """The next event `name` whose payload satisfies `where` (earlier buffered ones first)."""
        for index, frame in enumerate(self.events):
            if frame.get("event") == name and where(frame.get("payload")):
                del self.events[index]
                return frame
        return await self.next_matching(
            lambda frame: frame.get("type") == "event" and frame.get("event") == name and where(frame.get("payload")),
            timeout, f"no {name} event")

    async def next_matching(self, matches, timeout, missing):
        """The next frame that `matches` accepts within `timeout` (PeerFailure `missing` after
        it); the events passed over on the way are buffered for `event`."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise PeerFailure(missing)
            frame = await self.next_frame(remaining)
            if matches(frame):
                return frame
            if frame.get("type") == "event":
                self.events.append(frame)

    async def connect(self, identity, *, client, role, scopes, token=None, caps=None, commands=None):
        nonce, signed_at = self.challenge["nonce"], self.challenge["ts"]
        params = {
            "minProtocol": 3 if role == "node" else 4, "maxProtocol": 4, "client": client,
            "role": role, "scopes": scopes, "caps": caps or [], "locale": "en-US", "userAgent": "python-interop",
            "device": identity.proof(client=client, role=role, scopes=scopes, token=token, nonce=nonce,
                                     signed_at=signed_at),
        }
        if commands:
            params["commands"] = commands
        if token:
            params["auth"] = {"token": token}
        return await self.request("connect", params)

    async def close(self):
        await self.ws.close()


async def open_operator(url, identity, *, client, scopes, refused="the operator was refused"):
    """An operator session on `url`, connected with `identity`; PeerFailure(`refused`: error)
    when the Gateway refuses it."""
    session = await Session.open(url)
    hello = await session.connect(identity, client=client, role="operator", scopes=scopes)
    if not hello.get("ok"):
        raise PeerFailure(f"{refused}: {hello.get('error')}")
    return session


async def connect_until_paired(url, identity, *, client, role, scopes, deadline, on_pairing_required):
    """Connects with backoff until hello-ok; returns (session, hello payload)."""
    delay = 0.2
    announced = set()
    while True:
        session = await Session.open(url)
        response = await session.connect(identity, client=client, role=role, scopes=scopes,
                                         caps=["device"] if role == "node" else [],
                                         commands=["device.info"] if role == "node" else None)
        if response.get("ok"):
            hello = response.get("payload") or {}
            if hello.get("type") != "hello-ok":
                raise PeerFailure(f"connect succeeded without hello-ok: {response}")
            return session, hello
        error = response.get("error") or {}
        details = error.get("details") or {}
        if error.get("code") != "NOT_PAIRED" or details.get("code") != "PAIRING_REQUIRED":
            raise PeerFailure(f"unexpected connect error: {error}")
        request_id = details.get("requestId")
        if request_id not in announced:
            announced.add(request_id)
            on_pairing_required(request_id, details)
        await session.close()
        if time.monotonic() + delay > deadline:
            raise PeerFailure("not approved before the deadline")
        await asyncio.sleep(delay)  # the client's own reconnect backoff
        delay = min(delay * 1.5, 1.0)


async def run_node(url, seed, timeout):
    identity = Identity(seed)
    deadline = time.monotonic() + timeout

    def pairing_required(request_id, details):
        if details.get("deviceId") != identity.device_id:
            raise PeerFailure(f"PAIRING_REQUIRED names another device: {details}")
        emit(step="pairing_required", requestId=request_id, deviceId=identity.device_id)

    session, hello = await connect_until_paired(url, identity, client=NODE_CLIENT, role="node", scopes=[],
                                                deadline=deadline, on_pairing_required=pairing_required)
    auth = hello.get("auth") or {}
    token = auth.get("deviceToken")
    if auth.get("role") != "node" or auth.get("scopes") != [] or not isinstance(token, str) or not token:
        raise PeerFailure(f"hello-ok.auth is not a node grant with a device token: {auth}")
    emit(step="paired", deviceId=identity.device_id, deviceToken=token, protocol=hello.get("protocol"))
    await session.close()

    # Reconnect with the stored device token, as a paired node does.
    session = await Session.open(url)
    response = await session.connect(identity, client=NODE_CLIENT, role="node", scopes=[], token=token,
                                     caps=["device"], commands=["device.info"])
    if not response.get("ok"):
        raise PeerFailure(f"reconnect with the device token failed: {response.get('error')}")
    reused = ((response.get("payload") or {}).get("auth") or {}).get("deviceToken")
    if reused != token:
        raise PeerFailure(f"the reconnect was issued another token: {reused}")
    emit(step="ready", deviceId=identity.device_id)

    invoke = await session.event("node.invoke.request", timeout=max(1, deadline - time.monotonic()))
    request = invoke.get("payload") or {}
    if request.get("nodeId") != identity.device_id:
        raise PeerFailure(f"invoke for another node: {request}")
    params = json.loads(request["paramsJSON"]) if request.get("paramsJSON") else None
    result = {"model": "PythonNode", "platform": NODE_CLIENT["platform"], "command": request.get("command"),
              "params": params}
    ack = await session.request("node.invoke.result", {
        "id": request["id"], "nodeId": identity.device_id, "ok": True, "payloadJSON": json.dumps(result, sort_keys=True),
    })
    if not ack.get("ok") or (ack.get("payload") or {}).get("ok") is not True:
        raise PeerFailure(f"node.invoke.result was not acknowledged: {ack}")
    emit(step="invoke", id=request["id"], command=request.get("command"), paramsJSON=request.get("paramsJSON"))

    beacon = await session.request("node.event", {
        "event": "node.presence.alive",
        "payloadJSON": json.dumps({"trigger": "background", "sentAtMs": int(time.time() * 1000)}),
    })
    payload = beacon.get("payload") or {}
    if not beacon.get("ok") or payload.get("event") != "node.presence.alive":
        raise PeerFailure(f"unexpected node.event reply: {beacon}")
    emit(step="presence", handled=payload.get("handled"), reason=payload.get("reason"))
    await session.close()


def seed_argument(text):
    data = bytes.fromhex(text)
    if len(data) != 32:
        raise argparse.ArgumentTypeError("the seed is 32 bytes (64 hex digits)")
    return data


def main(runner):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--seed", type=seed_argument, default=bytes(range(32)))
    parser.add_argument("--timeout", type=float, default=90)
    parser.add_argument("--pin", default=None, help="SHA-256 fingerprint of the server certificate (wss://)")
    args = parser.parse_args()
    global PIN
    PIN = args.pin
    run_reporting(lambda: asyncio.run(asyncio.wait_for(runner(args.url, args.seed, args.timeout), args.timeout + 5)))


if __name__ == "__main__":
    main(run_node)
