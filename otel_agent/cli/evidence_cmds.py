"""Commands: review, export, receipts (issue 5). Heavy modules are imported inside command bodies."""

from __future__ import annotations

import click

COMMANDS: list[click.Command] = []
