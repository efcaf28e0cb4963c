from mpdp.proto.v1 import common_pb2 as _common_pb2
from mpdp.proto.v1 import threshold_sum_pb2 as _threshold_sum_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DuParameters(_message.Message):
    __slots__ = ("method", "epsilon", "delta", "rounds", "tolerance", "local_epochs", "learning_rate", "regularization", "parties", "dimension", "bound", "secure_aggregation", "honest_fraction", "key_id", "batch_size", "records_cap")
    METHOD_FIELD_NUMBER: _ClassVar[int]
    EPSILON_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    TOLERANCE_FIELD_NUMBER: _ClassVar[int]
    LOCAL_EPOCHS_FIELD_NUMBER: _ClassVar[int]
    LEARNING_RATE_FIELD_NUMBER: _ClassVar[int]
    REGULARIZATION_FIELD_NUMBER: _ClassVar[int]
    PARTIES_FIELD_NUMBER: _ClassVar[int]
    DIMENSION_FIELD_NUMBER: _ClassVar[int]
    BOUND_FIELD_NUMBER: _ClassVar[int]
    SECURE_AGGREGATION_FIELD_NUMBER: _ClassVar[int]
    HONEST_FRACTION_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    RECORDS_CAP_FIELD_NUMBER: _ClassVar[int]
    method: str
    epsilon: float
    delta: float
    rounds: int
    tolerance: float
    local_epochs: int
    learning_rate: float
    regularization: float
    parties: int
    dimension: int
    bound: float
    secure_aggregation: bool
    honest_fraction: float
    key_id: bytes
    batch_size: int
    records_cap: int
    def __init__(self, method: _Optional[str] = ..., epsilon: _Optional[float] = ..., delta: _Optional[float] = ..., rounds: _Optional[int] = ..., tolerance: _Optional[float] = ..., local_epochs: _Optional[int] = ..., learning_rate: _Optional[float] = ..., regularization: _Optional[float] = ..., parties: _Optional[int] = ..., dimension: _Optional[int] = ..., bound: _Optional[float] = ..., secure_aggregation: bool = ..., honest_fraction: _Optional[float] = ..., key_id: _Optional[bytes] = ..., batch_size: _Optional[int] = ..., records_cap: _Optional[int] = ...) -> None: ...

class DuOpen(_message.Message):
    __slots__ = ("parameters", "round_deadline_seconds", "noise_seed", "client_signature")
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    ROUND_DEADLINE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    NOISE_SEED_FIELD_NUMBER: _ClassVar[int]
    CLIENT_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    parameters: DuParameters
    round_deadline_seconds: float
    noise_seed: int
    client_signature: _threshold_sum_pb2.ContributionSignature
    def __init__(self, parameters: _Optional[_Union[DuParameters, _Mapping]] = ..., round_deadline_seconds: _Optional[float] = ..., noise_seed: _Optional[int] = ..., client_signature: _Optional[_Union[_threshold_sum_pb2.ContributionSignature, _Mapping]] = ...) -> None: ...

class DuModel(_message.Message):
    __slots__ = ("parameters", "round", "theta", "final", "round_deadline_seconds", "noise_seed", "client_signature")
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    THETA_FIELD_NUMBER: _ClassVar[int]
    FINAL_FIELD_NUMBER: _ClassVar[int]
    ROUND_DEADLINE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    NOISE_SEED_FIELD_NUMBER: _ClassVar[int]
    CLIENT_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    parameters: DuParameters
    round: int
    theta: _containers.RepeatedScalarFieldContainer[float]
    final: bool
    round_deadline_seconds: float
    noise_seed: int
    client_signature: _threshold_sum_pb2.ContributionSignature
    def __init__(self, parameters: _Optional[_Union[DuParameters, _Mapping]] = ..., round: _Optional[int] = ..., theta: _Optional[_Iterable[float]] = ..., final: bool = ..., round_deadline_seconds: _Optional[float] = ..., noise_seed: _Optional[int] = ..., client_signature: _Optional[_Union[_threshold_sum_pb2.ContributionSignature, _Mapping]] = ...) -> None: ...

class DuUpload(_message.Message):
    __slots__ = ("round", "records", "theta", "encrypted", "signature", "proof")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    THETA_FIELD_NUMBER: _ClassVar[int]
    ENCRYPTED_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    PROOF_FIELD_NUMBER: _ClassVar[int]
    round: int
    records: int
    theta: _containers.RepeatedScalarFieldContainer[float]
    encrypted: _common_pb2.Ciphertexts
    signature: _threshold_sum_pb2.ContributionSignature
    proof: DuRangeProof
    def __init__(self, round: _Optional[int] = ..., records: _Optional[int] = ..., theta: _Optional[_Iterable[float]] = ..., encrypted: _Optional[_Union[_common_pb2.Ciphertexts, _Mapping]] = ..., signature: _Optional[_Union[_threshold_sum_pb2.ContributionSignature, _Mapping]] = ..., proof: _Optional[_Union[DuRangeProof, _Mapping]] = ...) -> None: ...

class DuRangeProof(_message.Message):
    __slots__ = ("bits", "bit_proofs", "products", "product_proofs")
    BITS_FIELD_NUMBER: _ClassVar[int]
    BIT_PROOFS_FIELD_NUMBER: _ClassVar[int]
    PRODUCTS_FIELD_NUMBER: _ClassVar[int]
    PRODUCT_PROOFS_FIELD_NUMBER: _ClassVar[int]
    bits: _common_pb2.Ciphertexts
    bit_proofs: _containers.RepeatedCompositeFieldContainer[_common_pb2.MembershipProof]
    products: _common_pb2.Ciphertexts
    product_proofs: _containers.RepeatedCompositeFieldContainer[ProductProof]
    def __init__(self, bits: _Optional[_Union[_common_pb2.Ciphertexts, _Mapping]] = ..., bit_proofs: _Optional[_Iterable[_Union[_common_pb2.MembershipProof, _Mapping]]] = ..., products: _Optional[_Union[_common_pb2.Ciphertexts, _Mapping]] = ..., product_proofs: _Optional[_Iterable[_Union[ProductProof, _Mapping]]] = ...) -> None: ...

class ProductProof(_message.Message):
    __slots__ = ("challenge", "z", "z_rho", "z_sigma")
    CHALLENGE_FIELD_NUMBER: _ClassVar[int]
    Z_FIELD_NUMBER: _ClassVar[int]
    Z_RHO_FIELD_NUMBER: _ClassVar[int]
    Z_SIGMA_FIELD_NUMBER: _ClassVar[int]
    challenge: bytes
    z: bytes
    z_rho: bytes
    z_sigma: bytes
    def __init__(self, challenge: _Optional[bytes] = ..., z: _Optional[bytes] = ..., z_rho: _Optional[bytes] = ..., z_sigma: _Optional[bytes] = ...) -> None: ...

class DuDecryptionRequest(_message.Message):
    __slots__ = ("round", "request")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    round: int
    request: _threshold_sum_pb2.DecryptionRequest
    def __init__(self, round: _Optional[int] = ..., request: _Optional[_Union[_threshold_sum_pb2.DecryptionRequest, _Mapping]] = ...) -> None: ...

class DuPartialDecryptions(_message.Message):
    __slots__ = ("round", "partials")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    PARTIALS_FIELD_NUMBER: _ClassVar[int]
    round: int
    partials: _threshold_sum_pb2.PartialDecryptions
    def __init__(self, round: _Optional[int] = ..., partials: _Optional[_Union[_threshold_sum_pb2.PartialDecryptions, _Mapping]] = ...) -> None: ...

class DuRound(_message.Message):
    __slots__ = ("round", "participants", "step_norm", "seconds")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    PARTICIPANTS_FIELD_NUMBER: _ClassVar[int]
    STEP_NORM_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    round: int
    participants: _containers.RepeatedScalarFieldContainer[int]
    step_norm: float
    seconds: float
    def __init__(self, round: _Optional[int] = ..., participants: _Optional[_Iterable[int]] = ..., step_norm: _Optional[float] = ..., seconds: _Optional[float] = ...) -> None: ...

class DuResult(_message.Message):
    __slots__ = ("theta", "rounds", "stopped", "history", "dropped", "timing", "rejected", "rejected_uploads", "evidence")
    THETA_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    STOPPED_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    TIMING_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    REJECTED_UPLOADS_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    theta: _containers.RepeatedScalarFieldContainer[float]
    rounds: int
    stopped: str
    history: _containers.RepeatedCompositeFieldContainer[DuRound]
    dropped: _containers.RepeatedScalarFieldContainer[int]
    timing: _containers.RepeatedCompositeFieldContainer[_common_pb2.StageTiming]
    rejected: _containers.RepeatedCompositeFieldContainer[_threshold_sum_pb2.RejectedShare]
    rejected_uploads: _containers.RepeatedCompositeFieldContainer[_threshold_sum_pb2.RejectedShare]
    evidence: _containers.RepeatedCompositeFieldContainer[DuRoundEvidence]
    def __init__(self, theta: _Optional[_Iterable[float]] = ..., rounds: _Optional[int] = ..., stopped: _Optional[str] = ..., history: _Optional[_Iterable[_Union[DuRound, _Mapping]]] = ..., dropped: _Optional[_Iterable[int]] = ..., timing: _Optional[_Iterable[_Union[_common_pb2.StageTiming, _Mapping]]] = ..., rejected: _Optional[_Iterable[_Union[_threshold_sum_pb2.RejectedShare, _Mapping]]] = ..., rejected_uploads: _Optional[_Iterable[_Union[_threshold_sum_pb2.RejectedShare, _Mapping]]] = ..., evidence: _Optional[_Iterable[_Union[DuRoundEvidence, _Mapping]]] = ...) -> None: ...

class DuRoundEvidence(_message.Message):
    __slots__ = ("round", "evidence")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    round: int
    evidence: _threshold_sum_pb2.SumEvidence
    def __init__(self, round: _Optional[int] = ..., evidence: _Optional[_Union[_threshold_sum_pb2.SumEvidence, _Mapping]] = ...) -> None: ...

class DuTestRecord(_message.Message):
    __slots__ = ("uploads", "rounds")
    UPLOADS_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    uploads: _containers.RepeatedScalarFieldContainer[float]
    rounds: int
    def __init__(self, uploads: _Optional[_Iterable[float]] = ..., rounds: _Optional[int] = ...) -> None: ...

class DuMessage(_message.Message):
    __slots__ = ("open", "model", "upload", "decryption_request", "partial_decryptions", "result", "test_record")
    OPEN_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    UPLOAD_FIELD_NUMBER: _ClassVar[int]
    DECRYPTION_REQUEST_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_DECRYPTIONS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    TEST_RECORD_FIELD_NUMBER: _ClassVar[int]
    open: DuOpen
    model: DuModel
    upload: DuUpload
    decryption_request: DuDecryptionRequest
    partial_decryptions: DuPartialDecryptions
    result: DuResult
    test_record: DuTestRecord
    def __init__(self, open: _Optional[_Union[DuOpen, _Mapping]] = ..., model: _Optional[_Union[DuModel, _Mapping]] = ..., upload: _Optional[_Union[DuUpload, _Mapping]] = ..., decryption_request: _Optional[_Union[DuDecryptionRequest, _Mapping]] = ..., partial_decryptions: _Optional[_Union[DuPartialDecryptions, _Mapping]] = ..., result: _Optional[_Union[DuResult, _Mapping]] = ..., test_record: _Optional[_Union[DuTestRecord, _Mapping]] = ...) -> None: ...
