"""Signatures that authenticate a threshold-sum contribution (crypto.md, "Bound decryption").

A contributor signs a 32-byte digest with the private key of its own TLS certificate (ECDSA P-256);
anyone holding the deployment CA's certificate checks the signature and that the CA issued the
certificate, and learns the name the certificate carries. Free of gRPC and of any protocol.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils
from cryptography.x509.oid import NameOID

from mpdp.cryptocore.errors import CryptoError

DIGEST_BYTES = 32
MAX_SIGNATURE_BYTES = 80  # a DER ECDSA P-256 signature is at most 72 bytes
MAX_CERTIFICATE_BYTES = 4096
CACHE_LIMIT = 4096  # verified certificates remembered (one per contributing host)
_ALGORITHM = ec.ECDSA(utils.Prehashed(hashes.SHA256()))


class BadSignature(CryptoError):
    """A contribution's signature or certificate does not verify."""


class ContributionSigner:
    """Signs with one role's TLS key; attaches that role's certificate (DER) so a verifier needs no directory."""

    def __init__(self, private_key: ec.EllipticCurvePrivateKey, certificate: x509.Certificate):
        if not isinstance(private_key, ec.EllipticCurvePrivateKey) or private_key.curve.name != "secp256r1":
            raise ValueError("contribution signatures need an ECDSA P-256 key")
        if certificate.public_key() != private_key.public_key():
            raise ValueError("the certificate does not belong to the signing key")
        self._key = private_key
        self.certificate = certificate.public_bytes(serialization.Encoding.DER)

    @classmethod
    def from_files(cls, key_file: Path, certificate_file: Path) -> "ContributionSigner":
        key = serialization.load_pem_private_key(Path(key_file).read_bytes(), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{key_file} is not an ECDSA key")
        return cls(key, x509.load_pem_x509_certificate(Path(certificate_file).read_bytes()))

    def sign(self, digest: bytes) -> bytes:
        if len(digest) != DIGEST_BYTES:
            raise ValueError("sign a SHA-256 digest")
        return self._key.sign(digest, _ALGORITHM)


class ContributionVerifier:
    """Checks a signature against a certificate the deployment CA issued; returns the certificate's name.
    Certificates must be valid now, or at `at` when a stored transcript is judged at the time it was made."""

    def __init__(self, ca_certificate: x509.Certificate, at: datetime.datetime | None = None):
        self._ca = ca_certificate
        self._at = at
        self._verified: dict[bytes, tuple[ec.EllipticCurvePublicKey, str, x509.Certificate]] = {}

    @classmethod
    def from_file(cls, ca_file: Path) -> "ContributionVerifier":
        return cls(x509.load_pem_x509_certificate(Path(ca_file).read_bytes()))

    def verify(self, digest: bytes, signature: bytes, certificate: bytes) -> str:
        """The signer's certificate name (its subject CN), or BadSignature. Sizes first, then the
        certificate chain (once per certificate), then the signature."""
        if len(digest) != DIGEST_BYTES or not 0 < len(signature) <= MAX_SIGNATURE_BYTES:
            raise BadSignature("a contribution's signature is missing or has a wrong length")
        if not 0 < len(certificate) <= MAX_CERTIFICATE_BYTES:
            raise BadSignature("a contribution's certificate is missing or too long")
        public_key, name = self._certificate(certificate)
        try:
            public_key.verify(signature, digest, _ALGORITHM)
        except InvalidSignature:
            raise BadSignature(f"the signature of {name} does not verify") from None
        return name

    def _certificate(self, der: bytes) -> tuple[ec.EllipticCurvePublicKey, str]:
        known = self._verified.get(der)
        if known is not None and self._valid(known[2]):
            return known[0], known[1]
        try:
            certificate = x509.load_der_x509_certificate(der)
            certificate.verify_directly_issued_by(self._ca)
        except (ValueError, TypeError, InvalidSignature):
            raise BadSignature("a contribution's certificate was not issued by the deployment CA") from None
        if not self._valid(certificate):
            raise BadSignature("a contribution's certificate is outside its validity period")
        public_key = certificate.public_key()
        names = certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        if not isinstance(public_key, ec.EllipticCurvePublicKey) or len(names) != 1:
            raise BadSignature("a contribution's certificate has no ECDSA key or no single name")
        name = str(names[0].value)
        if len(self._verified) >= CACHE_LIMIT:
            self._verified.clear()
        self._verified[der] = (public_key, name, certificate)
        return public_key, name


    def _valid(self, certificate: x509.Certificate) -> bool:
        moment = self._at or datetime.datetime.now(datetime.timezone.utc)
        return certificate.not_valid_before_utc <= moment <= certificate.not_valid_after_utc
