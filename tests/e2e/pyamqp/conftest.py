"""A real sbemu per test module for azure-servicebus 7.15 (its own pure-Python AMQP stack, _pyamqp).

With UseDevelopmentEmulator=true that SDK dials plain AMQP on the Endpoint's port, so every port
here is a free one and TLS is off (--amqps-port 0); the AMQP port still takes TLS (the management
client always dials https://, see test_admin.py), with the certificate sbemu makes in
<data-dir>/tls/cert.pem.

A test module names what its emulator needs at module level:
  QUEUES = ["q", {"name": "s", "properties": {"RequiresSession": True}}]
  TOPICS = [{"name": "t", "subscriptions": [{"name": "s", "rules": [...]}]}]
  SBEMU_ARGS = ["--max-message-size", "64k"]
and takes the `emu` fixture (scope="module"). The emulator's log is printed when a test fails,
and its directory kept.
"""
import datetime
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
BIN = os.environ.get("SBEMU_BIN") or os.path.join(REPO, "build", "bin", "sbemu")
SAS_KEY_NAME = "RootManageSharedAccessKey"
SAS_KEY = "SAS_KEY_VALUE"
HEALTH_TIMEOUT = 30.0
STOP_TIMEOUT = 15.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def entity_props(p):
    d = {
        "DeadLetteringOnMessageExpiration": False,
        "DefaultMessageTimeToLive": "PT1H",
        "DuplicateDetectionHistoryTimeWindow": "PT20S",
        "ForwardDeadLetteredMessagesTo": "",
        "ForwardTo": "",
        "LockDuration": "PT1M",
        "MaxDeliveryCount": 10,
        "RequiresDuplicateDetection": False,
        "RequiresSession": False,
    }
    d.update(p or {})
    return d


def make_config(queues, topics):
    """The official emulator's Config.json for queues (names or {"name", "properties"}) and topics
    ({"name", "properties", "subscriptions": [{"name", "properties", "rules"}]})."""
    def sub(s):
        p = entity_props(s.get("properties"))
        p.pop("DuplicateDetectionHistoryTimeWindow")
        p.pop("RequiresDuplicateDetection")
        return {"Name": s["name"], "Properties": p, "Rules": s.get("rules") or []}

    def topic(t):
        p = {"DefaultMessageTimeToLive": "PT1H", "DuplicateDetectionHistoryTimeWindow": "PT20S",
             "RequiresDuplicateDetection": False}
        p.update(t.get("properties") or {})
        return {"Name": t["name"], "Properties": p, "Subscriptions": [sub(s) for s in t.get("subscriptions") or []]}

    qs = [q if isinstance(q, dict) else {"name": q} for q in queues]
    return {"UserConfig": {
        "Namespaces": [{
            "Name": "sbemulatorns",
            "Queues": [{"Name": q["name"], "Properties": entity_props(q.get("properties"))} for q in qs],
            "Topics": [topic(t) for t in topics],
        }],
        "Logging": {"Type": "Console"},
    }}


class Emulator:
    def __init__(self, name, queues=(), topics=(), args=()):
        # short: a Unix socket path (<tmp>/data/pg/run/.s.PGSQL.5432) has at most 107 bytes
        self.tmp = tempfile.mkdtemp(prefix="sbpy-%s-" % name[:20])
        os.chmod(self.tmp, 0o755)  # the embedded PostgreSQL runs as user postgres
        self.data_dir = os.path.join(self.tmp, "data")
        self.log_path = os.path.join(self.tmp, "sbemu.log")
        self.config_path = os.path.join(self.tmp, "Config.json")
        with open(self.config_path, "w") as f:
            json.dump(make_config(list(queues), list(topics)), f, indent=2)
        self.args = list(args)
        self.amqp_port = free_port()
        self.http_port = free_port()
        self.proc = None
        self.failed = False

    # -- what a user is given --
    @property
    def connection_string(self):
        """The emulator's connection string with only its port added."""
        return self.connection_string_with_key(SAS_KEY)

    def connection_string_with_key(self, key):
        return ("Endpoint=sb://localhost:%d;SharedAccessKeyName=%s;SharedAccessKey=%s;"
                "UseDevelopmentEmulator=true;" % (self.amqp_port, SAS_KEY_NAME, key))

    @property
    def cert_path(self):
        return os.path.join(self.data_dir, "tls", "cert.pem")

    # -- life --
    def start(self):
        if not os.path.exists(BIN):
            raise RuntimeError("no sbemu binary at %s (build it: scripts/build.sh)" % BIN)
        argv = [BIN, "--config", self.config_path, "--data-dir", self.data_dir,
                "--amqp-port", str(self.amqp_port), "--amqps-port", "0",
                "--http-port", str(self.http_port)] + self.args
        env = {k: v for k, v in os.environ.items() if not k.startswith("SBEMU_")}
        with open(self.log_path, "ab") as log:
            log.write(("=== %s\n" % " ".join(argv)).encode())
            log.flush()
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env)
        self.wait_health(200, HEALTH_TIMEOUT)
        if not os.path.exists(self.cert_path):
            self.fail("no certificate at %s" % self.cert_path)

    def health(self):
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/health" % self.http_port, timeout=1) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code
        except OSError:
            return None

    def wait_health(self, status, timeout):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.fail("sbemu exited with code %s" % self.proc.returncode)
            last = self.health()
            if last == status:
                return
            time.sleep(0.1)
        self.fail("/health did not answer %s within %.0f s (last: %s)" % (status, timeout, last))

    def stop(self):
        """SIGTERM, expecting exit code 0 within STOP_TIMEOUT."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is not None:
            self.fail("sbemu had already exited (code %s) before the end of the module" % proc.returncode)
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            self.fail("sbemu did not exit within %.0f s of SIGTERM" % STOP_TIMEOUT)
        if code != 0:
            self.fail("sbemu exited with %s after SIGTERM (expected 0)" % code)

    def cleanup(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        pid = self.postmaster_pid()
        if pid:
            try:
                os.kill(pid, signal.SIGQUIT)
                for _ in range(100):
                    os.kill(pid, 0)
                    time.sleep(0.05)
            except OSError:
                pass
        if self.failed or os.environ.get("SBEMU_E2E_KEEP"):
            sys.stderr.write("sbemu e2e: kept %s\n" % self.tmp)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)

    # -- looking inside --
    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def dump_log(self, reason=""):
        lines = self.log().split("\n")
        sys.stderr.write("\n----- sbemu log (%s, last %d of %d lines)%s -----\n%s\n----- end of sbemu log -----\n" % (
            self.log_path, min(200, len(lines)), len(lines), (" after: " + reason) if reason else "",
            "\n".join(lines[-200:])))

    def fail(self, message):
        self.failed = True
        self.dump_log(message)
        raise RuntimeError(message)

    def pg_dir(self):
        return os.path.join(self.data_dir, "pg", "data")

    def postmaster_pid(self):
        try:
            with open(os.path.join(self.pg_dir(), "postmaster.pid")) as f:
                return int(f.readline())
        except (OSError, ValueError):
            return None

    def psql(self, sql):
        """Runs sql on the emulator's embedded database; its unaligned output."""
        with open(os.path.join(self.pg_dir(), "postmaster.pid")) as f:
            sockdir = f.read().splitlines()[4]  # where the postmaster put its socket
        return subprocess.run(["psql", "-h", sockdir, "-U", "sbemu", "-d", "sbemu", "-v", "ON_ERROR_STOP=1",
                               "-Atc", sql], check=True, capture_output=True, text=True).stdout

    def http(self, method, path):
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (self.http_port, path), method=method,
                                     data=b"" if method == "POST" else None)
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def clock_now(self):
        """The emulator's now on its movable clock (aware UTC datetime): schedule against this,
        since an earlier test of the module may have moved it past the wall clock."""
        status, raw = self.http("GET", "/$sbemu/clock")
        assert status == 200, "clock: %s %s" % (status, raw)
        return datetime.datetime.fromisoformat(json.loads(raw)["now"].replace("Z", "+00:00"))

    def advance(self, by):
        """Moves the emulator's clock forward by an ISO 8601 duration ("PT20S"); its new now."""
        status, raw = self.http("POST", "/$sbemu/clock/advance?by=" + by)
        assert status == 200, "clock advance: %s %s" % (status, raw)
        return datetime.datetime.fromisoformat(json.loads(raw)["now"].replace("Z", "+00:00"))


@pytest.fixture(scope="module")
def emu(request):
    mod = request.module
    e = Emulator(mod.__name__.split(".")[-1].replace("test_", ""),
                 queues=getattr(mod, "QUEUES", ()), topics=getattr(mod, "TOPICS", ()),
                 args=getattr(mod, "SBEMU_ARGS", ()))
    request.node._sbemu = e
    try:
        e.start()
        yield e
        e.stop()
    finally:
        e.cleanup()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed:
        e = None
        for node in item.listchain():  # the module's node carries its emulator
            e = getattr(node, "_sbemu", None) or e
        if e is not None:
            e.failed = True
            e.dump_log(item.nodeid)


def wait_until(cond, timeout, what, interval=0.1):
    """Polls cond() until it is truthy; its value, or AssertionError naming what after timeout s."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("%s: not within %.1f s (last: %r)" % (what, timeout, v))
        time.sleep(interval)


def body_bytes(msg):
    """The body of a received data-body ServiceBusReceivedMessage, as bytes."""
    return b"".join(msg.body)
