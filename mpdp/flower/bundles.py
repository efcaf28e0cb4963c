"""Each Flower client's provisioned bundle: the federation CA's certificate, the client's own signing
certificate and key (its uploads are signed with them), and, once the key exists, the threshold public key
and (for committee members) its key share.

`provision` issues the identities; the threshold key then comes either from the committee's own distributed
key generation over Flower messages (`MpdpWorkflow(keygen="dkg")`, no dealer) or from bundles written here by
an operator who ran one elsewhere (`write_key`). A bundle holds nothing of any other client."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from mpdp.cryptocore.keys import secret_files
from mpdp.cryptocore.keys.contribution_signature import ContributionSigner, ContributionVerifier
from mpdp.cryptocore.paillier import keyfiles
from mpdp.cryptocore.paillier.threshold import KeyShare, ThresholdPublicKey
from mpdp.threshold_sum.binding import ContributionKeys

VALIDITY = datetime.timedelta(days=365)
CA_FILE, CERTIFICATE_FILE, KEY_FILE = "ca.pem", "identity.pem", "identity.key"
SHARE_FILE = "key_share.json"


def party_name(party: int) -> str:
    """The certificate name that speaks for party `party` (1-based)."""
    return f"party/{party}"


def bundle_directory(root: Path, party: int) -> Path:
    return Path(root) / f"party-{party}"


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "mpdp flower"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def provision(root: Path, parties: int) -> None:
    """A fresh CA (its key only in memory) and one bundle per party, each with only its own key."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(_name("mpdp flower CA")).issuer_name(_name("mpdp flower CA"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALIDITY)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .sign(ca_key, hashes.SHA256()))
    for party in range(1, parties + 1):
        directory = bundle_directory(root, party)
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        key = ec.generate_private_key(ec.SECP256R1())
        certificate = (x509.CertificateBuilder().subject_name(_name(party_name(party))).issuer_name(ca.subject)
                       .public_key(key.public_key()).serial_number(x509.random_serial_number())
                       .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALIDITY)
                       .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                       .sign(ca_key, hashes.SHA256()))
        secret_files.write_file(directory / CA_FILE, ca.public_bytes(serialization.Encoding.PEM),
                                mode=secret_files.PUBLIC_MODE, overwrite=True)
        secret_files.write_file(directory / CERTIFICATE_FILE, certificate.public_bytes(serialization.Encoding.PEM),
                                mode=secret_files.PUBLIC_MODE, overwrite=True)
        secret_files.write_file(directory / KEY_FILE, key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
            overwrite=True)


def write_key(root: Path, parties: int, public: ThresholdPublicKey, shares: list[KeyShare]) -> None:
    """A threshold key made elsewhere: its public part into every bundle, share i into party i's only."""
    for party in range(1, parties + 1):
        directory = bundle_directory(root, party)
        secret_files.write_file(directory / keyfiles.PUBLIC_KEY_FILE,
                                json.dumps(keyfiles.public_key_to_dict(public)).encode(),
                                mode=secret_files.PUBLIC_MODE, overwrite=True)
    for share in shares:
        write_share(bundle_directory(root, share.index), share)


def write_share(directory: Path, share: KeyShare) -> None:
    secret_files.write_file(Path(directory) / keyfiles.PUBLIC_KEY_FILE,
                            json.dumps(keyfiles.public_key_to_dict(share.public)).encode(),
                            mode=secret_files.PUBLIC_MODE, overwrite=True)
    secret_files.write_file(Path(directory) / SHARE_FILE, json.dumps(keyfiles.key_share_to_dict(share)).encode(),
                            overwrite=True)


@dataclass
class Bundle:
    party: int
    directory: Path
    keys: ContributionKeys

    @classmethod
    def load(cls, root: Path, party: int) -> "Bundle":
        directory = bundle_directory(root, party)
        signer = ContributionSigner.from_files(directory / KEY_FILE, directory / CERTIFICATE_FILE)
        verifier = ContributionVerifier.from_file(directory / CA_FILE)
        return cls(party, directory, ContributionKeys(verifier, lambda name, sender: name == party_name(sender), signer))

    @property
    def certificate(self) -> bytes:
        return (self.directory / CERTIFICATE_FILE).read_bytes()

    def signing_key(self) -> ec.EllipticCurvePrivateKey:
        key = serialization.load_pem_private_key((self.directory / KEY_FILE).read_bytes(), password=None)
        assert isinstance(key, ec.EllipticCurvePrivateKey)
        return key

    def public_key(self) -> ThresholdPublicKey | None:
        path = self.directory / keyfiles.PUBLIC_KEY_FILE
        return keyfiles.load_public_key(path) if path.exists() else None

    def key_share(self) -> KeyShare | None:
        path = self.directory / SHARE_FILE
        return keyfiles.load_key_share(path) if path.exists() else None
