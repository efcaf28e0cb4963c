"""DPPP session parameters and what every role derives from them (dppp.md, "Setup").

The parameters are public. N, N_i and the slot layout are computed by each
role from them, so an aggregator cannot lower the teachers' noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from functools import cached_property

from mpdp.cryptocore.encodings.packing import SlotLayout
from mpdp.privacy.binomial import (
    MAX_NOISE_BITS_PER_CONTRIBUTOR,
    MAX_TOTAL_TOSSES,
    BinomialCalibration,
    minimal_tosses,
    sample_binomial,
)
from mpdp.privacy.collusion import COLLUDING_CONTRIBUTORS, check_colluding
from mpdp.privacy.composition import Guarantee
from mpdp.privacy.mechanisms import MAX_EPSILON
from mpdp.privacy.skellam import MAX_GRID as MAX_SKELLAM_GRID
from mpdp.privacy.skellam import TRUNCATION_SHARE_OF_DELTA, SkellamCalibration, minimal_grid, sample_shares
from mpdp.proto.v1 import dppp_pb2
from mpdp.sessions.errors import invalid
from mpdp.threshold_sum import quorums
from mpdp.vote_proofs import well_formed
from mpdp.vote_proofs.assurance import Assurance, AssuredParameters
from mpdp.vote_proofs.votes import aligned

MAX_QUERIES = 100_000
MAX_CLASSES = 1_000
MAX_VALUES = 50_000  # Q·C: one teacher's unpacked message at 4096 bits stays near 50 MB
MAX_VERIFIABLE_NOISE_BITS = 16_000  # N_i·Q·C committed bits, about 3.7 kB each with their proofs at 4096 bits: < 64 MB
MIN_DELTA = 1e-15
DEFAULT_HONEST_FRACTION = quorums.DEFAULT_HONEST_FRACTION  # the key's and the calibration's one adversary
MAX_TEACHERS = 100_000
MAX_ENSEMBLE = 64  # T: models per teacher; a proven ballot carries T·Q one-hot proofs
NOISES = ("binomial", "skellam")


def default_threshold(holders: int, colluding: int = 1) -> int:
    """t = ⌊2ℓ/3⌋ + 1 (fewer than a third of the key holders missing), at least the smallest t with 2t > ℓ + c
    (mpdp.threshold_sum.quorums)."""
    return quorums.default_threshold(holders, colluding)


@dataclass(frozen=True)
class DpppParameters(AssuredParameters):
    epsilon: float
    delta: float
    queries: int
    classes: int
    teachers: int
    honest_fraction: float
    packed: bool  # False: the paper's layout, one plain phe ciphertext per (query, class)
    key_id: bytes
    total_tosses: int  # binomial: N, searched once by the client; every role checks it (`calibrate`)
    noise: str = "binomial"
    skellam_grid: int = 0  # skellam: μ = 2^(j/64), searched and checked the same way
    colluding: int = COLLUDING_CONTRIBUTORS  # c: the most teachers one principal hosts (every party checks its own)
    ensemble: int = 1  # T: models per teacher, each on one of T disjoint parts of its rows; its ballot sums their votes
    assurance: Assurance = Assurance.NONE  # how much of each teacher is checked (vote_proofs/assurance.py)

    def __post_init__(self):
        object.__setattr__(self, "assurance", Assurance.parse(self.assurance))
        if not (math.isfinite(self.epsilon) and 0 < self.epsilon <= MAX_EPSILON):
            raise invalid(f"ε must be in (0, {MAX_EPSILON:g}]")
        if not MIN_DELTA <= self.delta < 1:
            raise invalid(f"δ must be in [{MIN_DELTA:g}, 1)")
        if not 1 <= self.queries <= MAX_QUERIES:
            raise invalid(f"queries must be in [1, {MAX_QUERIES}]")
        if not 2 <= self.classes <= MAX_CLASSES:
            raise invalid(f"classes must be in [2, {MAX_CLASSES}]")
        if not 1 <= self.teachers <= MAX_TEACHERS:
            raise invalid(f"teachers must be in [1, {MAX_TEACHERS}]")
        if self.queries * self.classes > MAX_VALUES:
            raise invalid(f"Q·C = {self.queries * self.classes} values exceed what one message carries ({MAX_VALUES})")
        if not (math.isfinite(self.honest_fraction) and 1 / self.teachers <= self.honest_fraction <= 1):
            raise invalid("τ must be in [1/K, 1]: at least one contributor must be counted on")
        if not 1 <= self.ensemble <= MAX_ENSEMBLE:
            raise invalid(f"the ensemble T must be in [1, {MAX_ENSEMBLE}] models per teacher")
        if self.proven_votes and self.queries * self.ensemble * self.classes > MAX_VALUES:
            raise invalid(f"Q·T·C = {self.queries * self.ensemble * self.classes} proven vote branches exceed what one "
                          f"message carries ({MAX_VALUES})")
        if len(self.key_id) != 32:
            raise invalid("key id must be 32 bytes")
        try:
            check_colluding(math.ceil(self.honest_fraction * self.teachers - 1e-9), self.colluding)
        except ValueError as error:
            raise invalid(str(error)) from None
        if self.noise not in NOISES:
            raise invalid(f"noise must be one of {', '.join(NOISES)}")
        if self.proven_votes and not self.packed:
            raise invalid("proven votes take the packed layout")
        if self.verifiable_noise and self.noise != "binomial":
            raise invalid("verifiable noise takes Binomial shares (a Skellam share is no sum of bits)")
        if self.noise == "skellam":
            if self.total_tosses or not 0 <= self.skellam_grid <= MAX_SKELLAM_GRID:
                raise invalid(f"Skellam noise takes a grid index in [0, {MAX_SKELLAM_GRID}] and no N")
            return
        if self.skellam_grid:
            raise invalid("Binomial noise takes no Skellam grid index")
        if not 2 <= self.total_tosses <= MAX_TOTAL_TOSSES:
            raise invalid(f"N must be in [2, {MAX_TOTAL_TOSSES}] tosses")
        noise_bits = self.calibration.tosses_per_teacher * self.values
        if self.verifiable_noise and noise_bits > MAX_VERIFIABLE_NOISE_BITS:
            raise invalid(f"N_i·Q·C = {noise_bits} committed noise bits per teacher exceed {MAX_VERIFIABLE_NOISE_BITS} "
                          "(one message): label fewer queries per round")
        if noise_bits > MAX_NOISE_BITS_PER_CONTRIBUTOR:
            raise invalid(f"N_i·Q·C = {noise_bits} noise bits per teacher and round exceed 2^32 (seconds of sampling "
                          "each): raise ε, δ or τ, or label fewer queries per round")

    @classmethod
    def with_minimal_noise(cls, epsilon: float, delta: float, queries: int, classes: int, teachers: int,
                           honest_fraction: float, packed: bool, key_id: bytes,
                           noise: str = "binomial", assurance: Assurance = Assurance.NONE,
                           colluding: int = COLLUDING_CONTRIBUTORS, ensemble: int = 1) -> "DpppParameters":
        """The client's side of the calibration: search the smallest N or μ (seconds, once per parameter set)."""
        if noise == "skellam":
            grid = minimal_grid(epsilon, delta, 2 * queries)  # a query moves two counts by 1
            return cls(epsilon, delta, queries, classes, teachers, honest_fraction, packed, key_id, 0, noise, grid,
                       colluding, ensemble, assurance)
        total = minimal_tosses(epsilon, delta, queries)
        return cls(epsilon, delta, queries, classes, teachers, honest_fraction, packed, key_id, total,
                   noise, 0, colluding, ensemble, assurance)

    @classmethod
    def from_proto(cls, message: dppp_pb2.DpppParameters) -> "DpppParameters":
        """Field by field: the message and this class share their field names (an unset c or T is one, proto3's 0)."""
        values = {f.name: getattr(message, f.name) for f in fields(cls)}
        values["colluding"] = values["colluding"] or COLLUDING_CONTRIBUTORS
        values["ensemble"] = values["ensemble"] or 1
        return cls(**values)

    def to_proto(self) -> dppp_pb2.DpppParameters:
        """T = 1 stays proto3's unset 0: a one-model session's messages are byte for byte those without the field."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["ensemble"] = 0 if self.ensemble == 1 else self.ensemble
        return dppp_pb2.DpppParameters(**values)

    @cached_property
    def calibration(self) -> BinomialCalibration | SkellamCalibration:
        if self.noise == "skellam":
            return SkellamCalibration(self.epsilon, self.delta, self.queries, 2, self.teachers, self.honest_fraction,
                                      self.values, self.skellam_grid, self.colluding)
        return BinomialCalibration(self.epsilon, self.delta, self.queries, self.teachers, self.honest_fraction,
                                   self.total_tosses, self.colluding)

    @property
    def share_range(self) -> int:
        """Every noise share, shifted to be non-negative, is in [0, range]; its offset is range/2 (the Binomial's
        mean N_i/2, the Skellam's truncation bound B)."""
        calibration = self.calibration
        if isinstance(calibration, SkellamCalibration):
            return 2 * calibration.bound
        return calibration.tosses_per_teacher

    def draw_shares(self, count: int) -> list[int]:
        """A teacher's `count` shifted shares: Bin(N_i, ½), or Sk(μ/K′) + B."""
        calibration = self.calibration
        if isinstance(calibration, SkellamCalibration):
            bound = calibration.bound
            return [share + bound for share in sample_shares(calibration.share_mu, bound, count)]
        return sample_binomial(calibration.tosses_per_teacher, count)

    def calibrate(self) -> int:
        """Check that N is the smallest N for (ε, δ) over Q queries, so no one can lower (or inflate) the
        teachers' noise, and return N_i. Two accountant evaluations, cached per parameter set in a process;
        run it off the event loop, after the cheap checks (N ≤ MAX_TOTAL_TOSSES bounds its cost)."""
        try:
            self.calibration.check()
        except ValueError as error:
            raise invalid(str(error)) from None
        return self.share_range

    def guarantee(self) -> Guarantee:
        """What one teacher spends on its data in this round (its ledger's entry)."""
        calibration = self.calibration
        if isinstance(calibration, SkellamCalibration):
            return Guarantee(self.epsilon, self.delta, f"dppp skellam shares, {self.queries} queries",
                             {"kind": "skellam", "grid": self.skellam_grid, "shifts": calibration.shifts},
                             extra_delta=self.delta * TRUNCATION_SHARE_OF_DELTA)
        return Guarantee(self.epsilon, self.delta, f"dppp binomial shares, {self.queries} queries",
                         {"kind": "binomial", "tosses": self.total_tosses, "shifts": 2 * self.queries})

    @property
    def values(self) -> int:
        """Slots in one teacher's message: one per (query, class)."""
        return self.queries * self.classes

    @property
    def proven_rows(self) -> int:
        """Proven one-hot votes in one teacher's ballot: T per query."""
        return self.queries * self.ensemble

    def check_holders_request(self, public_key) -> None:
        """At session start (invalid), with proven votes: the key holders' request, K ballots of Q·T proven votes
        (T per query, not one) and their committed bits, must fit one message."""
        if self.proven_votes:
            well_formed.check_size(public_key, self.teachers, self.proven_rows, self.classes,
                                   self.values * self.share_range if self.verifiable_noise else 0,
                                   self.holders_check_bits)

    def layout(self, n: int) -> SlotLayout:
        """Slots wide enough for K summands of a count in [0, T] + a shifted share in [0, range]."""
        value_bits = (self.share_range + self.ensemble).bit_length() + 1
        if self.proven_votes:  # a query's C slots in one plaintext: its vote folds into one ciphertext
            return aligned(SlotLayout.for_modulus(n, value_bits, self.teachers), self.classes)
        if self.packed:
            return SlotLayout.for_modulus(n, value_bits, self.teachers)
        one_slot = SlotLayout.for_modulus(n, value_bits, self.teachers)  # checks the width fits n
        return SlotLayout(value_bits, self.teachers, one_slot.slot_bits)
