"""``python -m otel_agent``: the ``otel-agent`` command."""

from otel_agent.main import cli

cli()
