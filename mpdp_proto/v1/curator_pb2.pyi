from mpdp_proto.v1 import common_pb2 as _common_pb2
from mpdp_proto.v1 import pathak_pb2 as _pathak_pb2
from google.protobuf import descriptor as _descriptor
from typing import ClassVar as _ClassVar

DESCRIPTOR: _descriptor.FileDescriptor
