#!/usr/bin/env python3
"""A stand-in for SQL Server, for the Testcontainers Service Bus modules.

sbemu ignores SQL_SERVER and MSSQL_SA_PASSWORD, but every Testcontainers module
for the Service Bus emulator starts a SQL Server container first and waits for
it to be ready. This process satisfies each module's own wait, and no more:

- testcontainers-node (@testcontainers/azureservicebus): the log line
  "Recovery is complete" (Wait.forLogMessage);
- testcontainers-go (modules/mssql): "Recovery is complete." in the log, and
  1433 listening, seen from the host and from inside the container
  (/proc/net/tcp through /bin/sh, cat, awk, grep);
- testcontainers-java (MSSQLServerContainer, a JdbcDatabaseContainer): a JDBC
  connection with the Microsoft driver (URL with encrypt=false, user "sa" and
  the password the container was given) on which "SELECT 1" returns a result
  set.

So it speaks just enough TDS 7.4 (MS-TDS) for that: PRELOGIN (answering that
encryption is not supported, so the driver with encrypt=false stays in clear
text), LOGIN7 (checking user and password as SQL Server would, error 18456
otherwise), SQL batches (a SELECT returns one INT column, one row: 1; any other
batch only DONE) and ATTENTION. Like the real image it refuses to start without
ACCEPT_EULA=Y and MSSQL_SA_PASSWORD, and it exits 0 on SIGTERM.
"""
import os
import signal
import socket
import struct
import sys
import threading

PORT = 1433

# packet types
PT_SQL_BATCH = 0x01
PT_REPLY = 0x04
PT_ATTENTION = 0x06
PT_LOGIN7 = 0x10
PT_PRELOGIN = 0x12

# tokens
TOK_COLMETADATA = 0x81
TOK_ERROR = 0xAA
TOK_LOGINACK = 0xAD
TOK_ROW = 0xD1
TOK_ENVCHANGE = 0xE3
TOK_DONE = 0xFD

DONE_FINAL = 0x0000
DONE_ERROR = 0x0002
DONE_COUNT = 0x0010
DONE_ATTN = 0x0020

SERVER_NAME = "mssql"
VERSION = (16, 0, 4135)  # SQL Server 2022 (the driver refuses servers before 2005)
TDS_74 = 0x74000004
# SQL_Latin1_General_CP1_CI_AS: LCID 0x0409, flags, sort id 52
COLLATION = bytes([0x09, 0x04, 0xD0, 0x00, 0x34])


def log(msg):
    print(msg, flush=True)


def ucs2(s):
    return s.encode("utf-16-le")


def b_varchar(s):
    return bytes([len(s)]) + ucs2(s)


def us_varchar(s):
    return struct.pack("<H", len(s)) + ucs2(s)


def recv_exact(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def read_message(conn):
    """One TDS message (packets up to the one with EOM): (type, payload)."""
    payload = b""
    while True:
        hdr = recv_exact(conn, 8)
        if hdr is None:
            return None, None
        ptype, status, length = hdr[0], hdr[1], struct.unpack(">H", hdr[2:4])[0]
        if length < 8:
            return None, None
        body = recv_exact(conn, length - 8)
        if body is None:
            return None, None
        payload += body
        if status & 0x01:
            return ptype, payload


def send_message(conn, payload, packet_size):
    room = max(packet_size, 512) - 8
    chunks = [payload[i:i + room] for i in range(0, len(payload), room)] or [b""]
    out = b""
    for n, chunk in enumerate(chunks, 1):
        status = 0x01 if n == len(chunks) else 0x00
        out += struct.pack(">BBHHBB", PT_REPLY, status, len(chunk) + 8, 51, n % 256, 0) + chunk
    conn.sendall(out)


def done(status, curcmd=0, rows=0):
    return struct.pack("<BHHQ", TOK_DONE, status, curcmd, rows)


def envchange(kind, new, old):
    body = bytes([kind]) + new + old
    return struct.pack("<BH", TOK_ENVCHANGE, len(body)) + body


def error(number, state, klass, text):
    body = (struct.pack("<iBB", number, state, klass) + us_varchar(text) + b_varchar(SERVER_NAME)
            + b_varchar("") + struct.pack("<i", 1))
    return struct.pack("<BH", TOK_ERROR, len(body)) + body


def prelogin_reply():
    major, minor, build = VERSION
    options = [
        (0x00, struct.pack(">BBHH", major, minor, build, 0)),  # VERSION
        (0x01, b"\x02"),  # ENCRYPTION: ENCRYPT_NOT_SUP
        (0x02, b"\x00"),  # INSTOPT
        (0x03, b""),  # THREADID
        (0x04, b"\x00"),  # MARS off
    ]
    offset = len(options) * 5 + 1
    head, data = b"", b""
    for token, value in options:
        head += struct.pack(">BHH", token, offset + len(data), len(value))
        data += value
    return head + b"\xff" + data


def login7_field(payload, at):
    """A UCS-2 string of LOGIN7 given by its (offset, length) pair at `at`."""
    off, cch = struct.unpack("<HH", payload[at:at + 4])
    return payload[off:off + 2 * cch]


def unscramble(raw):
    # LOGIN7 passwords: each byte had its nibbles swapped, then was XORed with 0xA5.
    out = bytearray()
    for b in raw:
        b ^= 0xA5
        out.append(((b << 4) & 0xF0) | (b >> 4))
    return bytes(out).decode("utf-16-le", "replace")


def login_reply(payload, password):
    """(reply, ok, packet size) for a LOGIN7 payload."""
    packet_size = struct.unpack("<I", payload[8:12])[0] or 4096
    user = login7_field(payload, 40).decode("utf-16-le", "replace")
    given = unscramble(login7_field(payload, 44))
    if user.lower() != "sa" or given != password:
        text = "Login failed for user '%s'." % user
        log("Login failed for user '%s'. Reason: Password did not match that for the login provided." % user)
        return error(18456, 1, 14, text) + done(DONE_ERROR), False, packet_size
    major, minor, build = VERSION
    prog = b_varchar("Microsoft SQL Server")
    ack = (bytes([0x01]) + struct.pack(">I", TDS_74) + prog
           + struct.pack(">BBH", major, minor, build))
    reply = (envchange(1, b_varchar("master"), b_varchar("master"))
             + envchange(7, bytes([len(COLLATION)]) + COLLATION, b"\x00")
             + struct.pack("<BH", TOK_LOGINACK, len(ack)) + ack
             + envchange(4, b_varchar(str(packet_size)), b_varchar(str(packet_size)))
             + done(DONE_FINAL))
    return reply, True, packet_size


def batch_text(payload):
    # ALL_HEADERS (TDS 7.2+): a DWORD total length, then the UCS-2 text.
    skip = struct.unpack("<I", payload[:4])[0] if len(payload) >= 4 else 0
    if skip > len(payload) or skip < 4:
        skip = 0
    return payload[skip:].decode("utf-16-le", "replace").strip()


def batch_reply(text):
    if text.upper().startswith("SELECT"):
        col = (struct.pack("<IH", 0, 0x0000)  # UserType, Flags
               + bytes([0x26, 4])  # INTNTYPE, 4 bytes
               + b_varchar(""))  # no column name
        return (struct.pack("<BH", TOK_COLMETADATA, 1) + col
                + bytes([TOK_ROW, 4]) + struct.pack("<i", 1)
                + done(DONE_COUNT, 0xC1, 1))
    return done(DONE_FINAL)


def serve(conn, password):
    packet_size = 4096
    logged_in = False
    try:
        while True:
            ptype, payload = read_message(conn)
            if ptype is None:
                return
            if ptype == PT_PRELOGIN:
                send_message(conn, prelogin_reply(), packet_size)
            elif ptype == PT_LOGIN7:
                reply, logged_in, packet_size = login_reply(payload, password)
                send_message(conn, reply, packet_size)
                if not logged_in:
                    return
            elif ptype == PT_SQL_BATCH and logged_in:
                send_message(conn, batch_reply(batch_text(payload)), packet_size)
            elif ptype == PT_ATTENTION:
                send_message(conn, done(DONE_ATTN), packet_size)
            else:
                log("tds: unsupported packet type 0x%02x, closing" % ptype)
                return
    except OSError:
        pass
    finally:
        conn.close()


def main():
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, lambda *_: os._exit(0))
    if os.environ.get("ACCEPT_EULA", "").upper() not in ("Y", "YES"):
        log("The SQL Server End-User License Agreement (EULA) must be accepted before SQL\n"
            "Server can start. Set the environment variable: ACCEPT_EULA=Y")
        sys.exit(1)
    password = os.environ.get("MSSQL_SA_PASSWORD") or os.environ.get("SA_PASSWORD")
    if not password:
        log("The system administrator password is not set (MSSQL_SA_PASSWORD).")
        sys.exit(1)
    srv = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        srv.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        srv.bind(("::", PORT))
    except OSError:
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("0.0.0.0", PORT))
    srv.listen(64)
    log("SQL Server stand-in (TDS 7.4, enough for Testcontainers' readiness checks) listening on %d." % PORT)
    # SQL Server's own line, which the Go and Node modules wait for.
    log("Recovery is complete. This is an informational message only. No user action is required.")
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn, password), daemon=True).start()


if __name__ == "__main__":
    main()
