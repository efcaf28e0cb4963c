"""A voter's proven ballot, for every protocol whose parties vote under the threshold key (DPPP's teachers,
Hamm's voters): the noise shares packed, each row's one-hot vote with its proof, and the signature on the
folded contribution the key holders will check (docs/malicious-party.md, crypto.md "Bound decryption")."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mpdp.proto.v1 import common_pb2, threshold_sum_pb2
from mpdp.threshold_sum.binding import SumSlot
from mpdp.vote_proofs import votes as vote_proofs
from party.key_holder import signed
from party.resources import PartyResources


@dataclass(frozen=True)
class Ballot:
    noise: common_pb2.Ciphertexts
    proven: common_pb2.ProvenVotes
    signature: threshold_sum_pb2.ContributionSignature


def cast(own: PartyResources, protocol: str, session_id: str, parameters, rows: int, width: int,
         votes: np.ndarray, noise: np.ndarray, copies: int,
         prove: Callable[[Any, np.ndarray], common_pb2.ProvenVotes]) -> Ballot:
    """`votes`: the (rows·copies) × width one-hot (or bit) votes to prove, which `prove(layout, votes)` encrypts
    and proves (the voter's side); `noise`: rows × width shares."""
    public_key = own.public_key
    layout = parameters.layout(public_key.n)
    noise_ciphertexts = vote_proofs.noise_ciphertexts(public_key, layout, noise, parameters.share_range)
    proven = prove(layout, votes)
    folded = vote_proofs.folded(public_key, layout, rows, width, parameters.share_range, noise_ciphertexts, proven,
                                copies)
    signature = signed(own, SumSlot.of(protocol, session_id, parameters), public_key.key_id, list(folded.values))
    return Ballot(noise_ciphertexts, proven, signature)
