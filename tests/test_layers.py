"""The layering contract (pyproject.toml ``[tool.importlinter]``, ARCHITECTURE.md "Packages and layers") holds:
an import against the layers fails the suite, and so CI. No exception list: the contract has none."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT = "from importlinter.cli import lint_imports_command; lint_imports_command()"  # `lint-imports`, this Python


def test_the_contract_has_no_exceptions() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    names = [c["name"] for c in config["contracts"]]
    assert len(names) >= 2
    for contract in config["contracts"]:
        assert "ignore_imports" not in contract, contract["name"]
        assert not contract.get("allow_indirect_imports"), contract["name"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")["layers"]
    assert "otel_agent.cli | otel_agent.console | otel_agent.mcp | otel_agent.demo | otel_agent.export" in layers


def test_imports_follow_the_layers() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LINT, "--no-cache"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout
