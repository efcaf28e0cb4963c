"""Regenerate the committed Python code from the .proto files (the source of truth).

    python protos/generate.py

tests/test_protos_current.py fails when the committed code is stale, or needs a newer protobuf or grpcio than
pyproject.toml's floors: run this with grpcio-tools 1.70.0 (protoc 29.0), e.g. in a venv of its own.
"""

from __future__ import annotations

import sys
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "protos"


def proto_files() -> list[str]:
    return sorted(str(p.relative_to(PROTO_ROOT)) for p in (PROTO_ROOT / "mpdp" / "proto").rglob("*.proto"))


def well_known_types() -> str:
    """google/protobuf/*.proto (Any) as shipped with grpc_tools."""
    import grpc_tools

    return str(Path(grpc_tools.__file__).parent / "_proto")


def generate(out: Path = ROOT) -> None:
    arguments = ["protoc", f"-I{PROTO_ROOT}", f"-I{well_known_types()}", f"--python_out={out}", f"--pyi_out={out}", f"--grpc_python_out={out}"]
    if protoc.main(arguments + proto_files()) != 0:
        raise SystemExit("protoc failed")


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT)
