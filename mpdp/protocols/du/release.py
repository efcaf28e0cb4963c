"""A Du round's decrypted sums made into the weighted average, the same code at the server that computes it and
at the client that checks it; and the client's check of a secure-aggregation `DuResult` against the evidence it
carries, round by round (docs/client-checks.md). Free of gRPC."""

from __future__ import annotations

import numpy as np

from mpdp.cryptocore.errors import CryptoError
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.proto.v1 import du_pb2
from mpdp.protocols.du import bounds, encoding, server
from mpdp.protocols.du.parameters import DuParameters
from mpdp.sessions.errors import ProtocolError, aborted
from mpdp.threshold_sum.binding import ContributionKeys, SumSlot
from mpdp.threshold_sum.context import proof_context
from mpdp.threshold_sum.release_check import compare, lie, verify_sum

SERVER = "server (aggregator)"


def average_of(parameters: DuParameters, public_key: ThresholdPublicKey, plaintexts: list[int], contributors: int,
               round_number: int) -> np.ndarray:
    """Σ n_i·θ_ik / Σ n_i from the round's combined plaintexts; aborted if the sums are impossible."""
    try:
        sums = encoding.layout(parameters, public_key.n).unpack(plaintexts, encoding.values(parameters),
                                                                biased_summands=contributors)
        average = encoding.decode(parameters, sums)
    except CryptoError as error:
        raise aborted(f"round {round_number}: the sum does not decode: {error}") from None
    bounds.check_secure_sum(parameters, contributors, sums[-1], average)
    return average


def check_result(parameters: DuParameters, public_key: ThresholdPublicKey, session_id: str,
                 keys: ContributionKeys | None, key_holders: list[int], result: du_pb2.DuResult) -> dict:
    """Every round's sum recomputed from its signed uploads and the holders' proven answers, its participants and
    step, and the released θ as the rounds' mean (server.released). `lie(SERVER, …)` on any mismatch. Returns what the
    client verified: the participants per round and the holders whose answers failed their proofs."""
    p = parameters
    evidence = {e.round: e.evidence for e in result.evidence}
    compare(SERVER, "the rounds", (result.rounds, [r.round for r in result.history]),
            (len(result.history), list(range(len(result.history)))))
    if len(evidence) != len(result.evidence) or sorted(evidence) != [r.round for r in result.history]:
        raise lie(SERVER, "its result does not carry exactly one sum's evidence per round")
    count = encoding.layout(p, public_key.n).plaintexts_needed(encoding.values(p))
    theta, participants, rejected = np.zeros(p.weights), {}, {}
    round_models: list[np.ndarray] = []
    for history in result.history:
        k = history.round
        verified = verify_sum(public_key, evidence[k], SumSlot.of("du", session_id, p, k), keys, p.parties,
                              p.min_contributors, count, proof_context("du", session_id, k), key_holders, SERVER,
                              named_failing={r.holder for r in result.rejected})
        try:
            average = average_of(p, public_key, verified.plaintexts, len(verified.contributors), k)
        except ProtocolError as error:
            raise lie(SERVER, f"it went on past a round it had to refuse ({error})") from None
        compare(SERVER, f"round {k}'s participants", list(history.participants), verified.contributors)
        compare(SERVER, f"round {k}'s step", history.step_norm, float(np.linalg.norm(average - theta)))
        theta, participants[k] = average, verified.contributors
        round_models.append(average)
        rejected.update(verified.rejected)
    compare(SERVER, "the released θ", list(result.theta), server.released(p, round_models).tolist())
    compare(SERVER, "key holders whose partial decryptions failed", sorted(r.holder for r in result.rejected),
            sorted(rejected))
    return {"participants": participants, "rejected_shares": rejected}
