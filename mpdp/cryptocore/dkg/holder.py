"""One key holder's side of the distributed key generation, as a state machine.

`start()` returns the first messages; `receive(messages)` takes everything the other holders
sent for the current stage and returns the next stage's messages, until `result` holds this
holder's KeyShare. Every holder takes the same public decisions from the same broadcasts, so
the holders move through the stages in lockstep (messages.STAGES). Any inconsistency raises
DkgAborted; nothing is output until the confirmation stage has checked the whole key and every
holder has acknowledged the same digest of it (the first step of the commit: docs/distributed-keygen.md).

Secrets: this holder's a_i, b_i, p_i, q_i (per candidate), φ_i, β_i, U_i, x_i and its polynomial;
never p, q, φ(n) or d, which exist only as sums over all holders.
"""

from __future__ import annotations

import math
import secrets
from functools import lru_cache

import gmpy2
import numpy as np

from mpdp.cryptocore.dkg import (
    biprimality,
    candidates,
    integer_sharing,
    messages,
    shamir,
    sieve,
    small_primes,
    transcript,
)
from mpdp.cryptocore.dkg.errors import DkgAborted
from mpdp.cryptocore.dkg.messages import BROADCAST, Message
from mpdp.cryptocore.errors import CryptoError, InvalidShare, ProtocolStateError
from mpdp.cryptocore.paillier.keypair import check_key_bits
from mpdp.cryptocore.paillier.threshold import (
    SHARE_SLACK_BITS,
    KeyShare,
    PartialDecryption,
    ThresholdPublicKey,
    combine,
    verify,
)

MIN_HOLDERS = 3  # BGW needs an honest majority of at least two
MAX_HOLDERS = 16  # the launcher's largest committee
CONFIRMATION_CONTEXT = b"mpdp/dkg/confirmation/v1"


@lru_cache(maxsize=8)
def modulus_field(bits: int) -> int:
    """A prime above every candidate n (n < 2^bits): the BGW field for revealing n."""
    return int(gmpy2.next_prime(1 << bits))


@lru_cache(maxsize=1)
def exponent_factor() -> int:
    """F with N₂ = n²·F > 2^κ·ℓ·n² > 2^κ·φ·U: the product φ·U never wraps, with κ bits to spare for the
    top-bits conversion (integer_sharing). A prime above 2^(κ+16), so N₂ has no factor ≤ ℓ."""
    return int(gmpy2.next_prime(1 << (integer_sharing.STATISTICAL_BITS + 16)))


MAX_BATCH = 1 << 14  # candidates per attempt: bounds one stage's messages (3 values each per holder)


def default_batch(bits: int, holders: int, bound: int) -> int:
    """Candidate pairs per attempt: a quarter of those one expects to need after sieving
    (sieve.expected_pairs), so most ceremonies take a few attempts (few network rounds) without computing
    many candidates past the success; 16 to 8192."""
    return min(8192, max(16, round(sieve.expected_pairs(bits, holders, bound) / 4)))


class Holder:
    def __init__(self, index: int, holders: int, threshold: int, bits: int, batch: int | None = None,
                 sieve_bound: int | None = None):
        check_key_bits(bits)
        if not MIN_HOLDERS <= holders <= MAX_HOLDERS:
            raise ValueError(f"distributed key generation needs {MIN_HOLDERS} to {MAX_HOLDERS} key holders")
        if not 1 <= threshold <= holders or not 1 <= index <= holders:
            raise ValueError("need 1 ≤ threshold ≤ holders and 1 ≤ index ≤ holders")
        self.index, self.holders, self.threshold, self.bits = index, holders, threshold, bits
        if batch is not None and not 1 <= batch <= MAX_BATCH:
            raise ValueError(f"1 to {MAX_BATCH} candidates per attempt")
        self.sieve_bound = sieve_bound or sieve.default_bound(bits)
        self.sieve_modulus = sieve.sieving_modulus(bits, holders, self.sieve_bound)
        # the primes r ≤ ℓ, sieved in GF(r^k) alongside (small_primes.py): candidates are units mod M·R
        self.residue_modulus = self.sieve_modulus * small_primes.modulus(holders)
        self._packed_bound = self.sieve_modulus * small_primes.packing_bound(holders)
        self.batch = batch or default_batch(bits, holders, self.sieve_bound)
        self.degree = shamir.bgw_degree(holders)
        self.delta = math.factorial(holders)
        self.stage: str | None = None
        self.attempt = 0
        self.round = 0
        self.candidates_tried = 0
        self.biprimality_tests = 0
        self.result: KeyShare | None = None
        self.digest: bytes | None = None  # what every holder acknowledged, with `result`
        self._transcript = transcript.Transcript(bits, holders, threshold)
        self._own_broadcast: tuple[int, ...] | None = None
        self._own_private: tuple[int, ...] | None = None

    # --- message plumbing -------------------------------------------------------------------------------

    def _emit(self, stage: str, broadcast=None, private: dict[int, list] | None = None) -> list[Message]:
        self.stage = stage
        self.round += 1
        out = []
        self._own_broadcast = self._own_private = None
        if broadcast is not None:
            self._own_broadcast = values = tuple(int(v) for v in broadcast)
            out.append(Message(stage, self.attempt, self.round, self.index, BROADCAST, values))
        for recipient, row in (private or {}).items():
            values = tuple(int(v) for v in row)
            if recipient == self.index:
                self._own_private = values
            else:
                out.append(Message(stage, self.attempt, self.round, self.index, recipient, values))
        return out

    def _inbox(self, received: list[Message]) -> tuple[dict[int, tuple], dict[int, tuple]]:
        """(broadcasts, privates) by sender for the current stage, own included; refuses strays, repeats and
        absences, naming the sender."""
        broadcasts: dict[int, tuple] = {}
        privates: dict[int, tuple] = {}
        for message in received:
            sender = message.sender
            if not 1 <= sender <= self.holders or sender == self.index:
                raise DkgAborted(f"message from unknown sender {sender}")
            if (message.stage, message.attempt, message.round) != (self.stage, self.attempt, self.round):
                raise DkgAborted(f"sent {message.stage}/{message.attempt} during {self.stage}/{self.attempt}",
                                 sender)
            if message.recipient not in (BROADCAST, self.index):
                raise DkgAborted("message addressed to another holder", sender)
            box = broadcasts if message.recipient == BROADCAST else privates
            if sender in box:
                raise DkgAborted(f"two messages in stage {self.stage}", sender)
            box[sender] = message.values
        for own, box in ((self._own_broadcast, broadcasts), (self._own_private, privates)):
            if own is None:
                continue
            box[self.index] = own
            missing = [h for h in range(1, self.holders + 1) if h not in box]
            if missing:
                raise DkgAborted(f"sent nothing in stage {self.stage}", missing[0])
        return broadcasts, privates

    def _values(self, box: dict[int, tuple], sender: int, count: int, low: int, high: int) -> tuple:
        values = box[sender]
        if len(values) != count:
            raise DkgAborted(f"{len(values)} values in stage {self.stage}, expected {count}", sender)
        if any(not low <= v < high for v in values):
            raise DkgAborted(f"value out of range in stage {self.stage}", sender)
        return values

    def _column(self, box, count: int, low: int, high: int) -> list[tuple]:
        return [self._values(box, h, count, low, high) for h in range(1, self.holders + 1)]

    def _interpolate(self, columns: list, modulus) -> list:
        """Each row's value at 0 from the product points of every holder; with an even ℓ the extra point must
        lie on the same polynomial of degree 2t′ (a holder that changed its point is caught)."""
        basis = tuple(range(1, 2 * self.degree + 2))
        weights = shamir.lagrange_weights(basis, 0, modulus)
        extras = [(h, shamir.lagrange_weights(basis, h, modulus)) for h in range(len(basis) + 1, self.holders + 1)]
        values = []
        for row in range(len(columns[0])):
            points = [gmpy2.mpz(column[row]) for column in columns]
            for h, extra in extras:
                if sum(w * y for w, y in zip(extra, points)) % modulus != points[h - 1]:
                    raise DkgAborted(f"product points of stage {self.stage} are not on one polynomial")
            values.append(sum(w * y for w, y in zip(weights, points)) % modulus)
        return values

    @property
    def expected_messages(self) -> int:
        """How many messages the current stage takes from the other holders."""
        if self.stage is None:
            return 0
        broadcast, private = messages.EXPECTS[self.stage]
        return (self.holders - 1) * (int(broadcast) + int(private))

    def start(self) -> list[Message]:
        if self.attempt:
            raise ProtocolStateError("the ceremony has started")
        return self._send_sieve()

    def receive(self, received: list[Message]) -> list[Message]:
        if self.stage is None or self.result is not None:
            raise ProtocolStateError("no stage is waiting for messages")
        broadcasts, privates = self._inbox(received)
        handler = {
            messages.SIEVE: self._on_sieve, messages.SIEVE_RESHARE: self._on_sieve_reshare,
            messages.CANDIDATES: self._on_candidates, messages.PRODUCTS: self._on_products,
            messages.SIEVED: self._on_sieved, messages.BIPRIMALITY: self._on_biprimality,
            messages.INVERSE: self._on_inverse, messages.INVERSE_PRODUCTS: self._on_inverse_products,
            messages.EXPONENT: self._on_exponent, messages.EXPONENT_WRAP: self._on_exponent_wrap,
            messages.KEY_SHARES: self._on_key_shares, messages.CONFIRMATION: self._on_confirmation,
            messages.ACKNOWLEDGEMENT: self._on_acknowledgement,
        }[self.stage]
        return handler(broadcasts, privates)

    # --- distributed sieving: additive shares mod M of Π a_i for every candidate (sieve.py) -------------------

    def _sieve_points(self, columns: list, small: list) -> dict[int, list]:
        """Each recipient's points: mod M and, packed above it, in every GF(r^k) (small_primes.py)."""
        modulus = self.sieve_modulus
        return {h: [int(column[h - 1]) + modulus * packed
                    for column, packed in zip(columns, small_primes.pack([s[:, h - 1] for s in small], self.holders))]
                for h in range(1, self.holders + 1)}

    def _split(self, values) -> tuple[list, list]:
        """(the points mod M, each GF(r^k)'s points) of the values `_sieve_points` made."""
        modulus = self.sieve_modulus
        return ([gmpy2.mpz(v % modulus) for v in values],
                small_primes.unpack([v // modulus for v in values], self.holders))

    def _send_sieve(self) -> list[Message]:
        """A new attempt: a_i for p and q of every candidate (chain 2k is candidate k's p, 2k + 1 its q)."""
        self.attempt += 1
        modulus = self.sieve_modulus
        if self.index not in sieve.contributors(self.holders):
            return self._emit(messages.SIEVE, private={h: [] for h in range(1, self.holders + 1)})
        columns = shamir.evaluations_many(sieve.multiplicative_shares(2 * self.batch, modulus),
                                          self.degree, self.holders, modulus)
        small = [small_primes.evaluations(f, a, self.degree, self.holders) for f, a in
                 zip(small_primes.fields(self.holders), small_primes.multiplicative_shares(2 * self.batch, self.holders))]
        return self._emit(messages.SIEVE, private=self._sieve_points(columns, small))

    def _on_sieve(self, broadcasts, privates) -> list[Message]:
        contributors = sieve.contributors(self.holders)
        for sender in range(1, self.holders + 1):
            self._values(privates, sender, 2 * self.batch if sender in contributors else 0, 0, self._packed_bound)
        split = [self._split(privates[sender]) for sender in contributors]
        self._chains = [[large[c] for large, _ in split] for c in range(2 * self.batch)]
        # per field: (chains, ℓ) — column j is holder j's sharing
        self._small_chains = [np.stack([small[s] for _, small in split], axis=1)
                              for s in range(len(small_primes.primes(self.holders)))]
        return self._sieve_level()

    def _sieve_level(self) -> list[Message]:
        """Multiply adjacent sharings of every chain; reshare the products, or take the last one as b_i."""
        modulus = self.sieve_modulus
        steps = [sieve.multiply(chain, modulus) for chain in self._chains]
        fields = small_primes.fields(self.holders)
        small_steps = [small_primes.multiply(f, chains) for f, chains in zip(fields, self._small_chains)]
        if len(steps[0][0]) + len(steps[0][1]) == 1:
            weight = sieve.additive_weight(self.index, self.holders, modulus)
            basis = sieve.basis(self.holders)
            small = [small_primes.additive_residues(f, small_primes.lagrange_weights(
                        f.r, self.holders, basis, 0)[self.index - 1], products[:, 0]) if self.index in basis
                     else np.zeros(len(products), dtype=np.int64) for f, (products, _) in zip(fields, small_steps)]
            residues = [small_primes.residue(int(weight * products[0] % modulus), modulus,
                                             [s[c] for s in small], self.holders)
                        for c, (products, _) in enumerate(steps)]
            del self._chains, self._small_chains
            return self._send_candidates(residues[0::2], residues[1::2])
        self._carried = [carried for _, carried in steps]
        self._small_carried = [carried for _, carried in small_steps]
        self._products_per_chain = len(steps[0][0])
        out: dict[int, list] = {h: [] for h in range(1, self.holders + 1)}
        if self.index in sieve.basis(self.holders):
            columns = shamir.evaluations_many([product for products, _ in steps for product in products],
                                              self.degree, self.holders, modulus)
            small = [small_primes.evaluations(f, products.reshape(-1), self.degree, self.holders)
                     for f, (products, _) in zip(fields, small_steps)]
            out = self._sieve_points(columns, small)
        return self._emit(messages.SIEVE_RESHARE, private=out)

    def _on_sieve_reshare(self, broadcasts, privates) -> list[Message]:
        modulus, width = self.sieve_modulus, self._products_per_chain
        basis = sieve.basis(self.holders)
        for sender in range(1, self.holders + 1):
            self._values(privates, sender, len(self._chains) * width if sender in basis else 0, 0, self._packed_bound)
        weights = shamir.lagrange_weights(basis, 0, modulus)
        split = [self._split(privates[i]) for i in basis]
        rows = [large for large, _ in split]
        for c, carried in enumerate(self._carried):
            combined = [sum(w * row[c * width + m] for w, row in zip(weights, rows)) % modulus
                        for m in range(width)]
            self._chains[c] = combined + carried
        for s, f in enumerate(small_primes.fields(self.holders)):
            reduced = small_primes.combine(f, small_primes.lagrange_weights(f.r, self.holders, basis, 0),
                                           [small[s] for _, small in split])
            self._small_chains[s] = np.concatenate([reduced.reshape(len(self._chains), width),
                                                    self._small_carried[s]], axis=1)
        return self._sieve_level()

    # --- the modulus: candidates, BGW product, trial division, biprimality ---------------------------------

    def _send_candidates(self, p_residues: list[int], q_residues: list[int]) -> list[Message]:
        field, modulus = modulus_field(self.bits), self.residue_modulus
        self._p = [candidates.candidate_share(self.bits, self.holders, self.index, b, modulus) for b in p_residues]
        self._q = [candidates.candidate_share(self.bits, self.holders, self.index, b, modulus) for b in q_residues]
        ps = shamir.evaluations_many(self._p, self.degree, self.holders, field)
        qs = shamir.evaluations_many(self._q, self.degree, self.holders, field)
        zeros = shamir.evaluations_many([0] * len(self._p), 2 * self.degree, self.holders, field)
        out = {h: [value for row in zip(ps, qs, zeros) for value in (row[0][h - 1], row[1][h - 1], row[2][h - 1])]
               for h in range(1, self.holders + 1)}
        return self._emit(messages.CANDIDATES, private=out)

    def _on_candidates(self, broadcasts, privates) -> list[Message]:
        field = modulus_field(self.bits)
        columns = self._column(privates, 3 * self.batch, 0, field)
        points = []
        for k in range(self.batch):
            p = sum(gmpy2.mpz(column[3 * k]) for column in columns)
            q = sum(gmpy2.mpz(column[3 * k + 1]) for column in columns)
            zero = sum(gmpy2.mpz(column[3 * k + 2]) for column in columns)
            points.append((p * q + zero) % field)
        return self._emit(messages.PRODUCTS, broadcast=points)

    def _on_products(self, broadcasts, privates) -> list[Message]:
        field = modulus_field(self.bits)
        moduli = self._interpolate(self._column(broadcasts, self.batch, 0, field), field)
        self.candidates_tried += self.batch
        if any(gmpy2.gcd(n, self.residue_modulus) != 1 for n in moduli):
            # honest shares give units mod M: someone's sieve shares or reshares were inconsistent
            raise DkgAborted("a candidate shares a factor with the sieving modulus: inconsistent sieve messages")
        self._survivors = [(k, int(n)) for k, n in enumerate(moduli) if biprimality.passes_trial_division(n, self.bits)]
        if not self._survivors:
            return self._send_sieve()
        values = [biprimality.test_value(n, self._base(n, k, 0), self._p[k], self._q[k], self.index)
                  for k, n in self._survivors]
        return self._emit(messages.SIEVED, broadcast=values)

    def _base(self, n: int, candidate: int, repetition: int) -> int:
        label = self.attempt.to_bytes(4, "big") + candidate.to_bytes(4, "big")
        return biprimality.test_base(n, label, repetition)

    def _on_sieved(self, broadcasts, privates) -> list[Message]:
        count = len(self._survivors)
        columns = self._column(broadcasts, count, 0, 1 << self.bits)
        self.biprimality_tests += count
        self._passers = [(k, n) for row, (k, n) in enumerate(self._survivors)
                         if biprimality.passes(n, [column[row] for column in columns])]
        return self._confirm_next()

    def _confirm_next(self) -> list[Message]:
        """The remaining repetitions for the next candidate that passed once, or the next attempt."""
        if not self._passers:
            return self._send_sieve()
        self._chosen = self._passers.pop(0)
        k, n = self._chosen
        values = [biprimality.test_value(n, self._base(n, k, rep), self._p[k], self._q[k], self.index)
                  for rep in range(1, biprimality.REPETITIONS)]
        return self._emit(messages.BIPRIMALITY, broadcast=values)

    def _on_biprimality(self, broadcasts, privates) -> list[Message]:
        k, n = self._chosen
        columns = self._column(broadcasts, biprimality.REPETITIONS - 1, 0, n)
        self.biprimality_tests += 1
        if not all(biprimality.passes(n, [column[rep] for column in columns]) for rep in range(len(columns[0]))):
            return self._confirm_next()
        return self._send_inverse(n, self._p[k], self._q[k])

    # --- the decryption exponent: θ = φ·β mod n, ζ = r·(p + q − 1) mod n, then d = φ·U ----------------------

    def _send_inverse(self, n: int, p_share: int, q_share: int) -> list[Message]:
        self.n = n
        self._phi = candidates.phi_share(n, p_share, q_share, self.index)
        self._beta = secrets.randbelow(n)
        sum_share = p_share + q_share - (1 if self.index == 1 else 0)
        inputs = ((self._phi, self.degree), (self._beta, self.degree), (sum_share, self.degree),
                  (secrets.randbelow(n), self.degree), (0, 2 * self.degree), (0, 2 * self.degree))
        columns = [shamir.evaluations(value, degree, self.holders, n) for value, degree in inputs]
        return self._emit(messages.INVERSE,
                          private={h: [column[h - 1] for column in columns] for h in range(1, self.holders + 1)})

    def _on_inverse(self, broadcasts, privates) -> list[Message]:
        n = self.n
        columns = self._column(privates, 6, 0, n)
        sums = [sum(gmpy2.mpz(column[i]) for column in columns) for i in range(6)]
        theta = (sums[0] * sums[1] + sums[4]) % n
        zeta = (sums[2] * sums[3] + sums[5]) % n
        return self._emit(messages.INVERSE_PRODUCTS, broadcast=[theta, zeta])

    def _on_inverse_products(self, broadcasts, privates) -> list[Message]:
        n = self.n
        theta, zeta = self._interpolate(self._column(broadcasts, 2, 0, n), n)
        if gmpy2.gcd(zeta, n) != 1 or gmpy2.gcd(theta, n) != 1:
            return self._confirm_next()  # n = p^a·q^b (Boneh–Franklin's second part) or a factor found
        self._transcript.absorb("modulus", [n, theta, zeta])
        self._p = self._q = []
        self._passers = []
        self._u = int(self._beta * gmpy2.invert(theta, n) % n)  # Σ U_j ≡ β·θ^{−1} ≡ φ^{−1} (mod n)
        del self._beta
        modulus = n * n * exponent_factor()
        inputs = ((self._phi, self.degree), (self._u, self.degree), (0, 2 * self.degree))
        columns = [shamir.evaluations(value, degree, self.holders, modulus) for value, degree in inputs]
        return self._emit(messages.EXPONENT,
                          private={h: [column[h - 1] for column in columns] for h in range(1, self.holders + 1)})

    def _on_exponent(self, broadcasts, privates) -> list[Message]:
        modulus = self.n * self.n * exponent_factor()
        columns = self._column(privates, 3, 0, modulus)
        sums = [sum(gmpy2.mpz(column[i]) for column in columns) for i in range(3)]
        point = (sums[0] * sums[1] + sums[2]) % modulus
        basis = tuple(range(1, 2 * self.degree + 2))
        if self.index in basis:
            self._additive = int(shamir.lagrange_weights(basis, 0, modulus)[self.index - 1] * point % modulus)
        else:
            self._additive = 0
        del self._phi, self._u
        return self._emit(messages.EXPONENT_WRAP, broadcast=[integer_sharing.top_bits(self._additive, modulus)])

    def _on_exponent_wrap(self, broadcasts, privates) -> list[Message]:
        n, nsquare = self.n, self.n * self.n
        modulus = nsquare * exponent_factor()
        tops = [column[0] for column in self._column(broadcasts, 1, 0, 1 << integer_sharing.TOP_BITS)]
        self._transcript.absorb("wraps", tops)
        x = self._additive - (integer_sharing.wraps(tops) * modulus if self.index == 1 else 0)
        del self._additive
        self._v = transcript.verification_base(self._transcript, n)
        bound = integer_sharing.coefficient_bound(modulus, self.holders)
        coefficients, shares = integer_sharing.deal(x, self.threshold, self.holders, bound)
        commitments = integer_sharing.commit(self._v, self.delta, coefficients, nsquare)
        del coefficients, x
        return self._emit(messages.KEY_SHARES, broadcast=commitments,
                          private={h: [shares[h - 1]] for h in range(1, self.holders + 1)})

    # --- the key: shares checked against commitments, v_i, confirmation ----------------------------------------

    def _on_key_shares(self, broadcasts, privates) -> list[Message]:
        n, nsquare = self.n, self.n * self.n
        share_bound = nsquare << SHARE_SLACK_BITS
        commitments = self._column(broadcasts, self.threshold, 1, nsquare)  # C_{j0} = 1 where x_j = 0
        received = self._column(privates, 1, -share_bound, share_bound)
        for sender in range(1, self.holders + 1):
            if sender != self.index and not integer_sharing.matches(
                    self._v, self.delta, received[sender - 1][0], list(commitments[sender - 1]), self.index, nsquare):
                raise DkgAborted("key share does not match its commitments", sender)
        secret = sum(values[0] for values in received)
        for column in commitments:
            self._transcript.absorb("commitments", column)
        keys = integer_sharing.verification_keys([list(c) for c in commitments], self.holders, nsquare)
        try:
            public = ThresholdPublicKey(n=n, threshold=self.threshold, verification_base=self._v,
                                        verification_keys=keys, hs=transcript.encryption_base(self._transcript, n))
            if not 0 < secret < public.share_bound:
                raise DkgAborted("key share out of range")
            share = KeyShare(self.index, secret, public)
            self._message, self._ciphertext = transcript.confirmation(self._transcript, n)
            partial = share.partial_decrypt(self._ciphertext, CONFIRMATION_CONTEXT)
        except CryptoError as error:
            if isinstance(error, DkgAborted):
                raise
            raise DkgAborted(f"the key fails validation: {error}") from None
        self._share = share
        return self._emit(messages.CONFIRMATION,
                          broadcast=[keys[self.index - 1], partial.value, partial.challenge, partial.response])

    def _on_confirmation(self, broadcasts, privates) -> list[Message]:
        public = self._share.public
        nsquare = public.paillier.nsquare
        columns = self._column(broadcasts, 4, 0, 1 << (public.proof_randomness_bits + 1))
        partials = []
        for holder, (key, value, challenge, response) in enumerate(columns, start=1):
            if key != public.verification_keys[holder - 1]:
                raise DkgAborted("announced verification key does not match the commitments", holder)
            if value >= nsquare:
                raise DkgAborted("partial decryption out of range", holder)
            partial = PartialDecryption(holder, value, challenge, response)
            try:
                verify(public, self._ciphertext, partial, CONFIRMATION_CONTEXT)
            except InvalidShare as error:
                raise DkgAborted(f"confirmation: {error.reason}", holder) from None
            partials.append(partial)
        t = public.threshold
        for chosen in (partials[:t], partials[-t:]):
            try:
                plaintext = combine(public, chosen)
            except CryptoError:
                plaintext = None
            if plaintext != self._message:
                raise DkgAborted("the shares do not decrypt the confirmation ciphertext")
        self._digest = transcript.acknowledgement(self._transcript, public)
        return self._emit(messages.ACKNOWLEDGEMENT, broadcast=[int.from_bytes(self._digest, "big")])

    def _on_acknowledgement(self, broadcasts, privates) -> list[Message]:
        """Commit, step 1: every holder passed the confirmation on this very key. A holder that saw another key (an
        equivocating broadcast) or none (it aborted) cannot have sent this digest, so nobody reaches `result`."""
        own = int.from_bytes(self._digest, "big")
        for holder, (digest,) in enumerate(self._column(broadcasts, 1, 0, 1 << (8 * transcript.DIGEST_BYTES)),
                                           start=1):
            if digest != own:
                raise DkgAborted("acknowledged another transcript or key", holder)
        self.digest = self._digest
        self.result = self._share
        self.stage = None
        return []
