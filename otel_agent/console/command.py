"""Command: ``otel-agent ui`` — the web console over closed stores or shards, read-only (issue 13).

A file held by a running receiver is served by that receiver's own console (``otel-agent serve`` mounts it at
``/``); this command says where instead of failing on DuckDB's lock. A failure is an ``OtelAgentError``: the
``otel-agent`` group prints it on one line (exit code 2).
"""

from __future__ import annotations

import errno
import ipaddress
import signal
import threading

import click

from otel_agent.config import DEFAULT_DB
from otel_agent.options import archive_option, db_option


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@click.command()
@db_option(multiple=True)
@archive_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", type=int, default=8080, show_default=True, help="Port to bind (0: any free port).")
@click.option(
    "--tokens-file", envvar="OTEL_AGENT_TOKENS_FILE", show_envvar=True, default=None,
    help="JSON file of bearer tokens (as for serve); viewing needs the query role.",
)  # fmt: skip
@click.option("--insecure", is_flag=True, help="Allow binding a non-loopback address without a tokens file.")
def ui(db: tuple[str, ...], archive: str | None, host: str, port: int, tokens_file: str | None, insecure: bool) -> None:
    """Serve the web console over closed DuckDB files (several --db: shards; --archive: + archive), read-only."""
    from otel_agent.console.app import build_ui_app, ui_console
    from otel_agent.errors import OtelAgentError
    from otel_agent.query.client import live_receiver
    from otel_agent.server.auth import Authenticator
    from otel_agent.server.http_transport import HttpServer

    dbs = list(db) or [DEFAULT_DB]
    for path in dbs:
        live = live_receiver(path)
        if live:
            raise OtelAgentError(f"{path} is held by a running receiver, which serves the console: open {live}/")
    if not tokens_file and not insecure and not _loopback(host):
        raise OtelAgentError(f"refusing to serve {host} without --tokens-file (or --insecure to serve it open)")
    try:
        auth = Authenticator.from_file(tokens_file)
        mounted = ui_console(dbs, auth, archive=archive)
        server = HttpServer(build_ui_app(mounted), f"{host}:{port}")
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise OtelAgentError(
                f"port {port} on {host} is in use: choose another with --port (--port 0: any free port)"
            ) from exc
        raise OtelAgentError(" ".join(str(exc).split())) from exc
    except OtelAgentError as exc:
        raise OtelAgentError(" ".join(str(exc).split())) from exc
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    server.start()
    shown = f"[{host}]" if ":" in host else host
    over = ", ".join(dbs) + (f" + archive {archive}" if archive else "")
    click.echo(f"otel-agent console (read-only) on http://{shown}:{server.port}/ over {over}  (Ctrl-C to stop)")
    while not stop.wait(0.5):
        if not server.thread.is_alive():
            break
    server.stop()
    mounted.close()


COMMANDS = [ui]
