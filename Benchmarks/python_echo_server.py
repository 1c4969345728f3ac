#!/usr/bin/env python3
"""The Python `websockets` echo server of the benchmark: prints {"port": N}, then echoes
every message until killed (or for at most an hour)."""
import asyncio
import json

try:  # websockets >= 13
    from websockets.asyncio.server import serve
except ImportError:  # pragma: no cover - websockets 12
    from websockets import serve  # type: ignore


async def echo(ws):
    try:
        async for message in ws:
            await ws.send(message)
    except Exception:
        pass


async def main():
    async with serve(echo, "127.0.0.1", 0, compression=None, max_size=None, ping_interval=None) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        print(json.dumps({"port": port}), flush=True)
        await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main())
