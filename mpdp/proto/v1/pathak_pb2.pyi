from mpdp.proto.v1 import common_pb2 as _common_pb2
from mpdp.proto.v1 import comparison_pb2 as _comparison_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PathakParameters(_message.Message):
    __slots__ = ("epsilon", "delta", "regularization", "mechanism", "calibration", "parties", "dimension", "fractional_bits", "mask_bits", "gradient_tolerance", "n_min", "noise_seed", "deadline_seconds", "noise_source", "calibrate_to")
    EPSILON_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    REGULARIZATION_FIELD_NUMBER: _ClassVar[int]
    MECHANISM_FIELD_NUMBER: _ClassVar[int]
    CALIBRATION_FIELD_NUMBER: _ClassVar[int]
    PARTIES_FIELD_NUMBER: _ClassVar[int]
    DIMENSION_FIELD_NUMBER: _ClassVar[int]
    FRACTIONAL_BITS_FIELD_NUMBER: _ClassVar[int]
    MASK_BITS_FIELD_NUMBER: _ClassVar[int]
    GRADIENT_TOLERANCE_FIELD_NUMBER: _ClassVar[int]
    N_MIN_FIELD_NUMBER: _ClassVar[int]
    NOISE_SEED_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    NOISE_SOURCE_FIELD_NUMBER: _ClassVar[int]
    CALIBRATE_TO_FIELD_NUMBER: _ClassVar[int]
    epsilon: float
    delta: float
    regularization: float
    mechanism: str
    calibration: str
    parties: int
    dimension: int
    fractional_bits: int
    mask_bits: int
    gradient_tolerance: float
    n_min: int
    noise_seed: int
    deadline_seconds: float
    noise_source: str
    calibrate_to: str
    def __init__(self, epsilon: _Optional[float] = ..., delta: _Optional[float] = ..., regularization: _Optional[float] = ..., mechanism: _Optional[str] = ..., calibration: _Optional[str] = ..., parties: _Optional[int] = ..., dimension: _Optional[int] = ..., fractional_bits: _Optional[int] = ..., mask_bits: _Optional[int] = ..., gradient_tolerance: _Optional[float] = ..., n_min: _Optional[int] = ..., noise_seed: _Optional[int] = ..., deadline_seconds: _Optional[float] = ..., noise_source: _Optional[str] = ..., calibrate_to: _Optional[str] = ...) -> None: ...

class PaillierPublicKeyMessage(_message.Message):
    __slots__ = ("n", "hs", "modulus_proof", "ring_pedersen")
    N_FIELD_NUMBER: _ClassVar[int]
    HS_FIELD_NUMBER: _ClassVar[int]
    MODULUS_PROOF_FIELD_NUMBER: _ClassVar[int]
    RING_PEDERSEN_FIELD_NUMBER: _ClassVar[int]
    n: bytes
    hs: bytes
    modulus_proof: ModulusProof
    ring_pedersen: RingPedersenParameters
    def __init__(self, n: _Optional[bytes] = ..., hs: _Optional[bytes] = ..., modulus_proof: _Optional[_Union[ModulusProof, _Mapping]] = ..., ring_pedersen: _Optional[_Union[RingPedersenParameters, _Mapping]] = ...) -> None: ...

class CuratorKeys(_message.Message):
    __slots__ = ("zeta", "comparison_key", "factor_proof")
    ZETA_FIELD_NUMBER: _ClassVar[int]
    COMPARISON_KEY_FIELD_NUMBER: _ClassVar[int]
    FACTOR_PROOF_FIELD_NUMBER: _ClassVar[int]
    zeta: PaillierPublicKeyMessage
    comparison_key: bytes
    factor_proof: FactorProof
    def __init__(self, zeta: _Optional[_Union[PaillierPublicKeyMessage, _Mapping]] = ..., comparison_key: _Optional[bytes] = ..., factor_proof: _Optional[_Union[FactorProof, _Mapping]] = ...) -> None: ...

class RingPedersenParameters(_message.Message):
    __slots__ = ("modulus", "s", "t", "commitments", "responses")
    MODULUS_FIELD_NUMBER: _ClassVar[int]
    S_FIELD_NUMBER: _ClassVar[int]
    T_FIELD_NUMBER: _ClassVar[int]
    COMMITMENTS_FIELD_NUMBER: _ClassVar[int]
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    modulus: bytes
    s: bytes
    t: bytes
    commitments: _containers.RepeatedScalarFieldContainer[bytes]
    responses: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, modulus: _Optional[bytes] = ..., s: _Optional[bytes] = ..., t: _Optional[bytes] = ..., commitments: _Optional[_Iterable[bytes]] = ..., responses: _Optional[_Iterable[bytes]] = ...) -> None: ...

class FactorProof(_message.Message):
    __slots__ = ("commitments", "sigma", "z1", "z2", "w1", "w2", "v")
    COMMITMENTS_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    Z1_FIELD_NUMBER: _ClassVar[int]
    Z2_FIELD_NUMBER: _ClassVar[int]
    W1_FIELD_NUMBER: _ClassVar[int]
    W2_FIELD_NUMBER: _ClassVar[int]
    V_FIELD_NUMBER: _ClassVar[int]
    commitments: _containers.RepeatedScalarFieldContainer[bytes]
    sigma: bytes
    z1: bytes
    z2: bytes
    w1: bytes
    w2: bytes
    v: bytes
    def __init__(self, commitments: _Optional[_Iterable[bytes]] = ..., sigma: _Optional[bytes] = ..., z1: _Optional[bytes] = ..., z2: _Optional[bytes] = ..., w1: _Optional[bytes] = ..., w2: _Optional[bytes] = ..., v: _Optional[bytes] = ...) -> None: ...

class ModulusProof(_message.Message):
    __slots__ = ("w", "fourth_roots", "selectors", "nth_roots")
    W_FIELD_NUMBER: _ClassVar[int]
    FOURTH_ROOTS_FIELD_NUMBER: _ClassVar[int]
    SELECTORS_FIELD_NUMBER: _ClassVar[int]
    NTH_ROOTS_FIELD_NUMBER: _ClassVar[int]
    w: bytes
    fourth_roots: _containers.RepeatedScalarFieldContainer[bytes]
    selectors: _containers.RepeatedScalarFieldContainer[int]
    nth_roots: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, w: _Optional[bytes] = ..., fourth_roots: _Optional[_Iterable[bytes]] = ..., selectors: _Optional[_Iterable[int]] = ..., nth_roots: _Optional[_Iterable[bytes]] = ...) -> None: ...

class PaillierSecretKeyMessage(_message.Message):
    __slots__ = ("p", "q", "hs", "ring_pedersen")
    P_FIELD_NUMBER: _ClassVar[int]
    Q_FIELD_NUMBER: _ClassVar[int]
    HS_FIELD_NUMBER: _ClassVar[int]
    RING_PEDERSEN_FIELD_NUMBER: _ClassVar[int]
    p: bytes
    q: bytes
    hs: bytes
    ring_pedersen: RingPedersenParameters
    def __init__(self, p: _Optional[bytes] = ..., q: _Optional[bytes] = ..., hs: _Optional[bytes] = ..., ring_pedersen: _Optional[_Union[RingPedersenParameters, _Mapping]] = ...) -> None: ...

class Reveal(_message.Message):
    __slots__ = ("seed", "nonce")
    SEED_FIELD_NUMBER: _ClassVar[int]
    NONCE_FIELD_NUMBER: _ClassVar[int]
    seed: bytes
    nonce: bytes
    def __init__(self, seed: _Optional[bytes] = ..., nonce: _Optional[bytes] = ...) -> None: ...

class RoutedShare(_message.Message):
    __slots__ = ("a", "encrypted_b")
    A_FIELD_NUMBER: _ClassVar[int]
    ENCRYPTED_B_FIELD_NUMBER: _ClassVar[int]
    a: bytes
    encrypted_b: bytes
    def __init__(self, a: _Optional[bytes] = ..., encrypted_b: _Optional[bytes] = ...) -> None: ...

class Stage1Element(_message.Message):
    __slots__ = ("encrypted_a", "encrypted_b")
    ENCRYPTED_A_FIELD_NUMBER: _ClassVar[int]
    ENCRYPTED_B_FIELD_NUMBER: _ClassVar[int]
    encrypted_a: bytes
    encrypted_b: bytes
    def __init__(self, encrypted_a: _Optional[bytes] = ..., encrypted_b: _Optional[bytes] = ...) -> None: ...

class ComparePair(_message.Message):
    __slots__ = ("first", "second")
    FIRST_FIELD_NUMBER: _ClassVar[int]
    SECOND_FIELD_NUMBER: _ClassVar[int]
    first: int
    second: int
    def __init__(self, first: _Optional[int] = ..., second: _Optional[int] = ...) -> None: ...

class CompareRequest(_message.Message):
    __slots__ = ("pair", "bits")
    PAIR_FIELD_NUMBER: _ClassVar[int]
    BITS_FIELD_NUMBER: _ClassVar[int]
    pair: ComparePair
    bits: _comparison_pb2.EncryptedBitsMessage
    def __init__(self, pair: _Optional[_Union[ComparePair, _Mapping]] = ..., bits: _Optional[_Union[_comparison_pb2.EncryptedBitsMessage, _Mapping]] = ...) -> None: ...

class CompareReply(_message.Message):
    __slots__ = ("pair", "differences", "hint")
    PAIR_FIELD_NUMBER: _ClassVar[int]
    DIFFERENCES_FIELD_NUMBER: _ClassVar[int]
    HINT_FIELD_NUMBER: _ClassVar[int]
    pair: ComparePair
    differences: _comparison_pb2.MaskedDifferencesMessage
    hint: bool
    def __init__(self, pair: _Optional[_Union[ComparePair, _Mapping]] = ..., differences: _Optional[_Union[_comparison_pb2.MaskedDifferencesMessage, _Mapping]] = ..., hint: bool = ...) -> None: ...

class CompareRound(_message.Message):
    __slots__ = ("comparisons",)
    COMPARISONS_FIELD_NUMBER: _ClassVar[int]
    comparisons: _containers.RepeatedCompositeFieldContainer[CompareRequest]
    def __init__(self, comparisons: _Optional[_Iterable[_Union[CompareRequest, _Mapping]]] = ...) -> None: ...

class CompareReplies(_message.Message):
    __slots__ = ("replies",)
    REPLIES_FIELD_NUMBER: _ClassVar[int]
    replies: _containers.RepeatedCompositeFieldContainer[CompareReply]
    def __init__(self, replies: _Optional[_Iterable[_Union[CompareReply, _Mapping]]] = ...) -> None: ...

class MaskedOffsets(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, values: _Optional[_Iterable[bytes]] = ...) -> None: ...

class AdditiveShare(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, values: _Optional[_Iterable[bytes]] = ...) -> None: ...

class Indicator(_message.Message):
    __slots__ = ("key_id", "values", "opening", "proofs")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    OPENING_FIELD_NUMBER: _ClassVar[int]
    PROOFS_FIELD_NUMBER: _ClassVar[int]
    key_id: bytes
    values: _containers.RepeatedScalarFieldContainer[bytes]
    opening: bytes
    proofs: _containers.RepeatedCompositeFieldContainer[BitProof]
    def __init__(self, key_id: _Optional[bytes] = ..., values: _Optional[_Iterable[bytes]] = ..., opening: _Optional[bytes] = ..., proofs: _Optional[_Iterable[_Union[BitProof, _Mapping]]] = ...) -> None: ...

class BitProof(_message.Message):
    __slots__ = ("challenge_0", "challenge_1", "response_0", "response_1")
    CHALLENGE_0_FIELD_NUMBER: _ClassVar[int]
    CHALLENGE_1_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_0_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_1_FIELD_NUMBER: _ClassVar[int]
    challenge_0: bytes
    challenge_1: bytes
    response_0: bytes
    response_1: bytes
    def __init__(self, challenge_0: _Optional[bytes] = ..., challenge_1: _Optional[bytes] = ..., response_0: _Optional[bytes] = ..., response_1: _Optional[bytes] = ...) -> None: ...

class PathakMessage(_message.Message):
    __slots__ = ("open", "start", "curator_key", "party_key", "party_public_key", "commitment", "reveal", "routed_share", "barrier_ready", "barrier_release", "stage1_element", "masked_share", "masked_value", "ready_to_compare", "compare_request", "compare_reply", "indicator", "indicator_element", "selected_noise", "masked_noise", "share", "published", "test_record")
    OPEN_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    CURATOR_KEY_FIELD_NUMBER: _ClassVar[int]
    PARTY_KEY_FIELD_NUMBER: _ClassVar[int]
    PARTY_PUBLIC_KEY_FIELD_NUMBER: _ClassVar[int]
    COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    REVEAL_FIELD_NUMBER: _ClassVar[int]
    ROUTED_SHARE_FIELD_NUMBER: _ClassVar[int]
    BARRIER_READY_FIELD_NUMBER: _ClassVar[int]
    BARRIER_RELEASE_FIELD_NUMBER: _ClassVar[int]
    STAGE1_ELEMENT_FIELD_NUMBER: _ClassVar[int]
    MASKED_SHARE_FIELD_NUMBER: _ClassVar[int]
    MASKED_VALUE_FIELD_NUMBER: _ClassVar[int]
    READY_TO_COMPARE_FIELD_NUMBER: _ClassVar[int]
    COMPARE_REQUEST_FIELD_NUMBER: _ClassVar[int]
    COMPARE_REPLY_FIELD_NUMBER: _ClassVar[int]
    INDICATOR_FIELD_NUMBER: _ClassVar[int]
    INDICATOR_ELEMENT_FIELD_NUMBER: _ClassVar[int]
    SELECTED_NOISE_FIELD_NUMBER: _ClassVar[int]
    MASKED_NOISE_FIELD_NUMBER: _ClassVar[int]
    SHARE_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_FIELD_NUMBER: _ClassVar[int]
    TEST_RECORD_FIELD_NUMBER: _ClassVar[int]
    open: PathakParameters
    start: _common_pb2.Empty
    curator_key: CuratorKeys
    party_key: PaillierSecretKeyMessage
    party_public_key: PaillierPublicKeyMessage
    commitment: bytes
    reveal: Reveal
    routed_share: RoutedShare
    barrier_ready: _common_pb2.Empty
    barrier_release: _common_pb2.Empty
    stage1_element: Stage1Element
    masked_share: bytes
    masked_value: bytes
    ready_to_compare: MaskedOffsets
    compare_request: CompareRound
    compare_reply: CompareReplies
    indicator: Indicator
    indicator_element: bytes
    selected_noise: _common_pb2.Ciphertexts
    masked_noise: _common_pb2.Ciphertexts
    share: AdditiveShare
    published: PathakPublishedShare
    test_record: PathakTestRecord
    def __init__(self, open: _Optional[_Union[PathakParameters, _Mapping]] = ..., start: _Optional[_Union[_common_pb2.Empty, _Mapping]] = ..., curator_key: _Optional[_Union[CuratorKeys, _Mapping]] = ..., party_key: _Optional[_Union[PaillierSecretKeyMessage, _Mapping]] = ..., party_public_key: _Optional[_Union[PaillierPublicKeyMessage, _Mapping]] = ..., commitment: _Optional[bytes] = ..., reveal: _Optional[_Union[Reveal, _Mapping]] = ..., routed_share: _Optional[_Union[RoutedShare, _Mapping]] = ..., barrier_ready: _Optional[_Union[_common_pb2.Empty, _Mapping]] = ..., barrier_release: _Optional[_Union[_common_pb2.Empty, _Mapping]] = ..., stage1_element: _Optional[_Union[Stage1Element, _Mapping]] = ..., masked_share: _Optional[bytes] = ..., masked_value: _Optional[bytes] = ..., ready_to_compare: _Optional[_Union[MaskedOffsets, _Mapping]] = ..., compare_request: _Optional[_Union[CompareRound, _Mapping]] = ..., compare_reply: _Optional[_Union[CompareReplies, _Mapping]] = ..., indicator: _Optional[_Union[Indicator, _Mapping]] = ..., indicator_element: _Optional[bytes] = ..., selected_noise: _Optional[_Union[_common_pb2.Ciphertexts, _Mapping]] = ..., masked_noise: _Optional[_Union[_common_pb2.Ciphertexts, _Mapping]] = ..., share: _Optional[_Union[AdditiveShare, _Mapping]] = ..., published: _Optional[_Union[PathakPublishedShare, _Mapping]] = ..., test_record: _Optional[_Union[PathakTestRecord, _Mapping]] = ...) -> None: ...

class KindCount(_message.Message):
    __slots__ = ("kind", "count")
    KIND_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    kind: str
    count: int
    def __init__(self, kind: _Optional[str] = ..., count: _Optional[int] = ...) -> None: ...

class PathakPublishedShare(_message.Message):
    __slots__ = ("share", "fractional_bits", "parties", "timing", "self_deliveries")
    SHARE_FIELD_NUMBER: _ClassVar[int]
    FRACTIONAL_BITS_FIELD_NUMBER: _ClassVar[int]
    PARTIES_FIELD_NUMBER: _ClassVar[int]
    TIMING_FIELD_NUMBER: _ClassVar[int]
    SELF_DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    share: AdditiveShare
    fractional_bits: int
    parties: int
    timing: _containers.RepeatedCompositeFieldContainer[_common_pb2.StageTiming]
    self_deliveries: _containers.RepeatedCompositeFieldContainer[KindCount]
    def __init__(self, share: _Optional[_Union[AdditiveShare, _Mapping]] = ..., fractional_bits: _Optional[int] = ..., parties: _Optional[int] = ..., timing: _Optional[_Iterable[_Union[_common_pb2.StageTiming, _Mapping]]] = ..., self_deliveries: _Optional[_Iterable[_Union[KindCount, _Mapping]]] = ...) -> None: ...

class PathakTestRecord(_message.Message):
    __slots__ = ("model", "noise", "records")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    NOISE_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    model: _containers.RepeatedScalarFieldContainer[float]
    noise: _containers.RepeatedScalarFieldContainer[int]
    records: int
    def __init__(self, model: _Optional[_Iterable[float]] = ..., noise: _Optional[_Iterable[int]] = ..., records: _Optional[int] = ...) -> None: ...
