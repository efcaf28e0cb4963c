"""The committed generated code must match the .proto files (the source of truth)."""

import importlib
import subprocess
import sys
from pathlib import Path

import grpc_tools
from google.protobuf import descriptor_pb2

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "protos"


def _without_json_names(file_proto):
    """protoc fills json_name in descriptor sets only; it carries no wire meaning."""
    def strip(messages):
        for message in messages:
            for field in message.field:
                field.ClearField("json_name")
            strip(message.nested_type)

    strip(file_proto.message_type)
    return file_proto


def test_generated_descriptors_match_the_proto_files(tmp_path):
    protos = sorted(p.relative_to(PROTO_ROOT) for p in (PROTO_ROOT / "mpdp" / "proto").rglob("*.proto"))
    assert protos, "no .proto files found"
    descriptor_set = tmp_path / "set.pb"
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO_ROOT}", f"-I{Path(grpc_tools.__file__).parent / '_proto'}", f"--descriptor_set_out={descriptor_set}",
         *map(str, protos)],
        check=True,
    )
    compiled = descriptor_pb2.FileDescriptorSet.FromString(descriptor_set.read_bytes())
    for file_proto in compiled.file:
        module = importlib.import_module(file_proto.name.removesuffix(".proto").replace("/", ".") + "_pb2")
        committed = descriptor_pb2.FileDescriptorProto.FromString(module.DESCRIPTOR.serialized_pb)
        assert _without_json_names(committed) == _without_json_names(file_proto), f"{file_proto.name} changed: run `python protos/generate.py`"
        if file_proto.service:
            grpc_module = importlib.import_module(module.__name__ + "_grpc")
            for service in file_proto.service:
                stub = getattr(grpc_module, f"{service.name}Stub")
                servicer = getattr(grpc_module, f"{service.name}Servicer")
                assert {m.name for m in service.method} <= set(dir(servicer)), stub
