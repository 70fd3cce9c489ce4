"""Regenerate the Python code for the project's own API from proto/ into otel_agent/api/.

python scripts/gen_proto.py            # write the generated files
python scripts/gen_proto.py --check    # exit 1 if the committed files are stale (used by a test)
"""

from __future__ import annotations

import argparse
import filecmp
import sys
import tempfile
from importlib import resources
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTO_DIR = ROOT / "proto"
GENERATED = [
    "otel_agent/api/v1/query_pb2.py",
    "otel_agent/api/v1/query_pb2.pyi",
    "otel_agent/api/v1/query_pb2_grpc.py",
    "otel_agent/api/v1/review_pb2.py",
    "otel_agent/api/v1/review_pb2.pyi",
    "otel_agent/api/v1/review_pb2_grpc.py",
]


def generate(out_dir: Path) -> None:
    protos = sorted(str(p.relative_to(PROTO_DIR)) for p in PROTO_DIR.rglob("*.proto"))
    include = str(resources.files("grpc_tools") / "_proto")
    args = [
        "grpc_tools.protoc",
        f"-I{PROTO_DIR}",
        f"-I{include}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        *protos,
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    if not args.check:
        generate(ROOT)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        stale = [g for g in GENERATED if not (ROOT / g).exists() or not filecmp.cmp(Path(tmp) / g, ROOT / g, False)]
    if stale:
        print("stale generated code (run python scripts/gen_proto.py):", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
