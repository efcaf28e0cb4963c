"""The aggregator's part of a threshold sum: one signed, encrypted vector per contributor in; every
contribution, as its contributor sent it, out to the key holders (who compute C themselves); and C."""

from __future__ import annotations

from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.proto.v1 import common_pb2, threshold_sum_pb2
from mpdp.sessions.errors import aborted, denied, precondition
from mpdp.threshold_sum.binding import ContributionKeys, SumSlot, authenticate, authenticate_commitment
from mpdp.threshold_sum.codec import ciphertexts_from_proto


class SumCollector:
    def __init__(self, public_key: ThresholdPublicKey, contributors: list[int], ciphertext_count: int,
                 min_contributors: int, slot: SumSlot, keys: ContributionKeys | None = None):
        self.public_key = public_key
        self.expected = list(contributors)
        self.ciphertext_count = ciphertext_count
        self.min_contributors = min_contributors
        self.slot = slot
        self.keys = keys
        self.contributions: dict[int, tuple[list[int], threshold_sum_pb2.Contribution]] = {}
        self.absent: dict[int, str] = {}
        self.aggregate: list[int] = []
        self.contributors: list[int] = []

    def check(self, contributor: int, message: common_pb2.Ciphertexts,
              signature: threshold_sum_pb2.ContributionSignature) -> list[int]:
        """The contribution's ciphertexts if `accept` would take it; refused otherwise, changing nothing (a
        caller with a costlier check of its own, a range proof, runs this one first)."""
        if contributor not in self.expected:
            raise denied(f"party {contributor} does not contribute to this sum")
        if contributor in self.contributions:
            raise precondition(f"party {contributor} already contributed (replay)")
        if contributor in self.absent:
            raise precondition(f"party {contributor} was given up on: {self.absent[contributor]}")
        values = ciphertexts_from_proto(self.public_key, message, self.ciphertext_count)
        authenticate(self.keys, self.slot, contributor, bytes(message.key_id), list(message.values), signature)
        return values

    def accept(self, contributor: int, message: common_pb2.Ciphertexts,
               signature: threshold_sum_pb2.ContributionSignature,
               well_formed: threshold_sum_pb2.WellFormed | None = None) -> None:
        """The holders would refuse the whole sum for one badly signed contribution: refuse it here instead.
        `well_formed` (proven votes, verifiable noise) goes with it to the holders, who check it again."""
        values = self.check(contributor, message, signature)
        self.contributions[contributor] = (values, threshold_sum_pb2.Contribution(
            sender=contributor, ciphertexts=message, signature=signature, well_formed=well_formed))

    def authenticate_commitment(self, contributor: int, digest: bytes,
                                signature: threshold_sum_pb2.ContributionSignature) -> None:
        """Refuse committed noise bits (their digest) not signed by `contributor` for this sum (verifiable noise)."""
        authenticate_commitment(self.keys, self.slot, contributor, self.public_key.key_id, digest, signature)

    def mark_absent(self, contributor: int, reason: str) -> None:
        if contributor not in self.contributions:
            self.absent[contributor] = reason

    def absent_reasons(self, shown: int = 3) -> str:
        return absent_reasons(self.absent, shown)

    @property
    def all_in(self) -> bool:
        return len(self.contributions) + len(self.absent) >= len(self.expected)

    def close(self) -> threshold_sum_pb2.DecryptionRequest:
        """C = Π_{i∈S} Enc_i (what every holder recomputes), and the request carrying each contribution."""
        if len(self.contributions) < self.min_contributors:
            raise aborted(f"insufficient noise: {len(self.contributions)} of {len(self.expected)} parties contributed, "
                          f"need {self.min_contributors}{self.absent_reasons()}")
        self.contributors = sorted(self.contributions)
        columns = zip(*(self.contributions[c][0] for c in self.contributors))
        self.aggregate = [ct.add(self.public_key.paillier, *column) for column in columns]
        return threshold_sum_pb2.DecryptionRequest(contributions=[self.contributions[c][1] for c in self.contributors])

    def forget(self) -> None:
        self.contributions.clear()
        self.aggregate = []


def absent_reasons(absent: dict[int, str], shown: int = 3) -> str:
    """Why the missing parties are missing (a refusal's own words, e.g. over its privacy budget), so the client's
    one line names the cause and not only the count."""
    if not absent:
        return ""
    by_reason: dict[str, list[int]] = {}
    for party, reason in sorted(absent.items()):
        by_reason.setdefault(reason[:200], []).append(party)
    parts = [f"{_some(parties)}: {reason}" for reason, parties in list(by_reason.items())[:shown]]
    more = f"; {len(by_reason) - shown} other reasons" if len(by_reason) > shown else ""
    return f" (parties {'; parties '.join(parts)}{more})"


def _some(parties: list[int], shown: int = 8) -> str:
    """The first parties of a reason and how many more: thousands of logical parties share one reason when a
    deadline passes, and the whole list would bury the line that names it."""
    more = f" and {len(parties) - shown} more" if len(parties) > shown else ""
    return ", ".join(map(str, parties[:shown])) + more
