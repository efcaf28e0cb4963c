"""The per-party privacy ledger: composition, atomic spending, refusal, and a crash between
"spent" and "released" over real processes."""

import json
import math
import os
import subprocess
import sys

import grpc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.privacy import binomial, composition
from mpdp.privacy.composition import Guarantee, compose
from mpdp.privacy.ledger import Budget, BudgetExceeded, Ledger, LedgerError, ledger_path, provision
from mpdp.protocols.dppp.parameters import DpppParameters


def _data_file(tmp_path):
    data = tmp_path / "party_1.npz"
    data.write_bytes(b"records")
    provision(data, 1)
    return data


def test_pure_releases_compose_to_their_sum_at_delta_zero():
    total = compose([Guarantee(0.1, 0.0, "pure", {"kind": "pure", "epsilon": 0.1, "count": 1})] * 10)
    assert total.delta == 0.0 and total.epsilon == pytest.approx(1.0, abs=1e-3)


def test_binomial_sessions_compose_by_their_pld_and_match_one_longer_release():
    """Two DPPP sessions of Q queries each are, to the accountant, one release of 2Q queries: the ledger's
    total equals the Binomial accountant's ε for 4Q shifts at the summed δ (computed independently here), and
    is below the basic sum."""
    p = DpppParameters.with_minimal_noise(1.0, 1e-5, 10, 2, 5, 2 / 3, True, b"k" * 32)
    one = p.guarantee()
    total = compose([one, one])
    independent = binomial.epsilon_for_shifts(p.total_tosses, 2e-5, 4 * p.queries)
    assert total.epsilon == pytest.approx(independent, rel=1e-9)
    assert total.epsilon < 2.0 and total.delta == pytest.approx(2e-5)
    assert total.basic_epsilon == pytest.approx(2.0)


def test_a_release_without_a_finite_bound_makes_the_total_unbounded():
    assert compose([Guarantee(1.0, 0.0, "pure"), Guarantee(None, 0.0, "ofpa")]).epsilon is None
    assert compose([Guarantee(1.0, 1e-6, "x"), Guarantee(0.5, 0.0, "y")]).epsilon == pytest.approx(1.5)


def test_spend_writes_durably_and_a_session_over_budget_changes_nothing(tmp_path):
    ledger = Ledger(_data_file(tmp_path), 1, Budget(1.5, 1e-5))
    first = Guarantee(1.0, 0.0, "pure", {"kind": "pure", "epsilon": 1.0, "count": 1})
    assert ledger.spend("s1", "pathak", first).epsilon == pytest.approx(1.0, abs=1e-3)
    before = ledger.path.read_bytes()
    with pytest.raises(BudgetExceeded, match="spent ε = 1.*together ε = 2"):
        ledger.spend("s2", "pathak", first)
    assert ledger.path.read_bytes() == before
    assert [e["session"] for e in Ledger(ledger.data_file, 1).entries()] == ["s1"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    ledger.spend("s3", "pathak", Guarantee(0.4, 1e-6, "pure"))  # still fits
    assert len(ledger.entries()) == 2


def test_a_corrupt_ledger_stops_spending_instead_of_resetting(tmp_path):
    data = _data_file(tmp_path)
    ledger_path(data).write_text("{not json\n")
    with pytest.raises(LedgerError, match="never reset"):
        Ledger(data, 1).check_writable()
    with pytest.raises(LedgerError):
        Ledger(data, 1).spend("s", "dppp", Guarantee(1.0, 0.0, "pure"))


@pytest.mark.parametrize("text", ["1", "a,b", "-1,0", "1,1", "inf,0"])
def test_a_malformed_budget_is_refused(text):
    with pytest.raises(ValueError, match="budget"):
        Budget.parse(text)


def test_a_process_killed_right_after_spending_leaves_the_entry(tmp_path):
    """Spend first, release after: SIGKILL right after `spend` returns still finds the entry on disk."""
    data = _data_file(tmp_path)
    script = ("import os, signal, sys\n"
              "from mpdp.privacy.ledger import Ledger\nfrom mpdp.privacy.composition import Guarantee\n"
              "Ledger(sys.argv[1], 1).spend('s', 'dppp', Guarantee(1.0, 1e-6, 'pure'))\n"
              "os.kill(os.getpid(), signal.SIGKILL)\n")
    killed = subprocess.run([sys.executable, "-c", script, str(data)], cwd=os.getcwd())
    assert killed.returncode == -9
    assert [e["session"] for e in Ledger(data, 1).entries()] == ["s"]


def test_every_protocol_states_what_a_session_costs():
    from mpdp.protocols.du import accounting
    from mpdp.protocols.du.parameters import DuParameters
    from mpdp.protocols.hamm.parameters import HammParameters
    from mpdp.protocols.pathak.parameters import PathakParameters

    pathak = PathakParameters(1.0, 1e-5, 0.01, "laplace-paper", "paper", 5, 123)
    charged = pathak.noise.guarantee()
    assert charged.epsilon == pytest.approx(pathak.noise.effective_epsilon()) and charged.epsilon > 2.0
    hamm = HammParameters("vote", 0.5, 1e-5, 0.01, 2, 10, 50, 4, False, False, 2 / 3, b"k" * 32)
    assert (hamm.guarantee().epsilon, hamm.guarantee().delta) == (0.5, 0.0)
    assert HammParameters("vote", math.inf, 1e-5, 0.01, 2, 10, 50, 4, False, False, 2 / 3,
                          b"k" * 32).guarantee().epsilon is None
    objective = _du(DuParameters, "objective")
    assert 0 < accounting.guarantee(objective).epsilon <= objective.rounds * objective.epsilon + 1e-9
    assert accounting.guarantee(_du(DuParameters, "ofpa")).epsilon is None


def _du(cls, method):
    return cls(method=method, epsilon=0.5, delta=1e-5, rounds=4, tolerance=0.0, local_epochs=1, learning_rate=1.0,
               regularization=0.01, parties=3, dimension=4, bound=50.0, secure_aggregation=False,
               honest_fraction=2 / 3, key_id=b"k" * 32)


@pytest.mark.network
def test_the_ledger_survives_a_crash_between_spent_and_released_and_then_refuses(tmp_path):
    """Party 2 is killed right after recording its spend for a Pathak session (before anything derived from
    its data left it). Restarted with the same budget, it still counts that session (after a crash it cannot
    know whether its data had left) and refuses the next one with the fixed refusal; `mpdp budget` shows the
    spend. The parties that stayed up are refunded."""
    from launcher.cli import main
    from launcher.deployment import processes
    from mpdp.sessions.identity import party
    from party.resources import REFUSED
    from tests.deployment import deployment

    budget = Budget(1.5, 1e-4)
    with deployment(tmp_path, 3, faults={2: "crash-after-spend"}, budget=budget) as d:
        with pytest.raises(grpc.RpcError):
            d.run_pathak(session_id="crashed", deadline_seconds=20.0)
        entries = Ledger(d.topology.entry(party(2)).data, 2).entries()
        assert [e["session"] for e in entries] == ["crashed"]
        # The parties that stayed up had sent nothing derived from their data: the abort refunded them.
        for number in (1, 3):
            theirs = Ledger(d.topology.entry(party(number)).data, number)
            assert theirs.charges() == [] and [e.get("refund") is not None for e in theirs.entries()] == [False, True]
        assert entries[0]["guarantee"]["epsilon"] == pytest.approx(1.0)
        processes.restart(d.run.path, party(2), test_mode=True, budget=budget)
        with pytest.raises(grpc.RpcError) as refused:
            d.run_pathak(session_id="over-budget")
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert REFUSED in refused.value.details() and "budget" not in refused.value.details()
        assert "over the budget" in d.run.log_file(party(2)).read_text()
        assert len(Ledger(d.topology.entry(party(2)).data, 2).entries()) == 1
        report = tmp_path / "budget.json"
        assert main(["budget", "--run-dir", str(d.run.path), "--json", str(report)]) == 0
        rows = json.loads(report.read_text())["parties"]
        assert [row["sessions"] for row in rows if row["party"] == 2] == [1]
        assert rows[1]["budget"] == [1.5, 1e-4]


def _pure_epsilon_by_bisection(epsilon: float, count: int, delta: float) -> float:
    """The oracle: δ(ε′) of randomised response composed `count` times, summed in 200-bit floats, bisected."""
    import gmpy2

    # Set and restored by hand: gmpy2 2.1's context() takes no positional context, and its `with` keeps the
    # precision after the block.
    saved = gmpy2.get_context()
    gmpy2.set_context(gmpy2.context(precision=200))
    try:
        e = gmpy2.mpfr(epsilon)
        p = gmpy2.exp(e) / (1 + gmpy2.exp(e))

        def delta_at(target):
            total = gmpy2.mpfr(0)
            for flips in range(count + 1):
                loss = (count - 2 * flips) * e
                if loss <= target:
                    break
                total += gmpy2.comb(count, flips) * p ** (count - flips) * (1 - p) ** flips * (1 - gmpy2.exp(target - loss))
            return total

        low, high = gmpy2.mpfr(0), count * e
        for _ in range(64):
            middle = (low + high) / 2
            low, high = (middle, high) if delta_at(middle) > delta else (low, middle)
        return float(high)
    finally:
        gmpy2.set_context(saved)


@settings(max_examples=25, deadline=None)
@given(st.floats(0.01, 3.0), st.integers(1, 200), st.sampled_from([0.0, 1e-9, 1e-5, 1e-3, 0.1]))
def test_the_exact_pure_composition_is_exact_and_near_the_accountant(epsilon, count, delta):
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    exact = composition.pure_epsilon(epsilon, count, delta)
    assert exact == pytest.approx(_pure_epsilon_by_bisection(epsilon, count, delta), rel=1e-9, abs=1e-12)
    assert exact <= count * epsilon * (1 + 1e-12)
    single = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(epsilon, 0.0))
    accountant = float(single.self_compose(count).get_epsilon_for_delta(delta))
    if math.isfinite(accountant):  # it answers ∞ where δ is below the mass it truncates
        assert abs(accountant - exact) <= 1e-3 * count  # its discretisation, per fold
