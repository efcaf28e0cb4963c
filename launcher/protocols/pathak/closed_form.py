"""The messages one Pathak session sends, in closed form from its report (docs/protocols/pathak.md): what
`mpdp report --html` sets beside the observed traffic."""

from __future__ import annotations


def closed_form(report: dict) -> dict[tuple[str, str, str], int]:
    """Messages per (from, to, Step/pathak/kind) with K parties and f fixed points of π1 (the routed shares a
    party delivers to itself, `evaluator_view.self_deliveries`, stay local); distributed noise skips Stages 1–2."""
    k = int(report["parameters"]["parties"])
    pp, pc, cp = ("party", "party"), ("party", "curator"), ("curator", "party")
    counts = {
        ("client", "party", "Step/pathak/open"): k, ("client", "party", "Step/pathak/start"): k,
        ("client", "curator", "Step/pathak/open"): 1, ("client", "curator", "Step/pathak/start"): 1,
        ("client", "party", "AwaitResult"): k, ("client", "curator", "AwaitResult"): 1,
        (*pp, "Step/pathak/share"): k * (k - 1), (*pc, "Step/pathak/share"): k, (*cp, "Step/pathak/share"): k,
    }
    if report["parameters"].get("noise_source") == "distributed":
        return counts
    self_deliveries = report.get("evaluator_view", {}).get("self_deliveries", {})
    self_routed = sum(kinds.get("routed_share", 0) for kinds in self_deliveries.values())
    rounds = (k - 1).bit_length()  # the comparison tournament: one message each way per round
    counts |= {
        (*cp, "Step/pathak/curator_key"): k, (*pp, "Step/pathak/party_key"): k - 1,
        (*pc, "Step/pathak/party_public_key"): 1,
        (*pp, "Step/pathak/commitment"): k * (k - 1), (*pp, "Step/pathak/reveal"): k * (k - 1),
        (*pp, "Step/pathak/routed_share"): k - self_routed,
        (*pp, "Step/pathak/barrier_ready"): k - 1, (*pp, "Step/pathak/barrier_release"): k - 1,
        (*pc, "Step/pathak/stage1_element"): k, (*cp, "Step/pathak/masked_share"): k,
        (*pp, "Step/pathak/masked_value"): k - 1, (*pc, "Step/pathak/ready_to_compare"): 1,
        (*cp, "Step/pathak/compare_request"): rounds, (*pc, "Step/pathak/compare_reply"): rounds,
        (*cp, "Step/pathak/indicator"): 1, (*pp, "Step/pathak/indicator_element"): k - 1,
        (*pp, "Step/pathak/selected_noise"): k - 1, (*pc, "Step/pathak/masked_noise"): 1,
    }
    return {key: value for key, value in counts.items() if value}
