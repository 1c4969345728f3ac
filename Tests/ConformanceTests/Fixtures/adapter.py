"""A minimal adapter written in Python, as a team would start one (see docs/adapter-protocol.md)."""
import json
import sys

STIMULI = ["connect", "disconnect", "reset-identity", "background-wake"]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


send({"type": "hello", "adapterProtocol": 1, "client": {"name": "python-fixture", "version": "0"}, "stimuli": STIMULI})
for line in sys.stdin:
    request = json.loads(line)
    if request.get("type") != "stimulus":
        continue
    if request["stimulus"] in STIMULI:
        send({"type": "log", "level": "debug", "message": "doing " + request["stimulus"]})
        send({"type": "reply", "id": request["id"], "status": "ok"})
    else:
        send({"type": "reply", "id": request["id"], "status": "unsupported"})
