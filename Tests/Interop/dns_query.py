"""An independent DNS client (standard library only) for the discovery-record tests.

Usage: dns_query.py PORT NAME:TYPE [NAME:TYPE ...]

Sends one UDP query per NAME:TYPE (TYPE one of A, AAAA, PTR, SRV, TXT) to 127.0.0.1:PORT and
prints one JSON object {"NAME:TYPE": [answers]} where an answer is a string (A, AAAA, PTR), a
[priority, weight, port, target] list (SRV) or a list of strings (TXT). Retries for a few seconds
while the server starts (no answer yet); a server that answers with an error code gives [].
"""

import ipaddress
import json
import random
import socket
import struct
import sys
import time

TYPES = {"A": 1, "PTR": 12, "TXT": 16, "AAAA": 28, "SRV": 33}


def encode_name(name):
    out = b""
    for label in name.rstrip(".").split("."):
        raw = label.encode()
        out += bytes([len(raw)]) + raw
    return out + b"\x00"


def read_name(message, offset):
    labels = []
    jumped = False
    end = offset
    for _ in range(128):
        length = message[offset]
        if length & 0xC0 == 0xC0:
            pointer = ((length & 0x3F) << 8) | message[offset + 1]
            if not jumped:
                end = offset + 2
            jumped = True
            offset = pointer
            continue
        if length == 0:
            if not jumped:
                end = offset + 1
            break
        labels.append(message[offset + 1 : offset + 1 + length].decode())
        offset += 1 + length
    return ".".join(labels) + ".", end


def query(port, name, rtype):
    ident = random.randrange(0, 65536)
    packet = struct.pack("!HHHHHH", ident, 0x0100, 1, 0, 0, 0) + encode_name(name) + struct.pack("!HH", TYPES[rtype], 1)
    deadline = time.monotonic() + 20
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.settimeout(0.5)
            sock.sendto(packet, ("127.0.0.1", port))
            try:
                message, _ = sock.recvfrom(65535)
            except (socket.timeout, ConnectionRefusedError):
                if time.monotonic() > deadline:
                    raise SystemExit(f"no answer from 127.0.0.1:{port} for {name} {rtype}")
                continue
        if struct.unpack("!H", message[:2])[0] == ident:
            break
    flags, qdcount, ancount = struct.unpack("!HHH", message[2:8])
    if flags & 0x000F:
        return []
    offset = 12
    for _ in range(qdcount):
        _, offset = read_name(message, offset)
        offset += 4
    answers = []
    for _ in range(ancount):
        _, offset = read_name(message, offset)
        atype, _, _, length = struct.unpack("!HHIH", message[offset : offset + 10])
        offset += 10
        data = message[offset : offset + length]
        if atype != TYPES[rtype]:
            pass
        elif atype == 1:
            answers.append(str(ipaddress.IPv4Address(data)))
        elif atype == 28:
            answers.append(str(ipaddress.IPv6Address(data)))
        elif atype == 12:
            answers.append(read_name(message, offset)[0])
        elif atype == 33:
            priority, weight, target_port = struct.unpack("!HHH", data[:6])
            answers.append([priority, weight, target_port, read_name(message, offset + 6)[0]])
        elif atype == 16:
            strings, index = [], 0
            while index < len(data):
                size = data[index]
                strings.append(data[index + 1 : index + 1 + size].decode())
                index += 1 + size
            answers.append(strings)
        offset += length
    return answers


def main():
    port = int(sys.argv[1])
    result = {}
    for spec in sys.argv[2:]:
        name, rtype = spec.rsplit(":", 1)
        result[spec] = query(port, name, rtype)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
