"""The aggregator's part of a threshold sum: one encrypted vector per contributor in, the aggregate out."""

from __future__ import annotations

from cryptocore import ciphertext as ct
from cryptocore.threshold import ThresholdPublicKey
from mpdp_proto.v1 import common_pb2, threshold_sum_pb2
from sessions.errors import aborted, denied, precondition
from threshold_sum.codec import ciphertexts_from_proto, ciphertexts_to_proto


class SumCollector:
    def __init__(self, public_key: ThresholdPublicKey, contributors: list[int], ciphertext_count: int,
                 min_contributors: int):
        self.public_key = public_key
        self.expected = list(contributors)
        self.ciphertext_count = ciphertext_count
        self.min_contributors = min_contributors
        self.contributions: dict[int, list[int]] = {}
        self.absent: dict[int, str] = {}
        self.aggregate: list[int] = []
        self.contributors: list[int] = []

    def accept(self, contributor: int, message: common_pb2.Ciphertexts) -> None:
        if contributor not in self.expected:
            raise denied(f"party {contributor} does not contribute to this sum")
        if contributor in self.contributions:
            raise precondition(f"party {contributor} already contributed (replay)")
        if contributor in self.absent:
            raise precondition(f"party {contributor} was given up on: {self.absent[contributor]}")
        self.contributions[contributor] = ciphertexts_from_proto(self.public_key, message, self.ciphertext_count)

    def mark_absent(self, contributor: int, reason: str) -> None:
        if contributor not in self.contributions:
            self.absent[contributor] = reason

    @property
    def all_in(self) -> bool:
        return len(self.contributions) + len(self.absent) >= len(self.expected)

    def close(self) -> threshold_sum_pb2.DecryptionRequest:
        """C = Π_{i∈S} Enc_i, re-randomised once: every key holder gets the identical C and S."""
        if len(self.contributions) < self.min_contributors:
            raise aborted(f"insufficient noise: {len(self.contributions)} of {len(self.expected)} parties contributed, "
                          f"need {self.min_contributors}")
        paillier, encryptor = self.public_key.paillier, self.public_key.encryptor
        self.contributors = sorted(self.contributions)
        columns = zip(*(self.contributions[c] for c in self.contributors))
        self.aggregate = [encryptor.rerandomise(ct.add(paillier, *column)) for column in columns]
        return threshold_sum_pb2.DecryptionRequest(aggregate=ciphertexts_to_proto(self.public_key, self.aggregate),
                                                   contributors=self.contributors)

    def forget(self) -> None:
        self.contributions.clear()
        self.aggregate = []
