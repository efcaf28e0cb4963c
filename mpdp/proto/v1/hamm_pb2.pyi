from mpdp.proto.v1 import common_pb2 as _common_pb2
from mpdp.proto.v1 import threshold_sum_pb2 as _threshold_sum_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class HammParameters(_message.Message):
    __slots__ = ("method", "epsilon", "delta", "regularization", "classes", "parties", "aux_points", "dimension", "noisy_counts", "protect_aux", "honest_fraction", "key_id", "count_noise", "colluding", "assurance")
    METHOD_FIELD_NUMBER: _ClassVar[int]
    EPSILON_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    REGULARIZATION_FIELD_NUMBER: _ClassVar[int]
    CLASSES_FIELD_NUMBER: _ClassVar[int]
    PARTIES_FIELD_NUMBER: _ClassVar[int]
    AUX_POINTS_FIELD_NUMBER: _ClassVar[int]
    DIMENSION_FIELD_NUMBER: _ClassVar[int]
    NOISY_COUNTS_FIELD_NUMBER: _ClassVar[int]
    PROTECT_AUX_FIELD_NUMBER: _ClassVar[int]
    HONEST_FRACTION_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    COUNT_NOISE_FIELD_NUMBER: _ClassVar[int]
    COLLUDING_FIELD_NUMBER: _ClassVar[int]
    ASSURANCE_FIELD_NUMBER: _ClassVar[int]
    method: str
    epsilon: float
    delta: float
    regularization: float
    classes: int
    parties: int
    aux_points: int
    dimension: int
    noisy_counts: bool
    protect_aux: bool
    honest_fraction: float
    key_id: bytes
    count_noise: str
    colluding: int
    assurance: _common_pb2.Assurance
    def __init__(self, method: _Optional[str] = ..., epsilon: _Optional[float] = ..., delta: _Optional[float] = ..., regularization: _Optional[float] = ..., classes: _Optional[int] = ..., parties: _Optional[int] = ..., aux_points: _Optional[int] = ..., dimension: _Optional[int] = ..., noisy_counts: bool = ..., protect_aux: bool = ..., honest_fraction: _Optional[float] = ..., key_id: _Optional[bytes] = ..., count_noise: _Optional[str] = ..., colluding: _Optional[int] = ..., assurance: _Optional[_Union[_common_pb2.Assurance, str]] = ...) -> None: ...

class HammOpen(_message.Message):
    __slots__ = ("parameters", "deadline_seconds", "noise_seed", "client_signature")
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    NOISE_SEED_FIELD_NUMBER: _ClassVar[int]
    CLIENT_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    parameters: HammParameters
    deadline_seconds: float
    noise_seed: int
    client_signature: _threshold_sum_pb2.ContributionSignature
    def __init__(self, parameters: _Optional[_Union[HammParameters, _Mapping]] = ..., deadline_seconds: _Optional[float] = ..., noise_seed: _Optional[int] = ..., client_signature: _Optional[_Union[_threshold_sum_pb2.ContributionSignature, _Mapping]] = ...) -> None: ...

class HammQueries(_message.Message):
    __slots__ = ("parameters", "features", "deadline_seconds", "client_signature")
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    FEATURES_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    CLIENT_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    parameters: HammParameters
    features: _common_pb2.Matrix
    deadline_seconds: float
    client_signature: _threshold_sum_pb2.ContributionSignature
    def __init__(self, parameters: _Optional[_Union[HammParameters, _Mapping]] = ..., features: _Optional[_Union[_common_pb2.Matrix, _Mapping]] = ..., deadline_seconds: _Optional[float] = ..., client_signature: _Optional[_Union[_threshold_sum_pb2.ContributionSignature, _Mapping]] = ...) -> None: ...

class HammVotes(_message.Message):
    __slots__ = ("tosses", "votes", "signature", "proven", "noise_bits", "coin_commitment", "proofs_signature")
    TOSSES_FIELD_NUMBER: _ClassVar[int]
    VOTES_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    PROVEN_FIELD_NUMBER: _ClassVar[int]
    NOISE_BITS_FIELD_NUMBER: _ClassVar[int]
    COIN_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    PROOFS_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    tosses: int
    votes: _common_pb2.Ciphertexts
    signature: _threshold_sum_pb2.ContributionSignature
    proven: _common_pb2.ProvenVotes
    noise_bits: _common_pb2.ProvenVotes
    coin_commitment: bytes
    proofs_signature: _threshold_sum_pb2.ContributionSignature
    def __init__(self, tosses: _Optional[int] = ..., votes: _Optional[_Union[_common_pb2.Ciphertexts, _Mapping]] = ..., signature: _Optional[_Union[_threshold_sum_pb2.ContributionSignature, _Mapping]] = ..., proven: _Optional[_Union[_common_pb2.ProvenVotes, _Mapping]] = ..., noise_bits: _Optional[_Union[_common_pb2.ProvenVotes, _Mapping]] = ..., coin_commitment: _Optional[bytes] = ..., proofs_signature: _Optional[_Union[_threshold_sum_pb2.ContributionSignature, _Mapping]] = ...) -> None: ...

class HammAggregate(_message.Message):
    __slots__ = ("request", "asked", "rejected_votes")
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    ASKED_FIELD_NUMBER: _ClassVar[int]
    REJECTED_VOTES_FIELD_NUMBER: _ClassVar[int]
    request: _threshold_sum_pb2.DecryptionRequest
    asked: _containers.RepeatedScalarFieldContainer[int]
    rejected_votes: _containers.RepeatedCompositeFieldContainer[_threshold_sum_pb2.RejectedShare]
    def __init__(self, request: _Optional[_Union[_threshold_sum_pb2.DecryptionRequest, _Mapping]] = ..., asked: _Optional[_Iterable[int]] = ..., rejected_votes: _Optional[_Iterable[_Union[_threshold_sum_pb2.RejectedShare, _Mapping]]] = ...) -> None: ...

class HolderUnreachable(_message.Message):
    __slots__ = ("holder", "reason")
    HOLDER_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    holder: int
    reason: str
    def __init__(self, holder: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class HammResult(_message.Message):
    __slots__ = ("weights", "rows", "voters", "contributors", "decryptors", "rejected", "timing", "tosses_per_party", "noise_norm_scale", "rejected_votes", "votes")
    WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    VOTERS_FIELD_NUMBER: _ClassVar[int]
    CONTRIBUTORS_FIELD_NUMBER: _ClassVar[int]
    DECRYPTORS_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    TIMING_FIELD_NUMBER: _ClassVar[int]
    TOSSES_PER_PARTY_FIELD_NUMBER: _ClassVar[int]
    NOISE_NORM_SCALE_FIELD_NUMBER: _ClassVar[int]
    REJECTED_VOTES_FIELD_NUMBER: _ClassVar[int]
    VOTES_FIELD_NUMBER: _ClassVar[int]
    weights: _containers.RepeatedScalarFieldContainer[float]
    rows: int
    voters: int
    contributors: _containers.RepeatedScalarFieldContainer[int]
    decryptors: _containers.RepeatedScalarFieldContainer[int]
    rejected: _containers.RepeatedCompositeFieldContainer[_threshold_sum_pb2.RejectedShare]
    timing: _containers.RepeatedCompositeFieldContainer[_common_pb2.StageTiming]
    tosses_per_party: int
    noise_norm_scale: float
    rejected_votes: _containers.RepeatedCompositeFieldContainer[_threshold_sum_pb2.RejectedShare]
    votes: _threshold_sum_pb2.DecryptionRequest
    def __init__(self, weights: _Optional[_Iterable[float]] = ..., rows: _Optional[int] = ..., voters: _Optional[int] = ..., contributors: _Optional[_Iterable[int]] = ..., decryptors: _Optional[_Iterable[int]] = ..., rejected: _Optional[_Iterable[_Union[_threshold_sum_pb2.RejectedShare, _Mapping]]] = ..., timing: _Optional[_Iterable[_Union[_common_pb2.StageTiming, _Mapping]]] = ..., tosses_per_party: _Optional[int] = ..., noise_norm_scale: _Optional[float] = ..., rejected_votes: _Optional[_Iterable[_Union[_threshold_sum_pb2.RejectedShare, _Mapping]]] = ..., votes: _Optional[_Union[_threshold_sum_pb2.DecryptionRequest, _Mapping]] = ...) -> None: ...

class HammTestRecord(_message.Message):
    __slots__ = ("votes", "noise", "counts", "eta")
    VOTES_FIELD_NUMBER: _ClassVar[int]
    NOISE_FIELD_NUMBER: _ClassVar[int]
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    ETA_FIELD_NUMBER: _ClassVar[int]
    votes: _containers.RepeatedScalarFieldContainer[int]
    noise: _containers.RepeatedScalarFieldContainer[int]
    counts: _containers.RepeatedScalarFieldContainer[int]
    eta: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, votes: _Optional[_Iterable[int]] = ..., noise: _Optional[_Iterable[int]] = ..., counts: _Optional[_Iterable[int]] = ..., eta: _Optional[_Iterable[float]] = ...) -> None: ...

class HammMessage(_message.Message):
    __slots__ = ("open", "queries", "votes", "decryption_request", "aggregate", "partial_decryptions", "result", "test_record", "holder_unreachable", "coin", "reveal", "shares", "flipped")
    OPEN_FIELD_NUMBER: _ClassVar[int]
    QUERIES_FIELD_NUMBER: _ClassVar[int]
    VOTES_FIELD_NUMBER: _ClassVar[int]
    DECRYPTION_REQUEST_FIELD_NUMBER: _ClassVar[int]
    AGGREGATE_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_DECRYPTIONS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    TEST_RECORD_FIELD_NUMBER: _ClassVar[int]
    HOLDER_UNREACHABLE_FIELD_NUMBER: _ClassVar[int]
    COIN_FIELD_NUMBER: _ClassVar[int]
    REVEAL_FIELD_NUMBER: _ClassVar[int]
    SHARES_FIELD_NUMBER: _ClassVar[int]
    FLIPPED_FIELD_NUMBER: _ClassVar[int]
    open: HammOpen
    queries: HammQueries
    votes: HammVotes
    decryption_request: _threshold_sum_pb2.DecryptionRequest
    aggregate: HammAggregate
    partial_decryptions: _threshold_sum_pb2.PartialDecryptions
    result: HammResult
    test_record: HammTestRecord
    holder_unreachable: HolderUnreachable
    coin: _threshold_sum_pb2.CoinCommitments
    reveal: _threshold_sum_pb2.CoinReveal
    shares: _threshold_sum_pb2.CoinShares
    flipped: _threshold_sum_pb2.FlippedContribution
    def __init__(self, open: _Optional[_Union[HammOpen, _Mapping]] = ..., queries: _Optional[_Union[HammQueries, _Mapping]] = ..., votes: _Optional[_Union[HammVotes, _Mapping]] = ..., decryption_request: _Optional[_Union[_threshold_sum_pb2.DecryptionRequest, _Mapping]] = ..., aggregate: _Optional[_Union[HammAggregate, _Mapping]] = ..., partial_decryptions: _Optional[_Union[_threshold_sum_pb2.PartialDecryptions, _Mapping]] = ..., result: _Optional[_Union[HammResult, _Mapping]] = ..., test_record: _Optional[_Union[HammTestRecord, _Mapping]] = ..., holder_unreachable: _Optional[_Union[HolderUnreachable, _Mapping]] = ..., coin: _Optional[_Union[_threshold_sum_pb2.CoinCommitments, _Mapping]] = ..., reveal: _Optional[_Union[_threshold_sum_pb2.CoinReveal, _Mapping]] = ..., shares: _Optional[_Union[_threshold_sum_pb2.CoinShares, _Mapping]] = ..., flipped: _Optional[_Union[_threshold_sum_pb2.FlippedContribution, _Mapping]] = ...) -> None: ...
