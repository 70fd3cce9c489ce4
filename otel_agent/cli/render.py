"""Printing query results as a table, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from tabulate import tabulate

from otel_agent.query.readonly import QueryResult


def _cell(v: Any) -> Any:
    if isinstance(v, (dict, list)):
        return json.dumps(v)
    return v


def render(result: QueryResult, fmt: str) -> str:
    if fmt == "json":
        return json.dumps([dict(zip(result.columns, row, strict=True)) for row in result.rows], default=str, indent=2)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(result.columns)
        w.writerows([[_cell(v) for v in row] for row in result.rows])
        return buf.getvalue().rstrip("\n")
    text = tabulate([[_cell(v) for v in row] for row in result.rows], headers=result.columns, tablefmt="simple")
    n = len(result.rows)
    footer = f"({n} row{'s' if n != 1 else ''}{', truncated' if result.truncated else ''})"
    return f"{text}\n{footer}" if result.columns else footer
