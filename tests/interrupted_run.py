"""Test runs to interrupt: tests/test_interrupted_runs.py starts pytest on one of these and signals it once
their role processes serve and a session has started multiprocessing children. Not collected by a plain
`pytest` (the file name does not start with `test_`)."""

import subprocess
import sys
import threading

from tests.deployment import TEST_BITS


def test_a_shared_deployment(pool):
    """The session-scoped pool: the roles are the test process's children; a DPPP round leaves each party's
    accountant child (and its resource tracker) idling."""
    pool.get(3).run_dppp(queries=2)
    threading.Event().wait()  # until a signal interrupts the run


def test_the_demo_command():
    """`mpdp demo` as the CLI tests run it: the roles are the test's grandchildren."""
    subprocess.run([sys.executable, "-m", "launcher.cli", "demo", "--parties", "2", "--bits", str(TEST_BITS)],
                   capture_output=True, timeout=3600)
