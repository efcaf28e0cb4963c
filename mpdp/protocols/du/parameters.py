"""Du session parameters (du.md), public, checked before any work."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from mpdp.privacy.mechanisms import MAX_EPSILON
from mpdp.proto.v1 import du_pb2
from mpdp.sessions.errors import invalid
from mpdp.threshold_sum import quorums

METHODS = ("ofpa", "ofaa", "objective", "functional", "none")
PAPER_METHODS = ("ofpa", "ofaa")
MAX_PARTIES = 1_000
MAX_DIMENSION = 1_000  # d + 1 parameters; OFAA and the functional mechanism draw (d+1)(d+2)/2 + d + 1 noises
MAX_ROUNDS = 1_000
MAX_EPOCHS = 10_000
MAX_BATCH = 1_000_000
MAX_RUN_STEPS = 10_000_000  # rounds × local epochs × ⌈n_i / batch⌉: a party refuses a run that costs more
MAX_RUN_NOISE = 20_000_000  # rounds × noise draws per round (the quadratics draw one per monomial)
MAX_BOUND = 1e6
MIN_DELTA = 1e-15
DEFAULT_HONEST_FRACTION = quorums.DEFAULT_HONEST_FRACTION  # the key's and the calibration's one adversary
FRACTIONAL_BITS = 32  # uploads on the grid 2^−F, plain and secure alike
MAX_RECORDS = 10_000_000  # public bound on n_i (the weights' fixed-point range)


@dataclass(frozen=True)
class DuParameters:
    method: str
    epsilon: float  # per round (unused by `none`)
    delta: float  # for the accountant's composed ε
    rounds: int  # the round limit R
    tolerance: float  # stop when ‖θ_{k+1} − θ_k‖₂ ≤ this (0: always R rounds)
    local_epochs: int
    learning_rate: float
    regularization: float  # λ: the objective-perturbation regulariser, and the convexity repair's floor
    parties: int
    dimension: int  # d (the intercept α is one more parameter)
    bound: float  # B: uploads are clipped to [−B, B] per coordinate (fixed-point range)
    secure_aggregation: bool
    honest_fraction: float
    key_id: bytes
    batch_size: int = 256
    records_cap: int = MAX_RECORDS  # public cap on every n_i: the operator's knowledge, not the party's claim

    def __post_init__(self):
        if self.method not in METHODS:
            raise invalid(f"method must be one of {', '.join(METHODS)}")
        if self.method != "none" and not (0 < self.epsilon <= MAX_EPSILON and math.isfinite(self.epsilon)):
            raise invalid(f"ε must be in (0, {MAX_EPSILON:g}]")
        if not MIN_DELTA <= self.delta < 1:
            raise invalid(f"δ must be in [{MIN_DELTA:g}, 1)")
        if not 1 <= self.rounds <= MAX_ROUNDS:
            raise invalid(f"rounds must be in [1, {MAX_ROUNDS}]")
        if not (math.isfinite(self.tolerance) and self.tolerance >= 0):
            raise invalid("the stop threshold must be ≥ 0")
        if not 1 <= self.local_epochs <= MAX_EPOCHS:
            raise invalid(f"local epochs must be in [1, {MAX_EPOCHS}]")
        if not 1 <= self.batch_size <= MAX_BATCH:
            raise invalid(f"the batch size must be in [1, {MAX_BATCH}]")
        if not (math.isfinite(self.learning_rate) and 0 < self.learning_rate <= 100):
            raise invalid("the learning rate must be in (0, 100]")
        if not (math.isfinite(self.regularization) and 0 <= self.regularization <= 1e3):
            raise invalid("λ must be in [0, 1e3]")
        if self.method == "objective" and self.regularization <= 0:
            raise invalid("objective perturbation needs λ > 0")
        if not 1 <= self.parties <= MAX_PARTIES:
            raise invalid(f"parties must be in [1, {MAX_PARTIES}]")
        if not 1 <= self.dimension <= MAX_DIMENSION:
            raise invalid(f"d must be in [1, {MAX_DIMENSION}]")
        if not (math.isfinite(self.bound) and 0 < self.bound <= MAX_BOUND):
            raise invalid(f"the parameter bound must be in (0, {MAX_BOUND:g}]")
        if not (math.isfinite(self.honest_fraction) and 1 / self.parties <= self.honest_fraction <= 1):
            raise invalid("τ must be in [1/K, 1]")
        if self.secure_aggregation and self.min_contributors < 2:
            raise invalid("secure aggregation needs at least 2 contributors per round (one would be revealed)")
        if not 1 <= self.records_cap <= MAX_RECORDS:
            raise invalid(f"the cap on n_i must be in [1, {MAX_RECORDS}]")
        if len(self.key_id) != 32:
            raise invalid("key id must be 32 bytes")
        if self.rounds * self.noise_draws > MAX_RUN_NOISE:
            raise invalid(f"{self.rounds} rounds of {self.noise_draws} noise draws exceed {MAX_RUN_NOISE}: "
                          "fewer rounds or features")

    @property
    def noise_draws(self) -> int:
        """Noise values one party draws per round."""
        monomials = self.weights * (self.weights + 1) // 2
        return {"ofaa": self.weights + monomials, "functional": self.weights + monomials,
                "ofpa": self.dimension, "objective": self.weights + 1}.get(self.method, 0)

    @classmethod
    def from_proto(cls, message: du_pb2.DuParameters) -> "DuParameters":
        return cls(**{f.name: getattr(message, f.name) for f in fields(cls)})

    def to_proto(self) -> du_pb2.DuParameters:
        return du_pb2.DuParameters(**{f.name: getattr(self, f.name) for f in fields(self)})

    @property
    def weights(self) -> int:
        """(w, α): d + 1 parameters."""
        return self.dimension + 1

    @property
    def min_contributors(self) -> int:
        """Uploads a round needs: ⌈τK⌉ (and 2 under secure aggregation, so that no sum is one party's)."""
        needed = math.ceil(self.honest_fraction * self.parties - 1e-9)
        return max(needed, 2) if self.secure_aggregation else max(needed, 1)

    @property
    def private(self) -> bool:
        return self.method != "none"
