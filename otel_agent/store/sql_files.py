"""Reading the SQL that lives in files: a folder's ``manifest.txt`` gives the order, one file per line."""

from __future__ import annotations

from importlib import resources

_ROOT = "otel_agent.store"


def read_sql(folder: str, name: str) -> str:
    return resources.files(_ROOT).joinpath(folder, name).read_text(encoding="utf-8")


def manifest(folder: str) -> list[str]:
    """File names listed in ``folder/manifest.txt``, in order (blank lines and ``#`` comments skipped)."""
    text = read_sql(folder, "manifest.txt")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def ordered_sql(folder: str) -> list[tuple[str, str]]:
    return [(name, read_sql(folder, name)) for name in manifest(folder)]
