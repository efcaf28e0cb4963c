from mpdp.proto.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ContributionSignature(_message.Message):
    __slots__ = ("signature", "certificate")
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    CERTIFICATE_FIELD_NUMBER: _ClassVar[int]
    signature: bytes
    certificate: bytes
    def __init__(self, signature: _Optional[bytes] = ..., certificate: _Optional[bytes] = ...) -> None: ...

class Contribution(_message.Message):
    __slots__ = ("sender", "ciphertexts", "signature", "well_formed")
    SENDER_FIELD_NUMBER: _ClassVar[int]
    CIPHERTEXTS_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    WELL_FORMED_FIELD_NUMBER: _ClassVar[int]
    sender: int
    ciphertexts: _common_pb2.Ciphertexts
    signature: ContributionSignature
    well_formed: WellFormed
    def __init__(self, sender: _Optional[int] = ..., ciphertexts: _Optional[_Union[_common_pb2.Ciphertexts, _Mapping]] = ..., signature: _Optional[_Union[ContributionSignature, _Mapping]] = ..., well_formed: _Optional[_Union[WellFormed, _Mapping]] = ...) -> None: ...

class WellFormed(_message.Message):
    __slots__ = ("votes", "noise", "noise_bits", "commitment_signature", "pool_first", "pool_uploads")
    VOTES_FIELD_NUMBER: _ClassVar[int]
    NOISE_FIELD_NUMBER: _ClassVar[int]
    NOISE_BITS_FIELD_NUMBER: _ClassVar[int]
    COMMITMENT_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    POOL_FIRST_FIELD_NUMBER: _ClassVar[int]
    POOL_UPLOADS_FIELD_NUMBER: _ClassVar[int]
    votes: _common_pb2.ProvenVotes
    noise: _common_pb2.Ciphertexts
    noise_bits: _common_pb2.ProvenVotes
    commitment_signature: ContributionSignature
    pool_first: int
    pool_uploads: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, votes: _Optional[_Union[_common_pb2.ProvenVotes, _Mapping]] = ..., noise: _Optional[_Union[_common_pb2.Ciphertexts, _Mapping]] = ..., noise_bits: _Optional[_Union[_common_pb2.ProvenVotes, _Mapping]] = ..., commitment_signature: _Optional[_Union[ContributionSignature, _Mapping]] = ..., pool_first: _Optional[int] = ..., pool_uploads: _Optional[_Iterable[int]] = ...) -> None: ...

class DecryptionRequest(_message.Message):
    __slots__ = ("contributions", "coin_entries", "coin_shares")
    CONTRIBUTIONS_FIELD_NUMBER: _ClassVar[int]
    COIN_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    COIN_SHARES_FIELD_NUMBER: _ClassVar[int]
    contributions: _containers.RepeatedCompositeFieldContainer[Contribution]
    coin_entries: CoinCommitments
    coin_shares: CoinShares
    def __init__(self, contributions: _Optional[_Iterable[_Union[Contribution, _Mapping]]] = ..., coin_entries: _Optional[_Union[CoinCommitments, _Mapping]] = ..., coin_shares: _Optional[_Union[CoinShares, _Mapping]] = ...) -> None: ...

class PartialDecryptions(_message.Message):
    __slots__ = ("values", "challenge", "response", "commitment_a", "commitment_b")
    VALUES_FIELD_NUMBER: _ClassVar[int]
    CHALLENGE_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    COMMITMENT_A_FIELD_NUMBER: _ClassVar[int]
    COMMITMENT_B_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[bytes]
    challenge: bytes
    response: bytes
    commitment_a: bytes
    commitment_b: bytes
    def __init__(self, values: _Optional[_Iterable[bytes]] = ..., challenge: _Optional[bytes] = ..., response: _Optional[bytes] = ..., commitment_a: _Optional[bytes] = ..., commitment_b: _Optional[bytes] = ...) -> None: ...

class SumEvidence(_message.Message):
    __slots__ = ("request", "answers")
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    ANSWERS_FIELD_NUMBER: _ClassVar[int]
    request: DecryptionRequest
    answers: _containers.RepeatedCompositeFieldContainer[HolderAnswer]
    def __init__(self, request: _Optional[_Union[DecryptionRequest, _Mapping]] = ..., answers: _Optional[_Iterable[_Union[HolderAnswer, _Mapping]]] = ...) -> None: ...

class HolderAnswer(_message.Message):
    __slots__ = ("holder", "partials")
    HOLDER_FIELD_NUMBER: _ClassVar[int]
    PARTIALS_FIELD_NUMBER: _ClassVar[int]
    holder: int
    partials: PartialDecryptions
    def __init__(self, holder: _Optional[int] = ..., partials: _Optional[_Union[PartialDecryptions, _Mapping]] = ...) -> None: ...

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
