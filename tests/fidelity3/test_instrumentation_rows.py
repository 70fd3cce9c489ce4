"""docs/semconv.md's table of the instrumentations the suite runs for real: every row names the test files that
run it, and they exist (a row without its test is a claim nothing checks)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_instrumentation_row_names_existing_tests() -> None:
    text = (ROOT / "docs" / "semconv.md").read_text()
    lines = text[text.index("Instrumentations the suite runs for real") :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| instrumentation |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(line)
    assert len(rows) >= 10
    for row in rows:
        tests = re.findall(r"`(tests/[\w/]+\.py)`", row.rsplit("|", 2)[1])
        assert tests, row
        assert [t for t in tests if not (ROOT / t).is_file()] == [], row
