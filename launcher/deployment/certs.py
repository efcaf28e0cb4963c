"""Certificates: a CA and one certificate per role identity (mutual TLS), each written into its own bundle.

A certificate's subject CN is the identity ("party/3") the server takes as the
sender; its SAN holds the identity's DNS name ("party-3.mpdp"), which clients
verify as the target name, so a client knows which role it reached whatever
host or address it dialled.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from mpdp.cryptocore.keys import secret_files
from mpdp.sessions.identity import Identity
from mpdp.wire.identity import Principal
from mpdp.wire.tls import identity_dns_name

VALIDITY = datetime.timedelta(days=365)
CA_FILE = "ca.pem"


def certificate_files(directory: Path, identity: Identity | Principal) -> tuple[Path, Path]:
    stem = str(identity).replace("/", "_")
    return directory / f"{stem}.pem", directory / f"{stem}.key"


def _write_key(path: Path, key, overwrite: bool) -> None:
    data = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    secret_files.write_file(path, data, overwrite=overwrite)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "mpdp"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _authority(ca_name: str, now: datetime.datetime):
    """A fresh CA; its private key lives only in memory, for the issuing call."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder().subject_name(_name(ca_name)).issuer_name(_name(ca_name))
        .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                     key_encipherment=False, data_encipherment=False, key_agreement=False,
                                     encipher_only=False, decipher_only=False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    return ca_key, ca_cert


def _certificate(ca_key, ca_cert, identity: Identity | Principal, now: datetime.datetime):
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder().subject_name(_name(str(identity))).issuer_name(ca_cert.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALIDITY)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(identity_dns_name(identity))]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                       critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    return key, cert


def issue_bundles(bundles: dict[Principal, Path], ca_name: str = "mpdp deployment CA",
                  overwrite: bool = False) -> dict[Principal, tuple[Path, Path]]:
    """A fresh CA; into each bundle directory the CA certificate and that identity's own certificate and key
    (all 0600), and nothing of any other identity. The CA's key is never written."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, ca_cert = _authority(ca_name, now)
    ca_pem = ca_cert.public_bytes(serialization.Encoding.PEM)
    issued = {}
    for principal, directory in bundles.items():
        key, cert = _certificate(ca_key, ca_cert, principal, now)
        secret_files.write_file(Path(directory) / CA_FILE, ca_pem, overwrite=overwrite)
        cert_path, key_path = certificate_files(Path(directory), principal)
        secret_files.write_file(cert_path, cert.public_bytes(serialization.Encoding.PEM), overwrite=overwrite)
        _write_key(key_path, key, overwrite)
        issued[principal] = (cert_path, key_path)
    return issued


def issue(directory: Path, identities: Sequence[Identity | Principal], ca_name: str = "mpdp deployment CA",
          overwrite: bool = False) -> list[Path]:
    """A fresh CA and a certificate + key for every identity, all in `directory` (the dealer's output of
    `mpdp keygen`, to be handed out one identity at a time; existing files only if `overwrite`)."""
    directory = Path(directory)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, ca_cert = _authority(ca_name, now)
    secret_files.write_file(directory / CA_FILE, ca_cert.public_bytes(serialization.Encoding.PEM), overwrite=overwrite)
    written = [directory / CA_FILE]
    for identity in identities:
        key, cert = _certificate(ca_key, ca_cert, identity, now)
        cert_path, key_path = certificate_files(directory, identity)
        secret_files.write_file(cert_path, cert.public_bytes(serialization.Encoding.PEM), overwrite=overwrite)
        _write_key(key_path, key, overwrite)
        written += [cert_path, key_path]
    return written
