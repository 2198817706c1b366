"""checks.py - what the Python tests' heredocs share: check() prints
"PASS: what" or "FAIL: what" (tests/run.sh counts them) and finish()
exits 1 when any check failed, as tests/lib.sh's check and finish do."""
import sys

failures = 0


def check(ok, what):
    global failures
    print(("PASS: " if ok else "FAIL: ") + what)
    failures += not ok


def finish():
    sys.exit(1 if failures else 0)
