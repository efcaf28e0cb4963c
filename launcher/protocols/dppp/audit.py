"""`mpdp audit dppp`: one query's two-class vote counts, their noise as the teachers sample it
(launcher/audit/counts.py says how the audit reads)."""

from __future__ import annotations

import numpy as np

from launcher.audit.counts import WorstSum, _releases, exact_check, report, share_sampler
from launcher.protocols.dppp import neighbours
from mpdp.privacy import spec_sensitivity
from mpdp.privacy.collusion import COLLUDING_CONTRIBUTORS

MECHANISMS = ("binomial", "skellam")


def audit_dppp(noise: str, epsilon: float, delta: float, trials: int, teachers: int = 10,
               broken: str | None = None, colluding: int = COLLUDING_CONTRIBUTORS) -> dict:
    worst = WorstSum.fewest(teachers, colluding)
    contributors, why = worst.unknown, worst.why(teachers)
    sampler, claim = share_sampler(noise, epsilon, delta, 2, teachers, 2, broken, teachers, colluding=colluding)
    votes_d, votes_d_prime, neighbour = neighbours.votes(teachers, contributors)
    on_d, draws = _releases(votes_d, sampler, contributors, trials)
    on_d_prime, _ = _releases(votes_d_prime, sampler, contributors, trials)
    exact = exact_check(sampler, contributors, spec_sensitivity.dppp_shifts(1),
                        [int(v) for v in votes_d_prime.sum(axis=0) - votes_d.sum(axis=0)], epsilon, delta, draws,
                        teachers * 2)

    def statistics(releases: np.ndarray) -> dict[str, np.ndarray]:
        difference = releases[:, 0] - releases[:, 1]
        return {"count difference": difference, f"difference mod {teachers}": np.mod(difference, teachers)}

    return report("dppp", {**claim, **sampler.describe()}, epsilon, delta, trials, exact,
                  statistics(on_d), statistics(on_d_prime), on_d[:, 0] - on_d[:, 1],
                  on_d_prime[:, 0] - on_d_prime[:, 1],
                  {"teachers": teachers, "contributors": contributors, "colluding": colluding,
                   "contributors_counted_because": why, "queries": 1, "classes": 2,
                   "neighbour": neighbour}, broken)
