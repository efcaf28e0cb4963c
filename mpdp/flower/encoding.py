"""A client's weighted update ↔ packed Paillier plaintexts: fixed-point, then several values to a plaintext.

A client with w training examples and parameters x contributes w·x and w itself, so the decrypted sum is
(Σ w_i·x_i, Σ w_i) and the server can only form the weighted mean, as FedAvg does. Bounds are explicit: a
parameter beyond `clip` or a weight beyond `max_weight` is refused, never wrapped into another slot."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

import numpy as np

from mpdp.cryptocore.encodings.fixedpoint import FixedPoint
from mpdp.cryptocore.encodings.packing import SlotLayout
from mpdp.cryptocore.errors import EncodingOverflow


@dataclass(frozen=True)
class UpdateCodec:
    """What every contributor and key holder must agree on for one round; its digest is the sum's terms."""

    count: int  # parameters in the flattened model
    summands: int  # at most this many contributions are added
    n: int  # the threshold key's modulus
    clip: float = 8.0  # |x| ≤ clip for every parameter
    max_weight: float = 1000.0  # w ≤ max_weight
    fractional_bits: int = 20
    noise_bound: int = 0  # B: each client's noise share per coordinate is in [−B, B] (noise.py)
    max_l2: float = 0.0  # > 0: ‖x‖₂ ≤ max_l2, the L2 sensitivity the noise is calibrated on (noise.py)

    @property
    def fixed_point(self) -> FixedPoint:
        return FixedPoint(self.clip * self.max_weight, self.fractional_bits)

    @property
    def layout(self) -> SlotLayout:
        return SlotLayout.for_modulus(self.n, (self.fixed_point.max_encoded + self.noise_bound).bit_length() + 1,
                                      self.summands)

    @property
    def ciphertext_count(self) -> int:
        return self.layout.plaintexts_needed(self.count + 1)

    def terms(self) -> bytes:
        """SHA-256 of the parameters: signed into each contribution, so a holder told others refuses the sum."""
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).digest()

    def encode(self, parameters: np.ndarray, weight: float, noise=None) -> list[int]:
        """Packed plaintexts of w·x (plus the client's noise share, integers in [−B, B]) and w."""
        values = np.asarray(parameters, dtype=np.float64).ravel()
        if values.size != self.count:
            raise EncodingOverflow(f"{values.size} parameters, the round expects {self.count}")
        if not 0 < weight <= self.max_weight:
            raise EncodingOverflow(f"weight {weight} outside (0, {self.max_weight}]")
        if not np.all(np.abs(values) <= self.clip):
            raise EncodingOverflow(f"a parameter beyond ±{self.clip}: clip the update before aggregation")
        if self.max_l2 and float(np.linalg.norm(values)) > self.max_l2:
            raise EncodingOverflow(f"an update of L2 norm beyond {self.max_l2}: the noise is calibrated on that clip")
        point = self.fixed_point
        encoded = [point.encode(float(v) * weight) for v in values]
        if noise is not None:
            if len(noise) != self.count or any(abs(int(e)) > self.noise_bound for e in noise):
                raise EncodingOverflow(f"a noise share outside [−{self.noise_bound}, {self.noise_bound}]")
            encoded = [v + int(e) for v, e in zip(encoded, noise)]
        return self.layout.pack(encoded + [point.encode(float(weight))])

    def decode_mean(self, plaintexts: list[int], contributors: int) -> tuple[np.ndarray, float]:
        """(Σ w·x / Σ w, Σ w) from the decrypted packed sums of `contributors` contributions."""
        sums = self.layout.unpack(plaintexts, self.count + 1, biased_summands=contributors)
        point = self.fixed_point
        total_weight = point.decode(sums[-1], contributors)
        limit = contributors * (point.max_encoded + self.noise_bound)
        if any(abs(s) > limit for s in sums[:-1]):
            raise EncodingOverflow("a decrypted sum beyond what its contributions can add up to")
        weighted = np.array([s / point.scale for s in sums[:-1]])
        return weighted / total_weight, total_weight
