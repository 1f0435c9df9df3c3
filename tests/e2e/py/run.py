"""Runs the Python SDK e2e tests and ends with 'python: N passed, N failed'.

Usage: /usr/bin/python3 tests/e2e/py/run.py [TEST-NAME-PATTERN...]   (exit 1 on any failure)

Each test_*.py module runs in a child process of its own: uamqp 1.5.3 can crash the
interpreter (SIGSEGV/SIGABRT), and a crash must cost only that module's remaining tests,
not the whole suite. After each child, whatever it left running (its sbemu, the embedded
postmaster) is stopped, so that port 5671 is free for the next module.
"""
import glob
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
LINE = re.compile(r"^python: (\d+) passed, (\d+) failed(?:, (\d+) skipped)?", re.M)


def count_result(result, total):
    # A module set-up or tear-down error (e.g. sbemu not exiting 0 on SIGTERM) is no test
    # of its own: it counts as a failure but takes nothing from the passed tests.
    bad = result.failures + result.errors
    holders = [t for t, _ in bad if isinstance(t, unittest.suite._ErrorHolder)]
    failed = len(bad) + len(result.unexpectedSuccesses)
    passed = result.testsRun - (len(bad) - len(holders)) - len(result.skipped) - len(result.unexpectedSuccesses)
    # Tests that never ran (their module's set-up failed) count as failed too.
    failed += total - result.testsRun
    return passed, failed, len(result.skipped)


def line(passed, failed, skipped):
    return "python: %d passed, %d failed%s" % (passed, failed, ", %d skipped" % skipped if skipped else "")


def run_module(module, patterns):
    """In the child: run one module's tests in this process."""
    loader = unittest.TestLoader()
    if patterns:
        loader.testNamePatterns = ["*%s*" % p for p in patterns]
    suite = loader.loadTestsFromName(module)
    total = suite.countTestCases()
    if total == 0:
        print(line(0, 0, 0), flush=True)
        return 0
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    passed, failed, skipped = count_result(result, total)
    print(line(passed, failed, skipped), flush=True)
    return 0 if failed == 0 else 1


def reap(tmp):
    """Stops what a crashed child left: sbemu processes using tmp, postmasters under it."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if b"--data-dir" in args and any(a.startswith(tmp.encode() + b"/") for a in args):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
    for pidfile in glob.glob(os.path.join(tmp, "**", "postmaster.pid"), recursive=True):
        try:
            with open(pidfile) as f:
                pid = int(f.readline())
            os.kill(pid, signal.SIGQUIT)
            for _ in range(100):
                os.kill(pid, 0)
                time.sleep(0.05)
        except (OSError, ValueError):
            pass


def total_of(module, patterns):
    loader = unittest.TestLoader()
    if patterns:
        loader.testNamePatterns = ["*%s*" % p for p in patterns]
    try:
        return loader.loadTestsFromName(module).countTestCases()
    except Exception:
        return 1


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--module":
        return run_module(sys.argv[2], sys.argv[3:])
    patterns = sys.argv[1:]
    modules = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(HERE, "test_*.py")))
    passed = failed = skipped = 0
    for module in modules:
        tmp = tempfile.mkdtemp(prefix="sbemu-e2e-%s-" % module.replace("_", "-"))
        os.chmod(tmp, 0o755)  # the embedded cluster runs as postgres
        env = dict(os.environ, TMPDIR=tmp)
        print("--- %s" % module, flush=True)
        child = subprocess.Popen([sys.executable, "-u", os.path.abspath(__file__), "--module", module] + patterns,
                                 cwd=HERE, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out = []
        for text in child.stdout:
            sys.stdout.write(text)
            sys.stdout.flush()
            out.append(text)
        rc = child.wait()
        reap(tmp)
        out = "".join(out)
        m = LINE.search(out)
        if m:
            p, f, s = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
            if rc != 0 and f == 0:
                f = 1
        else:
            # The child died: its finished tests count; every other test of it failed.
            p = len(re.findall(r" \.\.\. ok$", out, re.M))
            s = len(re.findall(r" \.\.\. skipped", out, re.M))
            f = max(total_of(module, patterns) - p - s, 1)
            print("python: %s died (exit %d)%s" % (module, rc, " — uamqp crash?" if rc < 0 else ""), flush=True)
        passed, failed, skipped = passed + p, failed + f, skipped + s
        try:
            os.rmdir(tmp)  # left in place when a failing test kept its emulator's files
        except OSError:
            pass
    if not modules:
        failed = 1
    print(line(passed, failed, skipped), flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
