"""What one malicious voter (DPPP teacher, Hamm voter) can do to a decrypted sum in a session's mode, stated in the
report (spec README: "its influence is stated and bounded"; docs/malicious-party.md, "What the report states").

Counts are the decrypted per-slot counts (DPPP: per query and class; Hamm: per point and vote slot) with K′
contributors, T votes each per row (DPPP's ensemble; 1 for Hamm), N_i tosses each and C slots per row. Without
proofs anything that keeps the counts feasible passes the aggregator's check (each count in [0, K′T + Σ N_i], each
row's total in [K′T, K′T + C·Σ N_i]: `aggregator/dppp.py`, tests/test_influence.py holds the two equal); an
unproven noise ciphertext is as free as an unproven vote. With proven votes and verifiable noise a voter adds T
one-hot votes per row and a fair Bin(N_i, ½) share per slot, like an honest one; the key holders check that before
they decrypt, so an aggregator colluding with it changes nothing, provided the holders also check the committed
bits' proofs (the `holders-check-bits` assurance).
"""

from __future__ import annotations

from mpdp.vote_proofs.assurance import Assurance


def one_voter(role: str, assurance: Assurance, tosses: int, contributors: int, width: int,
              votes_per_row: int = 1) -> dict:
    """`role` names the voter ("teacher", "voter"); `tosses` is N_i (0: no noise shares); `width` the slots per row
    (C, or 1 for a binary vote); `votes_per_row` T, the votes each contributor casts per row (DPPP's ensemble).
    `steer_per_count`: how far it can move one decrypted count from where an honest voter's vote and fair share
    would put it, in the worst case; `steer_per_row_total`: likewise a row's total."""
    proven_votes, verifiable_noise = assurance.proven_votes, assurance.verifiable_noise
    noise_total = contributors * tosses
    votes_total = contributors * votes_per_row  # K′T
    feasible = votes_total + noise_total  # the widest count the aggregator's range check passes
    proven = "one one-hot vote per row, proven" if votes_per_row == 1 else f"{votes_per_row} one-hot votes per row, proven"
    if not proven_votes:
        mode = "unproven votes"
        votes = (f"any ballot whose decrypted counts stay feasible: each count in [0, {feasible}] (K′T + Σ N_i), each "
                 f"row's total in [K′T, K′T + C·Σ N_i] = [{votes_total}, {votes_total + width * noise_total}]")
        noise = "carried in the same unproven ciphertexts as the vote"
        steer, steer_total = feasible, width * noise_total
    elif tosses == 0:
        mode = "proven votes, no noise shares"
        votes, noise = "one one-hot vote per row, proven", "none"
        steer, steer_total = 0, 0
    elif not verifiable_noise:
        mode = "proven votes, unverified noise"
        votes = proven
        noise = (f"its noise ciphertexts are unproven: any share the feasibility check passes (each count in "
                 f"[0, {feasible}]); a share kept in its legal range [0, {tosses}] still moves each count by up to "
                 f"±{tosses / 2:g} around the fair mean, unnoticed")
        steer, steer_total = feasible, width * noise_total
    else:
        mode = "proven votes, verifiable noise"
        votes = proven
        noise = (f"a fair Bin({tosses}, ½) share per slot: its committed bits are flipped by a joint coin drawn after "
                 "they are fixed")
        steer, steer_total = 0, 0
    if not proven_votes:
        collusion = ("unbounded: nothing is proven, and the feasibility check is the aggregator's own, which a "
                     "colluding aggregator skips")
    elif tosses and not verifiable_noise:
        collusion = ("unbounded in the noise: every key holder checks the vote proofs before it decrypts, but the noise "
                     "ciphertexts are unproven and the feasibility check is the aggregator's own")
    elif verifiable_noise and not assurance.holders_check_bits:
        collusion = ("unbounded in the noise: every key holder checks the vote proofs, the signed commitments, the "
                     "joint coin and every flip before it decrypts, but the committed bits' proofs only the "
                     "aggregator checks (below --assurance holders-check-bits), and a non-bit v flips to 1 − v")
    else:
        collusion = ("none beyond the above: every key holder checks each contribution's vote proofs"
                     + (", signed commitments, bit proofs, joint coin and flips" if verifiable_noise else "")
                     + " before it decrypts, so an aggregator that skipped them gets nothing decrypted; it can still "
                     "drop voters up to the τ bound")
    return {
        "role": role,
        "mode": mode,
        "votes": votes,
        "noise": noise,
        "steer_per_count": steer,
        "steer_per_row_total": steer_total,
        "votes_per_row_total": votes_total,  # K′T: no row's vote margin is wider
        "with_a_colluding_aggregator": collusion,
        "dropout": "it can always withhold its contribution, removing its vote and share as any dropout does",
    }


def summary_line(influence: dict) -> str:
    steer = ("nothing beyond its own vote" if influence["steer_per_count"] == 0 else
             f"any count by up to {influence['steer_per_count']}, a row's total by up to "
             f"{influence['steer_per_row_total']}")
    votes = influence.get("votes_per_row_total")
    if votes and influence["steer_per_count"] >= votes:
        steer += f" (a row holds K′T = {votes} votes: any majority can be reversed)"
    return (f"  one malicious {influence['role']} ({influence['mode']}): moves {steer}; with a colluding aggregator: "
            f"{influence['with_a_colluding_aggregator'].split(':')[0]}")
