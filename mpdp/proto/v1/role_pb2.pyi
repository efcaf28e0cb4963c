from google.protobuf import any_pb2 as _any_pb2
from mpdp.proto.v1 import common_pb2 as _common_pb2
from mpdp.proto.v1 import dppp_pb2 as _dppp_pb2
from mpdp.proto.v1 import du_pb2 as _du_pb2
from mpdp.proto.v1 import hamm_pb2 as _hamm_pb2
from mpdp.proto.v1 import keygen_pb2 as _keygen_pb2
from mpdp.proto.v1 import pathak_pb2 as _pathak_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Envelope(_message.Message):
    __slots__ = ("session_id", "sender", "receiver", "dppp", "pathak", "hamm", "du", "keygen", "extension")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SENDER_FIELD_NUMBER: _ClassVar[int]
    RECEIVER_FIELD_NUMBER: _ClassVar[int]
    DPPP_FIELD_NUMBER: _ClassVar[int]
    PATHAK_FIELD_NUMBER: _ClassVar[int]
    HAMM_FIELD_NUMBER: _ClassVar[int]
    DU_FIELD_NUMBER: _ClassVar[int]
    KEYGEN_FIELD_NUMBER: _ClassVar[int]
    EXTENSION_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    sender: str
    receiver: str
    dppp: _dppp_pb2.DpppMessage
    pathak: _pathak_pb2.PathakMessage
    hamm: _hamm_pb2.HammMessage
    du: _du_pb2.DuMessage
    keygen: _keygen_pb2.KeygenMessage
    extension: _any_pb2.Any
    def __init__(self, session_id: _Optional[str] = ..., sender: _Optional[str] = ..., receiver: _Optional[str] = ..., dppp: _Optional[_Union[_dppp_pb2.DpppMessage, _Mapping]] = ..., pathak: _Optional[_Union[_pathak_pb2.PathakMessage, _Mapping]] = ..., hamm: _Optional[_Union[_hamm_pb2.HammMessage, _Mapping]] = ..., du: _Optional[_Union[_du_pb2.DuMessage, _Mapping]] = ..., keygen: _Optional[_Union[_keygen_pb2.KeygenMessage, _Mapping]] = ..., extension: _Optional[_Union[_any_pb2.Any, _Mapping]] = ...) -> None: ...
