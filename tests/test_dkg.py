"""Distributed key generation (mpdp/cryptocore/dkg): a key the holders make together works like a dealt one,
is a product of two primes of the right size, and a cheating or vanishing holder stops the ceremony."""

import copy
import math
import secrets
from dataclasses import replace

import gmpy2
import numpy as np
import pytest

from mpdp.cryptocore.dkg import biprimality, candidates, integer_sharing, messages, shamir, sieve, small_primes
from mpdp.cryptocore.dkg import holder as holder_module
from mpdp.cryptocore.dkg.ceremony import InProcess, run_in_process
from mpdp.cryptocore.dkg.errors import DkgAborted
from mpdp.cryptocore.dkg.holder import Holder
from mpdp.cryptocore.dkg.messages import BROADCAST, Message
from mpdp.cryptocore.paillier import keyfiles
from mpdp.cryptocore.paillier.threshold import decrypt, lagrange_coefficient

BITS = 1024
HOLDERS, THRESHOLD = 4, 3  # ℓ even: the product points carry one redundant point, which is checked
CONTEXT = b"dkg-test"


BATCH = 8


def _share_range(bits: int, holders: int) -> tuple[int, int]:
    """[low, high): the values ≡ 3 (mod 4) whose additive shares candidates.candidate_share could draw."""
    half = bits // 2
    low = (1 << (half - 1)) + (1 << (half - 2)) + 3
    return low, low + (4 << candidates.share_bits(bits, holders)) - 4 * holders


def _planted_prime(bits: int, holders: int) -> list[int]:
    """Additive shares (holder 1 first) of a prime ≡ 3 (mod 4) that candidates.candidate_share could draw."""
    offset, high = _share_range(bits, holders)
    while True:
        prime = int(gmpy2.next_prime(offset + 4 * secrets.randbits(candidates.share_bits(bits, holders))))
        if prime % 4 == 3 and prime < high:
            break
    return _split(prime, bits, holders)


def _split(value: int, bits: int, holders: int) -> list[int]:
    """Random additive shares of `value` (in _share_range), holder 1's ≡ 3 and the others' ≡ 0 (mod 4)."""
    offset, _ = _share_range(bits, holders)
    rest = (value - offset) // 4
    cuts = sorted(secrets.randbelow(rest + 1) for _ in range(holders - 1))
    parts = [b - a for a, b in zip([0, *cuts], [*cuts, rest])]
    return [offset + 4 * parts[0]] + [4 * part for part in parts[1:]]


def plant_primes(patch, bits: int, holders: int, batch: int) -> None:
    """Make the first candidate of the first batch a pair of primes, in every holder's draws. Everything after
    the draw (BGW, trial division, the biprimality test) runs as in a real ceremony; the random search itself
    runs in test_a_real_search_finds_a_modulus_and_a_working_key."""
    planted = list(zip(_planted_prime(bits, holders), _planted_prime(bits, holders)))
    draws = {index: 0 for index in range(1, holders + 1)}
    real = candidates.candidate_share

    def draw(bits, holders, index, residue, modulus):
        count, draws[index] = draws[index], draws[index] + 1
        if count in (0, batch):
            return planted[index - 1][count // batch]
        return real(bits, holders, index, residue, modulus)

    patch.setattr(candidates, "candidate_share", draw)


@pytest.fixture(scope="module")
def modulus_agreed():
    """The holders after they accepted n, with the stage INVERSE's messages in flight: a snapshot each test
    resumes from a copy of (planted primes keep the suite fast)."""
    with pytest.MonkeyPatch.context() as patch:
        plant_primes(patch, BITS, HOLDERS, BATCH)
        ceremony = InProcess(BITS, HOLDERS, THRESHOLD, batch=BATCH)
        ceremony.run(until=messages.INVERSE)
    assert ceremony.figures.attempts == 1
    return ceremony


@pytest.mark.slow
def test_a_real_search_finds_a_modulus_and_a_working_key():
    seen: list[Message] = []
    public, shares, figures = run_in_process(BITS, 3, 2, intercept=lambda m: seen.append(m) or m)
    assert figures.candidates_tried >= figures.biprimality_tests > 0
    _check_key_from_factors(public, shares, *_factors(public, [m for m in seen if m.stage == messages.INVERSE], 3))
    c = public.encryptor.encrypt(-42)
    assert decrypt(public, c, [share.partial_decrypt(c, CONTEXT) for share in shares[1:]], CONTEXT) == (-42, {})


def _resume(snapshot, intercept=None):
    ceremony = copy.deepcopy(snapshot)
    ceremony.intercept = intercept
    return ceremony


@pytest.fixture(scope="module")
def distributed_key(modulus_agreed):
    """(public, shares, the INVERSE messages every holder sent)."""
    seen: list[Message] = []

    def record(message):
        if message.stage == messages.INVERSE:
            seen.append(message)
        return message

    ceremony = _resume(modulus_agreed, record)
    ceremony.run()
    public, shares = ceremony.result()
    return public, shares, seen


def test_a_distributed_key_encrypts_and_threshold_decrypts_like_a_dealt_one(distributed_key):
    public, shares, _ = distributed_key
    assert public.n.bit_length() == BITS and public.threshold == THRESHOLD and public.holders == HOLDERS
    for value in (0, -1, 2**200 + 17):
        c = public.encryptor.encrypt(value)
        for subset in ([0, 1, 2], [1, 2, 3], [0, 2, 3]):
            partials = [shares[i].partial_decrypt(c, CONTEXT) for i in subset]
            assert decrypt(public, c, partials, CONTEXT) == (value, {})
        too_few = [share.partial_decrypt(c, CONTEXT) for share in shares[:THRESHOLD - 1]]
        with pytest.raises(Exception, match="need 3 valid"):
            decrypt(public, c, too_few, CONTEXT)


def test_key_files_of_a_distributed_key_pass_the_same_validation(distributed_key, tmp_path):
    public, shares, _ = distributed_key
    keyfiles.write_key_files(tmp_path, public, shares)
    assert keyfiles.load_public_key(tmp_path / keyfiles.PUBLIC_KEY_FILE) == public
    for share in shares:
        loaded = keyfiles.load_key_share(tmp_path / keyfiles.share_file_name(share.index))
        assert loaded.secret == share.secret and 0 < loaded.secret < public.share_bound
    forged = replace(shares[0], secret=shares[0].secret + 1)
    with pytest.raises(ValueError, match="verification key"):
        keyfiles.key_share_from_dict(keyfiles.key_share_to_dict(forged))


def _factors(public, seen: list[Message], holders: int) -> tuple[int, int]:
    """p and q, which no holder has: each holder's sharing of p_i + q_i (− 1 for holder 1) mod n in stage
    INVERSE, interpolated from the points it sent the others, sums to p + q − 1."""
    n = public.n
    degree = shamir.bgw_degree(holders)
    total = 1
    for sender in range(1, holders + 1):
        points = sorted((m.recipient, m.values[2]) for m in seen if m.sender == sender)[: degree + 1]
        total += shamir.interpolate([y for _, y in points], tuple(x for x, _ in points), n)
    total %= n
    root = gmpy2.isqrt(total * total - 4 * n)
    assert root * root == total * total - 4 * n
    return int((total + root) // 2), int((total - root) // 2)


def _check_key_from_factors(public, shares, p: int, q: int) -> None:
    n, bits = public.n, public.n.bit_length()
    assert p * q == n and p != q
    for prime in (p, q):
        assert gmpy2.is_prime(prime, 50) and prime.bit_length() == bits // 2 and prime % 4 == 3
    # the shares are points of one integer polynomial whose value at 0 is d: d ≡ 0 (mod φ), d ≡ 1 (mod n)
    phi = (p - 1) * (q - 1)
    subset = list(range(1, public.threshold + 1))
    delta_d = sum(lagrange_coefficient(public.delta, subset, share.index) * share.secret for share in shares[:len(subset)])
    d, remainder = divmod(delta_d, public.delta)
    assert remainder == 0 and d % phi == 0 and d % n == 1


def test_the_modulus_is_a_product_of_two_primes_of_half_the_size(distributed_key):
    public, shares, seen = distributed_key
    _check_key_from_factors(public, shares, *_factors(public, seen, HOLDERS))


def _tamper(stage, sender, recipient, change):
    def intercept(message):
        if message.stage == stage and message.sender == sender and message.recipient == recipient:
            return replace(message, values=change(message.values))
        return message
    return intercept


def test_a_key_share_inconsistent_with_its_commitments_names_its_dealer(modulus_agreed):
    ceremony = _resume(modulus_agreed, _tamper(messages.KEY_SHARES, 2, 1, lambda v: (v[0] + 1,)))
    with pytest.raises(DkgAborted, match="does not match its commitments") as error:
        ceremony.run()
    assert error.value.culprit == 2


def test_a_false_verification_key_names_its_holder(modulus_agreed):
    ceremony = _resume(modulus_agreed, _tamper(messages.CONFIRMATION, 3, BROADCAST,
                                               lambda v: (v[0] * v[0] % (v[0] + 2), *v[1:])))
    with pytest.raises(DkgAborted, match="verification key") as error:
        ceremony.run()
    assert error.value.culprit == 3


def test_a_false_confirmation_decryption_names_its_holder(modulus_agreed):
    ceremony = _resume(modulus_agreed, _tamper(messages.CONFIRMATION, 4, BROADCAST,
                                               lambda v: (v[0], v[1], v[2], v[3] + 1)))
    with pytest.raises(DkgAborted, match="confirmation") as error:
        ceremony.run()
    assert error.value.culprit == 4


def test_a_wrong_additive_share_of_d_is_caught_by_the_confirmation(modulus_agreed):
    """A holder that deals a consistent polynomial around a wrong x_j passes the commitment checks but the
    key then does not decrypt: the confirmation catches it and nothing is output."""
    ceremony = _resume(modulus_agreed)
    ceremony.run(until=messages.KEY_SHARES)
    ceremony.holders[0].result = None
    cheat = ceremony.holders[1]
    n = cheat.n
    nsquare = n * n
    coefficients, dealt = integer_sharing.deal(12345, THRESHOLD, HOLDERS, 2**200)
    commitments = integer_sharing.commit(cheat._v, cheat.delta, coefficients, nsquare)
    sent = ceremony._outgoing[cheat.index]
    ceremony._outgoing[cheat.index] = [
        replace(m, values=tuple(commitments) if m.recipient == BROADCAST else (dealt[m.recipient - 1],)) for m in sent]
    cheat._own_broadcast, cheat._own_private = tuple(commitments), (dealt[cheat.index - 1],)
    with pytest.raises(DkgAborted, match="do not decrypt"):
        ceremony.run()
    assert all(h.result is None for h in ceremony.holders)


def test_an_acknowledgement_of_another_digest_names_its_holder_and_no_holder_keeps_a_share(modulus_agreed):
    """The commit's first step: a holder that acknowledges anything but the digest every other holder computed (its
    own view of the transcript or key differs, or it lies) stops every holder before any share is output."""
    ceremony = _resume(modulus_agreed, _tamper(messages.ACKNOWLEDGEMENT, 3, BROADCAST, lambda v: (v[0] ^ 1,)))
    with pytest.raises(DkgAborted, match="acknowledged another") as error:
        ceremony.run()
    assert error.value.culprit == 3
    assert all(h.result is None and h.digest is None for h in ceremony.holders)


@pytest.mark.parametrize("stage", [messages.INVERSE, messages.EXPONENT_WRAP, messages.CONFIRMATION,
                                   messages.ACKNOWLEDGEMENT])
def test_a_holder_that_drops_out_aborts_the_ceremony_cleanly(modulus_agreed, stage):
    gone = 2

    def intercept(message):
        return None if message.sender == gone and messages.STAGES.index(message.stage) >= messages.STAGES.index(stage) \
            else message

    ceremony = _resume(modulus_agreed, intercept)
    with pytest.raises(DkgAborted, match=f"sent nothing in stage {stage}") as error:
        ceremony.run()
    assert error.value.culprit == gone
    assert all(h.result is None for h in ceremony.holders)


def test_a_changed_product_point_is_caught_with_an_even_number_of_holders():
    with pytest.raises(DkgAborted, match="not on one polynomial"):
        run_in_process(BITS, HOLDERS, THRESHOLD, batch=8,
                       intercept=_tamper(messages.PRODUCTS, 4, BROADCAST, lambda v: (v[0] + 1, *v[1:])))


def test_a_dropout_at_the_first_stage_aborts_before_any_modulus():
    with pytest.raises(DkgAborted, match="sent nothing in stage sieve") as error:
        run_in_process(BITS, 3, 2, batch=8, intercept=lambda m: None if m.sender == 3 else m)
    assert error.value.culprit == 3


def test_messages_of_another_stage_sender_or_size_are_refused():
    holders = [Holder(i, 3, 2, BITS, batch=4) for i in (1, 2, 3)]
    sent = {h.index: h.start() for h in holders}
    to_one = [m for i in (2, 3) for m in sent[i] if m.recipient == 1]
    cases = {
        "during sieve": [replace(to_one[0], stage=messages.PRODUCTS), to_one[1]],
        "two messages": [to_one[0], to_one[0], to_one[1]],
        "unknown sender": [replace(to_one[0], sender=9), to_one[1]],
        "values in stage": [replace(to_one[0], values=to_one[0].values[:-1]), to_one[1]],
        "out of range": [replace(to_one[0], values=(-1, *to_one[0].values[1:])), to_one[1]],
    }
    for reason, inbox in cases.items():
        with pytest.raises(DkgAborted, match=reason):
            copy.deepcopy(holders[0]).receive(inbox)
    assert copy.deepcopy(holders[0]).receive(to_one)  # the untouched messages go through


def test_biprimality_rejects_a_product_with_a_composite_factor():
    """n = p·q with p ≡ 3 (mod 4) composite fails Boneh–Franklin's test for most bases."""
    def prime(bits, residue):
        while True:
            candidate = gmpy2.next_prime(gmpy2.mpz(2) ** (bits - 1) + gmpy2.mpz(2) ** (bits - 3) * 3 // 2
                                         + int.from_bytes(__import__("os").urandom(bits // 8), "big") % 2**(bits - 3))
            if candidate % 4 == residue:
                return int(candidate)
    p = prime(256, 1) * prime(256, 3)  # ≡ 3 (mod 4), not prime
    q = prime(512, 3)
    n = p * q
    shares = {1: (p - 4 * 1000, q - 4 * 2000), 2: (4 * 1000, 4 * 2000)}

    def passes(repetition):
        g = biprimality.test_base(n, b"x", repetition)
        return biprimality.passes(n, [biprimality.test_value(n, g, *shares[i], i) for i in (1, 2)])

    assert sum(passes(r) for r in range(40)) <= 30
    real = prime(512, 3)
    n = real * q
    shares = {1: (real - 4 * 1000, q - 4 * 2000), 2: (4 * 1000, 4 * 2000)}
    assert all(passes(r) for r in range(10))
    assert math.gcd(n, 3 * 5 * 7) == 1


def _fooling_pair(bits: int, holders: int) -> tuple[int, int]:
    """(p, q), both in _share_range: p = p1·p2·p3 with p_i = 2·a·b_i + 1 prime (a, b_i odd: each ≡ 3 mod 4) and
    q prime with (q − 1)/2 a multiple of every (p_i − 1)/2. Then g^(φ′/4) with φ′ = (p − 1)(q − 1) is
    (g/p1), (g/p2), (g/p3), (g/q) modulo the four primes, whose product is (g/n) = 1: Boneh–Franklin's test
    passes when all four agree, for one base in four. The common factor a keeps the lcm small enough for q to
    fit."""
    low, high = _share_range(bits, holders)

    def prime_of_form(a: int, start: int, stop: int) -> int:
        while True:
            value = 2 * a * ((start // (2 * a) + secrets.randbelow((stop - start) // (2 * a))) | 1) + 1
            if start <= value < stop and gmpy2.is_prime(value):
                return value

    a = secrets.randbits(24) | (1 << 23) | 1
    third = bits // 6
    p1, p2 = prime_of_form(a, 1 << third, 1 << (third + 1)), prime_of_form(a, 1 << third, 1 << (third + 1))
    p3 = prime_of_form(a, -(-low // (p1 * p2)), high // (p1 * p2))
    q = prime_of_form(math.lcm(p1 - 1, p2 - 1, p3 - 1) // 2, low, high)
    return p1 * p2 * p3, q


class _Stop(Exception):
    pass


def test_the_holders_refuse_a_composite_that_passes_one_biprimality_test_in_four():
    """Every candidate of the first attempt is n = p·q with p a product of three primes built to pass one
    Boneh–Franklin test in four (_fooling_pair), drawn again until it passes the first test with the base the
    holders will derive for its place in the batch. Every one goes on to the repetitions (a BIPRIMALITY round
    each), which refuse it (each passes with chance ¼), and the holders start a second attempt: no holder sends
    anything for the key of a composite."""
    holders, batch = 3, 4

    def passing_first_test(k: int) -> tuple[int, int]:
        while True:
            p, q = _fooling_pair(BITS, holders)
            n = p * q
            g = biprimality.test_base(n, (1).to_bytes(4, "big") + k.to_bytes(4, "big"), 0)
            if biprimality.passes(n, [biprimality.test_value(n, g, p, q, 1)]):
                return p, q

    pairs = [[_split(value, BITS, holders) for value in passing_first_test(k)] for k in range(batch)]
    draws = {index: 0 for index in range(1, holders + 1)}

    def draw(bits, holders, index, residue, modulus):  # candidate k's p is draw k, its q draw batch + k
        count, draws[index] = draws[index], draws[index] + 1
        return pairs[count % batch][count // batch][index - 1]

    stages: list[tuple[str, int]] = []

    def watch(message):
        stages.append((message.stage, message.attempt))
        if message.attempt > 1 or message.stage == messages.INVERSE:
            raise _Stop
        return message

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(candidates, "candidate_share", draw)
        ceremony = InProcess(BITS, holders, 2, batch=batch)
        ceremony.intercept = watch
        with pytest.raises(_Stop):
            ceremony.run()
    assert stages[-1] == (messages.SIEVE, 2)
    assert messages.INVERSE not in {stage for stage, _ in stages}
    assert sum(stage == messages.BIPRIMALITY for stage, _ in stages) == batch * holders  # each holder's broadcast


DOCUMENTED_SHARING_SLACK_BITS = 80  # coefficients in [0, 2^80·Δ·n²F) (docs/distributed-keygen.md, "key-shares")


def test_integer_shares_hide_the_dealt_value_by_the_documented_slack():
    """One holder's point g(1) = x + c_1 (t = 2, ℓ = 3, Δ = 6) of x = 0 and of x = N₂ (an additive share of d can
    be that large): with c_1 uniform below 2^80·Δ·N₂ the two are 2^−80-close, so shares of N₂ land above every
    one of 1000 shares of 0 as often as a 1001st draw of the same law would (about once; 20 or more: ≈ 10^−6).
    With no slack (c_1 below Δ·N₂) a sixth of them do: the share tells x. The masks span the documented
    width."""
    holders, threshold = 3, 2
    modulus = ((secrets.randbits(BITS) | 1 << (BITS - 1)) ** 2) * holder_module.exponent_factor()  # N₂ = n²·F
    bound = integer_sharing.coefficient_bound(modulus, holders)

    def first_shares(secret: int) -> list[int]:
        return [integer_sharing.deal(secret, threshold, holders, bound)[1][0] for _ in range(1000)]

    of_zero, of_top = first_shares(0), first_shares(modulus)
    assert sum(share > max(of_zero) for share in of_top) < 20
    width = DOCUMENTED_SHARING_SLACK_BITS + (math.factorial(holders) * modulus).bit_length()
    assert max(of_zero).bit_length() >= width - 2 and all(share < 1 << width for share in of_zero)


def _sieve_inputs(seen: list[Message], holders: int, modulus: int, chains: int) -> list[list[int]]:
    """Every contributor's multiplicative shares a_j (one per chain), which no holder has: interpolated from the
    points of its SIEVE sharing that it sent the others. The other holders send nothing in SIEVE."""
    assert not any(m.values for m in seen if m.sender not in sieve.contributors(holders))
    degree = shamir.bgw_degree(holders)
    inputs = []
    for sender in sieve.contributors(holders):
        sent = sorted((m.recipient, m.values) for m in seen if m.sender == sender)[: degree + 1]
        xs = tuple(x for x, _ in sent)
        inputs.append([int(shamir.interpolate([values[c] for _, values in sent], xs, modulus)) for c in range(chains)])
    return inputs


def _small_sieve_inputs(seen: list[Message], holders: int, modulus: int, chains: int) -> list[list[int]]:
    """Per prime r ≤ ℓ: the product over holders of their a_j mod r for each chain, interpolated in GF(r^k) from the
    points packed above the points mod M in the SIEVE messages."""
    degree = shamir.bgw_degree(holders)
    products = []
    for s, f in enumerate(small_primes.fields(holders)):
        product = [1] * chains
        for sender in sieve.contributors(holders):
            sent = sorted((m.recipient, m.values) for m in seen if m.sender == sender)[: degree + 1]
            xs = tuple(x for x, _ in sent)
            weights = small_primes.lagrange_weights(f.r, holders, xs, 0)
            rows = [small_primes.unpack([v // modulus for v in values], holders)[s] for _, values in sent]
            secret = small_primes.combine(f, weights, rows)
            assert all(0 < a < f.r for a in secret)  # a constant of GF(r^k), a unit mod r
            product = [p * int(a) % f.r for p, a in zip(product, secret)]
        products.append(product)
    return products


@pytest.mark.parametrize("r,holders", [(3, 3), (3, 16), (5, 16), (13, 16)])
def test_the_small_prime_fields_are_fields_containing_z_r(r, holders):
    f = small_primes.field(r, holders)
    assert f.q == r ** f.k > holders
    elements = np.arange(f.q)
    assert all(f.mul[a, f.inverse[a]] == 1 for a in range(1, f.q))
    assert all(sorted(f.mul[a]) == list(range(f.q)) for a in range(1, f.q))  # no zero divisors
    a, b, c = (elements[np.random.default_rng(seed).integers(0, f.q, 200)] for seed in (1, 2, 3))
    assert (f.mul[a, f.add[b, c]] == f.add[f.mul[a, b], f.mul[a, c]]).all()
    assert all(f.mul[x, y] == x * y % r and f.add[x, y] == (x + y) % r for x in range(r) for y in range(r))


@pytest.mark.parametrize("holders", [3, 4, 7, 16])
def test_a_sieved_candidate_is_the_product_of_the_multiplicative_shares_mod_m(holders):
    """p = Σ p_i ≡ Π a_j (mod M), a unit mod M, ≡ 3 (mod 4) and of half the key's size, for every candidate
    (reconstructed here from every holder's messages and state; the protocol never does)."""
    batch = 12
    seen: list[Message] = []
    ceremony = InProcess(BITS, holders, 2, batch=batch)
    ceremony.intercept = lambda m: seen.append(m) or m if m.stage == messages.SIEVE else m
    ceremony.run(until=messages.CANDIDATES)
    modulus = ceremony.holders[0].sieve_modulus
    assert modulus == sieve.sieving_modulus(BITS, holders, sieve.default_bound(BITS))
    assert math.gcd(modulus, math.factorial(holders)) == 1 and modulus % gmpy2.next_prime(holders) == 0  # ℓ < r ≤ B
    inputs = _sieve_inputs(seen, holders, modulus, 2 * batch)
    assert len(inputs) == shamir.bgw_degree(holders) + 1  # t′ + 1 contributors: a coalition of t′ misses one
    assert all(math.gcd(a, modulus) == 1 for row in inputs for a in row)
    small = _small_sieve_inputs(seen, holders, modulus, 2 * batch)
    for k in range(batch):
        for chain, shares in ((2 * k, [h._p[k] for h in ceremony.holders]), (2 * k + 1, [h._q[k] for h in ceremony.holders])):
            prime_candidate = sum(shares)
            assert prime_candidate % modulus == math.prod(row[chain] for row in inputs) % modulus
            assert math.gcd(prime_candidate, modulus) == 1
            # the primes r ≤ ℓ (3..13 among 16 holders), sieved in GF(r^k): p ≡ Π a_j (mod r), never 0
            for r, products in zip(small_primes.primes(holders), small):
                assert prime_candidate % r == products[chain] != 0
            assert prime_candidate % 4 == 3 and prime_candidate.bit_length() == BITS // 2
            assert shares[0] % 4 == 3 and all(share % 4 == 0 for share in shares[1:])


def test_sieving_changes_what_candidates_look_like_not_what_a_share_hides():
    """Without sieving about 9 in 10 candidates of 512 bits have a factor below 200; with it none has. The
    lift keeps at least SPREAD_BITS random bits in each share."""
    modulus = sieve.sieving_modulus(BITS, 3, sieve.default_bound(BITS))
    assert candidates.share_bits(BITS, 3) - modulus.bit_length() - 1 >= sieve.SPREAD_BITS
    with pytest.raises(ValueError, match="too large"):
        sieve.sieving_modulus(BITS, 3, 2000)
    assert sieve.expected_pairs(BITS, 3, 200) < sieve.expected_pairs(BITS, 3, 50) < (BITS / 4 * math.log(2)) ** 2


@pytest.mark.parametrize("stage", [messages.SIEVE, messages.SIEVE_RESHARE])
def test_an_inconsistent_sieve_message_aborts_the_ceremony_before_any_key(stage):
    """A holder whose sharing or resharing does not lie on one polynomial turns Π a_j into an arbitrary residue:
    revealed candidates then have factors in M, which honest holders never produce, and everyone aborts."""
    with pytest.raises(DkgAborted, match="sieving modulus"):
        ceremony = InProcess(BITS, 5, 4, batch=32)
        modulus = ceremony.holders[0].sieve_modulus
        ceremony.intercept = _tamper(stage, 2, 1, lambda values: tuple((v + 1) % modulus for v in values))
        ceremony.run()
    assert all(h.result is None for h in ceremony.holders)


@pytest.mark.parametrize("stage", [messages.SIEVE, messages.SIEVE_RESHARE])
def test_an_inconsistent_small_prime_point_aborts_the_ceremony_before_any_key(stage):
    """Only the GF(3^k) point packed above the point mod M changes: candidates ≡ 0 (mod 3) appear and everyone
    aborts, as for M."""
    ceremony = InProcess(BITS, 5, 4, batch=32)
    modulus, q = ceremony.holders[0].sieve_modulus, small_primes.field(3, 5).q

    def shifted(v):
        packed = v // modulus
        return v - modulus * (packed % q) + modulus * ((packed % q + 1) % q)

    ceremony.intercept = _tamper(stage, 2, 1, lambda values: tuple(shifted(v) for v in values))
    with pytest.raises(DkgAborted, match="sieving modulus"):
        ceremony.run()
    assert all(h.result is None for h in ceremony.holders)
