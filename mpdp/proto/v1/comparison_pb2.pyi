from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class EncryptedBitsMessage(_message.Message):
    __slots__ = ("key_id", "ciphertexts", "bit_proofs")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    CIPHERTEXTS_FIELD_NUMBER: _ClassVar[int]
    BIT_PROOFS_FIELD_NUMBER: _ClassVar[int]
    key_id: bytes
    ciphertexts: _containers.RepeatedScalarFieldContainer[bytes]
    bit_proofs: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, key_id: _Optional[bytes] = ..., ciphertexts: _Optional[_Iterable[bytes]] = ..., bit_proofs: _Optional[_Iterable[bytes]] = ...) -> None: ...

class MaskedDifferencesMessage(_message.Message):
    __slots__ = ("key_id", "ciphertexts")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    CIPHERTEXTS_FIELD_NUMBER: _ClassVar[int]
    key_id: bytes
    ciphertexts: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, key_id: _Optional[bytes] = ..., ciphertexts: _Optional[_Iterable[bytes]] = ...) -> None: ...
