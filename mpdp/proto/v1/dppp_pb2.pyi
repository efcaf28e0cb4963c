from mpdp.proto.v1 import common_pb2 as _common_pb2
from mpdp.proto.v1 import threshold_sum_pb2 as _threshold_sum_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DpppParameters(_message.Message):
    __slots__ = ("epsilon", "delta", "queries", "classes", "teachers", "honest_fraction", "packed", "key_id", "total_tosses", "noise", "skellam_grid", "colluding", "ensemble", "assurance")
    EPSILON_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    QUERIES_FIELD_NUMBER: _ClassVar[int]
    CLASSES_FIELD_NUMBER: _ClassVar[int]
    TEACHERS_FIELD_NUMBER: _ClassVar[int]
    HONEST_FRACTION_FIELD_NUMBER: _ClassVar[int]
    PACKED_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TOSSES_FIELD_NUMBER: _ClassVar[int]
    NOISE_FIELD_NUMBER: _ClassVar[int]
    SKELLAM_GRID_FIELD_NUMBER: _ClassVar[int]
    COLLUDING_FIELD_NUMBER: _ClassVar[int]
    ENSEMBLE_FIELD_NUMBER: _ClassVar[int]
    ASSURANCE_FIELD_NUMBER: _ClassVar[int]
    epsilon: float
    delta: float
    queries: int
    classes: int
    teachers: int
    honest_fraction: float
    packed: bool
    key_id: bytes
    total_tosses: int
    noise: str
    skellam_grid: int
    colluding: int
    ensemble: int
    assurance: _common_pb2.Assurance
    def __init__(self, epsilon: _Optional[float] = ..., delta: _Optional[float] = ..., queries: _Optional[int] = ..., classes: _Optional[int] = ..., teachers: _Optional[int] = ..., honest_fraction: _Optional[float] = ..., packed: bool = ..., key_id: _Optional[bytes] = ..., total_tosses: _Optional[int] = ..., noise: _Optional[str] = ..., skellam_grid: _Optional[int] = ..., colluding: _Optional[int] = ..., ensemble: _Optional[int] = ..., assurance: _Optional[_Union[_common_pb2.Assurance, str]] = ...) -> None: ...

class DpppRoundRequest(_message.Message):
    __slots__ = ("parameters", "features", "deadline_seconds", "client_signature")
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    FEATURES_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    CLIENT_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    parameters: DpppParameters
    features: _common_pb2.Matrix
    deadline_seconds: float
    client_signature: _threshold_sum_pb2.ContributionSignature
    def __init__(self, parameters: _Optional[_Union[DpppParameters, _Mapping]] = ..., features: _Optional[_Union[_common_pb2.Matrix, _Mapping]] = ..., deadline_seconds: _Optional[float] = ..., client_signature: _Optional[_Union[_threshold_sum_pb2.ContributionSignature, _Mapping]] = ...) -> None: ...

class DpppQueries(_message.Message):
    __slots__ = ("parameters", "features", "deadline_seconds", "client_signature")
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    FEATURES_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    CLIENT_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    parameters: DpppParameters
    features: _common_pb2.Matrix
    deadline_seconds: float
    client_signature: _threshold_sum_pb2.ContributionSignature
    def __init__(self, parameters: _Optional[_Union[DpppParameters, _Mapping]] = ..., features: _Optional[_Union[_common_pb2.Matrix, _Mapping]] = ..., deadline_seconds: _Optional[float] = ..., client_signature: _Optional[_Union[_threshold_sum_pb2.ContributionSignature, _Mapping]] = ...) -> None: ...

class DpppVotes(_message.Message):
    __slots__ = ("tosses", "votes", "signature", "proven", "noise_bits", "coin_commitment", "pooled", "pool_first", "proofs_signature")
    TOSSES_FIELD_NUMBER: _ClassVar[int]
    VOTES_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    PROVEN_FIELD_NUMBER: _ClassVar[int]
    NOISE_BITS_FIELD_NUMBER: _ClassVar[int]
    COIN_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    POOLED_FIELD_NUMBER: _ClassVar[int]
    POOL_FIRST_FIELD_NUMBER: _ClassVar[int]
    PROOFS_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    tosses: int
    votes: _common_pb2.Ciphertexts
    signature: _threshold_sum_pb2.ContributionSignature
    proven: _common_pb2.ProvenVotes
    noise_bits: _common_pb2.ProvenVotes
    coin_commitment: bytes
    pooled: bool
    pool_first: int
    proofs_signature: _threshold_sum_pb2.ContributionSignature
    def __init__(self, tosses: _Optional[int] = ..., votes: _Optional[_Union[_common_pb2.Ciphertexts, _Mapping]] = ..., signature: _Optional[_Union[_threshold_sum_pb2.ContributionSignature, _Mapping]] = ..., proven: _Optional[_Union[_common_pb2.ProvenVotes, _Mapping]] = ..., noise_bits: _Optional[_Union[_common_pb2.ProvenVotes, _Mapping]] = ..., coin_commitment: _Optional[bytes] = ..., pooled: bool = ..., pool_first: _Optional[int] = ..., proofs_signature: _Optional[_Union[_threshold_sum_pb2.ContributionSignature, _Mapping]] = ...) -> None: ...

class DpppPoolFill(_message.Message):
    __slots__ = ("key_id", "bits", "deadline_seconds", "randomness_powers", "mask_powers", "client_signature")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    BITS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    RANDOMNESS_POWERS_FIELD_NUMBER: _ClassVar[int]
    MASK_POWERS_FIELD_NUMBER: _ClassVar[int]
    CLIENT_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    key_id: bytes
    bits: int
    deadline_seconds: float
    randomness_powers: int
    mask_powers: int
    client_signature: _threshold_sum_pb2.ContributionSignature
    def __init__(self, key_id: _Optional[bytes] = ..., bits: _Optional[int] = ..., deadline_seconds: _Optional[float] = ..., randomness_powers: _Optional[int] = ..., mask_powers: _Optional[int] = ..., client_signature: _Optional[_Union[_threshold_sum_pb2.ContributionSignature, _Mapping]] = ...) -> None: ...

class DpppPoolRequest(_message.Message):
    __slots__ = ("key_id", "first", "count", "randomness_powers", "mask_powers", "client_signature")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    FIRST_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    RANDOMNESS_POWERS_FIELD_NUMBER: _ClassVar[int]
    MASK_POWERS_FIELD_NUMBER: _ClassVar[int]
    CLIENT_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    key_id: bytes
    first: int
    count: int
    randomness_powers: int
    mask_powers: int
    client_signature: _threshold_sum_pb2.ContributionSignature
    def __init__(self, key_id: _Optional[bytes] = ..., first: _Optional[int] = ..., count: _Optional[int] = ..., randomness_powers: _Optional[int] = ..., mask_powers: _Optional[int] = ..., client_signature: _Optional[_Union[_threshold_sum_pb2.ContributionSignature, _Mapping]] = ...) -> None: ...

class DpppPoolBits(_message.Message):
    __slots__ = ("first", "bits")
    FIRST_FIELD_NUMBER: _ClassVar[int]
    BITS_FIELD_NUMBER: _ClassVar[int]
    first: int
    bits: _common_pb2.ProvenVotes
    def __init__(self, first: _Optional[int] = ..., bits: _Optional[_Union[_common_pb2.ProvenVotes, _Mapping]] = ...) -> None: ...

class DpppPoolFilled(_message.Message):
    __slots__ = ("levels", "rejected", "timing")
    LEVELS_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    TIMING_FIELD_NUMBER: _ClassVar[int]
    levels: _containers.RepeatedCompositeFieldContainer[DpppPoolLevel]
    rejected: _containers.RepeatedCompositeFieldContainer[_threshold_sum_pb2.RejectedShare]
    timing: _containers.RepeatedCompositeFieldContainer[_common_pb2.StageTiming]
    def __init__(self, levels: _Optional[_Iterable[_Union[DpppPoolLevel, _Mapping]]] = ..., rejected: _Optional[_Iterable[_Union[_threshold_sum_pb2.RejectedShare, _Mapping]]] = ..., timing: _Optional[_Iterable[_Union[_common_pb2.StageTiming, _Mapping]]] = ...) -> None: ...

class DpppPoolLevel(_message.Message):
    __slots__ = ("teacher", "available", "next")
    TEACHER_FIELD_NUMBER: _ClassVar[int]
    AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    NEXT_FIELD_NUMBER: _ClassVar[int]
    teacher: int
    available: int
    next: int
    def __init__(self, teacher: _Optional[int] = ..., available: _Optional[int] = ..., next: _Optional[int] = ...) -> None: ...

class DpppRoundResult(_message.Message):
    __slots__ = ("queries", "classes", "histograms", "labels", "contributors", "decryptors", "rejected", "timing", "tosses_per_teacher", "total_tosses_required", "rejected_votes", "evidence", "blamed")
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
    REJECTED_VOTES_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    BLAMED_FIELD_NUMBER: _ClassVar[int]
    queries: int
    classes: int
    histograms: _containers.RepeatedScalarFieldContainer[int]
    labels: _containers.RepeatedScalarFieldContainer[int]
    contributors: _containers.RepeatedScalarFieldContainer[int]
    decryptors: _containers.RepeatedScalarFieldContainer[int]
    rejected: _containers.RepeatedCompositeFieldContainer[_threshold_sum_pb2.RejectedShare]
    timing: _containers.RepeatedCompositeFieldContainer[_common_pb2.StageTiming]
    tosses_per_teacher: int
    total_tosses_required: int
    rejected_votes: _containers.RepeatedCompositeFieldContainer[_threshold_sum_pb2.RejectedShare]
    evidence: _threshold_sum_pb2.SumEvidence
    blamed: _containers.RepeatedCompositeFieldContainer[DpppBlamed]
    def __init__(self, queries: _Optional[int] = ..., classes: _Optional[int] = ..., histograms: _Optional[_Iterable[int]] = ..., labels: _Optional[_Iterable[int]] = ..., contributors: _Optional[_Iterable[int]] = ..., decryptors: _Optional[_Iterable[int]] = ..., rejected: _Optional[_Iterable[_Union[_threshold_sum_pb2.RejectedShare, _Mapping]]] = ..., timing: _Optional[_Iterable[_Union[_common_pb2.StageTiming, _Mapping]]] = ..., tosses_per_teacher: _Optional[int] = ..., total_tosses_required: _Optional[int] = ..., rejected_votes: _Optional[_Iterable[_Union[_threshold_sum_pb2.RejectedShare, _Mapping]]] = ..., evidence: _Optional[_Union[_threshold_sum_pb2.SumEvidence, _Mapping]] = ..., blamed: _Optional[_Iterable[_Union[DpppBlamed, _Mapping]]] = ...) -> None: ...

class DpppBlamed(_message.Message):
    __slots__ = ("teacher", "votes")
    TEACHER_FIELD_NUMBER: _ClassVar[int]
    VOTES_FIELD_NUMBER: _ClassVar[int]
    teacher: int
    votes: DpppVotes
    def __init__(self, teacher: _Optional[int] = ..., votes: _Optional[_Union[DpppVotes, _Mapping]] = ...) -> None: ...

class DpppTestRecord(_message.Message):
    __slots__ = ("votes", "noise")
    VOTES_FIELD_NUMBER: _ClassVar[int]
    NOISE_FIELD_NUMBER: _ClassVar[int]
    votes: _containers.RepeatedScalarFieldContainer[int]
    noise: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, votes: _Optional[_Iterable[int]] = ..., noise: _Optional[_Iterable[int]] = ...) -> None: ...

class DpppStandDown(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DpppMessage(_message.Message):
    __slots__ = ("open", "queries", "votes", "decryption_request", "partial_decryptions", "result", "test_record", "stand_down", "coin", "flipped", "reveal", "shares", "fill", "pool_request", "pool_bits", "pool_filled")
    OPEN_FIELD_NUMBER: _ClassVar[int]
    QUERIES_FIELD_NUMBER: _ClassVar[int]
    VOTES_FIELD_NUMBER: _ClassVar[int]
    DECRYPTION_REQUEST_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_DECRYPTIONS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    TEST_RECORD_FIELD_NUMBER: _ClassVar[int]
    STAND_DOWN_FIELD_NUMBER: _ClassVar[int]
    COIN_FIELD_NUMBER: _ClassVar[int]
    FLIPPED_FIELD_NUMBER: _ClassVar[int]
    REVEAL_FIELD_NUMBER: _ClassVar[int]
    SHARES_FIELD_NUMBER: _ClassVar[int]
    FILL_FIELD_NUMBER: _ClassVar[int]
    POOL_REQUEST_FIELD_NUMBER: _ClassVar[int]
    POOL_BITS_FIELD_NUMBER: _ClassVar[int]
    POOL_FILLED_FIELD_NUMBER: _ClassVar[int]
    open: DpppRoundRequest
    queries: DpppQueries
    votes: DpppVotes
    decryption_request: _threshold_sum_pb2.DecryptionRequest
    partial_decryptions: _threshold_sum_pb2.PartialDecryptions
    result: DpppRoundResult
    test_record: DpppTestRecord
    stand_down: DpppStandDown
    coin: _threshold_sum_pb2.CoinCommitments
    flipped: _threshold_sum_pb2.FlippedContribution
    reveal: _threshold_sum_pb2.CoinReveal
    shares: _threshold_sum_pb2.CoinShares
    fill: DpppPoolFill
    pool_request: DpppPoolRequest
    pool_bits: DpppPoolBits
    pool_filled: DpppPoolFilled
    def __init__(self, open: _Optional[_Union[DpppRoundRequest, _Mapping]] = ..., queries: _Optional[_Union[DpppQueries, _Mapping]] = ..., votes: _Optional[_Union[DpppVotes, _Mapping]] = ..., decryption_request: _Optional[_Union[_threshold_sum_pb2.DecryptionRequest, _Mapping]] = ..., partial_decryptions: _Optional[_Union[_threshold_sum_pb2.PartialDecryptions, _Mapping]] = ..., result: _Optional[_Union[DpppRoundResult, _Mapping]] = ..., test_record: _Optional[_Union[DpppTestRecord, _Mapping]] = ..., stand_down: _Optional[_Union[DpppStandDown, _Mapping]] = ..., coin: _Optional[_Union[_threshold_sum_pb2.CoinCommitments, _Mapping]] = ..., flipped: _Optional[_Union[_threshold_sum_pb2.FlippedContribution, _Mapping]] = ..., reveal: _Optional[_Union[_threshold_sum_pb2.CoinReveal, _Mapping]] = ..., shares: _Optional[_Union[_threshold_sum_pb2.CoinShares, _Mapping]] = ..., fill: _Optional[_Union[DpppPoolFill, _Mapping]] = ..., pool_request: _Optional[_Union[DpppPoolRequest, _Mapping]] = ..., pool_bits: _Optional[_Union[DpppPoolBits, _Mapping]] = ..., pool_filled: _Optional[_Union[DpppPoolFilled, _Mapping]] = ...) -> None: ...
