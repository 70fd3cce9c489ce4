"""The README as a new user reads it: short, no internal references, links that resolve, a Python snippet that
really sends a run to a real receiver, the test line that CI runs, and a version line that says which fold runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from otel_agent import __version__
from otel_agent.fold import native
from otel_agent.server.receiver import Receiver
from tests.conftest import dict_rows

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
# the pages a user is sent to first; the reference pages and the engineering journal may cite design history
USER_DOCS = [
    README,
    *(ROOT / "docs" / name for name in ("README.md", "cli.md", "settings.md", "receiver.md", "development.md")),
    *sorted((ROOT / "docs" / "getting-started").glob("*.md")),
]
INTERNAL = re.compile(r"\b[Ii]ssues? \d+|\b[Ss]eeds? \d{3}\b|seeds/|\bseed 00\d")


def code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.S | re.M)


def test_the_readme_is_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) < 150


def test_user_docs_carry_no_internal_references() -> None:
    assert len(USER_DOCS) >= 6
    found = {
        str(p.relative_to(ROOT)): INTERNAL.findall(p.read_text(encoding="utf-8"))
        for p in USER_DOCS
        if INTERNAL.search(p.read_text(encoding="utf-8"))
    }
    assert found == {}


def test_relative_links_resolve() -> None:
    broken = []
    for page in USER_DOCS:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" not in target and not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} → {target}")
    assert broken == []


def test_ci_runs_exactly_the_readmes_test_line() -> None:
    readme = README.read_text(encoding="utf-8")
    develop = readme[readme.index("## Develop and test") :]
    [block] = code_blocks(develop, "sh")[:1]
    test_line = block.strip()
    assert test_line == "bash scripts/test.sh"
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert test_line in ci


def install_line() -> str:
    readme = README.read_text(encoding="utf-8")
    install = readme[readme.index("## Install and run") : readme.index("## Send from your agent")]
    assert "Python ≥ 3.11" in install
    [line] = code_blocks(install, "sh")[0].strip().splitlines()
    return line


# The repository has no public home yet (no remote, no index): the line clones from a variable the reader sets,
# named for what it holds; once there is a public URL, the line may name it instead.
CLONE_SOURCE = re.compile(r'^git clone (?:"\$\{OTEL_AGENT_REPO:\?[^}"\']+\}"|https://\S+|git@\S+) otel_agent && ')


def test_the_install_line_names_the_clone_the_venv_and_serve() -> None:
    line = install_line()
    assert CLONE_SOURCE.match(line), line
    for step in ("cd otel_agent", "python3 -m venv .venv", ". .venv/bin/activate", "pip install .", "otel-agent serve"):
        assert step in line


def test_the_install_line_without_its_url_stops_before_doing_anything_and_names_the_variable(tmp_path: Path) -> None:
    line = install_line()
    if not line.startswith('git clone "${OTEL_AGENT_REPO'):
        pytest.skip("the line names a public URL")
    env = {k: v for k, v in os.environ.items() if k != "OTEL_AGENT_REPO"}
    done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert done.returncode != 0
    assert "OTEL_AGENT_REPO: the clone URL of this repository" in done.stderr
    assert list(tmp_path.iterdir()) == []  # nothing cloned, no venv made


def test_the_python_snippet_sends_a_run_with_its_tokens_and_cost(make_receiver, tmp_path: Path) -> None:
    readme = README.read_text(encoding="utf-8")
    [snippet] = code_blocks(readme[readme.index("## Send from your agent") :], "python")[:1]
    script = tmp_path / "agent.py"
    script.write_text(snippet, encoding="utf-8")
    receiver: Receiver = make_receiver()
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://{receiver.grpc_address}"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    [run] = dict_rows(receiver, "SELECT * FROM runs")
    assert run["agent_name"] == "researcher"
    assert run["status"] == "ok"
    assert (run["provider_calls"], run["input_tokens"], run["output_tokens"]) == (1, 1200, 300)
    assert run["cost_usd"] > 0  # gpt-4o is in the price table


def test_version_says_which_traces_fold_is_in_use() -> None:
    def version(**env: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "otel_agent", "--version"],
            capture_output=True, text=True, timeout=60, env={**os.environ, **env},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    default = version()
    assert default.startswith(f"otel-agent {__version__}, Python ")
    expected = "native (Rust) traces fold in use" if native.enabled() else "Python traces fold in use"
    assert expected in default
    assert "Python traces fold in use" in version(OTEL_AGENT_NATIVE_FOLD="off")
