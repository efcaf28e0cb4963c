"""Hamm session parameters and what every role derives from them (hamm.md).

The parameters are public. The slot layout and each party's Binomial share N_i (noisy counts) are
computed by every role from them, so no aggregator or Charlie can lower a party's noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from functools import cached_property

from mpdp.cryptocore.encodings.packing import SlotLayout
from mpdp.privacy.binomial import (
    MAX_NOISE_BITS_PER_CONTRIBUTOR,
    MAX_TOTAL_TOSSES,
    epsilon_for_shifts,
    minimal_tosses_for_shifts,
    sample_binomial,
)
from mpdp.privacy.collusion import COLLUDING_CONTRIBUTORS, calibrated_contributors, check_colluding, noise_bearing
from mpdp.privacy.composition import Guarantee
from mpdp.privacy.mechanisms import MAX_EPSILON
from mpdp.privacy.skellam import TRUNCATION_SHARE_OF_DELTA, SkellamCalibration, minimal_grid, sample_shares
from mpdp.proto.v1 import hamm_pb2
from mpdp.sessions.errors import invalid
from mpdp.threshold_sum import quorums
from mpdp.vote_proofs.assurance import Assurance, AssuredParameters
from mpdp.vote_proofs.votes import aligned

METHODS = ("vote", "soft")
COUNT_NOISES = ("binomial", "skellam")
MAX_PARTIES = 100_000
MAX_CLASSES = 100
MAX_VALUES = 100_000  # slots in one party's votes (N·C, or N when binary)
MAX_WEIGHTS = 2_048  # released parameters: Newton's Hessian is its square
MIN_DELTA = 1e-15
MIN_REGULARIZATION = 1e-8
DEFAULT_HONEST_FRACTION = quorums.DEFAULT_HONEST_FRACTION  # the key's and the calibration's one adversary
FRACTIONAL_BITS = 32  # the release's grid 2^−F
GRADIENT_TOLERANCE = 1e-8  # γ: Charlie's minimiser is checked to be this exact


@dataclass(frozen=True)
class HammParameters(AssuredParameters):
    method: str
    epsilon: float  # math.inf: non-private (1/ε = 0)
    delta: float
    regularization: float
    classes: int
    parties: int
    aux_points: int
    dimension: int
    noisy_counts: bool
    protect_aux: bool
    honest_fraction: float
    key_id: bytes
    count_noise: str = "binomial"  # the voters' shares with noisy counts: Bin(N_i, ½) or Sk(μ/⌈τM⌉)
    colluding: int = COLLUDING_CONTRIBUTORS  # c: the most voters one principal hosts (every party checks its own)
    assurance: Assurance = Assurance.NONE  # how much of each voter is checked (vote_proofs/assurance.py)

    def __post_init__(self):
        object.__setattr__(self, "assurance", Assurance.parse(self.assurance))
        if self.method not in METHODS:
            raise invalid(f"method must be one of {', '.join(METHODS)}")
        if not (self.epsilon == math.inf or 0 < self.epsilon <= MAX_EPSILON):
            raise invalid(f"ε must be in (0, {MAX_EPSILON:g}] or infinite (non-private)")
        if self.noisy_counts and self.epsilon == math.inf:
            raise invalid("noisy counts need a finite ε")
        if not MIN_DELTA <= self.delta < 1:
            raise invalid(f"δ must be in [{MIN_DELTA:g}, 1)")
        if not (math.isfinite(self.regularization) and MIN_REGULARIZATION <= self.regularization <= 1e6):
            raise invalid(f"λ must be in [{MIN_REGULARIZATION:g}, 1e6]")
        if not 2 <= self.classes <= MAX_CLASSES:
            raise invalid(f"classes must be in [2, {MAX_CLASSES}]")
        if not 1 <= self.parties <= MAX_PARTIES:
            raise invalid(f"parties must be in [1, {MAX_PARTIES}]")
        if not 1 <= self.aux_points or self.values > MAX_VALUES:
            raise invalid(f"the votes of one party must fill 1 to {MAX_VALUES} slots, not {self.values}")
        if not 1 <= self.dimension or self.weights > MAX_WEIGHTS:
            raise invalid(f"the classifier must have 1 to {MAX_WEIGHTS} weights, not {self.weights}")
        if not (math.isfinite(self.honest_fraction) and 1 / self.parties <= self.honest_fraction <= 1):
            raise invalid("τ must be in [1/M, 1]: at least one voter must be counted on")
        if self.protect_aux and self.method != "soft":
            raise invalid("--protect-aux (Section 4.5) applies to the soft method")
        if len(self.key_id) != 32:
            raise invalid("key id must be 32 bytes")
        if self.count_noise not in COUNT_NOISES:
            raise invalid(f"count noise must be one of {', '.join(COUNT_NOISES)}")
        if self.verifiable_noise and not (self.noisy_counts and self.count_noise == "binomial"):
            raise invalid("verifiable noise takes noisy counts with Binomial shares (a Skellam share is no sum of "
                          "bits)")
        try:  # only noisy counts share noise among the voters
            check_colluding(self.min_contributors, self.colluding if self.noisy_counts else COLLUDING_CONTRIBUTORS)
            if self.colluding < COLLUDING_CONTRIBUTORS:
                raise ValueError(f"the contributors one principal controls must be at least 1, not {self.colluding}")
        except ValueError as error:
            raise invalid(str(error)) from None

    @classmethod
    def from_proto(cls, message: hamm_pb2.HammParameters) -> "HammParameters":
        values = {f.name: getattr(message, f.name) for f in fields(cls)}
        values["epsilon"] = math.inf if values["epsilon"] == 0 else values["epsilon"]
        values["colluding"] = values["colluding"] or COLLUDING_CONTRIBUTORS  # unset (proto3's 0): one
        return cls(**values)

    def to_proto(self) -> hamm_pb2.HammParameters:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["epsilon"] = 0.0 if self.epsilon == math.inf else self.epsilon
        return hamm_pb2.HammParameters(**values)

    @property
    def binary(self) -> bool:
        return self.classes == 2

    @property
    def values(self) -> int:
        """Slots in one party's votes: one per point (binary) or per point and class."""
        return self.aux_points * (1 if self.binary else self.classes)

    @property
    def weights(self) -> int:
        return self.dimension * (1 if self.binary else self.classes)

    @property
    def min_contributors(self) -> int:
        return math.ceil(self.honest_fraction * self.parties - 1e-9)

    @property
    def count_shifts(self) -> int:
        """Counts one party moves by 1: every point's (binary), two per point (multiclass one-hot)."""
        return self.aux_points * (1 if self.binary else 2)

    @cached_property
    def skellam(self) -> SkellamCalibration | None:
        """With Skellam noisy counts: μ's grid point, searched by every role (cached, bounded by the grid)."""
        if not self.noisy_counts or self.count_noise != "skellam":
            return None
        try:
            grid = minimal_grid(self.epsilon, self.delta, self.count_shifts)
        except ValueError as error:
            raise invalid(str(error)) from None
        return SkellamCalibration(self.epsilon, self.delta, 1, self.count_shifts, self.parties, self.honest_fraction,
                                  self.values, grid, self.colluding)

    @property
    def share_range(self) -> int:
        """Every voter's shares, shifted to be non-negative, lie in [0, range], centred on range/2."""
        if self.skellam is not None:
            return 2 * self.skellam.bound
        return self.tosses_per_party

    def check_verifiable_size(self) -> None:
        """After calibration: N_i committed bits per slot travel in one message, bounded as DPPP's."""
        from mpdp.vote_proofs.noise_bits import MAX_ROUND_BITS

        if self.verifiable_noise and self.share_range * self.values > MAX_ROUND_BITS:
            raise invalid(f"N_i·slots = {self.share_range * self.values} committed noise bits per party exceed "
                          f"{MAX_ROUND_BITS} (one message): use fewer auxiliary points")

    def draw_shares(self, count: int) -> list[int]:
        if self.skellam is not None:
            bound = self.skellam.bound
            return [share + bound for share in sample_shares(self.skellam.share_mu, bound, count)]
        return sample_binomial(self.tosses_per_party, count)

    @cached_property
    def total_tosses(self) -> int:
        """N of the Binomial noise on every count (noisy counts), by exact PLD accounting; 0 otherwise."""
        if not self.noisy_counts or self.count_noise != "binomial":
            return 0
        try:
            return minimal_tosses_for_shifts(self.epsilon, self.delta, self.count_shifts)
        except ValueError as error:
            raise invalid(str(error)) from None

    @property
    def tosses_per_party(self) -> int:
        """N_i = ⌈N / (max(c + 1, m) − c)⌉ with m = max(2, ⌈τM⌉), rounded up to even so the mean N_i/2 is an
        integer: any decryptable sum keeps N tosses without the colluding principal's c voters'
        (mpdp.privacy.collusion)."""
        if not self.total_tosses:
            return 0
        share = -(-self.total_tosses // calibrated_contributors(self.min_contributors, self.colluding))
        return share + share % 2

    def calibrate(self) -> int:
        """The share range (N_i, or 2B for Skellam), after the cheap checks; N_i bounded by MAX_TOTAL_TOSSES and
        the bits a voter samples by 2^32 (a request that needs more is refused)."""
        if self.count_noise == "skellam":
            return self.share_range
        tosses = self.tosses_per_party
        if tosses > MAX_TOTAL_TOSSES:
            raise invalid(f"N_i = {tosses} tosses per party exceeds {MAX_TOTAL_TOSSES}: raise τ, ε or δ")
        if tosses * self.values > MAX_NOISE_BITS_PER_CONTRIBUTOR:
            raise invalid(f"N_i·N·C = {tosses * self.values} noise bits per party exceed 2^32 (seconds of sampling "
                          "each): raise ε, δ or τ, or use fewer public points")
        return tosses

    def layout(self, n: int) -> SlotLayout:
        """Slots wide enough for M summands of a vote plus a share in [0, range + 1]."""
        layout = SlotLayout.for_modulus(n, (self.share_range + 1).bit_length() + 1, self.parties)
        # proven votes: a point's slots in one plaintext, so its vote folds into one ciphertext
        return aligned(layout, self.vote_width) if self.proven_votes else layout

    @property
    def vote_width(self) -> int:
        """Slots per point: one (binary: the vote for the positive class) or C."""
        return 1 if self.binary else self.classes

    def guarantee(self) -> Guarantee:
        """What one party spends on its data in this session (its ledger's entry): with noisy counts, everything
        Charlie and the client see is post-processing of the counts; otherwise the released classifier is
        ε-DP (Charlie is trusted with the exact counts)."""
        if self.epsilon == math.inf:
            return Guarantee(None, 0.0, "hamm, non-private (1/ε = 0)")
        if self.skellam is not None:
            return Guarantee(self.epsilon, self.delta, "hamm skellam noisy counts",
                             {"kind": "skellam", "grid": self.skellam.grid, "shifts": self.count_shifts},
                             extra_delta=self.delta * TRUNCATION_SHARE_OF_DELTA)
        if self.noisy_counts:
            return Guarantee(self.epsilon, self.delta, "hamm binomial noisy counts",
                             {"kind": "binomial", "tosses": self.total_tosses, "shifts": self.count_shifts})
        return Guarantee(self.epsilon, 0.0, "hamm l2-laplace output perturbation",
                         {"kind": "pure", "epsilon": self.epsilon, "count": 1})

    def counts_report(self, contributors: int) -> dict:
        if not self.noisy_counts:
            return {"trust": "Charlie is trusted with the exact counts (less than the paper's trusted entity, "
                             "which sees every classifier); DP covers the released classifier"}
        if self.skellam is not None:
            return {
                "trust": "Charlie is untrusted: the counts it sees are (ε, δ)-DP; the released classifier is "
                         "post-processing of them",
                "unit": "all samples of one party (replacement)",
                "sensitivity": f"one party moves {self.count_shifts} counts by 1",
                **self.skellam.report(contributors),
                "mechanism": "skellam shares: Sk(μ/(max(c + 1, ⌈τM⌉) − c)) per count from each voter",
            }
        guaranteed = noise_bearing(contributors, self.colluding) * self.tosses_per_party  # without the c colluding
        return {
            "trust": "Charlie is untrusted: the counts it sees are (ε, δ)-DP; the released classifier is "
                     "post-processing of them",
            "unit": "all samples of one party (replacement)",
            "mechanism": "binomial shares: Bin(N_i, ½) per count from each voter",
            "sensitivity": f"one party moves {self.count_shifts} counts by 1 "
                           f"(L2 {'√N' if self.binary else '√(2N)'})",
            "epsilon": self.epsilon, "delta": self.delta,
            "total_tosses_required": self.total_tosses, "tosses_per_party": self.tosses_per_party,
            "tosses_guaranteed": guaranteed, "colluding_contributors": self.colluding,
            "contributors_counted": noise_bearing(contributors, self.colluding),
            "epsilon_delivered": epsilon_for_shifts(guaranteed, self.delta, self.count_shifts),
            "accountant": f"dp-accounting PLD (pessimistic), {self.count_shifts}-fold composition",
        }
