"""The messages one DPPP round sends, in closed form from its report's public parameters (docs/protocols/dppp.md):
what `mpdp report --html` sets beside the observed traffic."""

from __future__ import annotations

from mpdp.protocols.dppp.parameters import default_threshold


def closed_form(report: dict) -> dict[tuple[str, str, str], int]:
    """Messages per (from, to, rpc). t holders are asked first and one more for each share found bad (the report's
    `rejected_shares`); a holder that crashes after being asked is not modelled, so its missing reply shows as a
    difference."""
    parameters, result = report["parameters"], report.get("result", {})
    teachers, holders = int(parameters["teachers"]), int(parameters["key_holders"])
    threshold = int(parameters.get("threshold") or default_threshold(holders))
    asked = min(holders, threshold + len(result.get("rejected_shares", {})))
    counts = {
        ("client", "aggregator", "AwaitResult/dppp/open"): 1,
        ("aggregator", "party", "Step/dppp/queries"): teachers,
        ("party", "aggregator", "Step/dppp/votes"): teachers,
        ("aggregator", "party", "Step/dppp/decryption_request"): asked,
        ("party", "aggregator", "Step/dppp/partial_decryptions"): asked,
        ("aggregator", "party", "Step/dppp/stand_down"): holders - asked,
    }
    if parameters.get("verifiable_noise"):  # steps 2b–2d: the joint coin and the flipped contributions
        counts |= {("aggregator", "party", "Step/dppp/coin"): teachers, ("party", "aggregator", "Step/dppp/reveal"): teachers,
                   ("aggregator", "party", "Step/dppp/shares"): teachers,
                   ("party", "aggregator", "Step/dppp/flipped"): teachers}
    return {key: value for key, value in counts.items() if value}
