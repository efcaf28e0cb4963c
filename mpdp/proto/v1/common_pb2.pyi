from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Assurance(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ASSURANCE_NONE: _ClassVar[Assurance]
    ASSURANCE_PROVEN_VOTES: _ClassVar[Assurance]
    ASSURANCE_VERIFIABLE_NOISE: _ClassVar[Assurance]
    ASSURANCE_HOLDERS_CHECK_BITS: _ClassVar[Assurance]
ASSURANCE_NONE: Assurance
ASSURANCE_PROVEN_VOTES: Assurance
ASSURANCE_VERIFIABLE_NOISE: Assurance
ASSURANCE_HOLDERS_CHECK_BITS: Assurance

class Empty(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Ciphertexts(_message.Message):
    __slots__ = ("key_id", "values")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    key_id: bytes
    values: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, key_id: _Optional[bytes] = ..., values: _Optional[_Iterable[bytes]] = ...) -> None: ...

class MembershipProof(_message.Message):
    __slots__ = ("commitments", "challenges", "responses")
    COMMITMENTS_FIELD_NUMBER: _ClassVar[int]
    CHALLENGES_FIELD_NUMBER: _ClassVar[int]
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    commitments: _containers.RepeatedScalarFieldContainer[bytes]
    challenges: _containers.RepeatedScalarFieldContainer[bytes]
    responses: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, commitments: _Optional[_Iterable[bytes]] = ..., challenges: _Optional[_Iterable[bytes]] = ..., responses: _Optional[_Iterable[bytes]] = ...) -> None: ...

class ProvenVotes(_message.Message):
    __slots__ = ("ciphertexts", "proofs")
    CIPHERTEXTS_FIELD_NUMBER: _ClassVar[int]
    PROOFS_FIELD_NUMBER: _ClassVar[int]
    ciphertexts: Ciphertexts
    proofs: _containers.RepeatedCompositeFieldContainer[MembershipProof]
    def __init__(self, ciphertexts: _Optional[_Union[Ciphertexts, _Mapping]] = ..., proofs: _Optional[_Iterable[_Union[MembershipProof, _Mapping]]] = ...) -> None: ...

class Matrix(_message.Message):
    __slots__ = ("rows", "columns", "values")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    rows: int
    columns: int
    values: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, rows: _Optional[int] = ..., columns: _Optional[int] = ..., values: _Optional[_Iterable[float]] = ...) -> None: ...

class StatusReply(_message.Message):
    __slots__ = ("role", "id", "open_sessions", "key_id_hex")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    OPEN_SESSIONS_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_HEX_FIELD_NUMBER: _ClassVar[int]
    role: str
    id: int
    open_sessions: _containers.RepeatedScalarFieldContainer[str]
    key_id_hex: str
    def __init__(self, role: _Optional[str] = ..., id: _Optional[int] = ..., open_sessions: _Optional[_Iterable[str]] = ..., key_id_hex: _Optional[str] = ...) -> None: ...

class SessionRef(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: str
    def __init__(self, session: _Optional[str] = ...) -> None: ...

class AbortRequest(_message.Message):
    __slots__ = ("session_id", "reason", "sender", "receiver")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SENDER_FIELD_NUMBER: _ClassVar[int]
    RECEIVER_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    reason: str
    sender: str
    receiver: str
    def __init__(self, session_id: _Optional[str] = ..., reason: _Optional[str] = ..., sender: _Optional[str] = ..., receiver: _Optional[str] = ...) -> None: ...

class TrafficRecord(_message.Message):
    __slots__ = ("from_role", "from_id", "to_role", "to_id", "rpc", "request_bytes", "response_bytes", "status", "observed_by", "call_id", "started_ns", "finished_ns")
    FROM_ROLE_FIELD_NUMBER: _ClassVar[int]
    FROM_ID_FIELD_NUMBER: _ClassVar[int]
    TO_ROLE_FIELD_NUMBER: _ClassVar[int]
    TO_ID_FIELD_NUMBER: _ClassVar[int]
    RPC_FIELD_NUMBER: _ClassVar[int]
    REQUEST_BYTES_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_BYTES_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    OBSERVED_BY_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    STARTED_NS_FIELD_NUMBER: _ClassVar[int]
    FINISHED_NS_FIELD_NUMBER: _ClassVar[int]
    from_role: str
    from_id: int
    to_role: str
    to_id: int
    rpc: str
    request_bytes: int
    response_bytes: int
    status: str
    observed_by: str
    call_id: str
    started_ns: int
    finished_ns: int
    def __init__(self, from_role: _Optional[str] = ..., from_id: _Optional[int] = ..., to_role: _Optional[str] = ..., to_id: _Optional[int] = ..., rpc: _Optional[str] = ..., request_bytes: _Optional[int] = ..., response_bytes: _Optional[int] = ..., status: _Optional[str] = ..., observed_by: _Optional[str] = ..., call_id: _Optional[str] = ..., started_ns: _Optional[int] = ..., finished_ns: _Optional[int] = ...) -> None: ...

class TrafficReply(_message.Message):
    __slots__ = ("records",)
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    records: _containers.RepeatedCompositeFieldContainer[TrafficRecord]
    def __init__(self, records: _Optional[_Iterable[_Union[TrafficRecord, _Mapping]]] = ...) -> None: ...

class StageTiming(_message.Message):
    __slots__ = ("stage", "seconds")
    STAGE_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    stage: str
    seconds: float
    def __init__(self, stage: _Optional[str] = ..., seconds: _Optional[float] = ...) -> None: ...
