"""Pathak session parameters and the ranges every role checks (pathak.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from functools import cached_property

from mpdp.cryptocore.encodings.packing import SlotLayout
from mpdp.privacy.composition import Guarantee
from mpdp.privacy.distributed_gaussian import DistributedGaussian
from mpdp.privacy.mechanisms import (
    CALIBRATIONS,
    MAX_EPSILON,
    MAX_FRACTIONAL_BITS,
    MECHANISMS,
    MIN_FRACTIONAL_BITS,
    OutputPerturbation,
)
from mpdp.proto.v1 import pathak_pb2
from mpdp.sessions.errors import invalid

MAX_RECORDS_BITS = 32  # n_j < 2^32
RING_BITS = 128  # R: additive shares live in Z_{2^R}
MAX_PARTIES = 1024
NOISE_SOURCES = ("selected", "distributed")  # pathak.md "Beyond the paper"
CALIBRATION_TARGETS = ("n_1", "n_min")


@dataclass(frozen=True)
class PathakParameters:
    epsilon: float
    delta: float
    regularization: float
    mechanism: str
    calibration: str
    parties: int
    dimension: int
    fractional_bits: int = 32
    mask_bits: int = 40
    gradient_tolerance: float = 1e-6
    n_min: int = 1
    noise_seed: int = 0
    deadline_seconds: float = 300.0
    noise_source: str = "selected"
    calibrate_to: str = "n_1"

    def __post_init__(self):
        if self.noise_source not in NOISE_SOURCES or self.calibrate_to not in CALIBRATION_TARGETS:
            raise invalid(f"the noise source must be one of {NOISE_SOURCES}, the calibration target one of "
                          f"{CALIBRATION_TARGETS}")
        if self.distributed and (self.mechanism != "gaussian" or self.calibrate_to != "n_min"):
            raise invalid("distributed noise is discrete Gaussian shares calibrated to the public n_min: it needs "
                          "--mechanism gaussian and --calibrate-to n_min (the parties must not learn n_(1))")
        if self.mechanism not in MECHANISMS or self.calibration not in CALIBRATIONS:
            raise invalid(f"mechanism must be one of {MECHANISMS}, calibration one of {CALIBRATIONS}")
        if not (math.isfinite(self.epsilon) and 0 < self.epsilon <= MAX_EPSILON):
            raise invalid(f"ε must be in (0, {MAX_EPSILON:g}]")
        if self.mechanism == "gaussian" and not 0 < self.delta < 1:
            raise invalid("the Gaussian mechanism needs δ in (0, 1)")
        if not (math.isfinite(self.regularization) and self.regularization > 0):
            raise invalid("λ must be positive")
        if not 2 <= self.parties <= MAX_PARTIES:
            raise invalid(f"K must be in [2, {MAX_PARTIES}]")
        if not 1 <= self.dimension <= 100_000:
            raise invalid("dimension out of range")
        if not MIN_FRACTIONAL_BITS <= self.fractional_bits <= MAX_FRACTIONAL_BITS or not 20 <= self.mask_bits <= 128:
            raise invalid(f"F must be in [{MIN_FRACTIONAL_BITS}, {MAX_FRACTIONAL_BITS}] and σ in [20, 128]")
        if not 0 < self.gradient_tolerance < 1e-2:
            raise invalid("γ must be in (0, 0.01)")
        if not 1 <= self.n_min < 2**MAX_RECORDS_BITS or not 0 < self.deadline_seconds <= 86_400:
            raise invalid(f"n_min in [1, 2^{MAX_RECORDS_BITS}) and a deadline in (0, 1 day] are required")
        # Z_{2^R} must hold Σ_j round(2^F·ŵ_j) + ζ with room for the sign (|ŵ_i| ≤ ‖ŵ‖ ≤ 1/λ).
        if self.honest_sum_bound >= 2 ** (RING_BITS - 2):
            raise invalid("K·2^F/λ + B_ζ does not fit the share ring Z_{2^128}")

    @property
    def honest_sum_bound(self) -> int:
        """Largest |T_i| of the reconstructed sum T = Σ_j round(2^F·ŵ_j) + ζ that honest parties can produce:
        |ŵ_i| ≤ ‖ŵ‖ ≤ 1/λ (the clamp-free bound of a λ-regularised minimiser), rounding ½ each, and ζ clamped to
        B_ζ (selected: one party's; distributed: K shares of at most B each)."""
        noise_bound = (self.parties * self.distributed_noise.clamp_bound if self.distributed_noise is not None
                       else self.noise.clamp_bound_grid)
        return math.ceil(self.parties * (2**self.fractional_bits / self.regularization + 1)) + int(noise_bound)

    @classmethod
    def for_noise(cls, noise: str, epsilon: float, delta: float, regularization: float, calibration: str,
                  parties: int, dimension: int, **others) -> "PathakParameters":
        """`noise` is a mechanism, or `distributed` (discrete Gaussian shares at n_min)."""
        if noise == "distributed":
            return cls(epsilon, delta, regularization, "gaussian", calibration, parties, dimension,
                       noise_source="distributed", calibrate_to="n_min", **others)
        return cls(epsilon, delta, regularization, noise, calibration, parties, dimension, **others)

    @classmethod
    def from_proto(cls, message: pathak_pb2.PathakParameters) -> "PathakParameters":
        values = {f.name: getattr(message, f.name) for f in fields(cls)}
        # Unset strings (an older client) mean the paper's protocol.
        values["noise_source"] = values["noise_source"] or "selected"
        values["calibrate_to"] = values["calibrate_to"] or "n_1"
        return cls(**values)

    def to_proto(self) -> pathak_pb2.PathakParameters:
        return pathak_pb2.PathakParameters(**{f.name: getattr(self, f.name) for f in fields(self)})

    @cached_property
    def noise(self) -> OutputPerturbation:
        return OutputPerturbation(self.mechanism, self.calibration, self.epsilon, self.delta, self.regularization,
                                  self.parties, self.dimension, self.fractional_bits, self.mask_bits,
                                  self.gradient_tolerance, self.n_min)

    @property
    def distributed(self) -> bool:
        return self.noise_source == "distributed"

    @cached_property
    def distributed_noise(self) -> DistributedGaussian | None:
        """Every party's share of the sum's noise, calibrated to the sum's sensitivity at the public n_min."""
        if not self.distributed:
            return None
        sensitivity = self.noise.sensitivity(self.n_min) * self.parties * 2**self.fractional_bits
        try:
            return DistributedGaussian(self.epsilon, self.delta, sensitivity, self.dimension, self.parties,
                                       self.mask_bits)
        except ValueError as error:
            raise invalid(str(error)) from None

    def noise_records(self, records: int) -> int:
        """The n the selected party's noise is calibrated to: its own n_j (= n_(1) when it is selected), or the
        public n_min (`--calibrate-to n_min`: the release then says nothing about n_(1))."""
        return self.n_min if self.calibrate_to == "n_min" else records

    def draw_noise(self, records: int, source) -> list[int]:
        """This party's noise for the sum (grid units): the share it adds (distributed), or ζ_j (selected)."""
        if self.distributed_noise is not None:
            return self.distributed_noise.sample(source)
        return self.noise.sample(self.noise_records(records), source)

    def guarantee(self) -> Guarantee:
        """What every party spends on its data in one session (its ledger's entry)."""
        distributed = self.distributed_noise
        if distributed is None:
            return self.noise.guarantee()
        sum_sensitivity = self.noise.model_sensitivity(self.n_min) * 2**self.fractional_bits
        return Guarantee(distributed.epsilon_for(sum_sensitivity), self.delta + distributed.clamp_delta,
                         f"pathak distributed discrete Gaussian ({self.calibration} calibration)")

    def privacy_report(self) -> dict:
        report = self.noise.report()
        report["calibrated_to"] = ("the public n_min" if self.calibrate_to == "n_min"
                                   else "the secret n_(1) (the selected party's own n_j)")
        distributed = self.distributed_noise
        if distributed is None:
            report["noise_source"] = "selected: the smallest party's noise (the paper)"
            return report
        charged = self.guarantee()
        report.update(distributed.report())
        report.update({
            "mechanism": "distributed-gaussian",
            "epsilon_effective": charged.epsilon,
            "delta": charged.delta,
            "clamp_delta": distributed.clamp_delta,
            "noise_scale_at_n_min": math.sqrt(float(distributed.share_variance) * distributed.counted)
            / (self.parties * 2**self.fractional_bits),
            "stage1": "skipped: no party's noise is selected, so the minimum is not needed",
        })
        for stale in ("clamp_bound", "noise_scale_formula", "note"):
            report.pop(stale, None)
        return report

    @property
    def kappa(self) -> int:
        """κ = ⌈log₂ K⌉ bits that break ties: n′_j = n_j·2^κ + (j − 1)."""
        return (self.parties - 1).bit_length()

    @property
    def share_bits(self) -> int:
        """a_j is uniform in [0, 2^(32+κ+σ))."""
        return MAX_RECORDS_BITS + self.kappa + self.mask_bits

    @property
    def blind_bits(self) -> int:
        """Charlie's r_k is uniform in [−2^(32+κ+2σ), 2^(32+κ+2σ))."""
        return MAX_RECORDS_BITS + self.kappa + 2 * self.mask_bits

    @property
    def difference_bits(self) -> int:
        """M = 32 + κ: |n′_i − n′_m| < 2^M for every compared pair."""
        return MAX_RECORDS_BITS + self.kappa

    @property
    def offset_bits(self) -> int:
        """R = M + 1 + σ: the leader's ρ_k hide n′_k + ρ_k statistically (mpdp/protocols/pathak/comparison.py)."""
        return self.difference_bits + 1 + self.mask_bits

    @property
    def comparison_bits(self) -> int:
        """M + 1 = 33 + κ: the DGK comparison of X = 2·(ρ′ mod 2^M) and Y = 2·(d mod 2^M) + 1."""
        return self.difference_bits + 1

    def tie_broken(self, party: int, records: int) -> int:
        if not 1 <= records < 2**MAX_RECORDS_BITS:
            raise invalid(f"n_j must be in [1, 2^{MAX_RECORDS_BITS})")
        return records * 2**self.kappa + (party - 1)

    def noise_layout(self, n: int) -> SlotLayout:
        """Slots of width b_ζ (+ σ + 1 for Charlie's mask), one coordinate of the sum's noise each."""
        return SlotLayout.for_modulus(n, self.noise.noise_value_bits, 1, mask_bits=self.mask_bits)
