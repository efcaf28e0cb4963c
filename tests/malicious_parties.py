"""The misbehaving parties the tests run, as subclasses of the product's sides (party/behaviours.py): a party in test
mode named with one of these as its `fault` runs the subclass instead, in process or in a role process (which finds
this file through MPDP_TEST_BEHAVIOURS, set by tests/conftest.py). The product never branches on them.

Each behaviour does what a malicious (or crashing) party would, at the step the product's side exposes:
- `vote-two-ones`: one vote more than T in query 0 (unproven: in the cast sum; proven: row 0's ciphertext moved off
  its proof to a second 1, in the feasible range); `vote-stuffed`: proven, 1000 in row 0's first slot (out of it);
  `ballot-stuffed`: unproven, query 0's first count beyond K·(T + N_i);
- `noise-skew`: every label pushed to the next class (DPPP), and its noise share the whole range where it votes,
  none elsewhere (committed bits: ones where it votes; a pool's bits: all ones);
- `noise-bit-bad`: bit 0 of its committed bits (in the session or in a pool fill) a 3 under a bit proof;
- `coin-grind`: a coin share other than the committed one, as if chosen late;
- `sign-unflipped`: signs its bits as committed, unflipped, for a colluding aggregator;
- `tamper-partial-decryption`: a partial decryption whose proof must fail;
- `du-claim-records`: a Du party over-claiming its weight; `du-theta-outside`: every coordinate at 1000·B, past the
  encoder (both with a forged best-effort range proof);
- `no-noise-share`: a Pathak party that adds no noise; `stage3-offset`: a malicious Stage 3 share;
- `ledger-no-space`: the ledger's disk is full; `crash-after-spend`: the crash between "spent" and "released".
"""

from __future__ import annotations

import errno
import os
import signal

import numpy as np

from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.privacy.ledger import Disk
from mpdp.proto.v1 import common_pb2, threshold_sum_pb2
from mpdp.protocols.du import proven_upload
from mpdp.protocols.du.parameters import FRACTIONAL_BITS, MAX_RECORDS
from mpdp.protocols.pathak import ring
from mpdp.sessions.integers import int_to_bytes
from party.behaviours import Behaviour, register
from party.dppp import DpppTeacherSide
from party.dppp_pool import DpppPoolTeacherSide
from party.du import DuPartySide
from party.hamm import HammPartySide
from party.pathak import PathakFollowerSide, PathakLeaderSide


# ---------------------------------------------------------------------- tampering with ciphertexts under proofs
def tampered(public_key: ThresholdPublicKey, proven: common_pb2.ProvenVotes, slots: np.ndarray, slot_bits: int,
             stuffed: bool) -> common_pb2.ProvenVotes:
    """Row 0's ciphertext moved off its proof, to a second 1 (a binary 2; in the feasible range) or 1000 in the
    row's first slot (out of it), as a malicious voter would."""
    n, nsquare = public_key.n, public_key.paillier.nsquare
    if stuffed:
        shift = 1000
    elif slots.shape[1] == 1:  # a binary vote of 2
        shift = 2 - int(slots[0, 0])
    else:
        shift = 1 << slot_bits if slots[0, 0] else 1
    return _moved(public_key, proven, shift * n % nsquare)


def tampered_bit(public_key: ThresholdPublicKey, message: common_pb2.ProvenVotes) -> common_pb2.ProvenVotes:
    """Bit 0's ciphertext moved off its proof (its plaintext plus 2), as a malicious teacher would."""
    return _moved(public_key, message, 2 * public_key.n)


def _moved(public_key: ThresholdPublicKey, message: common_pb2.ProvenVotes, shift_n: int) -> common_pb2.ProvenVotes:
    """Ciphertext 0 times (1 + shift·n): its plaintext plus `shift`, its proof unchanged."""
    values = list(message.ciphertexts.values)
    first = ct.from_bytes(public_key.paillier, values[0])
    values[0] = ct.to_bytes(public_key.paillier, first * (1 + shift_n) % public_key.paillier.nsquare)
    result = common_pb2.ProvenVotes()
    result.CopyFrom(message)
    del result.ciphertexts.values[:]
    result.ciphertexts.values.extend(values)
    return result


def _values(message: common_pb2.ProvenVotes) -> list[int]:
    return [int.from_bytes(v, "big") for v in message.ciphertexts.values]


# ---------------------------------------------------------------------- voters (DPPP's teachers, Hamm's parties)
class _TwoOnesProven:
    def _prove_votes(self, layout, slots):
        return tampered(self.own.public_key, super()._prove_votes(layout, slots), slots,  # type: ignore[misc]
                        layout.slot_bits, stuffed=False)


class _TwoOnes(_TwoOnesProven):  # DPPP's unproven ballot too
    def _cast(self, votes, noise):
        cast = super()._cast(votes, noise)  # type: ignore[misc]
        cast[0, 1 if votes[0, 0] else 0] += 1
        return cast


class _Stuffed:
    def _prove_votes(self, layout, slots):
        return tampered(self.own.public_key, super()._prove_votes(layout, slots), slots,  # type: ignore[misc]
                        layout.slot_bits, stuffed=True)


class _BallotStuffed:
    def _encrypt(self, cast):
        public_key, p = self.own.public_key, self.parameters
        plaintexts = p.layout(public_key.n).pack(cast.ravel().tolist())
        plaintexts[0] += p.teachers * (p.ensemble + p.share_range) + 1  # slot 0: the lowest bits
        return [ct.to_bytes(public_key.paillier, public_key.encryptor.encrypt(m)) for m in plaintexts]


class _Skewed:
    def _draw_noise(self, votes):
        return votes * self.parameters.share_range

    def _noise_bits(self, votes, tosses):
        return np.repeat(votes.reshape(-1, 1), tosses, axis=1).astype(np.int64)


class _SkewedTeacher(_Skewed):
    def _predictions(self):
        classes = self.parameters.classes
        return [(p + 1) % classes for p in super()._predictions()]  # type: ignore[misc]


class _SkewedPool:
    def _fresh_bits(self, count):
        return np.ones(count, dtype=np.int64)


class _BadBit:
    def _commit_bits(self, *args):
        committed, _ = super()._commit_bits(*args)  # type: ignore[misc]
        committed = tampered_bit(self.own.public_key, committed)
        return committed, _values(committed)


class _CoinGrind:
    def reveal_coin_share(self, body):
        share = super().reveal_coin_share(body).share  # type: ignore[misc]
        return threshold_sum_pb2.CoinReveal(share=bytes(b ^ 0xFF for b in share))


class _UnflippedSigner:
    def _coins(self, seed, count):
        return np.zeros_like(super()._coins(seed, count))  # type: ignore[misc]


class _TamperedPartials:
    def partially_decrypt(self, request):
        partials = super().partially_decrypt(request)  # type: ignore[misc]
        _double_first(self.own.public_key, partials)
        return partials


class _TamperedDuPartials:
    def _partials(self, body):
        answer = super()._partials(body)  # type: ignore[misc]
        _double_first(self.own.public_key, answer.partials)
        return answer


def _double_first(public_key, partials) -> None:
    partials.values[0] = int_to_bytes(int.from_bytes(partials.values[0], "big") * 2 % public_key.paillier.nsquare)


# ---------------------------------------------------------------------- Du
class _ForgedUpload:
    def _prove_upload(self, records, scaled, round_number):
        """Its best effort: proofs for the legal stand-ins, which the moved bits already betray."""
        return proven_upload.build(self.own.public_key, self.parameters, records, scaled,
                                   proven_upload.context(self.session_id, self.own.id, round_number), forge=True)


class _ClaimRecords(_ForgedUpload):
    def _records(self):
        return MAX_RECORDS


class _ThetaOutside(_ForgedUpload):
    def _scaled(self, records, theta):
        return [round(1000 * self.parameters.bound * 2**FRACTIONAL_BITS)] * self.parameters.weights


# ---------------------------------------------------------------------- Pathak
class _NoNoise:
    def _noise_share(self, parameters, me):
        return [0] * len(super()._noise_share(parameters, me))  # type: ignore[misc]


class _Stage3Offset:
    def _step_finish(self, out):
        finished = super()._step_finish(out)  # type: ignore[misc]
        if finished and self.published is not None:
            self.published = ring.add([self.published, [2**100] + [0] * (self.parameters.dimension - 1)])
        return finished


# ---------------------------------------------------------------------- the party's resources
class _FullDisk(Disk):
    @staticmethod
    def write(handle, data):  # type: ignore[override]
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _full_disk(own) -> None:
    if own.ledger is not None:
        own.ledger.disk = _FullDisk()


def _crash_after_spend(own) -> None:
    if own.ledger is None:
        return
    spend = own.ledger.spend

    def spend_then_crash(*args, **kwargs):
        spend(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)

    own.ledger.spend = spend_then_crash


# ---------------------------------------------------------------------- the registry
def _behaviour(name: str, *pairs: tuple[type, type], prepare=None) -> Behaviour:
    """`pairs`: (misbehaviour mixin, product side); the subclass puts the mixin first, so its steps run instead."""
    sides = {product: type(f"{mixin.__name__.strip('_')}{product.__name__}", (mixin, product), {})
             for mixin, product in pairs}
    return register(Behaviour(name, sides, prepare))


VOTERS = (DpppTeacherSide, HammPartySide)
BEHAVIOURS = [
    _behaviour("vote-two-ones", (_TwoOnes, DpppTeacherSide), (_TwoOnesProven, HammPartySide)),
    _behaviour("vote-stuffed", *((_Stuffed, side) for side in VOTERS)),
    _behaviour("ballot-stuffed", (_BallotStuffed, DpppTeacherSide)),
    _behaviour("noise-skew", (_SkewedTeacher, DpppTeacherSide), (_Skewed, HammPartySide),
               (_SkewedPool, DpppPoolTeacherSide)),
    _behaviour("noise-bit-bad", *((_BadBit, side) for side in (*VOTERS, DpppPoolTeacherSide))),
    _behaviour("coin-grind", *((_CoinGrind, side) for side in VOTERS)),
    _behaviour("sign-unflipped", *((_UnflippedSigner, side) for side in VOTERS)),
    _behaviour("tamper-partial-decryption", *((_TamperedPartials, side) for side in VOTERS),
               (_TamperedDuPartials, DuPartySide)),
    _behaviour("du-claim-records", (_ClaimRecords, DuPartySide)),
    _behaviour("du-theta-outside", (_ThetaOutside, DuPartySide)),
    _behaviour("no-noise-share", *((_NoNoise, side) for side in (PathakLeaderSide, PathakFollowerSide))),
    _behaviour("stage3-offset", *((_Stage3Offset, side) for side in (PathakLeaderSide, PathakFollowerSide))),
    _behaviour("ledger-no-space", prepare=_full_disk),
    _behaviour("crash-after-spend", prepare=_crash_after_spend),
]
