"""Read results as a plain text table, for every face that prints one (the CLI's ``--format table``, the demo's
summary): text escaped (telemetry is hostile input: no control characters reach a terminal) and cut with ``…``,
numbers right-aligned and rounded for reading (``1840``, ``12.3``, ``0.231``), money (columns named ``*_usd`` or
``cost``, or a ``value`` whose ``unit`` is ``USD``) always ``$0.000075`` (``read.words.usd``), never ``7.5e-05``.
Fitted to a width when given: text cells are cut shorter and columns that still do not fit are left out.
"""

from __future__ import annotations

import datetime
import json
import shutil
from decimal import Decimal
from typing import Any

from otel_agent.read.words import cut, escape, positional, usd

# Between two columns of a "simple" table.
GAP = 2
# A text column is cut no shorter than this to make room (or its header's length, up to 20, if longer).
MIN_TEXT = 10


def cell_width() -> int:
    """How wide one text cell may be in a table: half the terminal, between 24 and 60 characters."""
    columns = shutil.get_terminal_size((100, 24)).columns
    return max(24, min(60, columns // 2))


def is_money(column: str) -> bool:
    return column == "cost" or column.endswith("_usd")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)


def json_text(v: Any) -> str:
    return json.dumps(v, default=str, ensure_ascii=False)


def readable(v: float) -> str:
    """A float rounded for reading: ``1840`` (whole numbers, and no decimals from 1000 on), ``12.3``, ``1.23``,
    ``0.231`` (three significant digits below 1), never in exponent notation."""
    if v != v or v in (float("inf"), float("-inf")):
        return str(v)
    size = abs(v)
    if size >= 1000 or v == int(v):
        return f"{v:.0f}"
    if size >= 10:
        return f"{v:.1f}"
    if size >= 1:
        return f"{v:.2f}"
    if v == 0:
        return "0"
    return positional(float(f"{v:.3g}"))


def table_cell(column: str, v: Any, width: int, money: bool = False) -> str:
    if v is None:
        return ""
    if _is_number(v):
        if money or is_money(column):
            return usd(v)
        if isinstance(v, float):
            return readable(v)
        if isinstance(v, Decimal):
            return readable(float(v))
        return str(v)
    if isinstance(v, datetime.datetime):  # to the second: the digits a person reads
        return v.strftime("%Y-%m-%d %H:%M:%S")
    text = json_text(v) if isinstance(v, (dict, list, tuple)) else str(v)
    return cut(escape(text), width)


def _money_rows(columns: list[str], rows: list[tuple[Any, ...]] | list[list[Any]]) -> list[bool]:
    """Rows whose ``value`` is money: a ``unit`` column saying ``USD`` (``otel-agent metrics``)."""
    if "value" not in columns or "unit" not in columns:
        return [False] * len(rows)
    unit = columns.index("unit")
    return [str(r[unit]).upper() == "USD" for r in rows]


def fit(
    headers: list[str], cells: list[list[str]], whole: list[bool], limit: int, first: frozenset[int] = frozenset()
) -> tuple[list[int], list[int]]:
    """Which columns to show and how wide, so the table is at most ``limit`` characters wide: text columns
    are cut down (to ``MIN_TEXT`` or their header) before any column is left out — never a ``whole`` one
    (numbers, times, ids, the first column: a cut id cannot be pasted into the next command); then columns are
    kept while they fit — the first column, then those in ``first``, then the rest from the left — and the room
    left is given back to the cut ones. Kept columns stay in their order."""
    n = len(headers)
    natural = [max([len(headers[i])] + [len(row[i]) for row in cells]) for i in range(n)]
    if sum(natural) + GAP * (n - 1) <= limit:
        return list(range(n)), natural
    floor = [natural[i] if whole[i] else min(natural[i], max(MIN_TEXT, min(len(headers[i]), 20))) for i in range(n)]
    kept: list[int] = []
    used = -GAP
    for i in [0, *sorted(first - {0}), *(i for i in range(1, n) if i not in first)]:
        if not kept or used + GAP + floor[i] <= limit:
            kept.append(i)
            used += GAP + floor[i]
    kept.sort()
    widths = floor[:]
    room = limit - used
    for i in sorted(kept, key=lambda i: natural[i] - floor[i]):  # the least cut first: more of them whole
        share = min(natural[i] - floor[i], max(room, 0))
        widths[i] += share
        room -= share
    return kept, widths


def _is_time(rows: list[tuple[Any, ...]] | list[list[Any]], i: int) -> bool:
    return any(isinstance(r[i], (datetime.datetime, datetime.date)) for r in rows)


def fitted_table(
    columns: list[str], rows: list[tuple[Any, ...]] | list[list[Any]], limit: int | None = None
) -> tuple[str, list[str]]:
    """A plain text table (cut, escaped, numbers right-aligned and rounded), fitted to ``limit`` characters
    when given; returns the table and the names of the columns left out."""
    width = cell_width()
    numeric = [
        any(_is_number(r[i]) for r in rows) and all(r[i] is None or _is_number(r[i]) for r in rows)
        for i in range(len(columns))
    ]
    money = _money_rows(columns, rows)
    headers = [escape(c) for c in columns]
    cells = [
        [table_cell(c, v, width, m and c == "value") for c, v in zip(columns, row, strict=True)]
        for row, m in zip(rows, money, strict=True)
    ]
    whole = [
        numeric[i] or i == 0 or columns[i] == "id" or columns[i].endswith("_id") or _is_time(rows, i)
        for i in range(len(columns))
    ]
    if limit and columns:
        # what a reader looks for first keeps its place when columns must go: money, and the status of a row
        first = frozenset(i for i, c in enumerate(columns) if is_money(c) or c in ("status", "state"))
        kept, widths = fit(headers, cells, whole, limit, first)
    else:
        kept = list(range(len(columns)))
        widths = [max([len(headers[i])] + [len(row[i]) for row in cells]) for i in kept]
    hidden = [columns[i] for i in range(len(columns)) if i not in kept]

    def line(values: list[str]) -> str:
        return (" " * GAP).join(
            cut(v, widths[i]).rjust(widths[i]) if numeric[i] else cut(v, widths[i]).ljust(widths[i])
            for i, v in zip(kept, values, strict=True)
        )

    out = [line([headers[i] for i in kept]), line(["-" * widths[i] for i in kept])]
    out += [line([row[i] for i in kept]) for row in cells]
    return "\n".join(out), hidden


def table(columns: list[str], rows: list[tuple[Any, ...]] | list[list[Any]], width: int | None = None) -> str:
    """A plain text table: cut, escaped, numbers right-aligned (no footer; every column)."""
    return fitted_table(columns, rows)[0]
