"""Every SQL file of the store, by a registered name: DDL folders run in numeric-prefix order, query statements
are looked up by name.

Two kinds of statement file live under ``otel_agent/store/``:

- **DDL** (``DDL_FOLDERS``): the raw schema and the derived views and macros, applied when a store is opened.
  Every ``.sql`` file of such a folder is applied, in the order of its numeric prefix (``080_runs.sql``); the
  prefix is the only order (no manifest), so a file cannot be present and silently skipped. Its name drops
  the prefix: ``views/runs/080_runs.sql`` is ``"views/runs/runs"``, so a renumbering breaks no caller.
- **Queries** (``QUERIES``): statements a caller executes itself, with its own inputs (the writer's insert
  SQL over registered Arrow tables, the maintained state's steps; the read layer's named queries live in
  otel_agent/read/sql/). Each is listed here by name,
  ``"<folder>/<stem>"`` (``"ingest/spans_insert_new"`` is ``ingest/spans_insert_new.sql``), and never executed
  as DDL.

``check_registered`` walks the package's ``.sql`` files and fails on any that is neither in a DDL folder nor
a registered query, and on a registered name without its file (a file nobody runs would rot unnoticed). It
runs once, the first time any statement is read, so a receiver or CLI fails at start-up, and in a test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable

from otel_agent.errors import OtelAgentError

_ROOT = "otel_agent.store"

SCHEMA_FOLDER = "schema"
"""The versioned raw schema and the product's append-only tables (``SCHEMA_VERSION`` in database.py)."""

DERIVED_FOLDERS: tuple[str, ...] = ("views/ingest", "views/runs", "views/evidence")
"""Derived SQL (views, macros, the price table), applied after the schema in this order, each folder in the
order of its files' numeric prefixes. Its text is the derived fingerprint (``derived_fingerprint``)."""

DDL_FOLDERS: tuple[str, ...] = (SCHEMA_FOLDER, *DERIVED_FOLDERS)

QUERIES: dict[str, tuple[str, ...]] = {
    "ingest": (
        "spans_duplicates",
        "spans_insert_all",
        "spans_insert_new",
        "logs_duplicates",
        "logs_insert_all",
        "logs_insert_new",
        "metric_points_duplicates",
        "metric_points_insert_all",
        "metric_points_insert_new",
        "lineage_keys_insert_all",
        "lineage_keys_insert_new",
        "documents_insert_all",
        "documents_insert_new",
    ),
    # The maintained derived state (store/maintained.py): its tables, the runs view over them, and the writer's
    # steps that keep them (each a script run on the writer's connection, with oa_store. naming the store).
    "maintenance": (
        "state",
        "drop_state",
        "runs_view",
        "scoped_spans",
        "query_time_views",
        "backlog",
        "step_dirty",
        "step_scope",
        "step_apply",
        "step_proxy",
        "mark_deleted_spans",
        "mark_deleted_logs",
    ),
}
"""Query statements by folder: the stems of its ``.sql`` files. Add a name here with its file."""

NEW_SPANS_TABLE = "_new_spans"
"""TEMP table handed between ingest statements within one commit: ``ingest/spans_insert_new`` creates it
(the spans of the batch not stored before, one copy each), and ``ingest/lineage_keys_insert_new`` and
``ingest/documents_insert_new`` read it right after. Each of the three files names it in its header."""

TEMP_TABLES: dict[str, tuple[str, tuple[str, ...]]] = {
    NEW_SPANS_TABLE: ("ingest/spans_insert_new", ("ingest/lineage_keys_insert_new", "ingest/documents_insert_new")),
}
"""TEMP tables passed between statement files: name → (the statement that creates it, the ones that read it).
A test checks the files against this table."""

_PREFIX = re.compile(r"^(\d+)_([a-z0-9_]+)\.sql$")


class StatementRegistryError(OtelAgentError):
    """A ``.sql`` file the registry does not account for, a registered name without a file, or a DDL file
    without a unique numeric prefix (a packaging or development error: the store refuses to start)."""


class UnknownStatementError(OtelAgentError, KeyError):
    """``statement(name)`` for a name that is not registered."""


@dataclass(frozen=True)
class Statement:
    """One SQL file: ``name`` as callers use it, ``path`` relative to otel_agent/store/, ``sql`` its text."""

    name: str
    path: str
    sql: str
    kind: str  # "ddl" | "query"


def _folder(root: Traversable, folder: str) -> Traversable:
    node = root
    for part in folder.split("/"):
        node = node.joinpath(part)
    return node


def _sql_files(node: Traversable, prefix: str = "") -> list[str]:
    """Paths (relative to otel_agent/store/) of every ``.sql`` file under ``node``."""
    found: list[str] = []
    for child in node.iterdir():
        rel = f"{prefix}{child.name}"
        if child.is_dir():
            found += _sql_files(child, rel + "/")
        elif child.name.endswith(".sql"):
            found.append(rel)
    return found


def _ddl_folder(root: Traversable, folder: str) -> list[Statement]:
    node = _folder(root, folder)
    entries: list[tuple[int, str, str]] = []
    for child in node.iterdir():
        if child.is_dir() or not child.name.endswith(".sql"):
            continue
        match = _PREFIX.match(child.name)
        if not match:
            raise StatementRegistryError(
                f"otel_agent/store/{folder}/{child.name}: a DDL file's name is NNN_name.sql (lowercase), its "
                "numeric prefix giving the order in which it is applied"
            )
        entries.append((int(match.group(1)), match.group(2), child.name))
    entries.sort()
    seen: dict[int, str] = {}
    stems: dict[str, str] = {}
    out: list[Statement] = []
    for number, stem, file_name in entries:
        if number in seen:
            raise StatementRegistryError(
                f"otel_agent/store/{folder}: {seen[number]} and {file_name} have the same prefix; the order "
                "would be ambiguous"
            )
        if stem in stems:
            raise StatementRegistryError(f"otel_agent/store/{folder}: {stems[stem]} and {file_name} share a name")
        seen[number], stems[stem] = file_name, file_name
        text = node.joinpath(file_name).read_text(encoding="utf-8")
        out.append(Statement(f"{folder}/{stem}", f"{folder}/{file_name}", text, "ddl"))
    return out


@dataclass(frozen=True)
class Registry:
    ddl: dict[str, tuple[Statement, ...]]  # folder → statements in order
    by_name: dict[str, Statement]


def build_registry(root: Traversable) -> Registry:
    """Read and check every statement under ``root`` (the otel_agent/store package folder)."""
    ddl = {folder: tuple(_ddl_folder(root, folder)) for folder in DDL_FOLDERS}
    by_name: dict[str, Statement] = {s.name: s for statements in ddl.values() for s in statements}
    for folder, stems in QUERIES.items():
        for stem in stems:
            name = f"{folder}/{stem}"
            node = _folder(root, folder).joinpath(stem + ".sql")
            if not node.is_file():
                raise StatementRegistryError(
                    f"statement {name!r} is registered but otel_agent/store/{name}.sql is missing"
                )
            if name in by_name:
                raise StatementRegistryError(f"statement {name!r} is registered twice")
            by_name[name] = Statement(name, f"{name}.sql", node.read_text(encoding="utf-8"), "query")
    known = {s.path for s in by_name.values()}
    unregistered = sorted(set(_sql_files(root)) - known)
    if unregistered:
        raise StatementRegistryError(
            "SQL file(s) not registered: "
            + ", ".join(f"otel_agent/store/{p}" for p in unregistered)
            + " (put DDL in a folder of statements.DDL_FOLDERS, or add a query's name to statements.QUERIES)"
        )
    return Registry(ddl, by_name)


@cache
def registry() -> Registry:
    """Every statement of this package, read and checked once (``check_registered``)."""
    return build_registry(resources.files(_ROOT))


def check_registered() -> None:
    """Raise ``StatementRegistryError`` unless every ``.sql`` file is registered and every name has its file."""
    registry()


def statement(name: str) -> str:
    """The SQL text of a registered statement, e.g. ``statement("ingest/spans_insert_new")`` or, for a DDL
    file, its name without the numeric prefix (``statement("schema/lineage_keys")``)."""
    try:
        return registry().by_name[name].sql
    except KeyError:
        raise UnknownStatementError(f"no SQL statement is registered as {name!r}") from None


def ddl(folder: str) -> tuple[Statement, ...]:
    """The statements of a DDL folder (``DDL_FOLDERS``), in the order they are applied."""
    try:
        return registry().ddl[folder]
    except KeyError:
        raise UnknownStatementError(f"{folder!r} is not a DDL folder ({', '.join(DDL_FOLDERS)})") from None


def queries() -> tuple[Statement, ...]:
    """Every registered query statement (for tests that prepare them all)."""
    return tuple(s for s in registry().by_name.values() if s.kind == "query")
