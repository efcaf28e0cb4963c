"""A party's sides of a Pathak session (pathak.md), free of gRPC: the leader (party 1: deals ξ, releases the
barrier, answers the tournament's comparisons, applies π1⁻¹ to the indicator and masks the selected noise) and
every other party, a follower; what both do is `PathakPartySide`'s.

Messages from different senders may arrive in any order (from one sender they
arrive in order), so each step fires once its inputs are all present: every
call to `receive` stores one message and then runs every step that has become
possible, returning the messages to send. A message to oneself (the leader's
own, or π1(j) = j) is delivered locally and counted apart.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Callable, Collection

import gmpy2
import numpy as np
from phe import PaillierPrivateKey

from mpdp.cryptocore.arithmetic.shared_base import powmod_exponents
from mpdp.cryptocore.comparison.elgamal import ElGamalPublicKey
from mpdp.cryptocore.comparison.parallel import ComparisonJob, answer_all
from mpdp.cryptocore.comparison.protocol import EncryptedBits
from mpdp.cryptocore.keys.key_checks import check_key_id
from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.paillier import key_reserve, nth_powers
from mpdp.cryptocore.paillier.keypair import KeyPair, PublicKey
from mpdp.cryptocore.proofs import ring_pedersen
from mpdp.cryptocore.proofs.bit_proof import BitProofInvalid, verify_bits
from mpdp.cryptocore.proofs.plaintext_opening import OpeningMismatch, check_opening
from mpdp.cryptocore.proofs.ring_pedersen import RingPedersen
from mpdp.learning.pathak_local import train
from mpdp.proto.v1 import common_pb2, comparison_pb2, pathak_pb2
from mpdp.protocols.pathak import comparison, permutation
from mpdp.protocols.pathak.encoding import LEADER, int_from_signed_bytes, signed_bytes
from mpdp.protocols.pathak.indicator import bit_proof_from_message, indicator_context
from mpdp.protocols.pathak.keys import (
    check_factor_proof,
    comparison_key_from_message,
    public_key_from_message,
    public_key_message,
    ring_pedersen_from_message,
    ring_pedersen_message,
)
from mpdp.protocols.pathak.noise import noise_source
from mpdp.protocols.pathak.parameters import PathakParameters
from mpdp.protocols.pathak.participant import PathakSide
from mpdp.protocols.pathak.reference import encode_model
from mpdp.sessions.errors import denied, invalid, precondition
from mpdp.sessions.identity import CLIENT, CURATOR, Identity, party
from mpdp.sessions.integers import int_to_bytes
from mpdp.sessions.protocol import RoleProtocol
from mpdp.sessions.side import handles
from party.charge import Charged
from party.resources import PartyResources


@dataclass
class TestRecord:  # test mode only; still never printed
    model: np.ndarray = field(repr=False)
    noise: list[int] = field(repr=False)
    records: int = field(repr=False)


@dataclass
class PrivateInputs:
    """What this party's Stage 3 share is made from; dropped when the session ends."""

    model: np.ndarray
    noise: list[int]
    a: int  # Stage 1's additive shares of n′_j
    b: int


class PathakPartySide(Charged, PathakSide):
    """What the leader and a follower both do: train, draw the noise share, take part in the coin flip for π1,
    route a share, send the Stage 1 element, decrypt the masked share, select the noise, share the model."""

    def __init__(self, session_id: str, me: int, parameters: PathakParameters, features: np.ndarray,
                 labels: np.ndarray, key_bits: int, test_mode: bool):
        if not 1 <= me <= parameters.parties:
            raise invalid(f"party {me} is not among the session's {parameters.parties} parties")
        if features.shape[1] != parameters.dimension:
            raise invalid(f"the session declares d = {parameters.dimension}; this party's data has {features.shape[1]}")
        if parameters.noise_seed and not test_mode:
            raise precondition("seeded noise is allowed in test mode only")
        if len(labels) < parameters.n_min:  # n_min is a promise about every party: the clamp bound relies on it
            raise precondition(f"this party has fewer records than the session's n_min = {parameters.n_min}")
        super().__init__(session_id, party(me), parameters)
        self.me = me
        self.key_bits = key_bits
        self.records = len(labels)
        model = train(features, labels, parameters.regularization, parameters.gradient_tolerance)  # step 3.1
        # Stage 2 step 3: ζ_j, the noise of the *sum*, on the integer grid at the sum's scale (distributed: this
        # party's share of it).
        noise = self._noise_share(parameters, me)
        self.drawn = TestRecord(model, noise, self.records) if test_mode else None
        n_prime = parameters.tie_broken(me, self.records)
        a = secrets.randbelow(2**parameters.share_bits)  # Stage 1 step 1
        self.inputs: PrivateInputs | None = PrivateInputs(model, noise, a, n_prime - a)
        self.seed, self.nonce = permutation.new_seed()
        self.zeta: PublicKey | None = None
        self.comparison_key: ElGamalPublicKey | None = None  # Charlie's, for the tournament (the leader's use)
        self.xi: KeyPair | None = None
        self.ring_pedersen: RingPedersen | None = None  # the leader's, which Charlie's Π^fac must hold against
        # Charlie's keys, the comparison key already checked, until ζ's proofs are checked against those parameters
        self.curator_keys: tuple[pathak_pb2.CuratorKeys, ElGamalPublicKey] | None = None
        self.commitments: dict[int, bytes] = {}
        self.seeds: dict[int, bytes] = {me: self.seed}
        self.pi1: list[int] | None = None
        self.routed_pending: tuple[int, pathak_pb2.RoutedShare] | None = None
        self.routed: tuple[int, int] | None = None  # (a_j, ζ(b_j)) for index π1(j) = me
        self.released = False  # the leader's barrier: every route has arrived
        self.masked_share: bytes | None = None
        self.indicator_element: bytes | None = None

    # What a party sends that holds nothing derived from its data: the coin flip for π1 (its own random seed),
    # ξ from the leader, and the barrier's signals. Every other kind (from the routed share of n′_j on) may lead
    # to a release, and a kind added later counts as one until it is listed here.
    DATA_FREE = frozenset({"commitment", "reveal", "party_key", "party_public_key", "barrier_ready",
                           "barrier_release"})

    def _emit(self, outbound, to: Identity, kind: str, body) -> None:
        if kind not in self.DATA_FREE and to != self.identity:
            self._release()
        super()._emit(outbound, to, kind, body)

    def test_record(self) -> tuple[str, object] | None:
        if self.drawn is None:
            return None
        return "test_record", pathak_pb2.PathakTestRecord(model=self.drawn.model.tolist(), noise=self.drawn.noise,
                                                          records=self.drawn.records)

    # ------------------------------------------------------------------ plumbing
    @property
    def others(self) -> list[int]:
        return [j for j in range(1, self.parameters.parties + 1) if j != self.me]

    @property
    def _charlies_key(self) -> PublicKey:
        """ζ's public key; a message that needs it before it arrived is out of order."""
        if self.zeta is None:
            raise precondition("Charlie's key has not arrived")
        return self.zeta

    def _zeta_ciphertext(self, data: bytes) -> int:
        return ct.from_bytes(self._charlies_key.paillier, data)

    # ------------------------------------------------------------------ handlers
    @handles("curator_key")
    def take_curator_keys(self, sender, body) -> None:
        self._expect(sender, CURATOR)
        if self.curator_keys is not None:
            raise precondition("Charlie's key arrived twice")
        self.curator_keys = (body, comparison_key_from_message(body))  # the cheap check first
        self._accept_charlies_keys()

    def _accept_charlies_keys(self) -> None:
        """ζ is used once Π^mod and Π^fac hold, the latter against the leader's ring-Pedersen parameters (which
        may arrive after Charlie's keys): before any value is encrypted or answered under ζ."""
        if self.curator_keys is None or self.ring_pedersen is None or self.zeta is not None:
            return
        body, comparison_key = self.curator_keys
        zeta = public_key_from_message(body.zeta, self.key_bits, proven=True)
        check_factor_proof(zeta, body.factor_proof, self.ring_pedersen)
        self.comparison_key = comparison_key
        self.zeta = zeta

    @handles("commitment")
    def take_commitment(self, sender, body: bytes) -> None:
        j = self._from_party(sender)
        if j in self.commitments or len(body) != 32:
            raise invalid("one 32-byte commitment per party")
        self.commitments[j] = bytes(body)

    @handles("reveal")
    def take_reveal(self, sender, body) -> None:
        j = self._from_party(sender)
        if j not in self.commitments:
            raise precondition(f"party {j} revealed before committing")
        if j in self.seeds:
            raise precondition(f"party {j} revealed twice")
        if not permutation.opens(self.commitments[j], body.seed, body.nonce):
            raise invalid(f"party {j}'s reveal does not open its commitment")
        self.seeds[j] = bytes(body.seed)

    @handles("routed_share")
    def take_routed_share(self, sender, body) -> None:
        j = self._from_party(sender)
        if self.routed_pending is not None:
            raise precondition("a routed share arrived twice")
        self.routed_pending = (j, body)

    @handles("masked_share")
    def take_masked_share(self, sender, body: bytes) -> None:
        self._expect(sender, CURATOR)
        if self.masked_share is not None:
            raise precondition("the masked share arrived twice")
        self.masked_share = bytes(body)

    @handles("indicator_element")
    def take_indicator_element(self, sender, body: bytes) -> None:
        self._from_party(sender, only=LEADER)
        if self.indicator_element is not None:
            raise precondition("the indicator element arrived twice")
        self._zeta_ciphertext(body)
        self.indicator_element = bytes(body)

    def _noise_share(self, parameters: PathakParameters, me: int) -> list[int]:
        """Stage 2 step 3: ζ_j, the noise of the *sum*, on the integer grid at the sum's scale (distributed: this
        party's share of it)."""
        return parameters.draw_noise(self.records, noise_source(parameters.noise_seed, me))

    def _step_finish(self, out) -> bool:
        finished = super()._step_finish(out)
        if finished:
            self._forget_inputs()
        if finished and self.zeta is not None:
            # every party re-randomises a few values under ζ each session: a small table (2 MB) suffices
            self._charlies_key.encryptor.precompute_while_idle(window_bits=4)
        return finished

    def _forget_inputs(self) -> None:
        """The model, the noise share, n′_j's shares and what was routed or masked to this party do not outlive
        its session (test mode keeps a copy of the model and noise in `drawn`)."""
        super()._forget_inputs()
        self.inputs = None
        self.routed = self.routed_pending = None
        self.masked_share = self.indicator_element = None

    def _own(self) -> PrivateInputs:
        if self.inputs is None:
            raise precondition(f"session {self.session_id} has ended: this party's inputs are gone")
        return self.inputs

    # ------------------------------------------------------------------ steps
    def steps(self) -> list:
        if self.parameters.distributed:
            return [self._step_add_own_share]
        return self.stage_steps()

    def stage_steps(self) -> list:
        """Stages 1 and 2, in protocol order."""
        return [self._step_commit, self._step_reveal, self._step_route_share, self._step_accept_routed_share,
                self._step_stage1_element, self._step_masked_value, self._step_select_noise]

    def _step_add_own_share(self, out) -> bool:
        """Distributed noise (pathak.md "Beyond the paper"): Stages 1 and 2 are skipped; each party adds its own
        share to its encoded model before Stage 3's additive sharing, so no one ever holds the noise."""
        if not self._once("own_share"):
            return False
        own = self._own()
        self.own_vector = [w + z for w, z in zip(encode_model(own.model, self.parameters.fractional_bits), own.noise)]
        self._mark("stage1_skipped")
        return True

    def _step_commit(self, out) -> bool:
        """The π1 coin flip's commitments (the leader deals the keys first)."""
        if not self._once("commit"):
            return False
        self._deal_keys(out)
        for j in self.others:
            self._emit(out, party(j), "commitment", permutation.commitment(self.seed, self.nonce))
        return True

    def _deal_keys(self, out) -> None:
        """Only the leader deals keys."""

    def _step_reveal(self, out) -> bool:
        if len(self.commitments) < len(self.others) or not self._once("reveal"):
            return False
        for j in self.others:
            self._emit(out, party(j), "reveal", pathak_pb2.Reveal(seed=self.seed, nonce=self.nonce))
        return True

    def _step_route_share(self, out) -> bool:
        """Stage 1 step 2: a_j in the clear and ζ(b_j) to P_{π1(j)}."""
        if len(self.seeds) < self.parameters.parties or self.zeta is None or not self._once("route"):
            return False
        self.pi1 = permutation.permutation([self.seeds[j] for j in sorted(self.seeds)], self.parameters.parties)
        own = self._own()
        routed = pathak_pb2.RoutedShare(a=signed_bytes(own.a),
                                        encrypted_b=ct.to_bytes(self.zeta.paillier, self.zeta.encryptor.encrypt(own.b)))
        self._emit(out, party(self.pi1[self.me - 1]), "routed_share", routed)
        return True

    def _step_accept_routed_share(self, out) -> bool:
        if self.routed_pending is None or self.pi1 is None or not self._once("accept_route"):
            return False
        origin, body = self.routed_pending
        if self.pi1[origin - 1] != self.me:
            self.abort(f"party {origin} routed its share to the wrong index")
            return False
        a = int_from_signed_bytes(body.a)
        if not 0 <= a < 2**self.parameters.share_bits:
            self.abort("routed share out of range")
            return False
        self.routed = (a, self._zeta_ciphertext(body.encrypted_b))
        self._emit(out, party(LEADER), "barrier_ready", common_pb2.Empty())
        return True

    def _step_stage1_element(self, out) -> bool:
        """Stage 1 step 3: element π1(j) = me for Charlie, no origin, ζ(b_j) re-randomised."""
        if not self.released or self.routed is None or self.xi is None or not self._once("stage1"):
            return False
        a, encrypted_b = self.routed
        element = pathak_pb2.Stage1Element(
            encrypted_a=ct.to_bytes(self.xi.public.paillier, self.xi.public.encryptor.encrypt(a)),
            encrypted_b=ct.to_bytes(self._charlies_key.paillier, nth_powers.rerandomise_for_key_owner(self._charlies_key.paillier, encrypted_b)),
        )
        self._emit(out, CURATOR, "stage1_element", element)
        return True

    def _step_masked_value(self, out) -> bool:
        """Stage 1 step 5: ã_k = Dec_ξ(masked share), to the leader."""
        if self.masked_share is None or self.xi is None or not self._once("masked_value"):
            return False
        value = self.xi.decrypt(ct.from_bytes(self.xi.public.paillier, self.masked_share))
        self._emit(out, party(LEADER), "masked_value", signed_bytes(value))
        self._mark("stage1_masked_value")
        return True

    def _step_select_noise(self, out) -> bool:
        """Stage 2 step 3: ψ_j = ζ(v_j)^enc(ζ_j), one exponent per packed plaintext."""
        if self.indicator_element is None or not self._once("select_noise"):
            return False
        paillier = self._charlies_key.paillier
        selector = ct.from_bytes(paillier, self.indicator_element)
        layout = self.parameters.noise_layout(self._charlies_key.n)
        powers = powmod_exponents(selector, layout.pack(self._own().noise), paillier.nsquare)  # the squarings shared
        psi = [self._charlies_key.encryptor.rerandomise(power) for power in powers]
        self._emit(out, party(LEADER), "selected_noise",
                   common_pb2.Ciphertexts(key_id=self._charlies_key.key_id, values=[ct.to_bytes(paillier, c) for c in psi]))
        return True


class PathakLeaderSide(PathakPartySide):
    """Party 1: deals ξ, holds the barrier, answers the comparisons, reorders the indicator, masks the noise."""

    def __init__(self, session_id: str, me: int, parameters: PathakParameters, features: np.ndarray,
                 labels: np.ndarray, key_bits: int, test_mode: bool):
        if me != LEADER:
            raise invalid(f"party {me} is not the leader")
        super().__init__(session_id, me, parameters, features, labels, key_bits, test_mode)
        self.barrier_ready: set[int] = set()
        self.masked_values: dict[int, int] = {}
        self.compared: set[tuple[int, int]] = set()
        self.indicator: list[bytes] | None = None
        self.selected_noise: dict[int, list[int]] = {}
        self._pending_replies: list[pathak_pb2.CompareReplies] = []
        self.offsets: list[int] | None = None  # ρ_k (mpdp/protocols/pathak/comparison.py)

    def _deal_keys(self, out) -> None:
        """Stage 1 setup: ξ to the parties only, its public part to Charlie; ring-Pedersen parameters to all."""
        self.xi = key_reserve.take(self.key_bits)  # made after the last session, or now
        setup, setup_proof = ring_pedersen.held(self.key_bits)  # made once per process
        secret = pathak_pb2.PaillierSecretKeyMessage(p=int_to_bytes(self.xi.private.p), q=int_to_bytes(self.xi.private.q),
                                                     hs=int_to_bytes(self.xi.public.hs),
                                                     ring_pedersen=ring_pedersen_message(setup.public))
        for j in self.others:
            self._emit(out, party(j), "party_key", secret)
        public = public_key_message(self.xi.public)
        public.ring_pedersen.CopyFrom(ring_pedersen_message(setup.public, setup_proof))
        self._emit(out, CURATOR, "party_public_key", public)
        self.ring_pedersen = setup.public
        self._accept_charlies_keys()

    @handles("barrier_ready")
    def take_barrier_ready(self, sender, body) -> None:
        j = self._from_party(sender)
        if j in self.barrier_ready:
            raise precondition(f"party {j} was ready twice")
        self.barrier_ready.add(j)

    @handles("masked_value")
    def take_masked_value(self, sender, body: bytes) -> None:
        k = self._from_party(sender)
        if k in self.masked_values:
            raise precondition(f"party {k}'s masked value arrived twice")
        value = int_from_signed_bytes(body)
        # exactly the honest range of a + r: a wider one would let Charlie scale a (ξ(c·a + r)) by more
        blind, share = 2 ** self.parameters.blind_bits, 2 ** self.parameters.share_bits
        if not -blind <= value < blind + share:
            raise invalid("masked value out of range")
        self.masked_values[k] = value

    @handles("compare_request")
    def answer_comparisons(self, sender, body) -> None:
        """Stage 1 step 6 on short values, one tournament round at a time: for each pair the leader's DGK input
        is X = 2·(ρ′ mod 2^M), its direction flipped by a secret coin δ; Charlie learns [n′_i > n′_m]
        (mpdp/protocols/pathak/comparison.py). Every pair is checked before any work; the answers are computed in parallel."""
        self._expect(sender, CURATOR)
        if self.offsets is None:  # drawn once every masked value arrived
            raise precondition("comparisons before the masked offsets were sent")
        requests = list(body.comparisons)
        if not 1 <= len(requests) <= self.parameters.parties // 2:
            raise invalid(f"a round has 1 to {self.parameters.parties // 2} comparisons")
        pairs = [(r.pair.first, r.pair.second) for r in requests]
        for i, m in pairs:
            if not (1 <= i <= self.parameters.parties and 1 <= m <= self.parameters.parties and i != m):
                raise invalid("comparison pair out of range")
            if (i, m) in self.compared or (m, i) in self.compared:
                raise precondition(f"pair ({i}, {m}) was compared already")
        if len({k for pair in pairs for k in pair}) != 2 * len(pairs):
            raise invalid("a round compares each position at most once")
        if len(self.compared) + len(pairs) > self.parameters.parties - 1:  # a knockout's K − 1: Charlie's bits
            raise precondition(f"a tournament of {self.parameters.parties} parties has "
                               f"{self.parameters.parties - 1} comparisons; {len(self.compared)} were answered")
        bits = self.parameters.comparison_bits
        jobs, hints = [], []
        for (i, m), request in zip(pairs, requests):
            x, offset_bit = comparison.leader_operand(self.parameters, self.offsets, i, m)
            coin = secrets.randbits(1)
            jobs.append(ComparisonJob(x, bits, bool(coin), EncryptedBits(
                bytes(request.bits.key_id), tuple(request.bits.ciphertexts), tuple(request.bits.bit_proofs)),
                comparison.context(self.session_id, i, m)))
            hints.append(bool(offset_bit ^ coin))
        if self.comparison_key is None:
            raise precondition("Charlie's comparison key has not arrived")
        answers = answer_all(self.comparison_key, jobs)
        self.compared.update(pairs)
        self._pending_replies.append(pathak_pb2.CompareReplies(replies=[
            pathak_pb2.CompareReply(pair=request.pair, hint=hint, differences=comparison_pb2.MaskedDifferencesMessage(
                key_id=answer.key_id, ciphertexts=list(answer.ciphertexts)))
            for request, answer, hint in zip(requests, answers, hints)]))

    @handles("indicator")
    def take_indicator(self, sender, body) -> None:
        self._expect(sender, CURATOR)
        if self.indicator is not None:
            raise precondition("the indicator arrived twice")
        zeta = self._charlies_key
        check_key_id(zeta.key_id, body.key_id)
        if len(body.values) != self.parameters.parties:
            raise invalid("the indicator has one ciphertext per party")
        width = ct.modulus_bytes(zeta.paillier)
        if len(body.opening) != width or len(body.proofs) != len(body.values):
            raise invalid("the indicator has an opening and one bit proof per ciphertext, of the modulus's width")
        proofs = [bit_proof_from_message(proof, width) for proof in body.proofs]
        if None in proofs:
            raise invalid("the indicator has an opening and one bit proof per ciphertext, of the modulus's width")
        values = [self._zeta_ciphertext(value) for value in body.values]
        # Stage 2 step 1: exactly one party's noise: never none (a noise-free release), several, or a fraction
        try:
            check_opening(zeta, ct.add(zeta.paillier, *values), 1, int.from_bytes(body.opening, "big"))
        except OpeningMismatch:
            raise invalid("the indicator does not sum to one (Charlie's opening of its product fails)") from None
        try:
            verify_bits(zeta, values, [proof for proof in proofs if proof is not None],
                        indicator_context(self.session_id))
        except BitProofInvalid:
            raise invalid("the indicator's entries are not shown to be bits") from None
        self.indicator = list(body.values)

    @handles("selected_noise")
    def take_selected_noise(self, sender, body) -> None:
        j = self._from_party(sender)
        if j in self.selected_noise:
            raise precondition(f"party {j}'s noise arrived twice")
        check_key_id(self._charlies_key.key_id, body.key_id)
        layout = self.parameters.noise_layout(self._charlies_key.n)
        if len(body.values) != layout.plaintexts_needed(self.parameters.dimension):
            raise invalid("selected noise has the wrong number of ciphertexts")
        self.selected_noise[j] = [self._zeta_ciphertext(v) for v in body.values]

    def stage_steps(self) -> list:
        return [self._step_commit, self._step_reveal, self._step_route_share, self._step_accept_routed_share,
                self._step_release_barrier, self._step_stage1_element, self._step_masked_value,
                self._step_masked_offsets, self._step_compare_replies, self._step_unpermute_indicator,
                self._step_select_noise, self._step_mask_noise]

    def _step_finish(self, out) -> bool:
        finished = super()._step_finish(out)
        if finished and self.zeta is not None:
            self._prepare_next_session()
        return finished

    def _prepare_next_session(self) -> None:
        """The offline phase: the next ξ, and ρ^n for ζ, Charlie's long-lived key, made while this process is idle,
        as many as a session like this one re-randomises for him (the masked noise and the Stage 1 element).
        The next session takes them once each; whatever is missing it makes online."""
        key_reserve.prepare(self.key_bits)  # the next session's ξ
        layout = self.parameters.noise_layout(self._charlies_key.n)
        nth_powers.prepare_while_idle(self._charlies_key.n, layout.plaintexts_needed(self.parameters.dimension) + 1)

    def _step_release_barrier(self, out) -> bool:
        if len(self.barrier_ready) < self.parameters.parties or not self._once("release"):
            return False
        for j in self.others:
            self._emit(out, party(j), "barrier_release", common_pb2.Empty())
        self.released = True
        return True

    def _step_masked_offsets(self, out) -> bool:
        if len(self.masked_values) < self.parameters.parties or not self._once("ready"):
            return False
        self.offsets = comparison.draw_offsets(self.parameters)
        masked = [self.masked_values[k] + rho for k, rho in enumerate(self.offsets, start=1)]
        self._emit(out, CURATOR, "ready_to_compare", pathak_pb2.MaskedOffsets(values=[signed_bytes(w) for w in masked]))
        return True

    def _step_compare_replies(self, out) -> bool:
        if not self._pending_replies:
            return False
        for reply in self._pending_replies:
            self._emit(out, CURATOR, "compare_reply", reply)
        self._pending_replies = []
        return True

    def _step_unpermute_indicator(self, out) -> bool:
        """Stage 2 step 2: apply π1⁻¹; element π1(j) goes to P_j, re-randomised."""
        if self.indicator is None or self.pi1 is None or not self._once("indicator"):
            return False
        for j in range(1, self.parameters.parties + 1):
            element = self._charlies_key.encryptor.rerandomise(self._zeta_ciphertext(self.indicator[self.pi1[j - 1] - 1]))
            self._emit(out, party(j), "indicator_element", ct.to_bytes(self._charlies_key.paillier, element))
        self._mark("stage1_done")
        return True

    def _step_mask_noise(self, out) -> bool:
        """Stage 3 step 1: ψ·ζ(s) to Charlie; the leader keeps round(2^F·ŵ_1) − s."""
        if len(self.selected_noise) < self.parameters.parties or not self._once("mask_noise"):
            return False
        paillier = self._charlies_key.paillier
        layout = self.parameters.noise_layout(self._charlies_key.n)
        product = [ct.add(paillier, *column) for column in zip(*self.selected_noise.values())]
        masks = layout.random_masks(self.parameters.dimension)
        masked = [nth_powers.rerandomise_for_key_owner(paillier, ct.add_plain(paillier, c, packed))
                  for c, packed in zip(product, layout.pack_masks(masks))]
        self._emit(out, CURATOR, "masked_noise",
                   common_pb2.Ciphertexts(key_id=self._charlies_key.key_id, values=[ct.to_bytes(paillier, c) for c in masked]))
        self.own_vector = [w - s for w, s in zip(encode_model(self._own().model, self.parameters.fractional_bits), masks)]
        self._mark("stage2_done")
        return True


class PathakFollowerSide(PathakPartySide):
    """Every party but the leader: takes ξ from it and waits for its barrier."""

    def __init__(self, session_id: str, me: int, parameters: PathakParameters, features: np.ndarray,
                 labels: np.ndarray, key_bits: int, test_mode: bool):
        if me == LEADER:
            raise invalid("party 1 leads; a follower is any other party")
        super().__init__(session_id, me, parameters, features, labels, key_bits, test_mode)

    @handles("party_key")
    def take_party_key(self, sender, body) -> None:
        self._from_party(sender, only=LEADER)
        if self.xi is not None:
            raise precondition("the parties' key arrived twice")
        p, q = int.from_bytes(body.p, "big"), int.from_bytes(body.q, "big")
        if p == q or (p * q).bit_length() != self.key_bits or not (gmpy2.is_prime(p) and gmpy2.is_prime(q)):
            raise invalid("the parties' key is not a product of two primes of the session's size")
        public = PublicKey.from_integers(p * q, int.from_bytes(body.hs, "big"), self.key_bits)
        setup = ring_pedersen_from_message(body.ring_pedersen, self.key_bits)
        self.xi = KeyPair(public, PaillierPrivateKey(public.paillier, p, q))
        self.ring_pedersen = setup
        self._accept_charlies_keys()

    @handles("barrier_release")
    def take_barrier_release(self, sender, body) -> None:
        self._from_party(sender, only=LEADER)
        if self.released:
            raise precondition("released twice")
        self.released = True

    def _step_finish(self, out) -> bool:
        finished = super()._step_finish(out)
        if finished and self.zeta is not None:
            # The offline phase: the one ρ^n for ζ that the next session's Stage 1 element takes (9 ms at 2048 bits)
            nth_powers.prepare_while_idle(self._charlies_key.n, 1)
        return finished

    def _step_select_noise(self, out) -> bool:
        """Stage 2 step 3, then Stage 3 step 1: a follower shares round(2^F·ŵ_j) as it is."""
        if not super()._step_select_noise(out):
            return False
        self.own_vector = encode_model(self._own().model, self.parameters.fractional_bits)
        return True


def protocol(resources: Callable[[Identity], PartyResources]) -> RoleProtocol:
    """The party's registry entry: the client's `open` makes its side from the party's own data."""

    def start_host(hosted: Collection[Identity]) -> None:
        """The leader's host: its ring-Pedersen parameters (two safe primes, about 2 s at 2048 bits), made in the
        background so that the first session does not wait for them."""
        if party(LEADER) in hosted:
            ring_pedersen.prepare(resources(party(LEADER)).public_key.n.bit_length())

    def open_side(session_id: str, me: Identity, sender: Identity, kind: str, body) -> PathakPartySide:
        if sender != CLIENT:
            raise denied(f"{sender} may not open a Pathak session")
        parameters = PathakParameters.from_proto(body)
        own = resources(me)
        own.admit(session_id, "pathak", parameters.guarantee())  # its own policy, before any work on its data
        side_type = PathakLeaderSide if me.id == LEADER else PathakFollowerSide
        try:
            side = own.side(side_type)(session_id, me.id, parameters, own.features, own.labels,
                                       own.public_key.n.bit_length(), own.test_mode)
        except ValueError as error:  # e.g. a multi-class data set, or an inexact local minimiser
            raise invalid(str(error)) from None
        side.charge = own.spend(session_id, "pathak", parameters.guarantee())  # before anything derived from the data
        if isinstance(side, PathakLeaderSide) and not parameters.distributed:
            ring_pedersen.prepare(side.key_bits)  # the first session's: made between open and start
        return side

    return RoleProtocol("pathak", pathak_pb2.PathakMessage, frozenset({"open"}), open_side,
                        (PathakLeaderSide, PathakFollowerSide), TAKES, start_host)


# What the protocol sends a party (pathak.proto), the leader's and the followers' kinds together.
TAKES = frozenset({"open", "start", "curator_key", "party_key", "commitment", "reveal", "routed_share", "barrier_ready",
                   "barrier_release", "masked_share", "masked_value", "compare_request", "indicator",
                   "indicator_element", "selected_noise", "share"})
