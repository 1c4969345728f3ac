"""An independent HTTP client for the wire tests of the Gateway's HTTP routes.

Usage: http_peer.py PLAN_JSON

PLAN_JSON is an object:
  {"base": "http://127.0.0.1:PORT" | "https://...", "steps": [STEP, ...]}
Each STEP is one of
  {"kind": "request", "method": "GET", "path": "/x", "headers": {...}, "body": "text"}
      sent with one shared `http.client` connection of the standard library (keep-alive
      between steps; a new connection when the server closed it; TLS without verification: the
      wire tests check HTTP, not trust);
  {"kind": "raw", "send": "text with \\r\\n", "half_close": false}
      sent on a new TCP (or TLS) connection; everything the server writes until it closes the
      connection (or 5 s pass) is reported.
For every step one JSON line is printed:
  {"status": 200, "headers": {"lower-case-name": "value", ...}, "body": "text", "reused": bool}
  {"raw": "every byte received, latin-1 decoded", "closed": true}
  {"error": "what went wrong"}
"""
import json
import socket
import ssl
import sys
import urllib.parse

import http.client


def raw_exchange(base, send, half_close):
    url = urllib.parse.urlsplit(base)
    port = url.port or (443 if url.scheme == "https" else 80)
    sock = socket.create_connection((url.hostname, port), timeout=5)
    if url.scheme == "https":
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        sock = context.wrap_socket(sock, server_hostname=url.hostname)
    sock.sendall(send.encode("latin-1"))
    if half_close and url.scheme != "https":
        sock.shutdown(socket.SHUT_WR)
    received = b""
    closed = False
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                closed = True
                break
            received += chunk
    except (socket.timeout, TimeoutError):
        pass
    except (ssl.SSLError, ConnectionResetError) as error:
        closed = True
        if not received:
            return {"raw": "", "closed": True, "reset": str(error)}
    sock.close()
    return {"raw": received.decode("latin-1"), "closed": closed}


def new_connection(base):
    url = urllib.parse.urlsplit(base)
    if url.scheme == "https":
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return http.client.HTTPSConnection(url.hostname, url.port or 443, timeout=60, context=context)
    return http.client.HTTPConnection(url.hostname, url.port or 80, timeout=60)


def main():
    plan = json.loads(sys.argv[1])
    base = plan["base"]
    connection = None
    previous_socket = None
    for step in plan["steps"]:
        try:
            if step["kind"] == "raw":
                print(json.dumps(raw_exchange(base, step["send"], step.get("half_close", False))), flush=True)
                continue
            if connection is None:
                connection = new_connection(base)
            body = step["body"].encode() if "body" in step else None
            connection.request(step.get("method", "GET"), step["path"], body=body, headers=step.get("headers", {}))
            reused = previous_socket is not None and connection.sock is previous_socket
            response = connection.getresponse()
            content = response.read()
            previous_socket = connection.sock
            print(json.dumps({
                "status": response.status,
                "headers": {k.lower(): v for k, v in response.getheaders()},
                "body": content.decode("utf-8", "replace"),
                "reused": reused,
            }), flush=True)
            if response.will_close:
                connection.close()
                connection = None
                previous_socket = None
        except Exception as error:  # reported, never raised: the test reads every step's line
            print(json.dumps({"error": f"{type(error).__name__}: {error}"}), flush=True)
            if connection is not None:
                connection.close()
            connection = None
            previous_socket = None


if __name__ == "__main__":
    main()
