"""A missing tool skips a test on a developer's machine and fails it in CI (tests/tools.py, issue 37)."""

from __future__ import annotations

import pytest

from tests.tools import missing_tool, needs_module


@pytest.mark.parametrize("ci", ["", "0", "false"])
def test_outside_ci_a_missing_tool_is_a_skip_saying_why(monkeypatch: pytest.MonkeyPatch, ci: str) -> None:
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.skip.Exception, match=r"initdb absent \[tool 'postgresql'\]"):
        missing_tool("postgresql", "initdb absent")
    with pytest.raises(pytest.skip.Exception, match="cannot import no_such_module_i37"):
        needs_module("no_such_module_i37")


@pytest.mark.parametrize("ci", ["true", "1", "yes"])
def test_in_ci_a_missing_tool_is_a_failure(monkeypatch: pytest.MonkeyPatch, ci: str) -> None:
    monkeypatch.setenv("CI", ci)
    monkeypatch.delenv("OTEL_AGENT_TESTS_MAY_LACK", raising=False)
    with pytest.raises(pytest.fail.Exception, match="CI is set, so this is a failure"):
        missing_tool("postgresql", "initdb absent")
    with pytest.raises(pytest.fail.Exception, match="cannot import no_such_module_i37"):
        needs_module("no_such_module_i37")
    assert needs_module("json").dumps([1]) == "[1]"


def test_in_ci_only_a_declared_tool_may_be_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("OTEL_AGENT_TESTS_MAY_LACK", "tmpfs, unshare")
    with pytest.raises(pytest.skip.Exception, match="no mount"):
        missing_tool("unshare", "no mount")
    with pytest.raises(pytest.fail.Exception):
        missing_tool("postgresql", "initdb absent")
