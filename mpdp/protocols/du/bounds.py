"""What a Du server can check of a secure aggregation round once only the sums are decrypted
(docs/malicious-party.md, "Du"): Σ n_i within K′ times the public cap, and the average within [−B, B].

In the clear the server checks each upload (n_i ≤ cap, |θ_ik| ≤ B: aggregator/du.py). Under secure aggregation
it sees Σ n_i·θ_ik and Σ n_i alone, so a party over either bound is caught only when it moves the sum out of
what K′ honest parties can produce; the round then fails, naming no one (the sum cannot say who).
"""

from __future__ import annotations

import numpy as np

from mpdp.protocols.du.parameters import DuParameters
from mpdp.sessions.errors import aborted


def check_secure_sum(parameters: DuParameters, contributors: int, total_records: int, average: np.ndarray) -> None:
    cap = contributors * parameters.records_cap
    if not contributors <= total_records <= cap:
        raise aborted(f"Σ n_i = {total_records} is outside [{contributors}, {cap}] ({contributors} uploads, each n_i "
                      f"≤ the public cap {parameters.records_cap}): a party over-claimed its weight")
    if np.max(np.abs(average)) > parameters.bound:
        raise aborted(f"the weighted average leaves [−B, B] (B = {parameters.bound:g}): a party's upload is outside it")
