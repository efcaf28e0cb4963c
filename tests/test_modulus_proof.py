"""Π^mod: an honest owner's proof verifies; a modulus with three factors, a square factor, or a factor ≡ 1 mod 4
cannot be proven (a best-effort cheater who knows the factors fails), and a tampered proof is refused."""

import dataclasses

import gmpy2
import pytest

from mpdp.cryptocore.arithmetic import roots
from mpdp.cryptocore.arithmetic.primes import blum_prime
from mpdp.cryptocore.errors import InvalidKey
from mpdp.cryptocore.proofs import modulus_proof
from mpdp.cryptocore.proofs.modulus_proof import ROUNDS, ModulusProof, prove, verify


@pytest.fixture(autouse=True)
def forget_verified(monkeypatch):
    monkeypatch.setattr(modulus_proof, "_verified", type(modulus_proof._verified)())


def test_an_honest_owners_proof_verifies(keypair):
    private = keypair.private
    verify(keypair.public.n, prove(private.p, private.q))


def test_a_proof_is_about_its_own_modulus(keypair, other_keypair):
    private = keypair.private
    with pytest.raises(InvalidKey):
        verify(other_keypair.public.n, prove(private.p, private.q))


def _best_effort(primes: list[int], w: int | None = None) -> ModulusProof:
    """A cheater who knows every factor: takes a root wherever one exists and sends 1 elsewhere (with the first w of
    Jacobi symbol −1 unless given one)."""
    n = 1
    for prime in primes:
        n *= prime
    phi = 1
    for prime in primes:
        phi *= prime - 1
    if w is None:
        w = next(value for value in range(2, 10_000) if gmpy2.jacobi(value, n) == -1)
    fourth_roots, selectors, nth_roots = [], [], []
    for y in modulus_proof._challenges(n, w):
        nth_roots.append(int(gmpy2.powmod(y, gmpy2.invert(n, phi), n)) if gmpy2.gcd(n, phi) == 1 else 1)
        root, chosen = 1, 0
        for selector in range(4):
            candidate = (-1) ** (selector & 1) * pow(w, selector >> 1) * y % n
            if all(gmpy2.legendre(candidate, prime) == 1 for prime in primes):
                residues = [roots.fourth_root(candidate, prime) for prime in primes]
                root, chosen = int(gmpy2.f_mod(sum(r * (n // m) * gmpy2.invert(n // m, m) for r, m in
                                                   zip(residues, primes)), n)), selector
                break
        fourth_roots.append(root)
        selectors.append(chosen)
    return ModulusProof(w, tuple(fourth_roots), tuple(selectors), tuple(nth_roots))


def test_a_modulus_with_three_prime_factors_cannot_be_proven():
    primes = [blum_prime(176), blum_prime(176), blum_prime(176)]
    assert all(p % 4 == 3 for p in primes)
    proof = _best_effort(primes)
    with pytest.raises(InvalidKey):
        verify(primes[0] * primes[1] * primes[2], proof)


def test_a_modulus_not_coprime_to_its_totient_cannot_be_proven():
    p = blum_prime(256)
    k = 2**200  # q = 2·p·(2k + 1) + 1 ≡ 3 (mod 4), so p divides q − 1 and gcd(n, φ(n)) = p
    while not gmpy2.is_prime(q := 2 * p * (2 * k + 1) + 1):
        k += 1
    n = p * q
    assert gmpy2.gcd(n, (p - 1) * (q - 1)) == p
    with pytest.raises(InvalidKey):
        verify(n, _best_effort([p, q]))


def test_a_tampered_proof_is_refused(keypair):
    n, private = keypair.public.n, keypair.private
    proof = prove(private.p, private.q)
    tampered = [
        dataclasses.replace(proof, fourth_roots=(proof.fourth_roots[0] * 2 % n, *proof.fourth_roots[1:])),
        dataclasses.replace(proof, nth_roots=proof.nth_roots[:-1] + (1,)),
        dataclasses.replace(proof, selectors=((proof.selectors[0] + 1) % 4, *proof.selectors[1:])),
        dataclasses.replace(proof, nth_roots=proof.nth_roots[:-1]),  # a round short
        dataclasses.replace(proof, w=n - proof.w),  # also Jacobi −1, but the challenges follow w
        dataclasses.replace(proof, w=proof.w**2 % n),  # Jacobi +1
        dataclasses.replace(proof, w=n),
    ]
    for bad in tampered:
        with pytest.raises(InvalidKey):
            verify(n, bad)
    assert len(proof.nth_roots) == ROUNDS
    verify(n, proof)


def test_an_owner_with_a_small_factor_still_gets_a_proof():
    """Π^mod says nothing of the factors' sizes (Π^fac does): with p = 1019 about one try in thirteen draws a
    challenge that shares p, and the owner draws another w instead of failing (an attack test builds such a key).
    Forty proofs: without the retry all forty succeed with probability 0.04."""
    small, large = 1019, blum_prime(200)
    for _ in range(40):
        modulus_proof.verify(small * large, modulus_proof.prove(small, large))


DOCUMENTED_SOUNDNESS_BITS = 80  # "all ROUNDS with at most 2^−80" (docs/crypto.md, the module)


def test_an_honest_proof_has_the_rounds_of_the_documented_soundness(keypair):
    """Each round halves a cheater's chance, so 2^−80 takes at least 80 rounds."""
    private = keypair.private
    assert len(prove(private.p, private.q).nth_roots) >= DOCUMENTED_SOUNDNESS_BITS


def test_a_cheater_grinding_w_gets_no_three_prime_modulus_accepted():
    """A cheater who knows the three factors of n (each ≡ 3 mod 4, so n-th roots exist) has a fourth root of one of
    ±y, ±wy for about half the challenges y. It grinds w (each w gives fresh challenges) until every round of its
    proof has one, then submits: with few rounds that takes a handful of tries; with the documented rounds none of
    256 tries gets there (each fails at its first rootless round, checked here by Legendre symbols alone)."""
    primes = [blum_prime(176), blum_prime(176), blum_prime(176)]
    n = primes[0] * primes[1] * primes[2]
    rounds_passed = rounds_checked = 0
    candidates = (w for w in range(2, 1 << 20) if gmpy2.jacobi(w, n) == -1)
    for _ in range(256):
        w = next(candidates)
        for y in modulus_proof._challenges(n, w):
            rounds_checked += 1
            if not any(all(gmpy2.legendre((-1) ** (s & 1) * pow(w, s >> 1) * y % n, p) == 1 for p in primes)
                       for s in range(4)):
                break
            rounds_passed += 1
        else:
            with pytest.raises(InvalidKey):
                verify(n, _best_effort(primes, w))
    assert 0.3 < rounds_passed / rounds_checked < 0.7  # the cheater's per-round odds are about ½, as stated
