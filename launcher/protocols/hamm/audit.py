"""`mpdp audit hamm`: the vote counts on X_aux, their noise as the parties sample it
(launcher/audit/counts.py says how the audit reads)."""

from __future__ import annotations

import numpy as np

from launcher.audit.counts import WorstSum, _releases, exact_check, report, share_sampler
from launcher.protocols.hamm import neighbours
from mpdp.privacy import spec_sensitivity
from mpdp.privacy.collusion import COLLUDING_CONTRIBUTORS

MECHANISMS = ("binomial", "skellam")


def audit_hamm(noise: str, epsilon: float, delta: float, trials: int, parties: int = 20, points: int = 10,
               broken: str | None = None, colluding: int = COLLUDING_CONTRIBUTORS) -> dict:
    worst = WorstSum.fewest(parties, colluding)
    contributors, why = worst.unknown, worst.why(parties)
    sampler, claim = share_sampler(noise, epsilon, delta, points, parties, points, broken, parties,
                                   split_among_calibrated=True, colluding=colluding)
    votes_d, votes_d_prime, neighbour = neighbours.votes(parties, contributors, points)
    on_d, draws = _releases(votes_d, sampler, contributors, trials)
    on_d_prime, _ = _releases(votes_d_prime, sampler, contributors, trials)
    exact = exact_check(sampler, contributors, spec_sensitivity.hamm_shifts(points),
                        [int(v) for v in votes_d.sum(axis=0) - votes_d_prime.sum(axis=0)], epsilon, delta, draws,
                        parties * points)

    change = votes_d.sum(axis=0) - votes_d_prime.sum(axis=0)

    def statistics(releases: np.ndarray) -> dict[str, np.ndarray]:
        return {"counts projected on the change": releases @ change,
                f"sum mod {parties}": np.mod(releases.sum(axis=1), parties)}

    return report("hamm", {**claim, **sampler.describe()}, epsilon, delta, trials, exact,
                  statistics(on_d), statistics(on_d_prime), on_d @ change, on_d_prime @ change,
                  {"parties": parties, "contributors": contributors, "colluding": colluding,
                   "contributors_counted_because": why, "aux_points": points, "classes": 2,
                   "neighbour": neighbour}, broken)
