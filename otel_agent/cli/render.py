"""Printing query results as a table, CSV or JSON.

``table`` is for a person at a terminal: text is escaped (telemetry is hostile input: no control characters
reach the terminal) and long text is cut with ``…`` to fit; numbers are right-aligned; money (columns named
``*_usd`` or ``cost``) is always ``$0.000075``, never ``7.5e-05``. ``csv`` and ``json`` are for programs: every
value whole, never cut; csv writes floats positionally too (``0.000075``).
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from decimal import Decimal
from typing import Any

import click
from tabulate import tabulate

from otel_agent.query.readonly import QueryResult

ELLIPSIS = "…"


def cell_width() -> int:
    """How wide one text cell may be in a table: half the terminal, between 24 and 60 characters."""
    columns = shutil.get_terminal_size((100, 24)).columns
    return max(24, min(60, columns // 2))


def escape(text: str) -> str:
    """Control characters made visible (``\\n``, ``\\x1b``), so text from telemetry cannot move the cursor,
    recolour the terminal or break a table row."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the last one ``…`` when something was cut."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + ELLIPSIS


def positional(value: float) -> str:
    """A float without exponent notation, as short as round-trips (``7.5e-05`` → ``0.000075``)."""
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    text = format(Decimal(repr(value)), "f")
    return text[:-2] if text.endswith(".0") else text


def usd(value: Any) -> str:
    """Money in one notation: ``$`` and six decimals, more only for amounts below a millionth."""
    amount = float(value)
    if amount != 0 and abs(amount) < 5e-7:
        return "$" + positional(amount)
    return f"${amount:.6f}"


def is_money(column: str) -> bool:
    return column == "cost" or column.endswith("_usd")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)


def _json_text(v: Any) -> str:
    return json.dumps(v, default=str, ensure_ascii=False)


def table_cell(column: str, v: Any, width: int) -> str:
    if v is None:
        return ""
    if _is_number(v):
        if is_money(column):
            return usd(v)
        if isinstance(v, float):
            return positional(round(v, 6)) if abs(v) >= 1e-6 or v == 0 else positional(v)
        return str(v)
    text = _json_text(v) if isinstance(v, (dict, list, tuple)) else str(v)
    return cut(escape(text), width)


def csv_cell(v: Any) -> Any:
    if isinstance(v, (dict, list, tuple)):
        return _json_text(v)
    if isinstance(v, float):
        return positional(v)
    return v


def table(columns: list[str], rows: list[tuple[Any, ...]] | list[list[Any]], width: int | None = None) -> str:
    """A plain text table: cut, escaped, numbers right-aligned (no footer)."""
    width = width or cell_width()
    numeric = [
        any(_is_number(r[i]) for r in rows) and all(r[i] is None or _is_number(r[i]) for r in rows)
        for i in range(len(columns))
    ]
    cells = [[table_cell(c, v, width) for c, v in zip(columns, row, strict=True)] for row in rows]
    return tabulate(
        cells,
        headers=[cut(escape(c), width) for c in columns],
        tablefmt="simple",
        disable_numparse=True,
        colalign=["right" if n else "left" for n in numeric] or None,
    )


def render(result: QueryResult, fmt: str) -> str:
    if fmt == "json":
        return json.dumps([dict(zip(result.columns, row, strict=True)) for row in result.rows], default=str, indent=2)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(result.columns)
        w.writerows([[csv_cell(v) for v in row] for row in result.rows])
        return buf.getvalue().rstrip("\n")
    n = len(result.rows)
    cut_by = ", truncated at the receiver's byte cap" if result.truncated_by == "bytes" else ", truncated at --max-rows"
    footer = f"({n} row{'s' if n != 1 else ''}{cut_by if result.truncated else ''})"
    if not result.columns:
        return footer
    return f"{table(result.columns, result.rows)}\n{footer}"


def emit(result: QueryResult, fmt: str) -> None:
    """Print ``result``. csv and json are data: written byte for byte (``color=True`` stops click from
    stripping escape sequences out of values when the output is not a terminal); a table is already escaped."""
    click.echo(render(result, fmt), color=True if fmt != "table" else None)
