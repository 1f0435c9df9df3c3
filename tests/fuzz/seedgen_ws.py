#!/usr/bin/env python3
"""Writes corpus/ws_connection from corpus/connection: each client stream
(after fuzz_connection's 4-byte header) cut into WebSocket binary messages as
a client sends them (RFC 6455: masked, some fragmented into continuation
frames, a ping between, a close at the end), behind fuzz_ws_connection's
2-byte header. Run once by hand after seedgen_connection:
    tests/fuzz/seedgen_ws.py tests/fuzz/corpus"""
import os
import struct
import sys

MASK = b"\x37\xfa\x21\x3d"
UPGRADE = (b"GET /$servicebus/websocket/ HTTP/1.1\r\nHost: localhost:5300\r\nUpgrade: websocket\r\n"
           b"Connection: Upgrade\r\nSec-WebSocket-Key: x3JJHMbDL1EzLkh9GBhXDw==\r\n"
           b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: AMQPWSB10\r\n\r\n")


def frame(opcode, payload, fin=True):
    head = bytes([(0x80 if fin else 0) | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack(">H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack(">Q", n)
    return head + MASK + bytes(b ^ MASK[i % 4] for i, b in enumerate(payload))


def messages(stream, sizes):
    out, at, i = b"", 0, 0
    while at < len(stream):
        n = sizes[i % len(sizes)]
        chunk = stream[at:at + n]
        if i % 3 == 2 and len(chunk) > 4:  # fragmented: binary, continuation
            half = len(chunk) // 2
            out += frame(0x2, chunk[:half], fin=False) + frame(0x0, chunk[half:])
        else:
            out += frame(0x2, chunk)
        if i == 1:
            out += frame(0x9, b"ping")
        at += n
        i += 1
    return out + frame(0x8, struct.pack(">H", 1000))


def main():
    root = sys.argv[1]
    src, dst = os.path.join(root, "connection"), os.path.join(root, "ws_connection")
    os.makedirs(dst, exist_ok=True)
    plans = {  # seed -> (flags, store seed, message sizes)
        "send_plain": (0x00, 1, [8, 100, 4096]),  # entities loaded as the first attach asks
        "receive": (0x10, 2, [300]),  # 0x10: loaded before
        "management": (0x10, 3, [64, 1000, 7]),
        "session": (0x30, 4, [2000]),
        "transaction": (0x10, 5, [16, 16, 500]),
        "topic": (0x11, 6, [1500]),  # with the HTTP request in the input
    }
    for name, (flags, seed, sizes) in plans.items():
        with open(os.path.join(src, name), "rb") as f:
            stream = f.read()[4:]
        data = bytes([flags, seed]) + (UPGRADE if flags & 1 else b"") + messages(stream, sizes)
        with open(os.path.join(dst, name), "wb") as f:
            f.write(data)
        print("seedgen_ws: %s/%s (%d bytes)" % (dst, name, len(data)))


main()
