"""Starts a real sbemu for Debian's Python azure-servicebus 7.8.2 (uamqp).

That SDK always dials port 5671 with TLS whatever the Endpoint says, so the emulator
gets --amqps-port 5671 and the client must trust <data-dir>/tls/cert.pem through
connection_verify=. Other ports are free ones. The emulator's output goes to
<tmp>/sbemu.log, printed when something fails.
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
import unittest
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
BIN = os.environ.get("SBEMU_BIN") or os.path.join(REPO, "build", "bin", "sbemu")
AMQPS_PORT = 5671  # fixed by the SDK
SAS_KEY_NAME = "RootManageSharedAccessKey"
SAS_KEY = "SAS_KEY_VALUE"
HEALTH_TIMEOUT = 30.0
STOP_TIMEOUT = 15.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_in_use(port):
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def make_config(queues, topics=None):
    """Config.json for queues (names or {"name", "properties"}) and topics
    ({"name", "properties", "subscriptions": [{"name", "properties", "rules": [Config.json rules]}]};
    a topic without "subscriptions" gets one named "sub")."""
    def props(p):
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

    def sub_props(p):
        d = props(p)
        d.pop("DuplicateDetectionHistoryTimeWindow")
        d.pop("RequiresDuplicateDetection")
        return d

    def topic(t):
        tp = {"DefaultMessageTimeToLive": "PT1H", "DuplicateDetectionHistoryTimeWindow": "PT20S",
              "RequiresDuplicateDetection": False}
        tp.update(t.get("properties") or {})
        return {"Name": t["name"], "Properties": tp,
                "Subscriptions": [{"Name": s["name"], "Properties": sub_props(s.get("properties")),
                                   "Rules": s.get("rules") or []}
                                  for s in t.get("subscriptions") or [{"name": "sub"}]]}

    qs = [q if isinstance(q, dict) else {"name": q} for q in queues]
    return {
        "UserConfig": {
            "Namespaces": [{
                "Name": "sbemulatorns",
                "Queues": [{"Name": q["name"], "Properties": props(q.get("properties"))} for q in qs],
                "Topics": [topic(t) for t in topics or []],
            }],
            "Logging": {"Type": "Console"},
        }
    }


class Emulator:
    def __init__(self, queues, name="py", topics=None, amqps_port=AMQPS_PORT):
        """amqps_port: the TLS port; the AMQP client can only use 5671, but a test of the
        management API alone (whose client keeps the Endpoint's port) takes a free one
        (free_port()) and leaves 5671 to other suites."""
        # cut short: a Unix socket path (<tmp>/data/pg/run/.s.PGSQL.5432) has at most 107 bytes
        self.tmp = tempfile.mkdtemp(prefix="sbemu-e2e-%s-" % name[:24])
        os.chmod(self.tmp, 0o755)  # the embedded cluster runs as postgres
        self.data_dir = os.path.join(self.tmp, "data")
        self.log_path = os.path.join(self.tmp, "sbemu.log")
        self.config_path = os.path.join(self.tmp, "Config.json")
        with open(self.config_path, "w") as f:
            json.dump(make_config(queues, topics), f, indent=2)
        self.proc = None
        self.failed = False
        self.amqp_port = free_port()
        self.http_port = free_port()
        self.amqps_port = amqps_port

    @property
    def cert_path(self):
        return os.path.join(self.data_dir, "tls", "cert.pem")

    def connection_string(self, key=SAS_KEY, key_name=SAS_KEY_NAME):
        return ("Endpoint=sb://localhost;SharedAccessKeyName=%s;SharedAccessKey=%s;"
                "UseDevelopmentEmulator=true;" % (key_name, key))

    def start(self):
        if not os.path.exists(BIN):
            raise RuntimeError("sbemu binary not found at %s (build it: scripts/build.sh)" % BIN)
        if self.amqps_port == AMQPS_PORT and port_in_use(AMQPS_PORT):
            raise RuntimeError("port %d is taken: the Python SDK can only use 5671" % AMQPS_PORT)
        args = [BIN, "--config", self.config_path, "--data-dir", self.data_dir,
                "--amqp-port", str(self.amqp_port), "--amqps-port", str(self.amqps_port),
                "--http-port", str(self.http_port)] + os.environ.get("SBEMU_E2E_ARGS", "").split()
        env = {k: v for k, v in os.environ.items() if not k.startswith("SBEMU_")}
        with open(self.log_path, "ab") as log:
            log.write(("=== %s\n" % " ".join(args)).encode())
            log.flush()
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env)
        self.wait_healthy()

    def wait_healthy(self):
        deadline = time.monotonic() + HEALTH_TIMEOUT
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.fail("sbemu exited during start-up with code %s" % self.proc.returncode)
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/health" % self.http_port, timeout=1) as r:
                    body = r.read().decode()
                    if r.status == 200:
                        if json.loads(body).get("status") != "healthy":
                            self.fail("/health answered 200 with %s" % body)
                        break
                    last = "%s %s" % (r.status, body)
            except Exception as e:  # refused, 503, not yet listening
                last = repr(e)
            time.sleep(0.1)
        else:
            self.fail("sbemu not healthy after %.0f s (last /health: %s)" % (HEALTH_TIMEOUT, last))
        # Health is served on the HTTP port; make sure the TLS listener is up too.
        deadline = time.monotonic() + 10
        while not port_in_use(self.amqps_port):
            if time.monotonic() > deadline:
                self.fail("sbemu is healthy but nothing listens on %d (--amqps-port)" % self.amqps_port)
            time.sleep(0.1)
        if not os.path.exists(self.cert_path):
            self.fail("no certificate at %s" % self.cert_path)

    def _clock(self, method, path):
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (self.http_port, path), method=method,
                                     data=b"" if method == "POST" else None)
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                status, raw = r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            status, raw = e.code, e.read().decode()
        if status != 200:
            raise AssertionError("%s %s: expected HTTP 200, got %d %s" % (method, path, status, raw))
        return datetime.datetime.fromisoformat(json.loads(raw)["now"].replace("Z", "+00:00"))

    def clock_now(self):
        """The emulator's now on its movable clock (aware UTC datetime)."""
        return self._clock("GET", "/$sbemu/clock")

    def advance(self, by):
        """Moves the emulator's clock forward by an ISO 8601 duration ("PT20S"); the new now."""
        return self._clock("POST", "/$sbemu/clock/advance?by=" + by)

    def psql(self, sql):
        """Runs sql on the emulator's embedded database; its unaligned output."""
        # the socket directory as the postmaster wrote it (line 5 of postmaster.pid): <data>/pg/run,
        # or a short one in /tmp when that path is too long for a Unix socket (run.py nests temp dirs)
        with open(os.path.join(self.data_dir, "pg", "data", "postmaster.pid")) as f:
            sockdir = f.read().splitlines()[4]
        return subprocess.run(["psql", "-h", sockdir, "-U", "sbemu", "-d", "sbemu", "-v", "ON_ERROR_STOP=1", "-Atc",
                               sql], check=True, capture_output=True, text=True).stdout

    def dump_log(self, reason=""):
        try:
            with open(self.log_path, errors="replace") as f:
                lines = f.read().split("\n")
        except OSError:
            lines = []
        sys.stderr.write("\n----- sbemu log (%s, last %d of %d lines)%s -----\n%s\n----- end of sbemu log -----\n" % (
            self.log_path, min(200, len(lines)), len(lines), (" after: " + reason) if reason else "",
            "\n".join(lines[-200:])))

    def fail(self, message):
        self.failed = True
        self.dump_log(message)
        raise RuntimeError(message)

    def stop(self):
        """SIGTERM, expecting exit code 0."""
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        if proc.poll() is not None:
            self.fail("sbemu had already exited (code %s) before stop" % proc.returncode)
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
        pidfile = os.path.join(self.data_dir, "pg", "data", "postmaster.pid")
        try:
            with open(pidfile) as f:
                pid = int(f.readline())
            os.kill(pid, signal.SIGQUIT)
            for _ in range(100):
                os.kill(pid, 0)
                time.sleep(0.05)
        except (OSError, ValueError):
            pass
        if os.environ.get("SBEMU_E2E_VERBOSE"):
            self.dump_log("end of run")
        if self.failed or os.environ.get("SBEMU_E2E_KEEP"):
            sys.stderr.write("sbemu e2e: kept %s\n" % self.tmp)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)


# ---- what every test module shares: one emulator per module, a client per test ----

def start_module_emulator(queues, name, topics=None, amqps_port=AMQPS_PORT):
    """Starts the module's emulator (setUpModule); cleans up if it does not come up."""
    emu = Emulator(queues, name=name, topics=topics, amqps_port=amqps_port)
    try:
        emu.start()
    except Exception:
        emu.cleanup()
        raise
    return emu


def stop_module_emulator(emu):
    """tearDownModule: SIGTERM (exit code checked by Emulator.stop), then the temp dirs."""
    try:
        emu.stop()
    finally:
        emu.cleanup()


def text(v):
    return v.decode("utf-8") if isinstance(v, (bytes, bytearray)) else v


def body(m):
    return b"".join(m.body)


class EmulatorTestCase(unittest.TestCase):
    """A fresh ServiceBusClient per test against the module's emulator (set `emu` on the
    module's subclass in setUpModule); on a failure the traceback and the emulator's log
    are printed at once, because uamqp may crash the interpreter before unittest's summary."""

    emu = None

    def setUp(self):
        from azure.servicebus import ServiceBusClient
        self.client = ServiceBusClient.from_connection_string(
            self.emu.connection_string(), connection_verify=self.emu.cert_path, retry_total=1)

    def tearDown(self):
        self.client.close()

    def run(self, result=None):
        before = len(result.failures) + len(result.errors) if result else 0
        out = super().run(result)
        if result and len(result.failures) + len(result.errors) > before:
            self.emu.failed = True
            sys.stdout.write("\n" + (result.failures + result.errors)[-1][1])
            sys.stdout.flush()
            self.emu.dump_log(self.id())
        return out

    def send(self, queue, *messages):
        with self.client.get_queue_sender(queue) as s:
            s.send_messages(list(messages) if len(messages) > 1 else messages[0])
