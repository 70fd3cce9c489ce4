#!/usr/bin/env python3
"""Mutation testing of the derived SQL: make one small change to a view file, run the tests that should notice,
and report the changes no test noticed (survivors). Issue 37; docs/engineering/mutation.md has the last result.

Mutations (outside comments and string literals):

- ``boundary``: a comparison's boundary moved: ``>`` ↔ ``>=``, ``<`` ↔ ``<=``;
- ``flip``: a comparison reversed: ``=`` ↔ ``<>``, ``>`` ↔ ``<``;
- ``arith``: ``+`` ↔ ``-``;
- ``and``: one ``AND <condition>`` dropped (the condition runs to the next AND / OR / THEN / `,` / `)` … at the
  same parenthesis depth);
- ``not``: one ``NOT`` dropped.

Each mutant is written over the file in this checkout, the tests run (``pytest -x -q -n 0``, with
``PYTHONPATH`` set to this checkout so subprocesses read the mutant too), and the file is restored, also on
Ctrl-C and SIGTERM. A mutant is *killed* when the tests fail, *survived* when they pass, *timeout* past --timeout-s.

    python scripts/mutate_sql.py otel_agent/store/views/evidence/050_receipts.sql \\
        --tests tests/derived_evidence/test_receipts.py tests/derived_evidence/test_receipt_windows.py \\
        --operators boundary and --sample 20 --seed 1

The CPU is shared: run a bounded sample (--sample), one file's tests, never the whole suite per mutant.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

STOP_WORDS = {
    "AND", "OR", "THEN", "WHEN", "ELSE", "END", "AS", "FROM", "WHERE", "GROUP", "ORDER", "QUALIFY", "HAVING",
    "WINDOW", "LIMIT", "UNION", "SELECT", "JOIN", "LEFT", "ON", "USING",
}  # fmt: skip
"""Where a dropped ``AND <condition>`` ends (at parenthesis depth 0)."""


@dataclass(frozen=True)
class Mutant:
    path: str
    line: int
    operator: str
    start: int
    end: int
    replacement: str
    before: str  # the line before the change
    after: str  # the line after it

    def apply(self, text: str) -> str:
        return text[: self.start] + self.replacement + text[self.end :]


def code_mask(text: str) -> list[bool]:
    """True for each character of SQL code: not inside a ``--`` comment, a '…' string or a "…" identifier."""
    mask = [True] * len(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "-" and text.startswith("--", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif c in "'\"":
            j = i + 1
            while j < n and not (text[j] == c and not text.startswith(c * 2, j)):
                j += 2 if text.startswith(c * 2, j) else 1
            j += 1
        else:
            i += 1
            continue
        for k in range(i, min(j, n)):
            mask[k] = False
        i = j
    return mask


def _line_of(text: str, pos: int) -> tuple[int, int, int]:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return text.count("\n", 0, pos) + 1, start, len(text) if end < 0 else end


def _mutant(path: str, text: str, operator: str, start: int, end: int, replacement: str) -> Mutant:
    line, ls, le = _line_of(text, start)
    mutated = text[ls:start] + replacement + text[end:le]
    return Mutant(path, line, operator, start, end, replacement, text[ls:le].strip(), mutated.strip())


def _condition_end(text: str, mask: list[bool], pos: int) -> int:
    """Where the condition that starts at ``pos`` ends: the next stop word, ``,``, ``;`` or closing ``)`` at
    depth 0 (a BETWEEN's AND is skipped)."""
    depth, i, n, between = 0, pos, len(text), False
    while i < n:
        if not mask[i]:
            i += 1
            continue
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                return i
            depth -= 1
        elif c in ",;" and depth == 0:
            return i
        elif c.isalpha() and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            word = re.match(r"[A-Za-z_]+", text[i:]).group()  # type: ignore[union-attr]
            upper = word.upper()
            if depth == 0 and upper == "BETWEEN":
                between = True
            elif depth == 0 and upper == "AND" and between:
                between = False
            elif depth == 0 and upper in STOP_WORDS:
                while i > pos and text[i - 1].isspace():
                    i -= 1
                return i
            i += len(word)
            continue
        i += 1
    return n


def mutants_of(path: Path, operators: set[str]) -> list[Mutant]:
    text = path.read_text()
    mask = code_mask(text)
    rel = str(path.resolve().relative_to(ROOT))
    found: list[Mutant] = []

    def code(m: re.Match[str]) -> bool:
        return all(mask[k] for k in range(m.start(), m.end()))

    comparisons = {">=": ">", "<=": "<", ">": ">=", "<": "<="}
    flips = {"=": "<>", "<>": "=", ">": "<", "<": ">", ">=": "<=", "<=": ">="}
    for m in re.finditer(r"(?<![<>=!:|-])(<>|>=|<=|=|>|<)(?![=>|])", text):
        if not code(m) or text[m.end() : m.end() + 1] == ">" or text[max(0, m.start() - 1)] in "-=":
            continue
        op = m.group()
        if "boundary" in operators and op in comparisons:
            found.append(_mutant(rel, text, "boundary", m.start(), m.end(), comparisons[op]))
        if "flip" in operators and op in flips:
            found.append(_mutant(rel, text, "flip", m.start(), m.end(), flips[op]))
    if "arith" in operators:
        for m in re.finditer(r"(?<=[\w)\s])([+-])(?=[\s\w(])", text):
            if code(m) and not text.startswith("--", m.start()) and text[m.start() + 1 : m.start() + 2] != "-":
                found.append(_mutant(rel, text, "arith", m.start(), m.end(), "-" if m.group() == "+" else "+"))
    if "and" in operators:
        for m in re.finditer(r"\bAND\b", text):
            if not code(m):
                continue
            # a BETWEEN's AND is not a condition of its own
            before = text[max(0, m.start() - 200) : m.start()]
            if re.search(r"\bBETWEEN\b[^()]*$", before, re.IGNORECASE) and not re.search(r"\bAND\b[^()]*$", before):
                continue
            end = _condition_end(text, mask, m.end())
            if end > m.end():
                start = m.start()
                while start > 0 and text[start - 1] in " \t":
                    start -= 1
                found.append(_mutant(rel, text, "and", start, end, ""))
    if "not" in operators:
        for m in re.finditer(r"\bNOT\s+", text):
            if code(m) and not re.match(r"\bNOT\s+(MATERIALIZED|EXISTS\s+dup)", text[m.start() :]):
                found.append(_mutant(rel, text, "not", m.start(), m.end(), ""))
    return found


def run_tests(tests: list[str], timeout_s: float) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:randomly", "-o", "addopts=", *tests]
    try:
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return "timeout"
    return "survived" if done.returncode == 0 else "killed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path, help="view files to mutate")
    parser.add_argument("--tests", nargs="+", required=True, help="pytest arguments: the tests each mutant runs")
    parser.add_argument(
        "--operators", nargs="+", default=["boundary", "flip", "arith", "and", "not"],
        choices=["boundary", "flip", "arith", "and", "not"],
    )  # fmt: skip
    parser.add_argument("--lines", help="only lines matching this regular expression")
    parser.add_argument("--sample", type=int, default=0, help="at most this many mutants, drawn at random (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout-s", type=float, default=600.0, help="per mutant")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--json", type=Path, help="write every result here (one JSON object a line)")
    args = parser.parse_args(argv)

    mutants = [m for f in args.files for m in mutants_of(f, set(args.operators))]
    if args.lines:
        mutants = [m for m in mutants if re.search(args.lines, m.before)]
    if args.sample and len(mutants) > args.sample:
        mutants = sorted(random.Random(args.seed).sample(mutants, args.sample), key=lambda m: (m.path, m.start))
    if args.list:
        for m in mutants:
            print(f"{m.path}:{m.line} [{m.operator}] {m.before}\n    -> {m.after}")
        print(f"{len(mutants)} mutants")
        return 0

    # SIGTERM (`timeout`, a CI job cancelled) ends the run the way Ctrl-C does: the mutated file is restored.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    baseline = run_tests(args.tests, args.timeout_s)
    if baseline != "survived":
        print(f"the tests do not pass unmutated ({baseline}): nothing to measure", file=sys.stderr)
        return 2
    results: list[tuple[Mutant, str, float]] = []
    out = args.json.open("w") if args.json else None
    try:
        for k, m in enumerate(mutants, 1):
            path = ROOT / m.path
            original = path.read_text()
            started = time.monotonic()
            try:
                path.write_text(m.apply(original))
                status = run_tests(args.tests, args.timeout_s)
            finally:
                path.write_text(original)
            took = time.monotonic() - started
            results.append((m, status, took))
            print(f"[{k}/{len(mutants)}] {status:8} {m.path}:{m.line} [{m.operator}] {m.after}", flush=True)
            if out:
                out.write(json.dumps({**asdict(m), "status": status, "seconds": round(took, 1)}) + "\n")
                out.flush()
    finally:
        if out:
            out.close()
    survivors = [(m, s) for m, s, _ in results if s != "killed"]
    killed = len(results) - len(survivors)
    print(f"\n{killed}/{len(results)} killed; {len(survivors)} survived or timed out:")
    for m, s in survivors:
        print(f"  {s:8} {m.path}:{m.line} [{m.operator}]\n      {m.before}\n   -> {m.after}")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
