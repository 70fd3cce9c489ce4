#!/usr/bin/env python3
"""Mutation testing of the Python ingest path with mutmut (issue 37; docs/engineering/mutation.md has the
command and the last result).

mutmut (https://github.com/boxed/mutmut, 3.x) changes one thing at a time inside the functions of the modules
that decide what gets stored (the folds, redaction, the promoted columns, the writer's re-delivery and
acknowledgement path, the error → status mapping), runs the tests that reached that function, and lists the
mutants no test noticed (survivors). Which modules and which tests: ``[tool.mutmut]`` in pyproject.toml
(``only_mutate``, ``pytest_add_cli_args_test_selection``); ``--modules`` / ``--tests`` replace them for one run.

The run happens in a scratch copy of the checkout's tracked files (``--workdir``, kept between runs so mutmut
reuses its results; ``--fresh`` starts over), never in the checkout: mutmut writes a ``mutants/`` tree beside the
sources, and a stopped run must not leave anything behind.

    pip install 'mutmut==3.8.1'
    python scripts/mutate_python.py                                   # pyproject's modules and tests
    python scripts/mutate_python.py --names 'otel_agent.fold.redact.*' 'otel_agent.errors.*'

Exit code 0: no survivor; 1: survivors (each printed with its diff); 2: the tests fail unmutated, or mutmut
could not run. The CPU is shared: the tests run in-process (one pytest process, ``-n 0``), mutants one at a time
(``--max-children 1``) unless told otherwise. The nine modules hold ~1,700 mutants and a survivor costs a run of
every test that reaches its function: run a module's functions (``--names``) with that module's tests
(``--tests``); 75 redaction mutants against tests/fold/test_redaction.py took ~35 min on two busy cores.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXTRA_ENV: dict[str, str] = {}
"""Set for the tests (``--native``: none)."""
STATUS_LINE = re.compile(r"^\s*(?P<name>[\w.ǁ]+__mutmut_\d+): (?P<status>.+?)\s*$")


def copy_checkout(workdir: Path) -> None:
    """The checkout's files (tracked and new ones, as they are now) and the built native extension, copied into
    ``workdir`` over what an earlier run left."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True,
    ).stdout.decode().split("\0")  # fmt: skip
    files = [f for f in tracked if f and (ROOT / f).is_file()]
    files += [str(p.relative_to(ROOT)) for p in (ROOT / "otel_agent").glob("_native*.so")]
    for name in files:
        src, dst = ROOT / name, workdir / name
        same = lambda a, b: (a.st_mtime_ns, a.st_size) == (b.st_mtime_ns, b.st_size)  # noqa: E731
        if dst.exists() and same(src.stat(), dst.stat()):
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
        if not name.endswith(".py"):  # mutmut copies other files into mutants/ once; a .py it redoes by mtime
            (workdir / "mutants" / name).unlink(missing_ok=True)


def configure(workdir: Path, modules: list[str] | None, tests: list[str] | None) -> dict:
    """The copy's ``[tool.mutmut]``, with ``--modules`` / ``--tests`` written over pyproject's."""
    path = workdir / "pyproject.toml"
    text = path.read_text()
    config = tomllib.loads(text)["tool"]["mutmut"]
    if modules is None and tests is None:
        return config

    def toml_list(values: list[str]) -> str:
        return "[" + ", ".join(json.dumps(v) for v in values) + "]"

    for key, values in (("only_mutate", modules), ("pytest_add_cli_args_test_selection", tests)):
        if values is None:
            continue
        config[key] = values
        text, n = re.subn(rf"(?m)^{key} = \[[^\]]*\]", lambda _m, k=key, v=values: f"{k} = {toml_list(v)}", text)
        if n != 1:
            sys.exit(f"mutate_python.py: pyproject.toml's [tool.mutmut] has no single `{key} = [...]`")
    path.write_text(text)
    return config


def mutmut(workdir: Path, *args: str, log: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m mutmut ARGS`` in ``workdir``; its output captured, or written to ``log`` (a run's progress
    spinner and pytest's output). ``PYTHONPATH`` names the mutated tree, so that subprocesses a test starts (the
    CLI, decode workers) import the mutants too."""
    env = {**os.environ, "PYTHONPATH": str(workdir / "mutants"), **EXTRA_ENV}
    command = [sys.executable, "-m", "mutmut", *args]
    if log is None:
        return subprocess.run(command, cwd=workdir, env=env, text=True, capture_output=True)
    with log.open("w") as out:
        return subprocess.run(command, cwd=workdir, env=env, text=True, stdout=out, stderr=subprocess.STDOUT)


def results(workdir: Path) -> dict[str, str]:
    """mutant name → status (killed, survived, timeout, no tests, …) of every mutant mutmut has run."""
    listed = mutmut(workdir, "results", "--all", "true")
    found = {}
    for line in listed.stdout.splitlines():
        m = STATUS_LINE.match(line)
        if m:
            found[m["name"]] = m["status"]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--names", nargs="+", default=[], help="mutant name globs (e.g. 'otel_agent.fold.redact.*')")
    parser.add_argument("--modules", nargs="+", help="files to mutate (globs), instead of pyproject's only_mutate")
    parser.add_argument("--tests", nargs="+", help="pytest arguments, instead of pyproject's test selection")
    parser.add_argument("--max-children", type=int, default=1, help="mutants tested at once (default 1)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "otel-agent-mutmut")
    parser.add_argument(
        "--native",
        action="store_true",
        help="fold traces through the Rust extension where built (default: OTEL_AGENT_NATIVE_FOLD=off, so every "
        "request reaches the Python fold: the reference, the fallback and a pure-Python wheel's only fold)",
    )
    parser.add_argument("--fresh", action="store_true", help="forget an earlier run's results")
    parser.add_argument("--json", type=Path, help="write every result here (one JSON object a line)")
    args = parser.parse_args()

    try:
        import mutmut as _  # noqa: F401
    except ImportError:
        print("mutate_python.py: needs mutmut: pip install 'mutmut==3.8.1'", file=sys.stderr)
        return 2
    if not args.native:
        EXTRA_ENV["OTEL_AGENT_NATIVE_FOLD"] = "off"
    if args.fresh and args.workdir.exists():
        shutil.rmtree(args.workdir)
    args.workdir.mkdir(parents=True, exist_ok=True)
    copy_checkout(args.workdir)
    config = configure(args.workdir, args.modules, args.tests)
    print(f"mutate_python.py: mutating {config['only_mutate']} in {args.workdir}", file=sys.stderr)
    print(f"mutate_python.py: tests {config['pytest_add_cli_args_test_selection']}", file=sys.stderr)

    began = time.monotonic()
    log = args.workdir / "mutmut-run.log"
    print(f"mutate_python.py: mutmut's output goes to {log}", file=sys.stderr)
    run = mutmut(args.workdir, "run", "--max-children", str(args.max_children), *args.names, log=log)
    if run.returncode != 0 and "BadTestExecutionCommandsException" in log.read_text(errors="replace"):
        # mutmut 3.8.1, in a new workdir, has its first stats run end in pytest's usage error (exit 4) after
        # generating the mutants; the same command then runs (seen every time on 2026-12-06): once more
        print("mutate_python.py: mutmut's first stats run failed; running it again", file=sys.stderr)
        run = mutmut(args.workdir, "run", "--max-children", str(args.max_children), *args.names, log=log)
    elapsed = time.monotonic() - began
    found = results(args.workdir)
    if args.names:
        pattern = re.compile("|".join(re.escape(n).replace(r"\*", ".*") for n in args.names))
        found = {n: s for n, s in found.items() if pattern.fullmatch(n)}
    if run.returncode != 0 and not found:
        print(f"mutate_python.py: mutmut run exited {run.returncode}; see {log}", file=sys.stderr)
        return 2

    counts: dict[str, int] = {}
    for status in found.values():
        counts[status] = counts.get(status, 0) + 1
    survivors = sorted(n for n, s in found.items() if s in ("survived", "suspicious"))
    records = []
    for name in sorted(found):
        diff = mutmut(args.workdir, "show", name).stdout if name in survivors else ""
        records.append({"mutant": name, "status": found[name], "diff": diff})
    if args.json:
        args.json.write_text("".join(json.dumps(r) + "\n" for r in records))
    for r in records:
        if r["diff"]:
            print(f"\n=== survived: {r['mutant']}\n{r['diff'].rstrip()}")
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    print(f"\n{len(found)} mutants in {elapsed:.0f} s: {summary}")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
