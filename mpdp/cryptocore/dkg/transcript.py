"""Public values every holder derives alike from the broadcasts so far (a random oracle):
v, h_s, the confirmation ciphertext and the digest every holder acknowledges. None of them can be picked by one holder, because the
broadcasts that fix them (n, θ, ζ) are fixed by every holder's shares together."""

from __future__ import annotations

import hashlib

import gmpy2

TAG = b"mpdp/dkg/transcript/v1"


class Transcript:
    def __init__(self, bits: int, holders: int, threshold: int):
        self._digest = hashlib.sha256(TAG + b"".join(x.to_bytes(4, "big") for x in (bits, holders, threshold)))

    def __deepcopy__(self, memo) -> "Transcript":
        twin = Transcript.__new__(Transcript)
        twin._digest = self._digest.copy()
        return twin

    def absorb(self, label: str, values) -> None:
        self._digest.update(len(label).to_bytes(4, "big") + label.encode())
        for value in values:
            data = int(value).to_bytes((int(value).bit_length() + 8) // 8, "big", signed=True)
            self._digest.update(len(data).to_bytes(4, "big") + data)

    def integer(self, label: str, modulus: int) -> int:
        """Uniform in [0, modulus) up to 2^−128."""
        seed = self._digest.copy()
        seed.update(b"derive/" + label.encode())
        size = (int(modulus).bit_length() + 128 + 7) // 8
        return int.from_bytes(hashlib.shake_256(seed.digest()).digest(size), "big") % modulus

    def unit(self, label: str, n: int) -> int:
        """A unit of Z*_n other than ±1."""
        counter = 0
        while True:
            x = self.integer(f"{label}/{counter}", n)
            if 1 < x < n - 1 and gmpy2.gcd(x, n) == 1:
                return x
            counter += 1


def verification_base(transcript: Transcript, n: int) -> int:
    """v = x² mod n² for x a derived unit of Z*_{n²}, ≢ ±1 modulo any factor of n (key_checks)."""
    nsquare = n * n
    counter = 0
    while True:
        v = transcript.unit(f"v/{counter}", nsquare) ** 2 % nsquare
        if gmpy2.gcd(v - 1, n) == 1 and gmpy2.gcd(v + 1, n) == 1:
            return int(v)
        counter += 1


def encryption_base(transcript: Transcript, n: int) -> int:
    """h_s = (−x²)^n mod n² for a derived unit x, as fast_encryption.generate_hs draws it."""
    x = transcript.unit("hs", n)
    return int(gmpy2.powmod((-x * x) % n, n, n * n))


def confirmation(transcript: Transcript, n: int) -> tuple[int, int]:
    """(M, c): a derived plaintext and its encryption with derived randomness."""
    nsquare = n * n
    message = transcript.integer("confirmation/message", n)
    r = transcript.unit("confirmation/randomness", n)
    return message, int((1 + message * n) * gmpy2.powmod(r, n, nsquare) % nsquare)


DIGEST_BYTES = 32


def acknowledgement(transcript: Transcript, public) -> bytes:
    """What a holder acknowledges (docs/distributed-keygen.md, "Commit"): the transcript so far and the whole public
    key, so two holders with the same digest hold shares of one key with the same verification keys."""
    seed = transcript._digest.copy()
    values = [public.n, public.threshold, public.verification_base, public.hs, *public.verification_keys]
    seed.update(b"acknowledgement/" + len(values).to_bytes(4, "big"))
    for value in values:
        data = int(value).to_bytes((int(value).bit_length() + 8) // 8, "big", signed=True)
        seed.update(len(data).to_bytes(4, "big") + data)
    return seed.digest()
