"""The discovery file ``<db>.receiver.json``: a running receiver says there how to reach it (its pid and its
gRPC and HTTP addresses), so ``otel-agent sql --db`` can query it and a second ``serve`` can say who holds the
file. Written atomically after both transports listen, removed on a clean stop; a stale one (its pid gone,
e.g. after ``kill -9``) is ignored."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path


def discovery_path(db: str | Path) -> Path:
    """Where the discovery file of the store ``db`` lives: beside it."""
    return Path(str(db) + ".receiver.json")


@dataclass(frozen=True)
class Discovery:
    """A running receiver's pid and addresses, as its discovery file gives them."""

    pid: int
    grpc: str
    http: str

    def describe(self) -> str:
        """A short phrase for messages naming who holds a store."""
        return f"pid {self.pid}, gRPC {self.grpc}, HTTP {self.http}"


def write_discovery(db: str | Path, grpc: str, http: str) -> None:
    """Write the discovery file of ``db`` for this process, atomically (rename over the old one)."""
    path = discovery_path(db)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"pid": os.getpid(), "grpc": grpc, "http": http}) + "\n")
    tmp.replace(path)


def read_discovery(db: str | Path) -> Discovery | None:
    """The receiver holding ``db``, if its discovery file names a live process (else None)."""
    try:
        info = json.loads(discovery_path(db).read_text())
        found = Discovery(int(info["pid"]), str(info.get("grpc", "")), str(info["http"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        os.kill(found.pid, 0)
    except PermissionError:  # alive, owned by another user
        return found
    except OSError:
        return None  # stale: its receiver died without removing it (kill -9)
    return found
