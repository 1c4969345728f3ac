#!/usr/bin/env python3
"""An independent Apple Watch direct-mode client (Python standard library `http.client` +
`cryptography`) for the wire tests of `/api/nodes/watch/*` against `harness serve`.

    watch_peer.py BASE_URL BOOTSTRAP_TOKEN [--seed HEX64] [--cafile PEM]

It checks every route, status and limit it can reach on its own (also with chunked request
bodies, `chunked_too_large` and `chunked_result`) and prints one JSON line per step on stdout ({"step": NAME, "ok": true/false, ...}). These steps need the Gateway's operator:

    {"step": "waiting_invoke", "nodeId": ...}    the test makes the Gateway invoke device.info;
                                                  the peer's poll receives it (queued or held)
                                                  and posts a result
    {"step": "waiting_timeout"}                   the test moves the Gateway clock 20 s on and
                                                  writes one line to stdin; the held poll must
                                                  then answer event: null
    {"step": "waiting_advance", "seconds": N}     the test moves the Gateway clock N s on and
                                                  writes one line (the idle timeout)
    {"step": "waiting_large_invoke", "nodeId": ...}
                                                  the test invokes device.info with params over
                                                  64 KiB (the session closes) and writes one line
    {"step": "waiting_queue_events"}              the test sends 33 invokes with `--no-wait`
                                                  and writes one line
    {"step": "waiting_shutdown"}                  the test runs `restart --stay-down` and writes
                                                  one line; {"step": "waiting_resume"}: `resume`

The last line is {"step": "done", "failures": N}; the exit status is 1 when a check failed.
"""
import argparse
import base64
import hashlib
import http.client
import json
import ssl
import sys
import threading
import urllib.parse

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

BASE = "/api/nodes/watch"
FAILURES = 0


def emit(**fields):
    print(json.dumps(fields, sort_keys=True), flush=True)


def check(step, condition, **details):
    global FAILURES
    if not condition:
        FAILURES += 1
    emit(step=step, ok=bool(condition), **details)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def normalize_metadata(value):
    text = (value or "").strip()
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


class Identity:
    def __init__(self, seed):
        self.key = Ed25519PrivateKey.from_private_bytes(seed)
        raw = self.key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.public_key = b64url(raw)
        self.device_id = hashlib.sha256(raw).hexdigest()

    def connect_params(self, nonce, signed_at, auth, commands=("device.info", "device.status"), version="v3"):
        client = {"id": "openclaw-watchos", "displayName": "Python Watch", "version": "2026.9.1",
                  "platform": "watchOS 11.2", "deviceFamily": "Apple Watch", "mode": "node"}
        token = auth.get("bootstrapToken") or auth.get("deviceToken") or ""
        fields = [version, self.device_id, client["id"], client["mode"], "node", "", str(signed_at), token, nonce]
        if version == "v3":
            fields += [normalize_metadata(client["platform"]), normalize_metadata(client["deviceFamily"])]
        signature = self.key.sign("|".join(fields).encode("utf-8"))
        return {"minProtocol": 3, "maxProtocol": 4, "client": client, "role": "node", "caps": [],
                "commands": list(commands), "permissions": {"notifications": True}, "auth": auth,
                "device": {"id": self.device_id, "publicKey": self.public_key, "signature": b64url(signature),
                           "signedAt": signed_at, "nonce": nonce}}


class Gateway:
    def __init__(self, base_url, cafile):
        parsed = urllib.parse.urlsplit(base_url)
        self.host, self.port, self.secure = parsed.hostname, parsed.port, parsed.scheme == "https"
        self.context = ssl.create_default_context(cafile=cafile) if self.secure else None

    def request(self, method, path, body=None, token=None, timeout=30, chunked=False):
        """One request on a connection of its own; `chunked` sends the body with
        `Transfer-Encoding: chunked` in pieces of at most 1000 bytes."""
        if self.secure:
            connection = http.client.HTTPSConnection(self.host, self.port, timeout=timeout, context=self.context)
        else:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        headers = {}
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = "Bearer " + token
        if chunked and data is not None:
            pieces = [data[index:index + 1000] for index in range(0, len(data), 1000)]
            connection.request(method, BASE + path, body=iter(pieces), headers=headers, encode_chunked=True)
        else:
            connection.request(method, BASE + path, body=data, headers=headers)
        response = connection.getresponse()
        raw = response.read()
        connection.close()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode("utf-8", "replace")
        return response.status, {k.lower(): v for k, v in response.getheaders()}, parsed

    def challenge(self):
        status, _, body = self.request("GET", "/challenge")
        if status != 200:
            raise SystemExit(f"challenge answered {status}: {body}")
        return body


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("base_url")
    parser.add_argument("bootstrap_token")
    parser.add_argument("--seed", default="5a" * 32)
    parser.add_argument("--cafile")
    args = parser.parse_args()
    gateway = Gateway(args.base_url, args.cafile)
    me = Identity(bytes.fromhex(args.seed))

    # Challenge: shape, TTL, no-store; GET only.
    status, headers, body = gateway.request("GET", "/challenge")
    check("challenge", status == 200 and body.get("ok") is True and isinstance(body.get("nonce"), str)
          and body.get("expiresAtMs") == body.get("ts", 0) + 60000 and headers.get("cache-control") == "no-store",
          status=status, body=body)
    status, headers, _ = gateway.request("POST", "/challenge", body={})
    check("challenge_method", status == 405 and headers.get("allow") == "GET", status=status)

    # Connect refusals.
    nonce = gateway.challenge()
    params = me.connect_params(nonce["nonce"], nonce["ts"], {"bootstrapToken": args.bootstrap_token},
                               commands=("device.info", "canvas.present"))
    status, _, body = gateway.request("POST", "/connect", body=params)
    check("connect_canvas_refused", status == 400 and body["error"]["type"] == "invalid_request_error", status=status, body=body)
    nonce = gateway.challenge()
    params = me.connect_params(nonce["nonce"], nonce["ts"], {"bootstrapToken": args.bootstrap_token})
    params["unexpected"] = True
    status, _, body = gateway.request("POST", "/connect", body=params)
    check("connect_schema", status == 400 and body["error"]["message"].startswith("invalid connect params"), status=status)
    nonce = gateway.challenge()
    both = {"bootstrapToken": args.bootstrap_token, "deviceToken": "x"}
    status, _, body = gateway.request("POST", "/connect", body=me.connect_params(nonce["nonce"], nonce["ts"], both))
    check("connect_two_credentials", status == 401 and body == {"error": {"message": "Unauthorized", "type": "unauthorized"}},
          status=status)
    nonce = gateway.challenge()
    stale = me.connect_params(nonce["nonce"], nonce["ts"] - 120001, {"bootstrapToken": args.bootstrap_token})
    status, _, _ = gateway.request("POST", "/connect", body=stale)
    check("connect_skew", status == 401, status=status)
    status, _, _ = gateway.request("POST", "/connect", body=me.connect_params("never-issued", nonce["ts"],
                                                                          {"bootstrapToken": args.bootstrap_token}))
    check("connect_unknown_nonce", status == 401, status=status)
    nonce = gateway.challenge()
    forged = me.connect_params(nonce["nonce"], nonce["ts"], {"bootstrapToken": args.bootstrap_token})
    other = Identity(bytes.fromhex("11" * 32)).connect_params(nonce["nonce"], nonce["ts"], {"bootstrapToken": args.bootstrap_token})
    forged["device"]["signature"] = other["device"]["signature"]
    status, _, _ = gateway.request("POST", "/connect", body=forged)
    check("connect_bad_signature", status == 401, status=status)
    # A chunked body is read like any other (upstream's Node server decodes it) with the same
    # 64 KiB limit: over it, 413 with upstream's JSON body.
    status, _, body = gateway.request("POST", "/connect", body=b'{"pad":"' + b"x" * 70000 + b'"}', chunked=True)
    check("chunked_too_large", status == 413
          and body == {"error": {"message": "Payload too large", "type": "invalid_request_error"}}, status=status, body=body)

    # Pairing with the node setup code's bootstrap token (v2 proof, to show both layouts verify).
    nonce = gateway.challenge()
    params = me.connect_params(nonce["nonce"], nonce["ts"], {"bootstrapToken": args.bootstrap_token}, version="v2")
    status, headers, session = gateway.request("POST", "/connect", body=params)
    check("connect_bootstrap", status == 200 and session.get("ok") is True and session.get("nodeId") == me.device_id
          and session.get("protocol") == 4 and session.get("pollTimeoutMs") == 20000
          and isinstance(session.get("deviceToken"), str) and isinstance(session.get("sessionToken"), str),
          status=status, body={k: v for k, v in (session or {}).items() if k not in ("deviceToken", "sessionToken")})
    if status != 200:
        emit(step="done", failures=FAILURES)
        return 1
    device_token = session["deviceToken"]
    token = session["sessionToken"]
    # The same body again: the nonce was consumed; the bootstrap token is used up.
    status, _, _ = gateway.request("POST", "/connect", body=params)
    check("connect_replay", status == 401, status=status)
    nonce = gateway.challenge()
    status, _, _ = gateway.request("POST", "/connect", body=me.connect_params(nonce["nonce"], nonce["ts"],
                                                                          {"bootstrapToken": args.bootstrap_token}))
    check("bootstrap_single_use", status == 401, status=status)

    # Polls: no session, then an invoke through a held poll, the result, a repeated result.
    status, _, _ = gateway.request("POST", "/poll", token="not-a-session")
    check("poll_unknown_session", status == 401, status=status)
    status, headers, _ = gateway.request("GET", "/poll", token=token)
    check("poll_method", status == 405, status=status)
    emit(step="waiting_invoke", nodeId=me.device_id)
    status, _, body = gateway.request("POST", "/poll", token=token)
    event = (body or {}).get("event") or {}
    payload = event.get("payload") or {}
    check("poll_invoke", status == 200 and event.get("event") == "node.invoke.request" and payload.get("command") == "device.info",
          status=status, event=event.get("event"))
    result = {"id": payload.get("id"), "ok": True, "payloadJSON": json.dumps({"model": "Watch7,1"})}
    status, _, body = gateway.request("POST", "/result", body=result, token=token)
    check("result_accepted", status == 200 and body == {"ok": True}, status=status, body=body)
    status, _, body = gateway.request("POST", "/result", body=result, token=token)
    check("result_ignored", status == 200 and body == {"ok": True, "ignored": True}, status=status, body=body)
    status, _, body = gateway.request("POST", "/result", body={"id": 7}, token=token)
    check("result_invalid", status == 400, status=status)
    status, _, body = gateway.request("POST", "/result", body={"id": "no-such-invoke", "ok": True}, token=token, chunked=True)
    check("chunked_result", status == 200 and body == {"ok": True, "ignored": True}, status=status, body=body)

    # Two polls at a time: whichever reaches the Gateway second supersedes the other, which is
    # answered 409 at once; the survivor, once the Gateway clock moved 20 s on, answers event: null.
    answers = []
    done = threading.Condition()

    def poll():
        answer = gateway.request("POST", "/poll", token=token)
        with done:
            answers.append(answer)
            done.notify_all()

    threads = [threading.Thread(target=poll) for _ in range(2)]
    for thread in threads:
        thread.start()
    with done:
        done.wait_for(lambda: len(answers) >= 1, timeout=30)
    status, _, body = answers[0] if answers else (0, {}, None)
    check("poll_superseded", status == 409 and body == {"ok": False, "reason": "superseded poll"}, status=status, body=body)
    emit(step="waiting_timeout")
    sys.stdin.readline()
    for thread in threads:
        thread.join(30)
    status, _, body = answers[1] if len(answers) > 1 else (0, {}, None)
    check("poll_timeout", status == 200 and body == {"ok": True, "event": None}, status=status, body=body)

    # Disconnect, then reconnect with the device token alone (the bootstrap token is gone).
    status, _, body = gateway.request("POST", "/disconnect", token=token)
    check("disconnect", status == 200 and body == {"ok": True}, status=status)
    status, _, _ = gateway.request("POST", "/poll", token=token)
    check("poll_after_disconnect", status == 401, status=status)
    nonce = gateway.challenge()
    status, _, again = gateway.request("POST", "/connect", body=me.connect_params(nonce["nonce"], nonce["ts"],
                                                                               {"deviceToken": device_token}))
    check("connect_device_token", status == 200 and again.get("deviceToken") == device_token, status=status)
    token = (again or {}).get("sessionToken")

    # The POST routes refuse other methods with 405 and `Allow: POST` (upstream
    # sendMethodNotAllowed's default). Break tried: `allow: "GET"` in connect's refusal
    # (connect_method fails).
    for route in ("connect", "result", "disconnect"):
        status, headers, _ = gateway.request("GET", "/" + route, token=token)
        check(route + "_method", status == 405 and headers.get("allow") == "POST", status=status, allow=headers.get("allow"))
    # A body that is not JSON: 400 invalid_request_error about the JSON itself (upstream's
    # message is JSON.parse's own text, so it is only told apart from the refusals of a parsed
    # body); on result only once the session checked out. Break tried: readJSON reading an
    # unparsable body as `{}` (400 `invalid connect params`, `invalid node invoke result`).
    def json_refusal(status, body, shape_message):
        error = (body or {}).get("error", {}) if isinstance(body, dict) else {}
        message = error.get("message", "")
        return (status == 400 and error.get("type") == "invalid_request_error" and isinstance(message, str)
                and message != "" and not message.startswith(shape_message))
    status, _, body = gateway.request("POST", "/connect", body=b"{not json")
    check("connect_bad_json", json_refusal(status, body, "invalid connect params"), status=status, body=body)
    status, _, body = gateway.request("POST", "/result", body=b"{not json", token=token)
    check("result_bad_json", json_refusal(status, body, "invalid node invoke result"), status=status, body=body)
    # 401 without a session: no Authorization header, or a token that names none (before the
    # body is read). Breaks tried: a missing bearer token answered 400 (poll_no_bearer fails);
    # result reading its body before the session check (result_no_session: 400); disconnect
    # answering {ok: true} for an unknown session (disconnect_no_session: 200).
    unauthorized = {"error": {"message": "Unauthorized", "type": "unauthorized"}}
    status, _, body = gateway.request("POST", "/poll")
    check("poll_no_bearer", status == 401 and body == unauthorized, status=status, body=body)
    status, _, body = gateway.request("POST", "/result", body=b"{not json", token="not-a-session")
    check("result_no_session", status == 401 and body == unauthorized, status=status, body=body)
    status, _, body = gateway.request("POST", "/disconnect", token="not-a-session")
    check("disconnect_no_session", status == 401 and body == unauthorized, status=status, body=body)

    # At most 8 pending challenges per client: the ninth evicts the oldest, whose connect is then
    # 401, while the second still connects. Break tried: maxPendingChallengesPerClient = 9 (the
    # oldest connects: 200).
    nonces = [gateway.challenge() for _ in range(9)]
    status_oldest, _, _ = gateway.request("POST", "/connect", body=me.connect_params(
        nonces[0]["nonce"], nonces[0]["ts"], {"deviceToken": device_token}))
    status_second, _, session = gateway.request("POST", "/connect", body=me.connect_params(
        nonces[1]["nonce"], nonces[1]["ts"], {"deviceToken": device_token}))
    check("challenge_pending_limit", status_oldest == 401 and status_second == 200,
          oldest=status_oldest, second=status_second)
    token = (session or {}).get("sessionToken")

    # The 75 s idle timeout on the Gateway clock: 70 s on, a request still finds the session
    # (and touches it); 75 s after that the session is gone and a poll is 401. Breaks tried:
    # sessionIdleMs = 80 000 (the poll is held instead, and the peer's 10 s wait for it ends
    # session_idle_expired as a failure); sessionIdleMs = 60 000 (session_idle_alive: 401).
    emit(step="waiting_advance", seconds=70)
    sys.stdin.readline()
    status, _, body = gateway.request("POST", "/result", body={"id": "no-such-invoke", "ok": True}, token=token)
    check("session_idle_alive", status == 200 and body == {"ok": True, "ignored": True}, status=status, body=body)
    emit(step="waiting_advance", seconds=75)
    sys.stdin.readline()
    try:
        status, _, body = gateway.request("POST", "/poll", token=token, timeout=10)
    except OSError as error:
        status, body = 0, str(error)
    check("session_idle_expired", status == 401 and body == unauthorized, status=status, body=body)

    # An event over 64 KiB closes the session instead of being queued: the operator invokes
    # device.info with 66 000 bytes of params while no poll waits; the next poll is 401. Break
    # tried: maxQueuedEventBytes = 1 MiB (the event is queued, so the invoke waits for a result
    # and the test's wait for its `command.error` fails).
    nonce = gateway.challenge()
    status, _, session = gateway.request("POST", "/connect", body=me.connect_params(nonce["nonce"], nonce["ts"],
                                                                                 {"deviceToken": device_token}))
    token = (session or {}).get("sessionToken")
    emit(step="waiting_large_invoke", nodeId=me.device_id, connected=status)
    sys.stdin.readline()
    try:
        status, _, body = gateway.request("POST", "/poll", token=token, timeout=10)
    except OSError as error:
        status, body = 0, str(error)
    check("event_too_large", status == 401 and body == unauthorized, status=status,
          body=body if not isinstance(body, dict) or "event" not in body else "an event")

    # The queue of a session nobody polls holds 32 events and 512 KiB: the operator sends 33
    # invokes without waiting (`invoke --no-wait`), or 9 of about 60 KB each (8 fit in 512 KiB);
    # the one that overflows closes the session, so the next poll is 401. Breaks tried:
    # maxQueuedEvents = 64 (queue_overflow_events: the poll gets the first event, 200);
    # maxQueuedBytes = 1 MiB (queue_overflow_bytes: likewise).
    for step, name in (("waiting_queue_events", "queue_overflow_events"), ("waiting_queue_bytes", "queue_overflow_bytes")):
        nonce = gateway.challenge()
        status, _, session = gateway.request("POST", "/connect", body=me.connect_params(nonce["nonce"], nonce["ts"],
                                                                                     {"deviceToken": device_token}))
        token = (session or {}).get("sessionToken")
        emit(step=step, nodeId=me.device_id, connected=status)
        sys.stdin.readline()
        try:
            status, _, body = gateway.request("POST", "/poll", token=token, timeout=10)
        except OSError as error:
            status, body = 0, str(error)
        check(name, status == 401 and body == unauthorized, status=status,
              body=body if not isinstance(body, dict) or "event" not in body else "an event")

    # A restart (the console's `restart --stay-down`, alias `shutdown`) closes the Watch
    # transport as upstream's close prelude does: while the Gateway is down every Watch route
    # answers 503 {ok: false, error: "gateway shutting down"}; once it is back the old session
    # is gone (401) and challenges are served again. Breaks tried: no closeWatchSessions() in
    # shutdownForRestart (shutdown_unavailable: a 200 challenge and a held poll while down); no
    # reopenWatchRoutes() on resume (session_after_restart: the challenge stays 503).
    nonce = gateway.challenge()
    status, _, session = gateway.request("POST", "/connect", body=me.connect_params(nonce["nonce"], nonce["ts"],
                                                                                 {"deviceToken": device_token}))
    token = (session or {}).get("sessionToken")
    emit(step="waiting_shutdown", connected=status)
    sys.stdin.readline()
    shutting_down = {"ok": False, "error": "gateway shutting down"}
    def attempt(method, path, **options):
        try:
            return gateway.request(method, path, timeout=10, **options)
        except OSError as error:
            return 0, {}, str(error)
    down = [attempt("GET", "/challenge"), attempt("POST", "/poll", token=token), attempt("POST", "/connect", body={})]
    check("shutdown_unavailable", all(answer[0] == 503 and answer[2] == shutting_down for answer in down),
          statuses=[answer[0] for answer in down], bodies=[answer[2] for answer in down])
    emit(step="waiting_resume")
    sys.stdin.readline()
    status_poll, _, _ = attempt("POST", "/poll", token=token)
    status_challenge, _, nonce = attempt("GET", "/challenge")
    status_connect = 0
    if status_challenge == 200:
        # The pairing outlives the restart: the device token connects again (and the connect
        # resets the challenge rate limit for the check below).
        status_connect, _, _ = gateway.request("POST", "/connect", body=me.connect_params(
            nonce["nonce"], nonce["ts"], {"deviceToken": device_token}))
    check("session_after_restart", status_poll == 401 and status_challenge == 200 and status_connect == 200,
          poll=status_poll, challenge=status_challenge, connect=status_connect)

    status, _, body = gateway.request("GET", "/nope")
    check("unknown_route", status == 404 and body == {"ok": False, "error": "not found"}, status=status)
    # Every challenge counts in the watch-challenge rate limit (the connect above reset it): with
    # the rate limits on for loopback (serve --rate-limit-loopback) the eleventh within the minute
    # is refused with 429, Retry-After and upstream's rate_limited body.
    answers = [gateway.request("GET", "/challenge") for _ in range(11)]
    status, headers, body = answers[-1]
    check("challenge_rate_limited", all(answer[0] == 200 for answer in answers[:10]) and status == 429
          and headers.get("retry-after", "").isdigit() and int(headers["retry-after"]) > 0
          and body == {"error": {"message": "Too many failed authentication attempts. Please try again later.",
                                 "type": "rate_limited"}},
          statuses=[answer[0] for answer in answers], headers=headers, body=body)
    emit(step="done", failures=FAILURES)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
