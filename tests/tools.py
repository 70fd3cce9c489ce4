"""What a test does when a tool it needs is missing: skip on a developer's machine, fail in CI.

`.ci/run` installs or builds every tool the suite uses (the Collector, PostgreSQL, Chromium, the test extra's
packages) and runs as root (tmpfs mounts, ``unshare``), so in CI a missing tool is a broken install step, and a
skip there would show it as green (issue 37). CI is recognised by the ``CI`` environment variable, which hosted
CI services set (``CI=true .ci/run`` does the same on a machine of your own). A CI machine that cannot have a
tool says so by name in ``OTEL_AGENT_TESTS_MAY_LACK`` (comma-separated tool names, e.g. ``tmpfs,unshare``): those
skip. Every skip prints its reason (``-rs`` in pyproject.toml's addopts).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def may_lack(tool: str) -> bool:
    """Whether this CI machine declared that it cannot have ``tool``."""
    declared = os.environ.get("OTEL_AGENT_TESTS_MAY_LACK", "")
    return tool in {name.strip() for name in declared.split(",")}


def missing_tool(tool: str, reason: str) -> NoReturn:
    """``tool`` is missing (``reason`` says what and how to get it): a skip, or in CI a failure."""
    if in_ci() and not may_lack(tool):
        pytest.fail(
            f"{reason} [tool {tool!r}; CI is set, so this is a failure, not a skip: fix the install step in .ci/run, "
            f"or list {tool!r} in OTEL_AGENT_TESTS_MAY_LACK]",
            pytrace=False,
        )
    pytest.skip(f"{reason} [tool {tool!r}]", allow_module_level=True)


def needs_module(name: str) -> ModuleType:
    """``pytest.importorskip`` for a package of the ``test`` extra: in CI its absence fails the test."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing_tool(name, f"cannot import {name} ({exc}): pip install -e '.[test]'")
