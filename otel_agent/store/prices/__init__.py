"""The model price table: shipped as ``prices.csv`` beside this file, extended or overridden by a user CSV.

``load_prices(con)`` fills ``price_table`` (created by ``views/runs/000_price_table.sql``) each time a store is
opened for writing (and over merged shards): the shipped rows, then the rows of the file named by the
``OTEL_AGENT_PRICES`` environment variable, if set. User rows win over shipped rows for the same call (see
docs/views-runs.md, "Cost"). The CSV is read in Python and inserted through the connection as an Arrow table,
so no SQL-level file access is needed (the receiver's connection has it disabled).

CSV columns (header required; all but the first four may be empty or missing):
``provider, model_pattern, input_usd_per_mtok, output_usd_per_mtok, cache_read_usd_per_mtok,
cache_write_usd_per_mtok, source, source_date, reasoning_usd_per_mtok``.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from otel_agent.errors import ConfigError

if TYPE_CHECKING:
    import duckdb

PRICES_ENV = "OTEL_AGENT_PRICES"
"""Environment variable naming a user price CSV (same columns as the shipped one)."""

_REQUIRED = ("provider", "model_pattern", "input_usd_per_mtok", "output_usd_per_mtok")
_NUMBERS = (
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    "cache_read_usd_per_mtok",
    "cache_write_usd_per_mtok",
    "reasoning_usd_per_mtok",
)

_COLUMNS = (
    ("provider", "string"),
    ("model_pattern", "string"),
    ("input_usd_per_mtok", "float64"),
    ("output_usd_per_mtok", "float64"),
    ("cache_read_usd_per_mtok", "float64"),
    ("cache_write_usd_per_mtok", "float64"),
    ("reasoning_usd_per_mtok", "float64"),
    ("source", "string"),
    ("source_date", "date32"),
    ("origin", "string"),
    ("priority", "int32"),
)


def _number(value: str | None, where: str) -> float | None:
    if value is None or not value.strip():
        return None
    try:
        number = float(value)
    except ValueError as exc:
        raise ConfigError(f"{where}: not a number: {value!r}") from exc
    if number < 0:
        raise ConfigError(f"{where}: a price cannot be negative: {value!r}")
    return number


def _date(value: str | None, where: str) -> dt.date | None:
    if value is None or not value.strip():
        return None
    try:
        return dt.date.fromisoformat(value.strip())
    except ValueError as exc:
        raise ConfigError(f"{where}: source_date must be YYYY-MM-DD, got {value!r}") from exc


def parse_prices(text: str, origin: str, name: str) -> list[dict[str, object]]:
    """Rows of a price CSV, checked; ``origin`` is ``shipped`` or ``user``."""
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in _REQUIRED if c not in (reader.fieldnames or [])]
    if missing:
        raise ConfigError(f"{name}: price CSV lacks column(s) {', '.join(missing)}")
    rows: list[dict[str, object]] = []
    for line, rec in enumerate(reader, start=2):
        where = f"{name} line {line}"
        provider = (rec.get("provider") or "").strip().lower()
        pattern = (rec.get("model_pattern") or "").strip().lower()
        if not provider or not pattern:
            raise ConfigError(f"{where}: provider and model_pattern are required")
        row: dict[str, object] = {"provider": provider, "model_pattern": pattern}
        for col in _NUMBERS:
            row[col] = _number(rec.get(col), f"{where} {col}")
        if row["input_usd_per_mtok"] is None or row["output_usd_per_mtok"] is None:
            raise ConfigError(f"{where}: input_usd_per_mtok and output_usd_per_mtok are required")
        row["source"] = (rec.get("source") or "").strip() or (name if origin == "user" else None)
        row["source_date"] = _date(rec.get("source_date"), where)
        row["origin"] = origin
        row["priority"] = 0 if origin == "user" else 1
        rows.append(row)
    return rows


def shipped_prices_text() -> str:
    return resources.files(__name__).joinpath("prices.csv").read_text(encoding="utf-8")


def price_rows(user_file: str | Path | None = None) -> list[dict[str, object]]:
    """Shipped rows plus the user file's (``user_file``, else ``$OTEL_AGENT_PRICES``, else none)."""
    rows = parse_prices(shipped_prices_text(), "shipped", "prices.csv")
    path = user_file if user_file is not None else os.environ.get(PRICES_ENV) or None
    if path:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read the price file {path} ({PRICES_ENV}): {exc}") from exc
        rows += parse_prices(text, "user", str(path))
    return rows


def load_prices(con: duckdb.DuckDBPyConnection, user_file: str | Path | None = None) -> int:
    """Replace the rows of ``price_table`` with the shipped and user prices; returns the row count."""
    import pyarrow as pa

    schema = pa.schema([(name, getattr(pa, type_)()) for name, type_ in _COLUMNS])
    table = pa.Table.from_pylist(price_rows(user_file), schema=schema)
    con.execute("DELETE FROM price_table").fetchall()
    con.register("otel_agent_price_rows", table)
    try:
        con.execute("INSERT INTO price_table BY NAME SELECT * FROM otel_agent_price_rows").fetchall()
    finally:
        con.unregister("otel_agent_price_rows")
    return table.num_rows
