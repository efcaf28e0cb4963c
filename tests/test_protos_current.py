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


def _floor(requirements: list[str], name: str) -> tuple[int, ...]:
    import re

    for requirement in requirements:
        match = re.fullmatch(rf"{name}>=([0-9.]+)", requirement.split(";")[0].strip())
        if match:
            return tuple(int(part) for part in match.group(1).split("."))
    raise AssertionError(f"pyproject.toml names no lower bound for {name}")


def test_the_generated_code_loads_on_the_lowest_protobuf_and_grpcio_pyproject_allows():
    """Code from a newer grpcio-tools demands a newer runtime than mpdp's ranges (and flwr's) allow: regenerate
    with the grpcio-tools of the floor (pyproject.toml's comment) whenever a .proto changes."""
    import re
    import tomllib

    requirements = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    protobuf_floor, grpcio_floor = _floor(requirements, "protobuf"), _floor(requirements, "grpcio")
    generated = sorted((ROOT / "mpdp" / "proto").rglob("*_pb2*.py"))
    assert generated
    for path in generated:
        text = path.read_text()
        gencode = re.search(r"ValidateProtobufRuntimeVersion\(\s*_runtime_version\.Domain\.PUBLIC,\s*(\d+),\s*(\d+),\s*(\d+),", text)
        if gencode:
            assert tuple(map(int, gencode.groups())) <= protobuf_floor, f"{path.name}: gencode {gencode.groups()}"
        grpc_version = re.search(r"GRPC_GENERATED_VERSION = '([0-9.]+)'", text)
        if grpc_version:
            assert tuple(map(int, grpc_version.group(1).split("."))) <= grpcio_floor, f"{path.name}: {grpc_version.group(1)}"
