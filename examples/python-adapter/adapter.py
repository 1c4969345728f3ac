#!/usr/bin/env python3
"""A skeleton adapter for `harness run --node-command` (docs/adapter-protocol.md, version 1).

Replace the `Client` class with calls into your own OpenClaw client. Everything the harness
sends arrives on stdin; everything you send back goes to stdout, one JSON object per line.
Diagnostics go to stderr (captured into the report) or as `log` messages.

    harness run --node-command "python3 examples/python-adapter/adapter.py"
"""
import json
import os
import signal
import sys


class Client:
    """Stand-in for the client under test: connects to the Gateway and keeps its state."""

    def __init__(self, gateway_url, token, state_dir):
        self.gateway_url = gateway_url
        self.token = token
        self.state_dir = state_dir

    def start(self):
        log("info", f"connecting to {self.gateway_url}")

    def stop(self):
        log("info", "stopping")

    def background_wake(self, trigger):
        log("info", f"background wake: {trigger}")

    def reset_identity(self):
        for name in os.listdir(self.state_dir):
            os.remove(os.path.join(self.state_dir, name))


def send(message):
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def log(level, message):
    send({"type": "log", "level": level, "message": message})


def main():
    client = Client(
        os.environ["OPENCLAW_GATEWAY_URL"],
        os.environ.get("OPENCLAW_GATEWAY_TOKEN"),
        os.environ["OPENCLAW_STATE_DIR"],
    )
    handlers = {
        "connect": lambda params: client.start(),
        "disconnect": lambda params: client.stop(),
        "background-wake": lambda params: client.background_wake(params.get("trigger", "background")),
        "reset-identity": lambda params: client.reset_identity(),
    }
    # Exit promptly on SIGTERM: the harness kills the process group after a grace period.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    send({"type": "hello", "adapterProtocol": 1, "client": {"name": "example", "version": "0.1"},
          "stimuli": sorted(handlers)})
    client.start()
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        if request.get("type") != "stimulus":
            continue
        handler = handlers.get(request.get("stimulus"))
        if handler is None:
            send({"type": "reply", "id": request["id"], "status": "unsupported"})
            continue
        try:
            handler(request.get("params") or {})
            send({"type": "reply", "id": request["id"], "status": "ok"})
        except Exception as error:  # report, do not crash: a crash ends the run with "error"
            send({"type": "reply", "id": request["id"], "status": "error", "message": str(error)})
    client.stop()


if __name__ == "__main__":
    main()
