"""Why a file cannot be opened as a store, in one line: checks made before DuckDB reads a file, and DuckDB's
errors turned into ``StoreOpenError`` messages that name the file and the cause (issue 11, item 14)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from otel_agent.errors import StoreHeldError, StoreOpenError

_LOCK_HOLDER = re.compile(r"Conflicting lock is held in (?P<exe>.+?) \(PID (?P<pid>\d+)\)")


def held_by(path: str, duckdb_message: str = "") -> str:
    """Who holds ``path``, for error messages: the receiver its discovery file names (store/discovery.py), else
    the process DuckDB names in its lock error (``Conflicting lock is held in /usr/bin/python3 (PID 123)``)."""
    from otel_agent.store.discovery import read_discovery  # the one reader of <db>.receiver.json

    held = read_discovery(path)
    if held is not None:
        return f"held by an otel-agent receiver ({held.describe()}; see {path}.receiver.json)"
    match = _LOCK_HOLDER.search(duckdb_message)
    return f"locked by another process (PID {match['pid']}, {match['exe']})" if match else "locked by another process"


_DUCKDB_MAGIC = b"DUCK"


def check_file(path: str) -> None:
    """Refuse, before DuckDB reads it, a path that cannot be a store: under a regular file, a directory, an
    empty file, or a file of another format (DuckDB would try to load an extension for a SQLite file)."""
    p = Path(path)
    for parent in p.parents:
        if parent.exists():
            if not parent.is_dir():
                raise StoreOpenError(f"cannot open the store {path}: {parent} is a file, not a directory")
            break
    if p.is_dir():
        raise StoreOpenError(f"cannot open the store {path}: it is a directory")
    if not p.exists():
        return
    try:
        with p.open("rb") as f:
            head = f.read(16)
    except OSError as exc:
        raise StoreOpenError(f"cannot open the store {path}: {exc.strerror or exc}") from exc
    if not head:
        raise StoreOpenError(f"cannot open the store {path}: the file is empty (0 bytes), not an otel_agent store")
    if head.startswith(b"SQLite format 3"):
        raise StoreOpenError(f"cannot open the store {path}: it is a SQLite database, not an otel_agent store")
    if head[8:12] != _DUCKDB_MAGIC:
        raise StoreOpenError(f"cannot open the store {path}: not a DuckDB file (another format, or damaged)")


def open_failure(path: str, exc: BaseException) -> StoreOpenError:
    """One line for a file DuckDB could not open or read, naming the file and the cause in words."""
    text = str(exc)
    low = text.lower()
    if isinstance(exc, OSError):
        cause = exc.strerror or text
    elif "could not set lock" in low or "conflicting lock" in low:
        return StoreHeldError(f"cannot open the store {path}: it is {held_by(path, text)}")
    elif "read-only file system" in low:
        cause = "the file system is read-only"
    elif "permission denied" in low or "operation not permitted" in low:
        cause = "the file is not writable (permission denied)" if "open file" in low else "permission denied"
    elif "could not read enough bytes" in low:
        cause = "the file is truncated (shorter than DuckDB's own header says)"
    elif "corrupt" in low or "checksum" in low:
        cause = "the file is corrupted (a block checksum does not match)"
    elif "not a valid duckdb database" in low:
        cause = "not a DuckDB file (another format, or damaged)"
    elif "no space left" in low:
        cause = "no space left on the device"
    else:
        cause = text.splitlines()[0] if text else type(exc).__name__
    return StoreOpenError(f"cannot open the store {path}: {cause}")


@contextlib.contextmanager
def closing_on_failure(con: Any, path: str) -> Iterator[None]:
    """Close ``con`` when the block fails (a store opened half-way is never left open); a DuckDB error leaves as
    ``open_failure`` naming ``path``, anything else as it is."""
    import duckdb

    try:
        yield
    except duckdb.Error as exc:
        con.close()
        raise open_failure(path, exc) from exc
    except BaseException:
        con.close()
        raise
