"""Settings docs are generated from config.SETTINGS / ENV_ONLY and checked, so `serve --help`, docs/settings.md
and the code cannot drift (issue 11 item 23, issue 12 item 6)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from otel_agent.config import DEFAULT_DB, ENV_ONLY, SETTINGS
from otel_agent.instrument.config import CAPTURE_CONTENT_ENV
from otel_agent.store.prices import PRICES_ENV
from tests.cli.conftest import ROOT, invoke

SCRIPT = ROOT / "scripts" / "gen_settings_doc.py"
SETTINGS_DOC = ROOT / "docs" / "settings.md"


def gen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def test_settings_doc_is_fresh() -> None:
    done = gen("--check")
    assert done.returncode == 0, done.stderr


def test_a_drifted_settings_doc_fails_the_check(tmp_path: Path) -> None:
    copy = tmp_path / "settings.md"
    text = SETTINGS_DOC.read_text(encoding="utf-8")
    s = SETTINGS[3]
    assert s.help in text
    copy.write_text(text.replace(s.help, s.help + " (edited by hand)"), encoding="utf-8")
    done = gen("--check", "--doc", str(copy))
    assert done.returncode == 1
    assert "stale" in done.stderr
    assert gen("--doc", str(copy)).returncode == 0
    assert copy.read_text(encoding="utf-8") == text


def test_serve_help_says_what_the_settings_doc_says() -> None:
    helptext = " ".join(invoke("serve", "--help", env={"COLUMNS": "400"}).stdout.split())
    readme = SETTINGS_DOC.read_text(encoding="utf-8")
    for s in SETTINGS:
        assert s.flag in helptext, s.name
        assert s.env in helptext, s.name
        assert " ".join(s.help.split()) in helptext, s.name
        assert f"| `{s.flag}` | `{s.env}` |" in readme
    for e in ENV_ONLY:
        assert f"| `{e.env}` |" in readme


def test_every_environment_variable_the_package_reads_is_documented() -> None:
    documented = {s.env for s in SETTINGS} | {e.env for e in ENV_ONLY}
    used: set[str] = set()
    for path in (ROOT / "otel_agent").rglob("*.py"):
        used |= set(re.findall(r"OTEL_AGENT_[A-Z_]+\b", path.read_text(encoding="utf-8")))
    assert used - documented == set()
    assert {PRICES_ENV, CAPTURE_CONTENT_ENV} <= {e.env for e in ENV_ONLY}


def test_one_default_db() -> None:
    literal = repr(DEFAULT_DB)[1:-1]
    holders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "otel_agent").rglob("*.py")
        if f'"{literal}"' in p.read_text(encoding="utf-8")
    ]
    assert holders == ["otel_agent/config.py"]


def test_every_benchmark_is_documented() -> None:
    doc = (ROOT / "docs" / "engineering" / "benchmarks.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Benchmarks") :]
    scripts = [p for p in sorted((ROOT / "bench").glob("*.py")) if "__main__" in p.read_text(encoding="utf-8")]
    assert scripts
    assert [p.name for p in scripts if f"bench/{p.name}" not in section] == []


def test_the_test_line_names_the_go_the_collector_build_needs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    develop = readme[readme.index("## Develop and test") : readme.index("## License")]
    script = (ROOT / "scripts" / "build_collector.sh").read_text(encoding="utf-8")
    test_sh = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    assert "bash scripts/test.sh" in develop
    assert "Go ≥ 1.25" in develop
    assert "go_minor >= 25" in script
    assert "needs Go >= 1.25" in script
    assert "minor >= 25" in test_sh
    assert "start_progress" in script  # the long build reports progress
