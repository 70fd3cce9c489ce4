from otel_agent.cli.main import cli

cli()
