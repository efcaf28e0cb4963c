"""Charlie's step 4, shared by its networked side and the reference: counts → targets → w_s → w_p."""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from mpdp.learning.logistic import fit
from mpdp.protocols.hamm import training
from mpdp.protocols.hamm.parameters import GRADIENT_TOLERANCE, HammParameters
from mpdp.protocols.hamm.release import Release, on_grid


@dataclass(frozen=True)
class Outcome:
    trained: np.ndarray  # w_s on the grid (Charlie's secret)
    eta: np.ndarray
    released: np.ndarray  # w_p = w_s + η

    @property
    def shape(self) -> tuple[int, ...]:
        return self.released.shape


def train_and_release(parameters: HammParameters, aux_features: np.ndarray, counts: np.ndarray, voters: int,
                      source: random.Random) -> Outcome:
    """w_s from the counts of M′ voters (vote or soft targets), then η of the `l2-laplace` release."""
    targets = training.targets_from_counts(counts, voters, parameters.method)
    trained = on_grid(fit(aux_features, targets, parameters.regularization, GRADIENT_TOLERANCE))
    eta = Release(parameters, voters).sample(source).reshape(trained.shape)
    return Outcome(trained, eta, trained + eta)


def eta_source(noise_seed: int) -> random.Random:
    """η's random stream: seeded only for the reference check (test mode), else the system's CSPRNG."""
    return random.Random(f"mpdp/hamm/eta/{noise_seed}") if noise_seed else random.SystemRandom()
