"""The messages one Hamm session sends, in closed form from its report's public parameters (docs/protocols/hamm.md):
what `mpdp report --html` sets beside the observed traffic."""

from __future__ import annotations


def closed_form(report: dict) -> dict[tuple[str, str, str], int]:
    """Messages per (from, to, rpc): X_aux down to every party, the votes up, the aggregate to Charlie, a
    decryption request to every key holder and its proven share to Charlie."""
    parameters = report["parameters"]
    parties = int(parameters["parties"])
    holders = int(parameters.get("key_holders", parties))
    counts = {
        ("client", "curator", "AwaitResult/hamm/open"): 1,
        ("curator", "aggregator", "Step/hamm/queries"): 1,
        ("aggregator", "party", "Step/hamm/queries"): parties,
        ("party", "aggregator", "Step/hamm/votes"): parties,
        ("aggregator", "party", "Step/hamm/decryption_request"): holders,
        ("aggregator", "curator", "Step/hamm/aggregate"): 1,
        ("party", "curator", "Step/hamm/partial_decryptions"): holders,
    }
    if parameters.get("verifiable_noise"):  # the joint coin and the flipped contributions, once per voter
        counts |= {("aggregator", "party", "Step/hamm/coin"): parties, ("party", "aggregator", "Step/hamm/reveal"): parties,
                   ("aggregator", "party", "Step/hamm/shares"): parties,
                   ("party", "aggregator", "Step/hamm/flipped"): parties}
    return counts
