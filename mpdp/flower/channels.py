"""Pairwise channels between committee members through the Flower server, for the key generation's messages.

Every DKG message travels via the server, which must learn none of the private shares and forge none of
the messages: each member publishes an X25519 key signed with its certificate's key (`hello`), and every
message (broadcasts too, sealed once per recipient) is AES-GCM under the pair's key with its stage, attempt,
round, sender and recipient as associated data. A server that shows members different broadcasts is caught by
the ceremony's own acknowledgement stage (every member signs the transcript digest it accepted)."""

from __future__ import annotations

import hashlib
import json
import os

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from mpdp.cryptocore.dkg.messages import Message
from mpdp.proto.v1 import threshold_sum_pb2
from mpdp.threshold_sum.binding import ContributionKeys

HELLO_DOMAIN = b"mpdp/flower/dkg-hello/v1"
CHANNEL_DOMAIN = b"mpdp/flower/dkg-channel/v1"
KEY_DOMAIN = b"mpdp/flower/threshold-key/v1"


class ChannelError(ValueError):
    """A hello or a sealed message that does not verify: the ceremony stops, naming the sender."""


def _digest(*fields: bytes) -> bytes:
    hasher = hashlib.sha256()
    for field in fields:
        hasher.update(len(field).to_bytes(4, "big"))
        hasher.update(field)
    return hasher.digest()


def hello_digest(session: str, party: int, public: bytes) -> bytes:
    return _digest(HELLO_DOMAIN, session.encode(), party.to_bytes(4, "big"), public)


def key_digest(session: str, key_id: bytes) -> bytes:
    """What every committee member signs once it holds its share: non-members accept the key only with all of
    these, so a server cannot hand them a key of its own."""
    return _digest(KEY_DOMAIN, session.encode(), key_id)


class Channels:
    def __init__(self, party: int, session: str, private: bytes | None = None):
        self.party, self.session = party, session
        self._private = X25519PrivateKey.from_private_bytes(private) if private else X25519PrivateKey.generate()
        self._keys: dict[int, AESGCM] = {}

    @property
    def private_bytes(self) -> bytes:
        return self._private.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                           serialization.NoEncryption())

    @property
    def public_bytes(self) -> bytes:
        return self._private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)

    def hello(self, keys: ContributionKeys) -> bytes:
        """The 32-byte X25519 key, then the signature on it (ContributionSignature: signature and certificate)."""
        signature = keys.sign(hello_digest(self.session, self.party, self.public_bytes))
        return self.public_bytes + signature.SerializeToString()

    def accept_hellos(self, keys: ContributionKeys, hellos: dict[int, bytes]) -> None:
        """Every other member's channel key, each checked against that member's own certificate."""
        for party, hello in hellos.items():
            if party == self.party:
                continue
            public, signed = hello[:32], hello[32:]
            try:
                signature = threshold_sum_pb2.ContributionSignature.FromString(signed)
                keys.check(party, hello_digest(self.session, party, public), signature)
            except Exception as error:
                raise ChannelError(f"party {party}'s channel key is not its own: {error}") from None
            shared = self._private.exchange(X25519PublicKey.from_public_bytes(public))
            low, high = sorted((self.party, party))
            info = _digest(CHANNEL_DOMAIN, self.session.encode(), low.to_bytes(4, "big"), high.to_bytes(4, "big"))
            self._keys[party] = AESGCM(HKDF(hashes.SHA256(), 32, None, info).derive(shared))

    @staticmethod
    def _header(message: Message, to: int) -> bytes:
        return json.dumps([message.stage, message.attempt, message.round, message.sender, message.recipient, to]).encode()

    def seal(self, message: Message, to: int) -> bytes:
        nonce = os.urandom(12)
        body = json.dumps([hex(v) for v in message.values]).encode()
        header = self._header(message, to)
        return len(header).to_bytes(4, "big") + header + nonce + self._keys[to].encrypt(nonce, body, header)

    def open(self, sealed: bytes) -> Message:
        length = int.from_bytes(sealed[:4], "big")
        header = sealed[4:4 + length]
        stage, attempt, round_, sender, recipient, to = json.loads(header)
        if to != self.party or sender not in self._keys:
            raise ChannelError(f"a message from {sender} to {to} reached party {self.party}")
        nonce, body = sealed[4 + length:16 + length], sealed[16 + length:]
        try:
            values = json.loads(self._keys[sender].decrypt(nonce, body, header))
        except Exception:
            raise ChannelError(f"party {sender}'s message does not open: changed or forged on the way") from None
        return Message(stage, attempt, round_, sender, recipient, tuple(int(v, 16) for v in values))
