"""Locate and run the OpenTelemetry Collector built by ``scripts/build_collector.sh``.

This module holds helpers only (no tests). The binary is found with the same rule the build
script uses::

    ${OTEL_AGENT_COLLECTOR_CACHE:-$HOME/.cache/otel_agent/collector}/
        <first 16 hex digits of sha256(collector_config/builder-config.yaml)>/build/otelcol-otel-agent

and only counts as built when the directory's ``.complete`` marker exists (the script writes
it last). So a test can skip cleanly when :func:`collector_binary` returns ``None``; CI runs
the build script first, so there it is always present. ``OTEL_AGENT_COLLECTOR_BIN`` overrides
the lookup with an explicit binary (e.g. an otelcol-contrib of the same release).

Typical use::

    binary = collector_binary()
    if binary is None:
        missing_tool("collector", "Collector not built: run scripts/build_collector.sh")  # tests/tools.py
    proc = start_collector(CONFIG_DIR / "gateway.yaml", {
        "COLLECTOR_GRPC_ENDPOINT": "127.0.0.1:24317",
        "COLLECTOR_HTTP_ENDPOINT": "127.0.0.1:24318",
        "OTEL_AGENT_RECEIVER_GRPC": "127.0.0.1:24417",
    })
    try:
        ...  # send OTLP to 127.0.0.1:24317
    finally:
        stop_collector(proc)
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
CONFIG_DIR = REPO_ROOT / "collector_config"
MANIFEST = CONFIG_DIR / "builder-config.yaml"
DIST_NAME = "otelcol-otel-agent"

# The configs' default listen address for the Collector's own OTLP/gRPC receiver.
DEFAULT_GRPC_ENDPOINT = "127.0.0.1:14317"


def cache_root() -> Path:
    """The build cache root, as in the script: ``${OTEL_AGENT_COLLECTOR_CACHE:-$HOME/...}``."""
    configured = os.environ.get("OTEL_AGENT_COLLECTOR_CACHE")
    if configured:  # bash's ${VAR:-default} treats an empty value as unset too
        return Path(configured)
    return Path(os.environ.get("HOME") or Path.home()) / ".cache" / "otel_agent" / "collector"


def manifest_hash(manifest: Path = MANIFEST) -> str:
    """First 16 hex digits of the manifest's sha256 (``sha256sum | cut -c1-16``)."""
    return hashlib.sha256(manifest.read_bytes()).hexdigest()[:16]


def expected_binary_path(manifest: Path = MANIFEST) -> Path:
    """Where the build script puts (or would put) the binary for the current manifest."""
    return cache_root() / manifest_hash(manifest) / "build" / DIST_NAME


def collector_binary() -> Path | None:
    """The built Collector for the current manifest, or ``None`` if it has not been built."""
    override = os.environ.get("OTEL_AGENT_COLLECTOR_BIN")
    if override:
        path = Path(override)
        return path if path.is_file() and os.access(path, os.X_OK) else None
    path = expected_binary_path()
    if not (path.parent.parent / ".complete").is_file():
        return None
    if not (path.is_file() and os.access(path, os.X_OK)):
        return None
    return path


def _split_endpoint(endpoint: str) -> tuple[str, int]:
    host, _, port = endpoint.rpartition(":")
    return host.strip("[]") or "127.0.0.1", int(port)


def _accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _log_tail(path: Path | None, limit: int = 4000) -> str:
    if path is None:
        return ""
    try:
        return path.read_text(errors="replace")[-limit:]
    except OSError:
        return ""


def start_collector(
    config: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    env: Mapping[str, str] | None = None,
    *,
    binary: Path | None = None,
    grpc_endpoint: str | None = None,
    timeout: float = 30.0,
    log_path: str | os.PathLike[str] | None = None,
    inherit_env: bool = True,
) -> subprocess.Popen[bytes]:
    """Start the Collector with ``config`` and wait until its OTLP gRPC port accepts connections.

    ``config`` is one path or several (merged by the Collector in order, e.g. gateway.yaml plus
    gateway-persistent-queue.yaml). ``env`` is laid over ``os.environ`` (or used alone with
    ``inherit_env=False``); it is how the configs get their endpoints. The port waited for is
    ``grpc_endpoint``, else ``env["COLLECTOR_GRPC_ENDPOINT"]``, else 127.0.0.1:14317.

    The Collector's stdout and stderr go to ``log_path`` (a temporary file by default), whose
    path is set on the returned Popen as ``proc.log_path`` (the file is kept after the
    Collector stops; pass a ``log_path`` under pytest's ``tmp_path`` to have it cleaned up).
    Raises ``RuntimeError`` (with the log's tail) if the port is already taken, the Collector
    exits, or ``timeout`` passes.
    """
    if binary is None:
        binary = collector_binary()
    if binary is None:
        raise FileNotFoundError(f"no Collector binary at {expected_binary_path()}: run scripts/build_collector.sh")
    configs = [config] if isinstance(config, (str, os.PathLike)) else list(config)
    full_env = dict(os.environ) if inherit_env else {}
    full_env.update(env or {})
    endpoint = grpc_endpoint or full_env.get("COLLECTOR_GRPC_ENDPOINT") or DEFAULT_GRPC_ENDPOINT
    host, port = _split_endpoint(endpoint)
    if _accepts(host, port):
        raise RuntimeError(f"{endpoint} already accepts connections before the Collector started")

    if log_path is None:
        fd, name = tempfile.mkstemp(prefix="otelcol-", suffix=".log")
        os.close(fd)
        log_path = name
    log_path = Path(log_path)
    cmd = [str(binary)]
    for c in configs:
        cmd += ["--config", str(Path(c).resolve())]
    # The child writes the log through its own copy of the descriptor: ours is closed once it has started.
    with log_path.open("wb") as log_file:
        proc = subprocess.Popen(cmd, env=full_env, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT)
    proc.log_path = log_path  # type: ignore[attr-defined]

    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            log_file.close()
            raise RuntimeError(
                f"Collector exited with {proc.returncode} before {endpoint} accepted connections;"
                f" log {log_path}:\n{_log_tail(log_path)}"
            )
        if _accepts(host, port):
            return proc
        if time.monotonic() > deadline:
            stop_collector(proc)
            raise RuntimeError(
                f"Collector did not accept connections on {endpoint} within {timeout}s;"
                f" log {log_path}:\n{_log_tail(log_path)}"
            )
        time.sleep(0.1)


def stop_collector(proc: subprocess.Popen[bytes], timeout: float = 20.0) -> int:
    """Stop a Collector started by :func:`start_collector`: SIGTERM, wait, SIGKILL if needed.

    SIGTERM lets the Collector shut down gracefully (it drains in-memory queues as far as its
    exporters' timeouts allow). Returns the exit code (0 after a clean shutdown).
    """
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    return proc.returncode


@contextlib.contextmanager
def running_collector(
    config: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    env: Mapping[str, str] | None = None,
    **kwargs: object,
) -> Iterator[subprocess.Popen[bytes]]:
    """``with running_collector(path, env) as proc:`` — :func:`start_collector` then :func:`stop_collector`."""
    proc = start_collector(config, env, **kwargs)  # type: ignore[arg-type]
    try:
        yield proc
    finally:
        stop_collector(proc)
