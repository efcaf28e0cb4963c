"""The client's side of the commit (docs/distributed-keygen.md, "Commit", step 2): commit only when every
holder reported the same public key and the same acknowledged digest; anything else discards everywhere."""

from __future__ import annotations

from mpdp.cryptocore.dkg.transcript import DIGEST_BYTES
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.proto.v1 import keygen_pb2
from mpdp.protocols.keygen import codec


def decide(reports: list[keygen_pb2.KeygenPublicKey], holders: int) -> tuple[ThresholdPublicKey, bytes]:
    """(the key, the digest to commit) if all `holders` prepared the same; raises ValueError otherwise."""
    if len(reports) != holders:
        raise ValueError(f"{len(reports)} of {holders} key holders prepared a share")
    digests = {report.digest for report in reports}
    if len(digests) != 1 or len(next(iter(digests))) != DIGEST_BYTES:
        raise ValueError("the key holders acknowledged different digests")
    keys = [codec.public_key_from_proto(report) for report in reports]
    if any(key != keys[0] for key in keys):
        raise ValueError("the key holders report different public keys")
    return keys[0], reports[0].digest
