#!/usr/bin/env python3
"""A small but real OpenClaw node client in Python, driven by `harness run --node-command`.

The client half speaks the Gateway protocol over a real WebSocket (`websockets`) and signs its
connect with a real Ed25519 key (`cryptography`): connect.challenge -> connect -> hello-ok,
pairing retries, device-token storage, invoke results, presence beacons, reconnect backoff.
The adapter half (bottom of the file) speaks docs/adapter-protocol.md on stdin/stdout and turns
each stimulus into a call on the client. To test your own client, keep the adapter half and
replace `NodeClient` with calls into your code.

    python3 -m venv .venv && .venv/bin/pip install -r examples/python-adapter/requirements.txt
    harness run --node-command ".venv/bin/python3 examples/python-adapter/adapter.py"

§N marks the rule of docs/protocol.md that a line follows (the sections `harness explain ID`
cites). Python 3.11+.
"""
import asyncio
import base64
import hashlib
import json
import os
import signal
import sys
import time
import uuid

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from websockets.exceptions import ConnectionClosed, WebSocketException

try:  # websockets >= 13
    from websockets.asyncio.client import connect as ws_connect
except ImportError:  # websockets 12
    from websockets import connect as ws_connect  # type: ignore

# What this client can be made to do. `restart` is left out: the harness then restarts the whole
# process, which exercises the state directory for real.
STIMULI = ["background-wake", "connect", "disconnect", "enter-background", "enter-foreground", "reset-identity"]
CLIENT = {"id": "node-host", "displayName": "Python example node", "version": "0.2.0",
          "platform": "linux", "mode": "node"}
# debug.* are the harness's test commands (INV-004..006, INV-008); a real app keeps them in debug builds.
COMMANDS = ["device.info", "system.notify", "camera.list", "debug.slow", "debug.counter"]
BACKOFF_FIRST, BACKOFF_MAX = 0.5, 8.0  # seconds; doubling in between (§11.3)
BEACON_MIN_INTERVAL = 600  # seconds without a new beacon after a durable one (§6.6)
TRIGGERS = {"background", "silent_push", "bg_app_refresh", "significant_location", "manual", "connect"}
# Refusals after which only a person can help: stop reconnecting until `connect` (§11.3, §3.6).
PAUSING_CODES = {"PROTOCOL_MISMATCH", "AUTH_TOKEN_MISSING", "AUTH_TOKEN_NOT_CONFIGURED", "AUTH_PASSWORD_MISSING",
                 "AUTH_PASSWORD_MISMATCH", "AUTH_PASSWORD_NOT_CONFIGURED", "AUTH_RATE_LIMITED",
                 "AUTH_BOOTSTRAP_TOKEN_INVALID", "AUTH_SCOPE_MISMATCH", "DEVICE_IDENTITY_REQUIRED"}


def log(text):
    """Diagnostics go to stderr: stdout belongs to the adapter protocol."""
    print(f"[python-node] {text}", file=sys.stderr, flush=True)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def normalize_metadata(value):
    """v3 payload metadata (§3.9): trimmed, ASCII A-Z lower-cased, other characters untouched."""
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in (value or "").strip())


def parse_frame(raw):
    """A Gateway frame (text or binary message) as a dict, or None for anything else."""
    try:
        frame = json.loads(raw)
    except ValueError:
        return None
    return frame if isinstance(frame, dict) else None


class Refused(Exception):
    """The Gateway answered `connect` with ok:false; `code` is details.code, else error.code."""

    def __init__(self, error):
        error = error if isinstance(error, dict) else {}
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.error = error
        details = error.get("details")
        self.details = details if isinstance(details, dict) else {}
        self.code = self.details.get("code") or error.get("code")


class DeviceState:
    """The Ed25519 identity and the device token, as JSON files in OPENCLAW_STATE_DIR.

    A real app keeps the private key in the platform's key store; plain files keep this short."""

    def __init__(self, directory):
        self.identity_path = os.path.join(directory, "identity.json")
        self.tokens_path = os.path.join(directory, "tokens.json")
        self.load()

    @staticmethod
    def read(path):
        try:
            with open(path, encoding="utf-8") as file:
                value = json.load(file)
            return value if isinstance(value, dict) else {}
        except (OSError, ValueError):
            return {}  # missing or damaged: start over rather than crash

    @staticmethod
    def write(path, value):
        with open(path + ".tmp", "w", encoding="utf-8") as file:
            json.dump(value, file)
        os.replace(path + ".tmp", path)  # atomic: a kill mid-write never leaves half a file

    def load(self):
        try:
            seed = bytes.fromhex(self.read(self.identity_path).get("seed", ""))
        except (TypeError, ValueError):
            seed = b""
        if len(seed) != 32:
            seed = os.urandom(32)
            self.write(self.identity_path, {"seed": seed.hex()})
        self.key = Ed25519PrivateKey.from_private_bytes(seed)
        raw = self.key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.public_key = b64url(raw)  # §3.8: unpadded base64url of the raw 32 bytes
        self.device_id = hashlib.sha256(raw).hexdigest()  # §3.8: hex SHA-256 of the raw key
        token = self.read(self.tokens_path).get("node")
        self.token = token if isinstance(token, str) and token else None

    def save_token(self, token):
        self.token = token
        self.write(self.tokens_path, {"node": token})

    def forget_token(self):
        self.token = None
        self.write(self.tokens_path, {})

    def reset(self):
        """A reinstall: a new key pair and no tokens (§5.14)."""
        for path in (self.identity_path, self.tokens_path):
            if os.path.exists(path):
                os.remove(path)
        self.load()

    def sign(self, text):
        return b64url(self.key.sign(text.encode("utf-8")))


class NodeClient:
    """One node connection to the Gateway, kept up by a reconnect loop (`run`)."""

    def __init__(self, url, shared_token, state):
        self.url, self.shared_token, self.state = url, shared_token, state
        self.loop_task = None  # the reconnect loop, while the client wants to be connected
        self.ws = None  # the socket of the current session (after hello-ok)
        self.session_tasks = set()  # invokes and beacons of the current session
        self.pending = {}  # our request id -> future of its response
        self.wake = asyncio.Event()  # cuts a backoff sleep short (connect, background wake)
        self.queued_wake = None  # trigger of a wake that waits for the next session
        self.durable_beacon_at = None  # monotonic time of the last handled:true beacon
        self.in_background = False
        self.counter = 0
        self.idempotent = {}  # idempotencyKey -> the first result (§6.3)
        self.announced_requests = set()

    def start(self):
        if self.loop_task is None or self.loop_task.done():
            self.loop_task = asyncio.create_task(self.run())
        self.wake.set()

    async def stop(self):
        """Closes the connection and stays disconnected until `start`."""
        task, self.loop_task = self.loop_task, None
        if task is not None and not task.done():
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    async def run(self):
        delay = BACKOFF_FIRST
        while True:
            wait = delay
            try:
                await self.session()  # returns when an established session ends
                wait = delay = BACKOFF_FIRST  # a session happened: start the backoff over
            except Refused as refused:
                if not self.after_refusal(refused):
                    return  # paused: only a `connect` stimulus resumes
                retry_after = refused.error.get("retryAfterMs")
                if type(retry_after) in (int, float):  # UNAVAILABLE while starting (§3.7), AUTH_RATE_LIMITED
                    wait = max(wait, min(retry_after / 1000, 60))
            except ConnectionClosed as closed:
                if closed.rcvd is not None and closed.rcvd.code == 1002:
                    log("closed with 1002 (protocol mismatch): not reconnecting")
                    return
                log(f"connection closed before hello-ok: {closed}")
            except (OSError, TimeoutError, WebSocketException) as problem:
                log(f"connection failed: {problem!r}")
            delay = min(delay * 2, BACKOFF_MAX)
            self.wake.clear()
            try:
                async with asyncio.timeout(wait):
                    await self.wake.wait()
            except TimeoutError:
                pass

    def after_refusal(self, refused):
        """Applies §11.3 to a refused connect; returns whether to keep reconnecting."""
        if refused.code == "PAIRING_REQUIRED":
            request_id = refused.details.get("requestId")
            if request_id not in self.announced_requests:
                self.announced_requests.add(request_id)
                log(f"pairing required (request {request_id}); retrying with the same identity until approved")
            if self.state.token and not self.shared_token:
                self.state.forget_token()  # a device that must pair again holds no valid token
            return True
        if refused.code in ("AUTH_TOKEN_MISMATCH", "AUTH_DEVICE_TOKEN_MISMATCH") and not self.shared_token:
            log("the stored device token was refused; forgetting it and pairing again (§5.6)")
            self.state.forget_token()
            return True
        if refused.code == "AUTH_RATE_LIMITED" and type(refused.error.get("retryAfterMs")) in (int, float):
            log(f"rate limited; retrying in {refused.error['retryAfterMs']} ms")  # the lockout left (rate-limiting.md)
            return True
        if refused.code in PAUSING_CODES or refused.code == "AUTH_TOKEN_MISMATCH":
            log(f"connect refused with {refused.code}: not reconnecting until told to")
            return False
        log(f"connect refused: {refused}")
        return True

    async def session(self):
        async with ws_connect(self.url, open_timeout=10, close_timeout=1, max_size=None, compression=None) as ws:
            challenge = await self.wait_for_challenge(ws)
            hello = await self.handshake(ws, challenge)
            auth = hello.get("auth") if isinstance(hello.get("auth"), dict) else {}
            if isinstance(auth.get("deviceToken"), str) and auth["deviceToken"] != self.state.token:
                self.state.save_token(auth["deviceToken"])  # presented on every later connect (§5.4)
            policy = hello.get("policy") if isinstance(hello.get("policy"), dict) else {}
            tick_ms = policy.get("tickIntervalMs")
            tick_ms = tick_ms if type(tick_ms) is int and tick_ms > 0 else 30_000
            log(f"connected as {self.state.device_id[:12]}... (protocol {hello.get('protocol')})")
            self.ws = ws
            try:
                if self.queued_wake is not None:
                    trigger, self.queued_wake = self.queued_wake, None
                    self.spawn(self.beacon(ws, trigger))
                await self.read_loop(ws, tick_ms)
            except ConnectionClosed as closed:
                log(f"session ended: {closed}")
            finally:
                # The session's work dies with its socket: a late invoke result must never
                # reach a newer socket (§6.1).
                self.ws = None
                for task in self.session_tasks:
                    task.cancel()
                self.session_tasks.clear()

    async def wait_for_challenge(self, ws):
        async with asyncio.timeout(10):
            while True:
                frame = parse_frame(await ws.recv())
                if frame and frame.get("type") == "event" and frame.get("event") == "connect.challenge":
                    payload = frame.get("payload") if isinstance(frame.get("payload"), dict) else {}
                    nonce, ts = payload.get("nonce"), payload.get("ts")
                    # §3.2: a usable challenge has a non-empty nonce and an integer ts >= 0.
                    if isinstance(nonce, str) and nonce.strip() and type(ts) is int and ts >= 0:
                        return payload

    async def handshake(self, ws, challenge):
        token = self.shared_token or self.state.token  # §5.2: shared token first, else the device token
        signed_at, nonce = challenge["ts"], challenge["nonce"]  # the Gateway clock: no skew (§3.11)
        signed = "|".join(["v3", self.state.device_id, CLIENT["id"], CLIENT["mode"], "node", "", str(signed_at),
                           token or "", nonce, normalize_metadata(CLIENT["platform"]),
                           normalize_metadata(CLIENT.get("deviceFamily"))])
        params = {
            "minProtocol": 3, "maxProtocol": 4, "client": CLIENT, "role": "node", "scopes": [],
            "caps": ["device", "camera"], "commands": COMMANDS, "locale": "en-US",
            "userAgent": f"openclaw-python-example/{CLIENT['version']}",
            "device": {"id": self.state.device_id, "publicKey": self.state.public_key,
                       "signature": self.state.sign(signed), "signedAt": signed_at, "nonce": nonce},
        }
        if token:
            params["auth"] = {"token": token}
        request_id = str(uuid.uuid4())
        await ws.send(json.dumps({"type": "req", "id": request_id, "method": "connect", "params": params}))
        async with asyncio.timeout(30):  # generous: a slow Gateway is not a dead one (§11.2)
            while True:
                frame = parse_frame(await ws.recv())
                if frame and frame.get("type") == "res" and frame.get("id") == request_id:
                    break
        if frame.get("ok") is not True:
            raise Refused(frame.get("error"))
        payload = frame.get("payload")
        if not isinstance(payload, dict) or payload.get("type") != "hello-ok":
            raise Refused({"code": "INVALID_HELLO", "message": "connect succeeded without hello-ok"})
        return payload

    async def read_loop(self, ws, tick_ms):
        while True:
            try:
                # Liveness (§11.1): any frame counts; 2x the tick interval of silence is a dead link.
                # (asyncio.timeout, never wait_for: on 3.11 wait_for can swallow a cancellation that
                # races with a frame arriving, and `disconnect` would then be lost.)
                async with asyncio.timeout(2 * tick_ms / 1000):
                    raw = await ws.recv()
            except TimeoutError:
                log("no tick for 2x tickIntervalMs; dropping the socket")
                await ws.close(4000, "tick timeout")
                return
            frame = parse_frame(raw)
            if frame is None:
                continue
            if frame.get("type") == "res":
                future = self.pending.get(frame.get("id"))
                if future is not None and not future.done():
                    future.set_result(frame)
            elif frame.get("type") == "event" and frame.get("event") == "node.invoke.request":
                if isinstance(frame.get("payload"), dict):
                    self.spawn(self.answer_invoke(ws, frame["payload"]))
            # Everything else (tick, presence, unknown events and fields) is ignored (§2.3).

    def spawn(self, coroutine):
        task = asyncio.create_task(coroutine)
        self.session_tasks.add(task)
        task.add_done_callback(self.finished)

    def finished(self, task):
        self.session_tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log(f"session task failed: {task.exception()!r}")  # e.g. the socket closed mid-request

    async def request(self, ws, method, params, timeout=15):
        request_id = str(uuid.uuid4())
        self.pending[request_id] = asyncio.get_running_loop().create_future()
        try:
            await ws.send(json.dumps({"type": "req", "id": request_id, "method": method, "params": params}))
            async with asyncio.timeout(timeout):
                return await self.pending[request_id]
        finally:
            self.pending.pop(request_id, None)

    async def answer_invoke(self, ws, invoke):
        """Exactly one node.invoke.result per node.invoke.request (§6.3-6.4)."""
        command, key = invoke.get("command"), invoke.get("idempotencyKey")
        timeout_ms = invoke.get("timeoutMs")
        timeout_ms = timeout_ms if type(timeout_ms) is int and timeout_ms >= 0 else 30_000
        if isinstance(key, str) and key in self.idempotent:
            result = self.idempotent[key]  # a repeat: the first answer, without running again
        else:
            try:
                params = json.loads(invoke["paramsJSON"]) if invoke.get("paramsJSON") else {}
            except (TypeError, ValueError):
                params = None
            # Answer a little before the Gateway gives up (0 = no limit), like the Swift node.
            budget = None if timeout_ms == 0 else (timeout_ms - min(1000, timeout_ms / 5)) / 1000
            try:
                async with asyncio.timeout(budget):
                    result = await self.run_command(command, params)
            except TimeoutError:
                result = {"ok": False, "error": {"code": "UNAVAILABLE", "message": "node invoke timed out"}}
            if isinstance(key, str) and result["ok"]:
                self.idempotent[key] = result
        if ws is not self.ws:
            return  # the session ended meanwhile: drop the result (§6.1)
        reply = await self.request(ws, "node.invoke.result", {"id": invoke.get("id"), "nodeId": self.state.device_id,
                                                               **result})
        if reply.get("ok") is not True:
            log(f"node.invoke.result for {command} was refused: {reply.get('error')}")

    async def run_command(self, command, params):
        def ok(payload):
            return {"ok": True, "payloadJSON": json.dumps(payload)}

        def failure(code, message):
            return {"ok": False, "error": {"code": code, "message": message}}

        if not isinstance(params, dict):
            return failure("INVALID_REQUEST", "paramsJSON is not a JSON object")
        if self.in_background and isinstance(command, str) and command.startswith(("camera.", "canvas.", "screen.")):
            return failure("NODE_BACKGROUND_UNAVAILABLE", "app is in the background")
        if command == "device.info":
            return ok({"deviceName": CLIENT["displayName"], "model": "PythonNode", "systemName": "Linux",
                       "appVersion": CLIENT["version"], "deviceId": self.state.device_id})
        if command == "system.notify":
            text = params.get("title") or params.get("body")
            if not isinstance(text, str) or not text:
                return failure("INVALID_REQUEST", "system.notify needs a title or body")
            log(f"notification: {text}")
            return ok({"delivered": True})
        if command == "camera.list":
            return ok({"devices": [{"id": "front", "position": "front"}]})
        if command == "debug.slow":
            duration = params.get("durationMs", 600_000)
            if type(duration) not in (int, float) or not 0 <= duration <= 86_400_000:
                return failure("INVALID_REQUEST", "durationMs must be a number of milliseconds up to a day")
            await asyncio.sleep(duration / 1000)
            return ok({"sleptMs": duration})
        if command == "debug.counter":
            self.counter += 1
            return ok({"count": self.counter})
        return failure("INVALID_REQUEST", f"unknown command: {command}")

    def background_wake(self, trigger):
        """A wake (§6.6): send the presence beacon now, or reconnect first and send it then."""
        trigger = trigger if isinstance(trigger, str) and trigger in TRIGGERS else "background"
        if self.ws is not None:
            self.spawn(self.beacon(self.ws, trigger))
        else:
            self.queued_wake = trigger
            self.start()  # connect now instead of waiting out the backoff

    async def beacon(self, ws, trigger):
        if self.durable_beacon_at is not None and time.monotonic() - self.durable_beacon_at < BEACON_MIN_INTERVAL:
            log("presence beacon skipped: a durable one was recorded less than 10 minutes ago")
            return
        payload = {"trigger": trigger, "sentAtMs": int(time.time() * 1000), "displayName": CLIENT["displayName"],
                   "version": CLIENT["version"], "platform": CLIENT["platform"]}
        reply = await self.request(ws, "node.event", {"event": "node.presence.alive", "payloadJSON": json.dumps(payload)})
        result = reply.get("payload") if isinstance(reply.get("payload"), dict) else {}
        # Only handled:true is a durable record; a bare {ok:true} (older Gateways) or handled:false
        # means the next wake sends the beacon again.
        if reply.get("ok") is True and result.get("handled") is True:
            self.durable_beacon_at = time.monotonic()
            log(f"presence beacon recorded ({result.get('reason')})")
        else:
            log(f"presence beacon not durable: {result or reply.get('error')}")

    async def reset_identity(self):
        await self.stop()
        self.state.reset()
        self.durable_beacon_at, self.queued_wake = None, None
        self.idempotent.clear()
        self.announced_requests.clear()
        log(f"new identity {self.state.device_id[:12]}...")
        self.start()


# ---- The adapter half: docs/adapter-protocol.md on stdin/stdout. ----

def send(message):
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


async def perform(client, stimulus, params):
    """Makes the client do `stimulus`; returns the reply status."""
    if stimulus == "connect":
        client.start()
    elif stimulus == "disconnect":
        await client.stop()  # replies once the socket is closed
    elif stimulus == "reset-identity":
        await client.reset_identity()
    elif stimulus == "background-wake":
        client.background_wake(params.get("trigger"))
    elif stimulus in ("enter-background", "enter-foreground"):
        client.in_background = stimulus == "enter-background"
    else:
        return "unsupported"
    return "ok"


async def serve_stimuli(client, reader):
    while True:
        try:
            line = await reader.readline()
            message = json.loads(line) if line else None
        except ValueError:  # not JSON, or longer than the reader's limit
            log("ignored an input line that is not JSON")
            continue
        if not line:
            return  # end of input: the harness is done with us
        if not isinstance(message, dict) or message.get("type") != "stimulus":
            continue
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        reply = {"type": "reply", "id": message.get("id")}
        try:
            reply["status"] = await perform(client, message.get("stimulus"), params)
        except Exception as error:  # report, do not crash: a crash ends the run with "error"
            reply.update(status="error", message=f"{type(error).__name__}: {error}")
        send(reply)


async def main():
    url, state_dir = os.environ.get("OPENCLAW_GATEWAY_URL"), os.environ.get("OPENCLAW_STATE_DIR")
    if not url or not state_dir:
        log("OPENCLAW_GATEWAY_URL and OPENCLAW_STATE_DIR must be set (this runs under harness run --node-command)")
        return 2
    os.makedirs(state_dir, exist_ok=True)
    client = NodeClient(url, os.environ.get("OPENCLAW_GATEWAY_TOKEN") or None, DeviceState(state_dir))
    send({"type": "hello", "adapterProtocol": 1, "client": {"name": "openclaw-python-example", "version": CLIENT["version"]},
          "stimuli": STIMULI})
    client.start()  # an app connects on launch

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    stimuli = asyncio.create_task(serve_stimuli(client, reader))
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stimuli.cancel)  # SIGTERM ends us like end of input
    try:
        await stimuli
    except asyncio.CancelledError:
        pass
    try:
        async with asyncio.timeout(1):  # the harness kills the group after 2 s
            await client.stop()
    except TimeoutError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
