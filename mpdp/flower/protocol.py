"""What the workflow and the mod say to each other: stage names, the keys of the `mpdp` ConfigRecord, and the
round's parameters as both sides derive them (the sum's slot, the proof context, the codec)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from mpdp.flower.encoding import UpdateCodec
from mpdp.threshold_sum.binding import SumSlot
from mpdp.threshold_sum.context import proof_context

RECORD = "mpdp"  # the ConfigRecord of every mpdp message, beside Flower's own fit records
PROTOCOL = "flower-fedavg"

SETUP = "setup"  # who is which party, who holds a key share, which threshold key (reply: public key)
DKG_HELLO = "dkg-hello"  # a committee member's signed X25519 key for its pairwise channels
DKG = "dkg"  # one stage of the distributed key generation: sealed messages in, sealed messages out
TRAIN = "train"  # Flower's fit instructions in, one signed encrypted weighted update out
DECRYPT = "decrypt"  # the round's signed contributions in, proven partial decryptions of their product out


@dataclass(frozen=True)
class RoundTerms:
    """Everything a contributor signs into its upload and a holder checks before decrypting."""

    session: str  # the Flower run
    round: int
    count: int
    summands: int
    min_contributors: int
    clip: float
    max_weight: float
    fractional_bits: int
    # DP-FedAvg with Skellam shares (noise.py); 0: no noise, weighted updates as FedAvg weighs them
    noise_multiplier: float = 0.0
    l2_clip: float = 0.0
    delta: float = 0.0
    noise_max_epsilon: float = 10.0  # the run's ε and noisy rounds the shares' truncation bound is sized for
    noise_max_rounds: int = 1000

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "RoundTerms":
        return cls(**json.loads(text))

    def noise(self):
        from mpdp.flower.noise import NoiseShares

        if not self.noise_multiplier:
            return None
        return NoiseShares(self.noise_multiplier, self.l2_clip, self.delta, max_epsilon=self.noise_max_epsilon,
                           max_rounds=self.noise_max_rounds)

    def codec(self, n: int) -> UpdateCodec:
        noise = self.noise()
        if noise is None:
            return UpdateCodec(self.count, self.summands, n, self.clip, self.max_weight, self.fractional_bits)
        # Unweighted deltas of L2 norm ≤ the clip (the sensitivity the noise is calibrated on), a count of 1.
        bound = noise.bound(self.count, self.fractional_bits, self.min_contributors, self.summands)
        return UpdateCodec(self.count, self.summands, n, self.l2_clip, 1.0, self.fractional_bits, bound, self.l2_clip)

    def slot(self, n: int) -> SumSlot:
        """Slot = the round; terms = the codec and the least number of contributors, as this side holds them."""
        digest = self.codec(n).terms()
        return SumSlot(PROTOCOL, self.session, self.round, digest + self.min_contributors.to_bytes(4, "big"))

    def proof_context(self) -> bytes:
        return proof_context(PROTOCOL, self.session, self.round)
