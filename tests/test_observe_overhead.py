"""The observe overhead section `mpdp bench dppp` prints, from measured values (no process, no time asserted):
rounds alternate off/on pair by pair, each pair gives its ratio, the printed figures and the verdict follow from
the measured ones. The bench end to end (a second, observed deployment) is in tests/test_bench_protocols.py."""

from __future__ import annotations

import statistics

import pytest

from launcher.bench import observe_overhead


def _measured(cpu: dict[str, list[float]]):
    calls: list[str] = []
    walls = {"off": iter([2.0, 2.2, 2.1]), "on": iter([2.1, 2.0, 2.4])}
    cpus = {side: iter(values) for side, values in cpu.items()}

    def measure(side: str) -> tuple[float, float]:
        calls.append(side)
        return next(walls[side]), next(cpus[side])

    return observe_overhead.alternate(3, measure), calls


def _report(measured: dict, spans_match: bool = True) -> dict:
    cpu = observe_overhead.ratios(measured, "cpu_s")
    check = {"metrics_match": True, "differences": [], "messages": 40}
    return {"pairs": 3, "cpu": cpu, "wall": observe_overhead.ratios(measured, "wall_s"),
            "target_ratio": observe_overhead.TARGET_RATIO, "met": cpu["median"] <= observe_overhead.TARGET_RATIO,
            "per_call": {"extra_ms": {"on": 0.215}, "round_messages": 38,
                         "share_of_round_cpu": 0.215e-3 * 38 / cpu["median_off"]},
            "checks": [check] * 3, "spans": {"spans_match": spans_match, "server_spans": 120, "messages": 120,
                                             "differences": [] if spans_match else [["Step/dppp/votes", 30, 29]]}}


def test_rounds_alternate_and_each_pair_gives_its_ratio():
    measured, calls = _measured({"off": [3.5, 3.6, 3.4], "on": [3.52, 3.8, 3.45]})
    assert calls == ["off", "on", "on", "off", "off", "on"]  # neither side always first
    cpu = observe_overhead.ratios(measured, "cpu_s")
    assert cpu["per_pair"] == pytest.approx([3.52 / 3.5, 3.8 / 3.6, 3.45 / 3.4])
    assert cpu["median"] == pytest.approx(statistics.median([3.52 / 3.5, 3.8 / 3.6, 3.45 / 3.4]))
    assert (cpu["lowest"], cpu["highest"]) == (min(cpu["per_pair"]), max(cpu["per_pair"]))
    assert cpu["of_medians"] == pytest.approx(3.52 / 3.5)
    assert observe_overhead.ratios(measured, "wall_s")["per_pair"] == pytest.approx([2.1 / 2.0, 2.0 / 2.2, 2.4 / 2.1])


def test_the_printed_section_carries_the_measured_ratios_and_the_verdict_they_give():
    low, _ = _measured({"off": [3.5, 3.6, 3.4], "on": [3.52, 3.62, 3.45]})
    text = "\n".join(observe_overhead.lines({**_report(low), "load_average": [[17.4, 14.7, 9.3], [16.0, 15.1, 9.9]]}))
    cpu = observe_overhead.ratios(low, "cpu_s")
    assert f"median of pairs {cpu['median']:.3f}" in text and f"highest {cpu['highest']:.3f}" in text
    assert "role processes' CPU" in text and "round's wall time" in text and ": met, read here" in text
    assert "3 of 3 observed rounds" in text and "yes (120 spans, 120 messages)" in text
    assert "load average 17.4 → 16.0" in text
    # 0.215 ms × 38 messages = 8.2 ms against the median 3.5 CPU-s of a round without the extra
    assert "+ 0.215 ms of CPU a call" in text and "× 38 messages = 8.2 ms, 0.23 % of the roles' CPU" in text

    high, _ = _measured({"off": [3.5, 3.6, 3.4], "on": [3.7, 3.8, 3.6]})
    text = "\n".join(observe_overhead.lines(_report(high, spans_match=False)))
    assert "NOT met" in text and "NO (120 spans" in text and "Step/dppp/votes" in text


def test_a_run_that_cannot_measure_says_why():
    assert observe_overhead.lines({"skipped": "the [observe] extra is not installed"}) == [
        "  observe overhead: not measured: the [observe] extra is not installed"]
