"""DPPP's vote histogram against its noise before a session (`launcher/common/noise_check.py` says how the check
reads)."""

from __future__ import annotations

import math

from launcher.common import noise as shared


def histogram(args, parties: int, client_data: dict, colluding: int = 1) -> dict | None:
    """A unanimous vote's margin is T·K (K teachers, each ballot the votes of its T models); the difference of two
    noisy counts has std √(K·N_i/2) (Bin(N_i, ½) from every teacher), which depends on ε, δ and Q, not on K or
    T. Their ratio is the noise against the signal. N_i is calibrated against one principal's `colluding`
    teachers, as the client will."""
    if getattr(args, "noise", "binomial") != "binomial":
        return None
    from mpdp.privacy.binomial import BinomialCalibration
    from mpdp.protocols.dppp.parameters import DEFAULT_HONEST_FRACTION, DpppParameters

    queries = min(args.queries, len(client_data.get("public_features", ())))
    if queries < 1:
        return None
    calibration = DpppParameters.with_minimal_noise(args.epsilon, args.delta, queries, int(client_data["classes"]),
                                                    parties, DEFAULT_HONEST_FRACTION, True, bytes(32),
                                                    colluding=colluding).calibration
    if not isinstance(calibration, BinomialCalibration):
        return None
    tosses = calibration.tosses_per_teacher
    size = getattr(args, "ensemble", 1)
    noise = math.sqrt(parties * tosses / 2)
    margin = size * parties
    return shared.judged("DPPP vote histogram", noise, margin,
                  f"std √(K·N_i/2) of a count difference, N_i = {tosses} over {queries} queries, against the "
                  f"unanimous margin T·K = {size}·{parties}",
                  f"a larger ensemble per teacher (`--ensemble {max(2 * size, 4)}`: the margin grows with T, the "
                  "noise does not), more teachers, or a larger ε",
                  parties, signal_name="the unanimous vote's margin", short="unanimous margin")


def check(args, topology, client_data: dict) -> dict | None:
    """N_i depends on how many teachers one principal hosts."""
    return histogram(args, len(topology.parties), client_data, topology.colluding)


SPREAD_UNAVAILABLE = ("the noise is on the teachers' vote counts: redrawing it needs every teacher's votes, and the "
                      "student retrained on each draw (use --repeat)")
