"""Every key holder's partial-decryption proof checked at once (`threshold_batch`): it accepts exactly what the
proofs checked one by one accept, names the holders whose proofs fail, and is not fooled by two holders whose
errors cancel in an unweighted product."""

import secrets
from dataclasses import replace

import gmpy2
import pytest

from mpdp.cryptocore.arithmetic import offload
from mpdp.cryptocore.errors import CryptoError, NotEnoughShares
from mpdp.cryptocore.paillier import threshold_batch
from mpdp.cryptocore.paillier.threshold import (
    BatchPartialDecryption,
    _challenge,
    _combination,
    batch_coefficients,
    combine,
    combine_vector,
    verify_batch,
)
from mpdp.cryptocore.paillier.threshold_batch import verify_holders, verify_one_by_one
from mpdp.proto.v1 import threshold_sum_pb2
from mpdp.threshold_sum.codec import batch_from_proto, batch_to_proto
from mpdp.threshold_sum.combiner import SumCombiner

CONTEXT = b"session-7/sum"


@pytest.fixture(scope="module")
def answers(threshold_key):
    public, shares = threshold_key
    ciphertexts = [public.encryptor.encrypt(v) for v in (3, -11, 0, 2**150)]
    return public, shares, ciphertexts, [share.partial_decrypt_batch(ciphertexts, CONTEXT) for share in shares]


def test_honest_answers_verify_together_and_combine(answers):
    public, _, ciphertexts, batches = answers
    assert all(batch.commitments is not None for batch in batches)
    assert verify_holders(public, ciphertexts, batches, CONTEXT) == {}
    chosen = batches[:public.threshold]
    assert [combine(public, [b.share(j) for b in chosen]) for j in range(4)] == [v % public.n for v in
                                                                                 (3, -11, 0, 2**150)]


def test_a_wrong_share_names_its_holder_only(answers):
    public, _, ciphertexts, batches = answers
    nsquare = public.paillier.nsquare
    for holder_index in (0, 3):
        for slot in range(len(ciphertexts)):
            values = list(batches[holder_index].values)
            values[slot] = values[slot] * (public.n + 1) % nsquare  # moves the slot's decryption by one
            forged = list(batches)
            forged[holder_index] = replace(batches[holder_index], values=tuple(values))
            assert set(verify_holders(public, ciphertexts, forged, CONTEXT)) == {holder_index + 1}


def test_a_wrong_response_or_commitment_is_named(answers):
    public, _, ciphertexts, batches = answers
    a, b = batches[1].commitments
    nsquare = public.paillier.nsquare
    for forged in (replace(batches[1], response=batches[1].response + 1),
                   replace(batches[1], commitments=(a * 4 % nsquare, b)),
                   replace(batches[1], commitments=(a, b * 4 % nsquare)),
                   replace(batches[1], challenge=batches[1].challenge ^ 1)):
        assert verify_holders(public, ciphertexts, [batches[0], forged, batches[2]], CONTEXT) == {
            2: "proof of correct decryption does not verify"}


def _proof_with_offset(public, share, ciphertexts, values, offset: int) -> BatchPartialDecryption:
    """Holder `share`'s proof over `values`, with its commitment a multiplied by `offset`: what a holder sends
    to cancel another holder's error in the folded equation."""
    nsquare = public.paillier.nsquare
    coefficients = batch_coefficients(public, share.index, CONTEXT, ciphertexts, values)
    c4 = gmpy2.powmod(_combination(ciphertexts, coefficients, nsquare), 4, nsquare)
    ci2 = gmpy2.powmod(_combination(values, coefficients, nsquare), 2, nsquare)
    r = secrets.randbits(public.proof_randomness_bits)
    a = gmpy2.powmod(c4, r, nsquare) * offset % nsquare
    b = public.verification_base_power(r)
    challenge = _challenge(public, share.index, CONTEXT, c4, ci2, a, b)
    return BatchPartialDecryption(share.index, tuple(values), challenge, r + challenge * public.delta * share.secret,
                                  (int(a), int(b)))


def test_two_holders_errors_that_cancel_unweighted_are_caught(answers):
    """Holder 2 sends a share off by D = (1+n)^(2ρ·…) and a proof that is off by D^-e₂ in its first equation;
    holder 1 (colluding) puts D^e₂ into its commitment a. The product of the two equations holds: only the
    verifier's fresh weights δ₁ ≠ δ₂ tell them apart, and then each check alone names both."""
    public, shares, ciphertexts, batches = answers
    nsquare = public.paillier.nsquare
    values = list(batches[1].values)
    values[0] = values[0] * (public.n + 1) % nsquare
    cheat = _proof_with_offset(public, shares[1], ciphertexts, values, 1)
    coefficients = batch_coefficients(public, 2, CONTEXT, ciphertexts, cheat.values)
    error = gmpy2.powmod(public.n + 1, 2 * coefficients[0] * cheat.challenge, nsquare)  # ci2 off by D^e₂
    cover = _proof_with_offset(public, shares[0], ciphertexts, batches[0].values, int(gmpy2.invert(error, nsquare)))
    products = []
    for batch in (cover, cheat):
        coefficients = batch_coefficients(public, batch.holder, CONTEXT, ciphertexts, batch.values)
        c4 = gmpy2.powmod(_combination(ciphertexts, coefficients, nsquare), 4, nsquare)
        ci2 = gmpy2.powmod(_combination(batch.values, coefficients, nsquare), 2, nsquare)
        products.append(gmpy2.powmod(c4, batch.response, nsquare) * gmpy2.invert(
            batch.commitments[0] * gmpy2.powmod(ci2, batch.challenge, nsquare), nsquare) % nsquare)
    assert products[0] != 1 and products[0] * products[1] % nsquare == 1  # they cancel with equal weights
    assert set(verify_holders(public, ciphertexts, [cover, cheat, *batches[2:]], CONTEXT)) == {1, 2}


def test_answers_recorded_without_commitments_are_checked_one_by_one(answers):
    public, _, ciphertexts, batches = answers
    plain = [replace(batch, commitments=None) for batch in batches]
    assert verify_holders(public, ciphertexts, plain, CONTEXT) == {}
    wrong = replace(plain[4], response=plain[4].response + 1)
    assert set(verify_holders(public, ciphertexts, [*plain[:4], wrong], CONTEXT)) == {5}
    assert verify_one_by_one(public, ciphertexts, [wrong], CONTEXT) == {5: "proof of correct decryption does not verify"}


def test_commitments_cross_the_wire_and_old_messages_still_parse(answers):
    public, _, ciphertexts, batches = answers
    message = batch_to_proto(batches[0])
    assert batch_from_proto(public, 1, message, 4) == batches[0]
    old = threshold_sum_pb2.PartialDecryptions(values=message.values, challenge=message.challenge,
                                               response=message.response)
    parsed = batch_from_proto(public, 1, old, 4)
    assert parsed.commitments is None
    verify_batch(public, ciphertexts, parsed, CONTEXT)


def test_combiner_checks_named_holders_alone_and_rechecks_when_combination_fails(answers, monkeypatch):
    public, shares, ciphertexts, batches = answers
    combiner = SumCombiner(public, [1, 2, 3, 4, 5], ciphertexts, CONTEXT)
    combiner.accept_together([(b.holder, batch_to_proto(b)) for b in batches], one_by_one={2})
    assert combiner.rejected == {} and sorted(combiner.partials) == [1, 2, 3, 4, 5]
    plaintexts, decryptors = combiner.combine()
    assert decryptors == [1, 2, 3] and plaintexts[1] == -11 % public.n

    # Folded equations that let a wrong share through (the order-2 slack the module states, here forced):
    # `recheck`, which verify_sum calls when the combination fails, names the holder; the others combine.
    nsquare = public.paillier.nsquare
    values = list(batches[0].values)
    values[2] = values[2] * (public.n + 1) % nsquare
    cheat = _proof_with_offset(public, shares[0], ciphertexts, values, 1)  # its hash matches, its equation fails
    monkeypatch.setattr(threshold_batch, "_fold_holds", lambda public, proofs: True)
    combiner = SumCombiner(public, [1, 2, 3, 4, 5], ciphertexts, CONTEXT)
    combiner.accept_together([(b.holder, batch_to_proto(b)) for b in [cheat, *batches[1:]]])
    assert combiner.rejected == {}
    combiner.recheck()
    assert combiner.rejected == {1: "proof of correct decryption does not verify"}
    plaintexts, decryptors = combiner.combine()
    assert decryptors == [2, 3, 4] and plaintexts[3] == 2**150


def test_a_vector_combines_as_each_ciphertext_alone(answers):
    public, _, ciphertexts, batches = answers
    for chosen in (batches[:public.threshold], batches[-public.threshold:]):
        shares = {b.holder: b.values for b in chosen}
        assert combine_vector(public, shares) == [combine(public, [b.share(j) for b in chosen])
                                                  for j in range(len(ciphertexts))]
    wrong = {b.holder: b.values for b in batches[:public.threshold]}
    wrong[1] = (wrong[1][0] * 4 % public.paillier.nsquare, *wrong[1][1:])
    with pytest.raises(CryptoError):
        combine_vector(public, wrong)
    with pytest.raises(NotEnoughShares):
        combine_vector(public, {b.holder: b.values for b in batches[:public.threshold - 1]})


def test_the_folded_check_with_its_long_part_in_a_worker_process_gives_the_same_verdicts(answers):
    """What the DPPP client runs (`offload.start()`): honest answers pass, a wrong share names its holder only, a
    holder whose hash fails leaves the product without failing the others."""
    public, _, ciphertexts, batches = answers
    values = list(batches[2].values)
    values[1] = values[1] * (public.n + 1) % public.paillier.nsquare
    offload.start()
    try:
        pending = offload.submit(pow, 3, 4, 7)
        assert pending is not None and offload.run(pending, pow, 0, 0) == 4  # the worker answered, not this process
        spent = offload.worker_cpu_seconds()
        assert verify_holders(public, ciphertexts, batches, CONTEXT) == {}
        assert offload.worker_cpu_seconds() > spent  # the long part ran there, and its CPU is counted
        assert set(verify_holders(public, ciphertexts, [*batches[:2], replace(batches[2], values=tuple(values)),
                                                        *batches[3:]], CONTEXT)) == {3}
        assert verify_holders(public, ciphertexts, [replace(batches[0], challenge=batches[0].challenge ^ 1),
                                                    *batches[1:]], CONTEXT) == {
            1: "proof of correct decryption does not verify"}
    finally:
        offload.stop()


def test_a_dead_worker_leaves_the_check_to_this_process(answers):
    public, _, ciphertexts, batches = answers
    offload.start()
    try:
        process = offload._worker[0]
        process.terminate()
        process.join()
        assert verify_holders(public, ciphertexts, batches, CONTEXT) == {}
        assert offload._worker is None  # not used again
    finally:
        offload.stop()
