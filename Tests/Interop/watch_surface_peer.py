#!/usr/bin/env python3
"""An independent Apple Watch (direct mode over HTTP, Python `http.client` + `cryptography`) and
operator (Python `websockets`) that check that a Watch's connect goes through the Gateway's node
command surface rules like a WebSocket node's (docs/protocol.md §6.7, §13), against
`harness serve --pairing auto --node-command-deny device.status`.

    watch_surface_peer.py WS_URL HTTP_BASE BOOTSTRAP_TOKEN [--timeout SECONDS]
    watch_surface_peer.py WS_URL HTTP_BASE TOKEN... --pairing-limit

One JSON line per check on stdout ({"check": NAME, "ok": BOOL, "detail": ...}):

    watch-paired              the node setup code pairs the Watch with device.info; no node
                              pairing request is left for the operator
    watch-widened-requested   a device-token reconnect declaring device.info + system.notify opens
                              a node pairing request (node.pair.requested, isRepair) for both
    watch-effective           node.list shows only the approved device.info in effect
    watch-withheld-refused    node.invoke system.notify is refused as pending approval
    watch-approved            node.pair.approve: node.pair.resolved approved
    watch-approved-effective  after the next reconnect node.list shows both commands
    watch-deny-wins           a reconnect that also declares device.status (denied by
                              --node-command-deny) opens no request, and node.invoke device.status
                              is refused as blocked by the deny list

With --pairing-limit and eleven node setup codes' tokens (against serve --rate-limit-loopback) it
pairs eleven new Watches instead:

    watch-node-pairing-rate-limited   ten first node surfaces pass, the eleventh connect is 429

then {"step": "done", "ok": true} or {"step": "error", "message": ...} (exit status 1).
"""
import argparse
import asyncio

from gateway_node_peer import Identity, PeerFailure, emit, open_operator, run_reporting
from watch_peer import Gateway as WatchGateway, Identity as WatchIdentity

OPERATOR_CLIENT = {"id": "cli", "displayName": "Python Watch-surface operator", "version": "2026.8.1",
                   "platform": "linux", "mode": "cli"}


def check(name, ok, detail):
    emit(check=name, ok=bool(ok), detail=detail)


class Peer:
    def __init__(self, url, base, bootstrap):
        self.url = url
        self.http = WatchGateway(base, None)
        self.watch = WatchIdentity(bytes.fromhex("6b" * 32))
        self.bootstrap = bootstrap
        self.device_token = None
        self.operator = None
        self.counter = 0

    async def watch_connect(self, commands, auth):
        nonce = await asyncio.to_thread(self.http.challenge)
        params = self.watch.connect_params(nonce["nonce"], nonce["ts"], auth, commands=commands)
        status, _, body = await asyncio.to_thread(self.http.request, "POST", "/connect", params)
        if status != 200:
            raise PeerFailure(f"the Watch connect answered {status}: {body}")
        self.device_token = body["deviceToken"]
        return body

    async def reconnect(self, commands):
        return await self.watch_connect(commands, {"deviceToken": self.device_token})

    async def pair_events(self):
        """The node.pair.* events received up to the answer to the operator's own request."""
        await self.operator.request("node.pair.list", {})
        events = [frame for frame in self.operator.events if frame.get("event", "").startswith("node.pair.")]
        self.operator.events = [frame for frame in self.operator.events if frame not in events]
        return events

    async def effective(self):
        listed = await self.operator.request("node.list", {})
        nodes = (listed.get("payload") or {}).get("nodes") or []
        mine = [node for node in nodes if node.get("nodeId") == self.watch.device_id and node.get("connected", True)]
        return mine[0].get("commands") if mine else None

    async def invoke(self, command):
        self.counter += 1
        return await self.operator.request("node.invoke", {
            "nodeId": self.watch.device_id, "command": command, "idempotencyKey": f"watch-surface-{self.counter}"})


async def run(url, base, bootstrap, timeout):
    peer = Peer(url, base, bootstrap)
    peer.operator = await open_operator(url, Identity(bytes(31) + b"\x0c"), client=OPERATOR_CLIENT,
                                        scopes=["operator.read", "operator.write", "operator.pairing"],
                                        refused="the operator was refused (serve needs --pairing auto)")
    node_id = peer.watch.device_id

    paired = await peer.watch_connect(["device.info"], {"bootstrapToken": bootstrap})
    events = await peer.pair_events()
    listed = await peer.operator.request("node.pair.list", {})
    pending = (listed.get("payload") or {}).get("pending") or []
    check("watch-paired", paired.get("nodeId") == node_id and not [e for e in events if e.get("event") == "node.pair.requested"]
          and not pending, {"events": events, "pending": pending})

    await peer.reconnect(["device.info", "system.notify"])
    events = await peer.pair_events()
    requested = [frame["payload"] for frame in events if frame.get("event") == "node.pair.requested"]
    first = requested[0] if len(requested) == 1 else {}
    check("watch-widened-requested",
          first.get("nodeId") == node_id and first.get("commands") == ["device.info", "system.notify"]
          and first.get("isRepair") is True and first.get("platform") == "watchOS 11.2", events)
    request_id = first.get("requestId")

    commands = await peer.effective()
    check("watch-effective", commands == ["device.info"], commands)

    response = await peer.invoke("system.notify")
    error = response.get("error") or {}
    check("watch-withheld-refused",
          error.get("code") == "INVALID_REQUEST"
          and error.get("details") == {"reason": "command not declared by node", "command": "system.notify"}
          and "is pending approval" in error.get("message", ""), error)

    approved = await peer.operator.request("node.pair.approve", {"requestId": request_id})
    resolved = await peer.pair_events()
    check("watch-approved",
          approved.get("ok") is True
          and [frame["payload"].get("decision") for frame in resolved if frame.get("event") == "node.pair.resolved"] == ["approved"],
          {"approve": approved, "events": resolved})

    await peer.reconnect(["device.info", "system.notify"])
    commands = await peer.effective()
    check("watch-approved-effective", commands == ["device.info", "system.notify"], commands)

    await peer.reconnect(["device.info", "device.status", "system.notify"])
    events = await peer.pair_events()
    response = await peer.invoke("device.status")
    error = response.get("error") or {}
    check("watch-deny-wins",
          not [e for e in events if e.get("event") == "node.pair.requested"]
          and error.get("code") == "INVALID_REQUEST"
          and error.get("details") == {"reason": "command not allowlisted", "command": "device.status"}
          and "gateway.nodes.commands.deny" in error.get("message", ""),
          {"events": events, "error": error})
    await peer.operator.close()


def run_pairing_limit(base, tokens):
    """Pairs one new Watch per bootstrap token from this address: the first ten node surfaces are
    counted in the node-pairing rate limit, the eleventh connect is refused with 429."""
    http = WatchGateway(base, None)
    statuses = []
    last = (0, {}, None)
    for index, token in enumerate(tokens):
        watch = WatchIdentity(bytes([0x70 + index]) * 32)
        nonce = http.challenge()
        last = http.request("POST", "/connect", watch.connect_params(nonce["nonce"], nonce["ts"], {"bootstrapToken": token}))
        statuses.append(last[0])
    status, headers, body = last
    check("watch-node-pairing-rate-limited",
          statuses[:-1] == [200] * (len(tokens) - 1) and status == 429 and headers.get("retry-after", "").isdigit()
          and (body or {}).get("error", {}).get("type") == "rate_limited", {"statuses": statuses, "body": body})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("base")
    parser.add_argument("bootstrap_token", nargs="+")
    parser.add_argument("--timeout", type=float, default=90)
    parser.add_argument("--pairing-limit", action="store_true",
                        help="pair one new Watch per token (serve --rate-limit-loopback, eleven tokens)")
    args = parser.parse_args()
    if args.pairing_limit:
        run_reporting(lambda: run_pairing_limit(args.base, args.bootstrap_token))
    else:
        run_reporting(lambda: asyncio.run(asyncio.wait_for(run(args.url, args.base, args.bootstrap_token[0], args.timeout),
                                                           args.timeout)))


if __name__ == "__main__":
    main()
