"""The observe overhead section `mpdp bench dppp` prints, from measured values (no process, no time asserted):
rounds alternate off/on pair by pair, each pair gives its ratio, the printed figures and the verdict follow from
the measured ones. The bench end to end (one deployment switched by signal) is in tests/test_bench_protocols.py."""

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


def _report(measured: dict, spans_match: bool = True, off_calls: int = 0) -> dict:
    cpu = observe_overhead.ratios(measured, "cpu_s")
    check = {"metrics_match": True, "spans_match": True, "differences": [], "messages": 40}
    if not spans_match:
        check = {**check, "spans_match": False, "differences": [["Step/dppp/votes", 30, 30, 29]]}
    return {"pairs": 3, "cpu": cpu, "wall": observe_overhead.ratios(measured, "wall_s"),
            "target_ratio": observe_overhead.TARGET_RATIO, "met": cpu["median"] <= observe_overhead.TARGET_RATIO,
            "per_call": {"extra_ms": {"on": 0.215}, "round_messages": 38,
                         "share_of_round_cpu": 0.215e-3 * 38 / cpu["median_off"],
                         "flag_checks": {"extra_us": 0.56, "share_of_round_cpu": 0.56e-6 * 38 / cpu["median_off"]}},
            "checks": [check] * 3, "totals": {"metric_calls": 120, "server_spans": 120, "messages": 120},
            "off": {"rounds": 3, "metric_calls": off_calls, "sessions_with_spans": 0,
                    "nothing_counted": off_calls == 0}}


def test_rounds_alternate_and_each_pair_gives_its_ratio():
    measured, calls = _measured({"off": [3.5, 3.6, 3.4], "on": [3.52, 3.8, 3.45]})
    assert calls == ["off", "on", "on", "off", "off", "on"]  # neither side always first
    cpu = observe_overhead.ratios(measured, "cpu_s")
    assert cpu["per_pair"] == pytest.approx([3.52 / 3.5, 3.8 / 3.6, 3.45 / 3.4])
    assert cpu["median"] == pytest.approx(statistics.median([3.52 / 3.5, 3.8 / 3.6, 3.45 / 3.4]))
    assert (cpu["lowest"], cpu["highest"]) == (min(cpu["per_pair"]), max(cpu["per_pair"]))
    quartiles = statistics.quantiles(cpu["per_pair"], n=4)
    assert cpu["quartiles"] == pytest.approx([quartiles[0], quartiles[2]])
    assert cpu["of_medians"] == pytest.approx(3.52 / 3.5)
    assert observe_overhead.ratios(measured, "wall_s")["per_pair"] == pytest.approx([2.1 / 2.0, 2.0 / 2.2, 2.4 / 2.1])


def test_the_printed_section_carries_the_measured_ratios_and_the_verdict_they_give():
    low, _ = _measured({"off": [3.5, 3.6, 3.4], "on": [3.52, 3.62, 3.45]})
    text = "\n".join(observe_overhead.lines({**_report(low), "load_average": [[17.4, 14.7, 9.3], [16.0, 15.1, 9.9]]}))
    cpu = observe_overhead.ratios(low, "cpu_s")
    assert f"median of pairs {cpu['median']:.3f}" in text and f"highest {cpu['highest']:.3f}" in text
    assert "role processes' CPU" in text and "round's wall time" in text and ": met, read here" in text
    assert f"quartiles {cpu['quartiles'][0]:.3f}–{cpu['quartiles'][1]:.3f}" in text
    assert "in 3 of 3 (120 calls, 120 spans, 120 messages)" in text
    assert "switched off: 0 calls counted and 0 sessions spanned over 3 rounds" in text
    assert "load average 17.4 → 16.0" in text and "switched by signal between rounds" in text
    # "off" is the extra installed and switched off: its flag checks' cost is printed with it
    assert "\"off\" still runs the interceptors' flag checks: +0.56 µs of CPU a call" in text
    # 0.215 ms × 38 messages = 8.2 ms against the median 3.5 CPU-s of a round without the extra
    assert "+ 0.215 ms of CPU a call" in text and "× 38 messages = 8.2 ms, 0.23 % of the roles' CPU" in text

    high, _ = _measured({"off": [3.5, 3.6, 3.4], "on": [3.7, 3.8, 3.6]})
    text = "\n".join(observe_overhead.lines(_report(high, spans_match=False, off_calls=2)))
    assert "NOT met" in text and "in 0 of 3" in text and "Step/dppp/votes" in text
    assert "switched off: 2 calls counted" in text


def test_a_run_that_cannot_measure_says_why():
    assert observe_overhead.lines({"skipped": "the [observe] extra is not installed"}) == [
        "  observe overhead: not measured: the [observe] extra is not installed"]
