from mpdp.proto.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ContributionSignature(_message.Message):
    __slots__ = ("signature", "certificate")
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    CERTIFICATE_FIELD_NUMBER: _ClassVar[int]
    signature: bytes
    certificate: bytes
    def __init__(self, signature: _Optional[bytes] = ..., certificate: _Optional[bytes] = ...) -> None: ...

class Contribution(_message.Message):
    __slots__ = ("sender", "ciphertexts", "signature")
    SENDER_FIELD_NUMBER: _ClassVar[int]
    CIPHERTEXTS_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    sender: int
    ciphertexts: _common_pb2.Ciphertexts
    signature: ContributionSignature
    def __init__(self, sender: _Optional[int] = ..., ciphertexts: _Optional[_Union[_common_pb2.Ciphertexts, _Mapping]] = ..., signature: _Optional[_Union[ContributionSignature, _Mapping]] = ...) -> None: ...

class DecryptionRequest(_message.Message):
    __slots__ = ("contributions",)
    CONTRIBUTIONS_FIELD_NUMBER: _ClassVar[int]
    contributions: _containers.RepeatedCompositeFieldContainer[Contribution]
    def __init__(self, contributions: _Optional[_Iterable[_Union[Contribution, _Mapping]]] = ...) -> None: ...

class PartialDecryptions(_message.Message):
    __slots__ = ("values", "challenge", "response")
    VALUES_FIELD_NUMBER: _ClassVar[int]
    CHALLENGE_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[bytes]
    challenge: bytes
    response: bytes
    def __init__(self, values: _Optional[_Iterable[bytes]] = ..., challenge: _Optional[bytes] = ..., response: _Optional[bytes] = ...) -> None: ...

class RejectedShare(_message.Message):
    __slots__ = ("holder", "reason")
    HOLDER_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    holder: int
    reason: str
    def __init__(self, holder: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class CoinCommitments(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[CoinEntry]
    def __init__(self, entries: _Optional[_Iterable[_Union[CoinEntry, _Mapping]]] = ...) -> None: ...

class CoinEntry(_message.Message):
    __slots__ = ("holder", "commitment_digest", "coin_commitment")
    HOLDER_FIELD_NUMBER: _ClassVar[int]
    COMMITMENT_DIGEST_FIELD_NUMBER: _ClassVar[int]
    COIN_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    holder: int
    commitment_digest: bytes
    coin_commitment: bytes
    def __init__(self, holder: _Optional[int] = ..., commitment_digest: _Optional[bytes] = ..., coin_commitment: _Optional[bytes] = ...) -> None: ...

class CoinReveal(_message.Message):
    __slots__ = ("share",)
    SHARE_FIELD_NUMBER: _ClassVar[int]
    share: bytes
    def __init__(self, share: _Optional[bytes] = ...) -> None: ...

class CoinShares(_message.Message):
    __slots__ = ("shares",)
    SHARES_FIELD_NUMBER: _ClassVar[int]
    shares: _containers.RepeatedCompositeFieldContainer[CoinShare]
    def __init__(self, shares: _Optional[_Iterable[_Union[CoinShare, _Mapping]]] = ...) -> None: ...

class CoinShare(_message.Message):
    __slots__ = ("holder", "share")
    HOLDER_FIELD_NUMBER: _ClassVar[int]
    SHARE_FIELD_NUMBER: _ClassVar[int]
    holder: int
    share: bytes
    def __init__(self, holder: _Optional[int] = ..., share: _Optional[bytes] = ...) -> None: ...

class FlippedContribution(_message.Message):
    __slots__ = ("signature",)
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    signature: ContributionSignature
    def __init__(self, signature: _Optional[_Union[ContributionSignature, _Mapping]] = ...) -> None: ...
