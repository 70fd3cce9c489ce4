"""Commands: otel-agent demo (issue 3). Each command imports its heavy modules inside its body (see cli/main.py)."""

from __future__ import annotations

import click

COMMANDS: list[click.Command] = []
