from mpdp_proto.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DpppParameters(_message.Message):
    __slots__ = ("epsilon", "delta", "queries", "classes", "teachers", "honest_fraction", "packed", "key_id")
    EPSILON_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    QUERIES_FIELD_NUMBER: _ClassVar[int]
    CLASSES_FIELD_NUMBER: _ClassVar[int]
    TEACHERS_FIELD_NUMBER: _ClassVar[int]
    HONEST_FRACTION_FIELD_NUMBER: _ClassVar[int]
    PACKED_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    epsilon: float
    delta: float
    queries: int
    classes: int
    teachers: int
    honest_fraction: float
    packed: bool
    key_id: bytes
    def __init__(self, epsilon: _Optional[float] = ..., delta: _Optional[float] = ..., queries: _Optional[int] = ..., classes: _Optional[int] = ..., teachers: _Optional[int] = ..., honest_fraction: _Optional[float] = ..., packed: _Optional[bool] = ..., key_id: _Optional[bytes] = ...) -> None: ...

class DpppRoundRequest(_message.Message):
    __slots__ = ("session_id", "parameters", "features", "deadline_seconds")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    FEATURES_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    parameters: DpppParameters
    features: _common_pb2.Matrix
    deadline_seconds: float
    def __init__(self, session_id: _Optional[str] = ..., parameters: _Optional[_Union[DpppParameters, _Mapping]] = ..., features: _Optional[_Union[_common_pb2.Matrix, _Mapping]] = ..., deadline_seconds: _Optional[float] = ...) -> None: ...

class DpppQueries(_message.Message):
    __slots__ = ("session_id", "parameters", "features")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    FEATURES_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    parameters: DpppParameters
    features: _common_pb2.Matrix
    def __init__(self, session_id: _Optional[str] = ..., parameters: _Optional[_Union[DpppParameters, _Mapping]] = ..., features: _Optional[_Union[_common_pb2.Matrix, _Mapping]] = ...) -> None: ...

class DpppVotes(_message.Message):
    __slots__ = ("session_id", "teacher", "tosses", "votes")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TEACHER_FIELD_NUMBER: _ClassVar[int]
    TOSSES_FIELD_NUMBER: _ClassVar[int]
    VOTES_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    teacher: int
    tosses: int
    votes: _common_pb2.Ciphertexts
    def __init__(self, session_id: _Optional[str] = ..., teacher: _Optional[int] = ..., tosses: _Optional[int] = ..., votes: _Optional[_Union[_common_pb2.Ciphertexts, _Mapping]] = ...) -> None: ...

class DpppDecryptionRequest(_message.Message):
    __slots__ = ("session_id", "aggregate", "contributors")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    AGGREGATE_FIELD_NUMBER: _ClassVar[int]
    CONTRIBUTORS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    aggregate: _common_pb2.Ciphertexts
    contributors: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, session_id: _Optional[str] = ..., aggregate: _Optional[_Union[_common_pb2.Ciphertexts, _Mapping]] = ..., contributors: _Optional[_Iterable[int]] = ...) -> None: ...

class PartialDecryption(_message.Message):
    __slots__ = ("value", "challenge", "response")
    VALUE_FIELD_NUMBER: _ClassVar[int]
    CHALLENGE_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    value: bytes
    challenge: bytes
    response: bytes
    def __init__(self, value: _Optional[bytes] = ..., challenge: _Optional[bytes] = ..., response: _Optional[bytes] = ...) -> None: ...

class DpppPartialDecryptions(_message.Message):
    __slots__ = ("session_id", "holder", "shares")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    HOLDER_FIELD_NUMBER: _ClassVar[int]
    SHARES_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    holder: int
    shares: _containers.RepeatedCompositeFieldContainer[PartialDecryption]
    def __init__(self, session_id: _Optional[str] = ..., holder: _Optional[int] = ..., shares: _Optional[_Iterable[_Union[PartialDecryption, _Mapping]]] = ...) -> None: ...

class RejectedShare(_message.Message):
    __slots__ = ("holder", "reason")
    HOLDER_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    holder: int
    reason: str
    def __init__(self, holder: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class DpppRoundResult(_message.Message):
    __slots__ = ("session_id", "queries", "classes", "histograms", "labels", "contributors", "decryptors", "rejected", "timing", "tosses_per_teacher", "total_tosses_required")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    QUERIES_FIELD_NUMBER: _ClassVar[int]
    CLASSES_FIELD_NUMBER: _ClassVar[int]
    HISTOGRAMS_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    CONTRIBUTORS_FIELD_NUMBER: _ClassVar[int]
    DECRYPTORS_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    TIMING_FIELD_NUMBER: _ClassVar[int]
    TOSSES_PER_TEACHER_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TOSSES_REQUIRED_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    queries: int
    classes: int
    histograms: _containers.RepeatedScalarFieldContainer[int]
    labels: _containers.RepeatedScalarFieldContainer[int]
    contributors: _containers.RepeatedScalarFieldContainer[int]
    decryptors: _containers.RepeatedScalarFieldContainer[int]
    rejected: _containers.RepeatedCompositeFieldContainer[RejectedShare]
    timing: _containers.RepeatedCompositeFieldContainer[_common_pb2.StageTiming]
    tosses_per_teacher: int
    total_tosses_required: int
    def __init__(self, session_id: _Optional[str] = ..., queries: _Optional[int] = ..., classes: _Optional[int] = ..., histograms: _Optional[_Iterable[int]] = ..., labels: _Optional[_Iterable[int]] = ..., contributors: _Optional[_Iterable[int]] = ..., decryptors: _Optional[_Iterable[int]] = ..., rejected: _Optional[_Iterable[_Union[RejectedShare, _Mapping]]] = ..., timing: _Optional[_Iterable[_Union[_common_pb2.StageTiming, _Mapping]]] = ..., tosses_per_teacher: _Optional[int] = ..., total_tosses_required: _Optional[int] = ...) -> None: ...

class DpppTestRecord(_message.Message):
    __slots__ = ("session_id", "votes", "noise")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    VOTES_FIELD_NUMBER: _ClassVar[int]
    NOISE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    votes: _containers.RepeatedScalarFieldContainer[int]
    noise: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, session_id: _Optional[str] = ..., votes: _Optional[_Iterable[int]] = ..., noise: _Optional[_Iterable[int]] = ...) -> None: ...
