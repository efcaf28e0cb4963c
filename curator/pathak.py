"""Charlie's side of a Pathak session (pathak.md): blinds and permutes, runs the knockout
tournament as the comparisons' key holder, selects by an encrypted indicator,
and decrypts only masked noise. Free of gRPC.

Charlie's view is logged (`log`: arrival time, sender, message kind) so tests
can check that it does not reveal which party originated which index.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable

from mpdp.cryptocore.comparison import elgamal_bit_proof
from mpdp.cryptocore.comparison.elgamal import ElGamalKeyPair
from mpdp.cryptocore.comparison.protocol import ComparisonKeyHolder, MaskedDifferences
from mpdp.cryptocore.keys.key_checks import check_key_id
from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.paillier import nth_powers
from mpdp.cryptocore.paillier.keypair import KeyPair, PublicKey
from mpdp.cryptocore.proofs import bit_proof
from mpdp.cryptocore.proofs.plaintext_opening import open_ciphertext
from mpdp.cryptocore.proofs.ring_pedersen import RingPedersen
from mpdp.proto.v1 import comparison_pb2, pathak_pb2
from mpdp.protocols.pathak import comparison
from mpdp.protocols.pathak.encoding import LEADER, int_from_signed_bytes
from mpdp.protocols.pathak.indicator import bit_proof_message, indicator_context
from mpdp.protocols.pathak.keys import curator_keys_message, public_key_from_message, ring_pedersen_from_message
from mpdp.protocols.pathak.parameters import PathakParameters
from mpdp.protocols.pathak.participant import PathakSide
from mpdp.sessions.errors import denied, invalid, precondition
from mpdp.sessions.identity import CLIENT, CURATOR, Identity, party
from mpdp.sessions.protocol import RoleProtocol
from mpdp.sessions.side import handles


class PathakCuratorSide(PathakSide):
    def __init__(self, session_id: str, parameters: PathakParameters, zeta: KeyPair, comparison_key: ElGamalKeyPair):
        super().__init__(session_id, CURATOR, parameters)
        self.zeta = zeta
        self.comparison_key = comparison_key  # the tournament's (mpdp/cryptocore/comparison/elgamal.py)
        self.xi: PublicKey | None = None
        self.ring_pedersen: RingPedersen | None = None  # the leader's, which ζ's Π^fac is made against
        self.elements: dict[int, pathak_pb2.Stage1Element] = {}
        self.blinded_b: list[int] | None = None  # b̃, indexed by position in π2∘π1 order (1-based)
        self.pi2: list[int] | None = None
        self.ready_to_compare = False
        self.masked_offsets: list[int] | None = None  # the leader's w_k = ã_k + ρ_k
        self.remaining: list[int] = []
        self.byes: list[int] = []
        self.pending: dict[tuple[int, int], tuple[ComparisonKeyHolder, int]] = {}  # with Charlie's d_M
        self.round_winners: list[int] = []
        self.comparison_bits_seen: list[tuple[tuple[int, int], bool]] = []
        self.winner: int | None = None
        self.masked_noise: list[int] | None = None
        self.log: list[tuple[float, str, str]] = []

    def receive(self, sender: Identity | None, kind: str, body):
        self.log.append((time.monotonic() - self.started_at, str(sender), kind))
        return super().receive(sender, kind, body)

    def _step_finish(self, out) -> bool:
        finished = super()._step_finish(out)
        if finished:
            # ζ encrypts the indicator: prepare the next session's encryptions of zero while idle
            self.zeta.public.encryptor.precompute_while_idle(zeros=self.parameters.parties)
            bit_proof.prepare_while_idle(self.zeta.public.n, 2 * self.parameters.parties)  # the indicator's proofs
            elgamal_bit_proof.prepare_while_idle(  # the next tournament's encrypted bits and their proofs
                self.comparison_key.public, (self.parameters.parties - 1) * self.parameters.comparison_bits)
        return finished

    def steps(self) -> list:
        if self.parameters.distributed:
            return [self._step_share_nothing]
        return [self._step_send_key, self._step_blind_and_permute, self._step_start_tournament,
                self._step_next_round, self._step_indicator, self._step_unmask]

    def _step_share_nothing(self, out) -> bool:
        """Distributed noise: Charlie holds no noise, so it shares a zero vector in Stage 3 (the published shares
        keep their form: K + 1 uniform shares of K·ŵˢ)."""
        if not self._once("zero_vector"):
            return False
        self.own_vector = [0] * self.parameters.dimension
        return True

    # ------------------------------------------------------------------ handlers
    @handles("party_public_key")
    def take_party_public_key(self, sender, body) -> None:
        self._from_party(sender, only=LEADER)
        if self.xi is not None:
            raise precondition("the parties' public key arrived twice")
        bits = self.zeta.public.n.bit_length()
        xi = public_key_from_message(body, bits)
        self.ring_pedersen = ring_pedersen_from_message(body.ring_pedersen, bits, proven=True)
        self.xi = xi

    @handles("stage1_element")
    def take_stage1_element(self, sender, body) -> None:
        k = self._from_party(sender)
        if k in self.elements:
            raise precondition(f"element {k} arrived twice")
        ct.from_bytes(self.zeta.public.paillier, body.encrypted_b)  # validated now; ξ(a) once ξ is known
        self.elements[k] = body

    @handles("ready_to_compare")
    def take_masked_offsets(self, sender, body) -> None:
        """The leader's w_k = ã_k + ρ_k, one per position, each in range."""
        self._from_party(sender, only=LEADER)
        if self.ready_to_compare:
            raise precondition("ready twice")
        if len(body.values) != self.parameters.parties:
            raise invalid("one masked offset per party")
        bound = 2 ** (self.parameters.blind_bits + 1) + 2**self.parameters.offset_bits
        masked = [int_from_signed_bytes(value) for value in body.values]
        if any(abs(w) >= bound for w in masked):
            raise invalid("masked offset out of range")
        self.masked_offsets = masked
        self.ready_to_compare = True

    @handles("compare_reply")
    def take_compare_replies(self, sender, body) -> None:
        """The answers to one round: exactly the pending pairs, each once (checked before any decryption)."""
        self._from_party(sender, only=LEADER)
        pairs = [(reply.pair.first, reply.pair.second) for reply in body.replies]
        if sorted(pairs) != sorted(self.pending):
            raise precondition(f"the replies answer {sorted(pairs)}, the pending comparisons are {sorted(self.pending)}")
        answers = [MaskedDifferences(bytes(reply.differences.key_id), tuple(reply.differences.ciphertexts))
                   for reply in body.replies]
        for answer, pair in zip(answers, pairs):  # every answer's cheap checks before any exponentiation
            self.pending[pair][0].check_shapes(answer)
        for reply, answer, pair in zip(body.replies, answers, pairs):
            holder, charlie_bit = self.pending[pair]
            flipped = holder.receive(answer)
            bigger_first = comparison.bigger_first(charlie_bit, int(reply.hint), flipped)
            self.comparison_bits_seen.append((pair, bigger_first))
            self.round_winners.append(pair[1] if bigger_first else pair[0])
        self.pending.clear()

    @handles("masked_noise")
    def unmask_noise_share(self, sender, body) -> None:
        self._from_party(sender, only=LEADER)
        if self.masked_noise is not None:
            raise precondition("the masked noise arrived twice")
        check_key_id(self.zeta.public.key_id, body.key_id)
        layout = self.parameters.noise_layout(self.zeta.public.n)
        if len(body.values) != layout.plaintexts_needed(self.parameters.dimension):
            raise invalid("masked noise has the wrong number of ciphertexts")
        self.masked_noise = [ct.from_bytes(self.zeta.public.paillier, v) for v in body.values]

    # ------------------------------------------------------------------ steps
    def _step_send_key(self, out) -> bool:
        """ζ with Π^mod and Π^fac (against the leader's ring-Pedersen parameters), and the comparison key."""
        if self.ring_pedersen is None or not self._once("send_key"):
            return False
        keys = curator_keys_message(self.zeta, self.comparison_key, self.ring_pedersen)
        for j in range(1, self.parameters.parties + 1):
            self._emit(out, party(j), "curator_key", keys)
        return True

    def _step_blind_and_permute(self, out) -> bool:
        """Stage 1 steps 3–4: decrypt π1(b), blind with r, permute with π2, send ξ(π1(a) + r)."""
        k_parties = self.parameters.parties
        if self.xi is None or len(self.elements) < k_parties or not self._once("blind"):
            return False
        xi = self.xi.paillier
        bound = 2**self.parameters.blind_bits
        blinded_a, blinded_b = [], []
        for k in range(1, k_parties + 1):
            element = self.elements[k]
            b = self.zeta.decrypt(ct.from_bytes(self.zeta.public.paillier, element.encrypted_b))
            r = secrets.randbelow(2 * bound) - bound
            blinded_a.append(ct.add_plain(xi, ct.from_bytes(xi, element.encrypted_a), r))
            blinded_b.append(b - r)
        order = list(range(k_parties))
        secrets.SystemRandom().shuffle(order)  # π2: position p holds π1-index order[p]
        self.pi2 = [0] * k_parties
        for position, index in enumerate(order, start=1):
            self.pi2[index] = position
        self.blinded_b = [blinded_b[index] for index in order]
        masked = nth_powers.rerandomise_all_for_key_owner(xi, [blinded_a[index] for index in order])  # P_k owns ξ
        for position, value in enumerate(masked, start=1):
            self._emit(out, party(position), "masked_share", ct.to_bytes(xi, value))
        self.elements.clear()
        self._mark("stage1_blinded")
        return True

    def _compare(self, i: int, m: int) -> pathak_pb2.CompareRequest:
        """n′_i > n′_m, decided on short values: Charlie's DGK input is Y = 2·(d mod 2^M) + 1."""
        assert self.blinded_b is not None and self.masked_offsets is not None  # the tournament starts after both
        y, charlie_bit = comparison.charlie_operand(self.parameters, self.masked_offsets, self.blinded_b, i, m)
        holder = ComparisonKeyHolder(self.comparison_key, y, self.parameters.comparison_bits,
                                     comparison.context(self.session_id, i, m))
        self.pending[(i, m)] = (holder, charlie_bit)
        encrypted = holder.encrypted_bits()
        return pathak_pb2.CompareRequest(
            pair=pathak_pb2.ComparePair(first=i, second=m),
            bits=comparison_pb2.EncryptedBitsMessage(key_id=encrypted.key_id, ciphertexts=list(encrypted.ciphertexts),
                                                     bit_proofs=list(encrypted.proofs)),
        )

    def _start_round(self, out, contenders: list[int]) -> None:
        """A round's comparisons in one message: the leader answers them in parallel."""
        self.round_winners = []
        self.byes = contenders[-1:] if len(contenders) % 2 else []
        comparisons = [self._compare(i, m) for i, m in zip(contenders[0::2], contenders[1::2])]
        self._emit(out, party(LEADER), "compare_request", pathak_pb2.CompareRound(comparisons=comparisons))

    def _step_start_tournament(self, out) -> bool:
        """Stage 1 step 6: a knockout tournament; independent comparisons go out together."""
        if not self.ready_to_compare or self.blinded_b is None or not self._once("tournament"):
            return False
        self._start_round(out, list(range(1, self.parameters.parties + 1)))
        return True

    def _step_next_round(self, out) -> bool:
        if self.winner is not None or "tournament" not in self.done_steps or self.pending:
            return False
        contenders = self.round_winners + self.byes
        if len(contenders) == 1:
            self.winner = contenders[0]
            self._mark("stage1_tournament")
            return True
        self._start_round(out, contenders)
        return True

    def _step_indicator(self, out) -> bool:
        """Stage 2 step 1: u = e_j̃ in π2 order, sent as ζ(π2⁻¹(u)) — fresh encryptions in π1 order."""
        if self.winner is None or not self._once("indicator"):
            return False
        encryptor, paillier = self.zeta.public.encryptor, self.zeta.public.paillier
        assert self.pi2 is not None  # a winner exists only after blinding
        bits = [int(self.pi2[index] == self.winner) for index in range(self.parameters.parties)]
        values = [encryptor.encrypt(bit) for bit in bits]
        # the leader checks that u is a unit vector: each entry a bit, and their sum one
        proofs = bit_proof.prove_bits(self.zeta, values, bits, indicator_context(self.session_id))
        opening = open_ciphertext(self.zeta, ct.add(paillier, *values), 1)
        width = ct.modulus_bytes(paillier)
        self._emit(out, party(LEADER), "indicator", pathak_pb2.Indicator(
            key_id=self.zeta.public.key_id, values=[ct.to_bytes(paillier, value) for value in values],
            opening=opening.to_bytes(width, "big"), proofs=[bit_proof_message(proof, width) for proof in proofs]))
        return True

    def _step_unmask(self, out) -> bool:
        """Stage 3 step 2: decrypt ψ·ζ(s), unpack (one bias per slot): ζ_{j*} + s, Charlie's vector."""
        if self.masked_noise is None or not self._once("unmask"):
            return False
        layout = self.parameters.noise_layout(self.zeta.public.n)
        plaintexts = [self.zeta.private.raw_decrypt(c) for c in self.masked_noise]
        masked = layout.unpack(plaintexts, self.parameters.dimension, biased_summands=1)
        self.own_vector = masked
        self._mark("stage2_unmasked")
        return True


def protocol(zeta: Callable[[], KeyPair]) -> RoleProtocol:
    """Charlie's registry entry: every session uses ζ, Charlie's own Paillier key (made by `zeta()` when the
    first session opens), and one comparison key made when the role starts (cheap: one exponentiation; checked
    by the leader in public)."""
    comparison_key = ElGamalKeyPair.generate()

    def open_side(session_id: str, me: Identity, sender: Identity, kind: str, body) -> PathakCuratorSide:
        if sender != CLIENT:
            raise denied(f"{sender} may not open a Pathak session")
        parameters = PathakParameters.from_proto(body)  # checked before ζ is made
        return PathakCuratorSide(session_id, parameters, zeta(), comparison_key)

    return RoleProtocol("pathak", pathak_pb2.PathakMessage, frozenset({"open"}), open_side, (PathakCuratorSide,),
                        frozenset({"open", "start", "party_public_key", "stage1_element", "ready_to_compare",
                                   "compare_reply", "masked_noise", "share"}))
