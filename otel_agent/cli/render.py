"""Printing query results as a table, CSV or JSON.

``table`` is for a person at a terminal: text is escaped (telemetry is hostile input: no control characters
reach the terminal) and long text is cut with ``…`` to fit; numbers are right-aligned and rounded for reading
(``1840``, ``12.3``, ``0.231``); money (columns named ``*_usd`` or ``cost``, or a ``value`` whose ``unit`` is
``USD``) is always ``$0.000075``, never ``7.5e-05``. On a terminal a table fits its width (``COLUMNS`` or the
terminal's): text cells are cut shorter and columns that still do not fit are left out, named in the footer;
``--wide`` shows every column, ``--columns a,b`` the ones named. ``csv`` and ``json`` are for programs: every
value whole, never cut; csv writes floats positionally too (``0.000075``); json carries JSON values (DuckDB's
``JSON`` type) as JSON, not as strings holding JSON.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import re
import shutil
import sys
from decimal import Decimal
from typing import Any

import click

from otel_agent.query.readonly import QueryResult

ELLIPSIS = "…"


def terminal_width() -> int | None:
    """The width a table must fit when stdout is a terminal (``COLUMNS`` when set, else the terminal's); None
    for a pipe or a file, which get every column, as ``ls`` and ``ps`` do."""
    try:
        if not sys.stdout.isatty():
            return None
    except (AttributeError, ValueError, OSError):
        return None
    return shutil.get_terminal_size((100, 24)).columns


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
    text = _json_text(v) if isinstance(v, (dict, list, tuple)) else str(v)
    return cut(escape(text), width)


def csv_cell(v: Any) -> Any:
    if isinstance(v, (dict, list, tuple)):
        return _json_text(v)
    if isinstance(v, float):
        return positional(v)
    return v


# Between two columns of a "simple" table.
GAP = 2
# A text column is cut no shorter than this to make room (or its header's length, up to 20, if longer).
MIN_TEXT = 10


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


def layout() -> tuple[bool, list[str] | None]:
    """``--wide`` and ``--columns`` of the running command (``wide_options``), else (False, None)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return False, None
    return bool(ctx.meta.get("otel_agent.wide")), ctx.meta.get("otel_agent.columns")


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


def fit_lines(lines: list[str]) -> list[str]:
    """Lines of a drawing (a run's tree, a manifest's header) cut to the terminal's width with ``…``, and a last
    line saying so, unless ``--wide`` or the output is no terminal."""
    wide, _ = layout()
    limit = None if wide else terminal_width()
    if not limit or all(len(click.unstyle(line)) <= limit for line in lines):
        return lines
    return [cut_styled(line, limit) for line in lines] + ["(cut to fit; --wide shows all)"]


_STYLE = re.compile(r"\x1b\[[0-9;]*m")


def cut_styled(line: str, width: int) -> str:
    """``cut`` for a line that may hold click's colour codes: they take no width, and a cut line ends with a
    reset so that no colour leaks past it."""
    if len(click.unstyle(line)) <= width:
        return line
    out, seen, at = [], 0, 0
    for match in _STYLE.finditer(line):
        text = line[at : match.start()]
        take = text[: max(width - 1 - seen, 0)]
        out.append(take)
        seen += len(take)
        if seen >= width - 1:
            break
        out.append(match.group())
        at = match.end()
    else:
        out.append(line[at:][: max(width - 1 - seen, 0)])
    return "".join(out) + ELLIPSIS + "\x1b[0m"


def _select(result: QueryResult, names: list[str]) -> QueryResult:
    """``result`` with only the columns ``names``, in that order (``--columns``); an unknown name is refused."""
    unknown = [n for n in names if n not in result.columns]
    if unknown:
        raise click.BadParameter(
            f"no column {', '.join(unknown)}; this command's columns: {', '.join(result.columns)}",
            param_hint="--columns",
        )
    at = [result.columns.index(n) for n in names]
    return QueryResult.of_rows(
        names,
        [result.types[i] if i < len(result.types) else "" for i in at],
        [tuple(r[i] for i in at) for r in result.rows],
        result.truncated,
    )


def _json_value(v: Any, is_json: bool) -> Any:
    if is_json and isinstance(v, str):
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v


def render(result: QueryResult, fmt: str) -> str:
    wide, chosen = layout()
    if chosen:
        result = _select(result, chosen)
    if fmt == "json":
        is_json = [
            (result.types[i] if i < len(result.types) else "").upper() == "JSON" for i in range(len(result.columns))
        ]
        return json.dumps(
            [
                {c: _json_value(v, j) for c, v, j in zip(result.columns, row, is_json, strict=True)}
                for row in result.rows
            ],
            default=str,
            indent=2,
        )
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
    limit = None if wide or chosen else terminal_width()
    text, hidden = fitted_table(result.columns, result.rows, limit)
    if hidden:
        head, tail = (
            f"{footer[:-1]}; {len(hidden)} more column{'s' if len(hidden) != 1 else ''}: ",
            "; --wide shows all)",
        )
        names = ", ".join(hidden)
        if limit and len(head) + len(names) + len(tail) > limit:  # the footer fits too
            names = cut(names, max(limit - len(head) - len(tail), 1))
        footer = head + names + tail
    return f"{text}\n{footer}"


def emit(result: QueryResult, fmt: str) -> None:
    """Print ``result``. csv and json are data: written byte for byte (``color=True`` stops click from
    stripping escape sequences out of values when the output is not a terminal); a table is already escaped."""
    click.echo(render(result, fmt), color=True if fmt != "table" else None)
