"""Real small or read-only file systems for tests (tmpfs, mounted as root; skipped, saying why, where refused, and
failed where refused in CI: tests/tools.py)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.tools import missing_tool


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True)


@contextmanager
def _applied(tool: str, apply: tuple[str, ...], undo: tuple[str, ...], refused: str) -> Iterator[None]:
    """Run the command ``apply`` for the block, then ``undo``; when it fails, skip saying ``refused`` (in CI, fail:
    tests/tools.py)."""
    done = _run(*apply)
    if done.returncode != 0:
        missing_tool(tool, f"{refused}: {done.stderr.strip()}")
    try:
        yield
    finally:
        _run(*undo)


@contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``where`` for the block; a skip (in CI a failure) when mounting is refused."""
    where.mkdir(parents=True, exist_ok=True)
    mount = ("mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where))
    with _applied(
        "tmpfs", mount, ("umount", "-l", str(where)), "cannot mount a tmpfs here (needs root / CAP_SYS_ADMIN)"
    ):
        yield where


def remount_read_only(where: Path) -> None:
    done = _run("mount", "-o", "remount,ro", str(where))
    assert done.returncode == 0, done.stderr


@contextmanager
def immutable(path: Path) -> Iterator[Path]:
    """``path`` made unwritable even for root (``chattr +i``; chmod where not root); skip where neither works."""
    import os

    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o444)
        try:
            yield path
        finally:
            path.chmod(mode)
        return
    with _applied(
        "chattr",
        ("chattr", "+i", str(path)),
        ("chattr", "-i", str(path)),
        "cannot make a file immutable here (chattr +i)",
    ):
        yield path
