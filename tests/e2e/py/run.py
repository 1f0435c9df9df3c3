"""Runs the Python SDK e2e tests (unittest) and ends with 'python: N passed, N failed'.

Usage: /usr/bin/python3 tests/e2e/py/run.py [TEST-NAME-PATTERN...]   (exit code 1 on any failure)
"""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    loader = unittest.TestLoader()
    if len(sys.argv) > 1:  # run.py PATTERN...: only tests whose name contains a pattern
        loader.testNamePatterns = ["*%s*" % p for p in sys.argv[1:]]
    suite = loader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    total = suite.countTestCases()
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    # A module set-up or tear-down error (e.g. sbemu not exiting 0 on SIGTERM) is no test
    # of its own: it counts as a failure but takes nothing from the passed tests.
    bad = result.failures + result.errors
    holders = [t for t, _ in bad if isinstance(t, unittest.suite._ErrorHolder)]
    failed = len(bad) + len(result.unexpectedSuccesses)
    passed = result.testsRun - (len(bad) - len(holders)) - len(result.skipped) - len(result.unexpectedSuccesses)
    # Tests that never ran (their module's set-up failed) count as failed too.
    failed += total - result.testsRun
    if total == 0:
        failed = max(failed, 1)
    skipped = len(result.skipped)
    print("python: %d passed, %d failed%s" % (passed, failed, ", %d skipped" % skipped if skipped else ""), flush=True)
    return 0 if failed == 0 and result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
