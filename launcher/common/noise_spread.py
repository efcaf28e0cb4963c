"""The spread one release's figures are expected to have from its privacy noise, per protocol
(mpdp/learning/noise_spread.py says what each estimate measures and its bias); `unavailable` with the reason
where it cannot be computed."""

from __future__ import annotations

from mpdp.learning import noise_spread as spread


def estimate(protocol: str, report: dict, topology, client_data: dict) -> dict:
    """The noise's spread for the release in `report`; never fails the run (a reason instead)."""
    from launcher.registry import PROTOCOLS

    entry = PROTOCOLS.get(protocol)
    if entry is not None and entry.noise_spread_unavailable:
        return spread.unavailable(entry.noise_spread_unavailable)
    found = entry.noise_spread if entry is not None else None
    if found is None:
        return spread.unavailable(f"no estimate for {protocol}")
    if "test_metrics" not in report.get("result", {}):
        return spread.unavailable("no test metrics in the report")
    try:
        return found(report, topology, client_data)
    except (KeyError, TypeError, ValueError) as reason:
        return spread.unavailable(f"not computed: {reason}")
