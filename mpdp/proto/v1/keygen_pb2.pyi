from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class KeygenOpen(_message.Message):
    __slots__ = ("bits", "holders", "threshold", "batch", "step_deadline_seconds")
    BITS_FIELD_NUMBER: _ClassVar[int]
    HOLDERS_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    STEP_DEADLINE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    bits: int
    holders: int
    threshold: int
    batch: int
    step_deadline_seconds: int
    def __init__(self, bits: _Optional[int] = ..., holders: _Optional[int] = ..., threshold: _Optional[int] = ..., batch: _Optional[int] = ..., step_deadline_seconds: _Optional[int] = ...) -> None: ...

class KeygenRound(_message.Message):
    __slots__ = ("stage", "attempt", "round", "broadcast", "values")
    STAGE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    BROADCAST_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    stage: str
    attempt: int
    round: int
    broadcast: bool
    values: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, stage: _Optional[str] = ..., attempt: _Optional[int] = ..., round: _Optional[int] = ..., broadcast: bool = ..., values: _Optional[_Iterable[bytes]] = ...) -> None: ...

class KeygenPublicKey(_message.Message):
    __slots__ = ("n", "threshold", "v", "verification_keys", "hs", "candidates_tried", "digest")
    N_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    V_FIELD_NUMBER: _ClassVar[int]
    VERIFICATION_KEYS_FIELD_NUMBER: _ClassVar[int]
    HS_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_TRIED_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    n: bytes
    threshold: int
    v: bytes
    verification_keys: _containers.RepeatedScalarFieldContainer[bytes]
    hs: bytes
    candidates_tried: int
    digest: bytes
    def __init__(self, n: _Optional[bytes] = ..., threshold: _Optional[int] = ..., v: _Optional[bytes] = ..., verification_keys: _Optional[_Iterable[bytes]] = ..., hs: _Optional[bytes] = ..., candidates_tried: _Optional[int] = ..., digest: _Optional[bytes] = ...) -> None: ...

class KeygenCommit(_message.Message):
    __slots__ = ("ceremony", "digest")
    CEREMONY_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    ceremony: str
    digest: bytes
    def __init__(self, ceremony: _Optional[str] = ..., digest: _Optional[bytes] = ...) -> None: ...

class KeygenCommitted(_message.Message):
    __slots__ = ("digest",)
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    digest: bytes
    def __init__(self, digest: _Optional[bytes] = ...) -> None: ...

class KeygenMessage(_message.Message):
    __slots__ = ("open", "round", "public_key", "commit", "committed")
    OPEN_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_KEY_FIELD_NUMBER: _ClassVar[int]
    COMMIT_FIELD_NUMBER: _ClassVar[int]
    COMMITTED_FIELD_NUMBER: _ClassVar[int]
    open: KeygenOpen
    round: KeygenRound
    public_key: KeygenPublicKey
    commit: KeygenCommit
    committed: KeygenCommitted
    def __init__(self, open: _Optional[_Union[KeygenOpen, _Mapping]] = ..., round: _Optional[_Union[KeygenRound, _Mapping]] = ..., public_key: _Optional[_Union[KeygenPublicKey, _Mapping]] = ..., commit: _Optional[_Union[KeygenCommit, _Mapping]] = ..., committed: _Optional[_Union[KeygenCommitted, _Mapping]] = ...) -> None: ...
