"""The accountant child (mpdp/privacy/accountant_process.py): same answers as in-process, refusals cross back as
ValueError, the role never imports dp-accounting or scipy.stats, and the child exits when idle."""

import json
import subprocess
import sys
import textwrap

from mpdp.privacy import binomial, composition

ISOLATED = textwrap.dedent("""
    import json, sys, time
    from mpdp.privacy import accountant_process, binomial, composition
    accountant_process.IDLE_S = 1.0
    accountant_process.isolate()
    tosses = binomial.minimal_tosses(1.0, 1e-5, 5)
    binomial.check_minimal_tosses(tosses, 1.0, 1e-5, 5)
    try:
        binomial.check_minimal_tosses(tosses + 2, 1.0, 1e-5, 5)
        refusal = None
    except ValueError as error:
        refusal = str(error)
    spent = composition.Guarantee(1.0, 1e-5, "dppp", {"kind": "binomial", "tosses": tosses, "shifts": 10})
    total = composition.compose([spent, spent])
    running = accountant_process.child_running()
    limit = time.monotonic() + 300  # the idle timer's event, however slow a loaded machine is
    while accountant_process.child_running() and time.monotonic() < limit:
        time.sleep(0.05)
    print(json.dumps({"tosses": tosses, "refusal": refusal, "epsilon": total.epsilon, "running": running,
                      "after_idle": accountant_process.child_running(),
                      "imported": sorted(m for m in ("dp_accounting", "scipy.stats") if m in sys.modules)}))
""")


def test_an_isolated_role_gets_the_in_process_answers_without_importing_the_accountant():
    result = json.loads(subprocess.run([sys.executable, "-c", ISOLATED], capture_output=True, text=True, check=True,
                                       timeout=600).stdout)
    tosses = binomial.minimal_tosses(1.0, 1e-5, 5)
    spent = composition.Guarantee(1.0, 1e-5, "dppp", {"kind": "binomial", "tosses": tosses, "shifts": 10})
    assert result["tosses"] == tosses
    assert result["refusal"] is not None and "N − 2 suffices" in result["refusal"]
    assert result["epsilon"] == composition.compose([spent, spent]).epsilon
    assert result["imported"] == []
    assert result["running"] and not result["after_idle"]


KILLED_WHILE_IDLE = textwrap.dedent("""
    import json, os, signal, time
    from mpdp.privacy import accountant_process, binomial
    accountant_process.isolate()
    first = binomial.minimal_tosses(1.0, 1e-5, 5)
    killed = list(accountant_process._child._processes)
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    def dead(pid):  # gone, or a zombie its executor has not reaped yet
        try:
            return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] in "ZX"
        except FileNotFoundError:
            return True
    limit = time.monotonic() + 300
    while not all(dead(pid) for pid in killed) and time.monotonic() < limit:
        time.sleep(0.05)
    print(json.dumps({"first": first, "again": binomial.minimal_tosses(2.0, 1e-5, 5)}))
    accountant_process.shut_down()
""")


def test_a_child_killed_while_idle_is_replaced_and_the_call_answered():
    result = json.loads(subprocess.run([sys.executable, "-c", KILLED_WHILE_IDLE], capture_output=True, text=True,
                                       check=True, timeout=600).stdout)
    assert result == {"first": binomial.minimal_tosses(1.0, 1e-5, 5), "again": binomial.minimal_tosses(2.0, 1e-5, 5)}


def test_an_unavailable_accountant_is_a_retryable_status_and_a_bug_stays_a_bug():
    """The transport maps refusals without knowing the accountant: its failure arrives as UNAVAILABLE."""
    import asyncio

    import grpc
    import pytest

    from mpdp.privacy.accountant_process import AccountantUnavailable
    from mpdp.wire.status import translate_errors

    class Context:
        code = None

        async def abort(self, code, details):
            self.code = code

    class Servicer:
        def __init__(self, error):
            self.error = error

        @translate_errors
        async def Step(self, request, context):
            raise self.error

    context = Context()
    asyncio.run(Servicer(AccountantUnavailable("the child died")).Step(None, context))
    assert context.code == grpc.StatusCode.UNAVAILABLE
    with pytest.raises(KeyError):
        asyncio.run(Servicer(KeyError("a bug")).Step(None, Context()))
