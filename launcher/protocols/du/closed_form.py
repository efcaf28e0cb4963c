"""The messages one Du run sends, in closed form from its report (docs/protocols/du.md): what `mpdp report --html`
sets beside the observed traffic."""

from __future__ import annotations


def closed_form(report: dict) -> dict[tuple[str, str, str], int]:
    """Messages per (from, to, rpc) over R rounds run: θ_k to every party each round and the final model, an
    upload back each round; with secure aggregation a decryption request to and a proven share from every key
    holder each round."""
    parameters, result = report["parameters"], report.get("result", {})
    parties, rounds = int(parameters["parties"]), int(result.get("rounds", parameters["rounds"]))
    counts = {("client", "aggregator", "AwaitResult/du/open"): 1,
              ("aggregator", "party", "Step/du/model"): parties * (rounds + 1),
              ("party", "aggregator", "Step/du/upload"): parties * rounds}
    if parameters.get("secure_aggregation"):
        holders = int(parameters.get("key_holders", parties))
        counts[("aggregator", "party", "Step/du/decryption_request")] = holders * rounds
        counts[("party", "aggregator", "Step/du/partial_decryptions")] = holders * rounds
    return counts
