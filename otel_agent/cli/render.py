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
import io
import json
import re
import shutil
import sys
from typing import Any

import click

from otel_agent.query.readonly import QueryResult
from otel_agent.read.text_table import fitted_table, json_text
from otel_agent.read.words import cut, positional

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


def csv_cell(v: Any) -> Any:
    if isinstance(v, (dict, list, tuple)):
        return json_text(v)
    if isinstance(v, float):
        return positional(v)
    return v


def layout() -> tuple[bool, list[str] | None]:
    """``--wide`` and ``--columns`` of the running command (``wide_options``), else (False, None)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return False, None
    return bool(ctx.meta.get("otel_agent.wide")), ctx.meta.get("otel_agent.columns")


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
