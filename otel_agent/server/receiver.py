"""The receiver as one object: store, writer, decoders, both transports. Both transports start or neither.

Shutdown order keeps the durability contract: stop taking new requests, let the in-flight ones finish
(each is answered only after its commit), commit whatever is still queued, then close the file.

Start-up checks what it can before it creates anything (``preflight``): another receiver holding the file
(named from its discovery file), endpoints that cannot be listened on. A start that fails after the store was
created removes the file it created, so a failed ``serve`` leaves no new empty ``.duckdb`` behind.

What else the HTTP endpoint serves — the web console at ``/``, MCP at ``/mcp`` — are *faces* given to the
receiver by whoever assembles it (``otel_agent.main``: ``otel-agent serve``): this package never imports them.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Protocol

import duckdb

from otel_agent.alerts.rules import RuleSet
from otel_agent.alerts.rules import load_rules as load_alert_rules
from otel_agent.alerts.service import AlertService
from otel_agent.config import ReceiverConfig, parse_endpoint
from otel_agent.errors import EndpointUnavailableError, StoreHeldError
from otel_agent.fold.redact import load_rules
from otel_agent.ingest.decoder import make_decoder
from otel_agent.ingest.writer import Writer, take_over_checkpoints
from otel_agent.lifecycle.archive import Archive
from otel_agent.lifecycle.reading import attach_history, detach_history, refresh_history
from otel_agent.lifecycle.retention import make_lifecycle
from otel_agent.query.readonly import lock_down
from otel_agent.server import wrong_protocol
from otel_agent.server.auth import Authenticator
from otel_agent.server.grpc_front import GrpcFront, private_socket_path, remove_private_socket
from otel_agent.server.grpc_transport import build_grpc_server
from otel_agent.server.http_transport import HttpServer, build_app
from otel_agent.server.pipeline import IngestPipeline
from otel_agent.server.query_service import QueryService
from otel_agent.server.review_service import ReviewService
from otel_agent.store.database import open_store, set_run_silence
from otel_agent.store.discovery import discovery_path, read_discovery, write_discovery
from otel_agent.store.maintained import DerivedState

log = logging.getLogger(__name__)


_LOCK_HOLDER = re.compile(r"Conflicting lock is held in (?P<exe>.+?) \(PID (?P<pid>\d+)\)")


def check_not_held(db: str) -> None:
    """Refuse a store another live receiver announces in its discovery file, naming it."""
    held = read_discovery(db)
    if held is not None and held.pid != os.getpid():
        raise StoreHeldError(
            f"{db} is held by another otel-agent receiver ({held.describe()}); "
            "stop it, or send data to it, or choose another --db"
        )


def check_endpoint(name: str, endpoint: str) -> None:
    """Bind and release ``endpoint`` once, so a port in use is reported by name (before the gRPC core logs
    its own line, and before the store is opened)."""
    host, port = parse_endpoint(name, endpoint)
    if port == 0:
        return
    flag = "--" + name.replace("_", "-")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise EndpointUnavailableError(f"cannot listen on {flag} {endpoint}: host {host!r} unknown ({exc})") from None
    family, _, _, _, address = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                why = f"port {port} is in use by another process"
            elif exc.errno == errno.EADDRNOTAVAIL:
                why = f"{host} is not an address of this machine"
            elif exc.errno == errno.EACCES:
                why = f"port {port} needs privileges"
            else:
                why = exc.strerror or str(exc)
            raise EndpointUnavailableError(f"cannot listen on {flag} {endpoint}: {why}") from None


def preflight(config: ReceiverConfig) -> None:
    """Everything that can refuse a start before anything is created."""
    check_not_held(config.db)
    check_endpoint("grpc_endpoint", config.grpc_endpoint)
    check_endpoint("http_endpoint", config.http_endpoint)


def _open(config: ReceiverConfig) -> duckdb.DuckDBPyConnection:
    try:
        return open_store(config.db, checkpoint_threshold=config.checkpoint_threshold, memory_limit=config.memory_limit)
    except duckdb.IOException as exc:
        match = _LOCK_HOLDER.search(str(exc))
        if match is None:
            raise
        held = read_discovery(config.db)
        who = held.describe() if held else f"PID {match['pid']}, {match['exe']}"
        raise StoreHeldError(
            f"{config.db} is locked by another process ({who}); stop it or choose another --db"
        ) from None


def _reads_archive(config: ReceiverConfig) -> Archive | None:
    """The archive the query API and console read with the live store: the ``--archive`` of a store file, local
    or S3 (``lifecycle.reading.attach_history``)."""
    if not config.archive or config.db == ":memory:":
        return None
    return Archive(config.archive)


class Face(Protocol):
    """Routes served on the receiver's HTTP endpoint after OTLP and the APIs (so they cannot shadow them), built
    over the receiver before it starts, closed when it stops."""

    name: str
    routes: list[Any]

    def close(self) -> None:
        """Stop serving: interrupt and wait for what is still running (before the store closes)."""


FaceFactory = Callable[["Receiver"], Face]


class Receiver:
    """The whole receiver: store, writer, decoder, query and review services, and both transports; ``faces``:
    what else its HTTP endpoint serves (the console, MCP), each built over this receiver at start."""

    def __init__(self, config: ReceiverConfig, faces: Sequence[FaceFactory] = ()) -> None:
        self.config = config
        self.face_factories = tuple(faces)
        self.faces: dict[str, Face] = {}
        self.auth = Authenticator.from_file(config.tokens_file)
        rules = load_rules(config.redaction_rules, use_defaults=not config.no_default_redaction)
        # the alert rules are checked before anything is created: a bad rule is one line and exit code 2
        alert_rules = load_alert_rules(config.alert_rules) if config.alert_rules else RuleSet()
        preflight(config)
        self._created = config.db != ":memory:" and not Path(config.db).exists()
        self.con = _open(config)
        set_run_silence(self.con, config.run_silence_s)
        checkpoints = take_over_checkpoints(self.con)  # before lock_down: it sets DuckDB's threshold
        history = _reads_archive(config)
        if history is not None:  # before lock_down: it names the one directory DuckDB may read
            attach_history(self.con, history)
        lock_down(self.con)
        self.lifecycle = make_lifecycle(self.con, config)
        if history is not None:
            self.lifecycle.on_archived = lambda: refresh_history(self.con, history)
        self.writer = Writer(
            self.con,
            max_inflight_bytes=config.queue_max_bytes,
            batch_max_items=config.batch_max_items,
            batch_timeout_s=config.batch_timeout_ms / 1000,
            maintenance=self.lifecycle if self.lifecycle.enabled else None,
            checkpoints=checkpoints,
            block_cache_share=config.block_cache_share,
        )
        self.derived = DerivedState(self.con, busy=lambda: self.writer.queue_depth > 0)
        self.decoder = make_decoder(rules, config.decode_workers, config.decode_timeout_s)
        self.pipeline = IngestPipeline(self.decoder, self.writer, self.auth)
        self.query = QueryService(
            self.con,
            self.auth,
            max_rows=config.query_max_rows,
            timeout_s=config.query_timeout_s,
            max_bytes=config.query_max_bytes,
            workers=config.query_workers,
            max_message_bytes=config.max_message_bytes,
            db_path=config.db,
        )
        self.review = ReviewService(self.writer, self.auth)
        self.alerts = AlertService(
            self.con,
            self.writer,
            self.auth,
            self.health,
            rules=alert_rules,
            interval_s=config.alert_interval_s,
            timeout_s=config.alert_eval_timeout_s,
        )
        self.grpc_server = None
        self.grpc_front: GrpcFront | None = None
        self._grpc_socket_dir: str | None = None
        self.http_server: HttpServer | None = None
        self.grpc_port = 0
        self.http_port = 0
        self._started = False

    def start(self) -> Receiver:
        """Bind both transports and start serving; on a failure nothing is left open."""
        # HTTP first: its socket is ours to close if gRPC then fails to bind, whereas a gRPC server that
        # bound a port keeps it until the process exits, started or not.
        try:
            self.alerts.check()  # SQL rules bound against the store: a bad one refuses the start
            app = build_app(
                self.pipeline,
                self.query,
                self.config.max_message_bytes,
                review=self.review,
                extra_routes=self.alerts.routes + self._face_routes(),
                derived=self.derived,
            )
            self.http_server = HttpServer(
                app, self.config.http_endpoint, "debug" if self.config.log_level == "debug" else "warning"
            )
            self.http_port = self.http_server.port
            # the gRPC port is this process's socket (grpc_front.py: a hint when HTTP/1 arrives there); grpcio
            # itself listens on a private Unix socket
            host, port = parse_endpoint("grpc_endpoint", self.config.grpc_endpoint)
            self._grpc_socket_dir, grpc_socket = private_socket_path()
            self.grpc_front = GrpcFront(host, port, grpc_socket, lambda: self.http_address)
            self.grpc_port = self.grpc_front.port
            self.grpc_server, _ = build_grpc_server(
                f"unix:{grpc_socket}",
                self.pipeline,
                self.query,
                max_message_bytes=self.config.max_message_bytes,
                review=self.review,
            )
        except BaseException as exc:
            if self.http_server is not None:
                self.http_server.sock.close()
            if self.grpc_front is not None:
                self.grpc_front.close()
            if self._grpc_socket_dir is not None:
                remove_private_socket(self._grpc_socket_dir)
            self._close_storage()
            self._remove_created()
            if isinstance(exc, OSError) and not isinstance(exc, EndpointUnavailableError):
                raise EndpointUnavailableError(f"cannot start the receiver: {exc}") from exc
            raise
        self.grpc_server.start()
        self.grpc_front.start()
        self.http_server.start()
        self._started = True
        self.lifecycle.start()
        self.derived.start()
        self.alerts.start()
        self._write_discovery()
        wrong_protocol.install(self.grpc_address)
        log.debug(  # `otel-agent serve` prints its own start-up line; this one is for embedders
            "otel-agent receiver: gRPC %s, HTTP %s, db %s",
            self.grpc_address,
            self.http_address,
            self.config.db,
        )
        return self

    def _face_routes(self) -> list[Any]:
        routes: list[Any] = []
        for factory in self.face_factories:
            face = factory(self)
            self.faces[face.name] = face
            routes += face.routes
        return routes

    def health(self) -> dict[str, Any]:
        """The figures ``/healthz`` shows (``/metrics`` exposes them): the writer's, decode restarts, the
        maintained state's report, and why ingest is unavailable (None: ready)."""
        body: dict[str, Any] = asdict(self.writer.health())
        body["decode_worker_restarts"] = self.decoder.restarts
        body["derived"] = self.derived.report()
        body["unavailable"] = self.pipeline.unavailable()
        return body

    @property
    def console(self) -> Face | None:
        """The web console face, when the receiver serves one."""
        return self.faces.get("console")

    @property
    def console_url(self) -> str:
        """The web console's address on the HTTP transport."""
        return self.http_address + "/"

    @property
    def grpc_address(self) -> str:
        """The gRPC address as bound (the real port when ``:0`` was asked for)."""
        host = self.config.grpc_endpoint.rpartition(":")[0]
        return f"{host}:{self.grpc_port}"

    @property
    def http_address(self) -> str:
        """The HTTP base URL as bound (the real port when ``:0`` was asked for)."""
        host = self.config.http_endpoint.rpartition(":")[0]
        return f"http://{host}:{self.http_port}"

    def _write_discovery(self) -> None:
        write_discovery(self.config.db, self.grpc_address, self.http_address)

    def _remove_created(self) -> None:
        """A failed start removes the store file it created (nothing was ever acknowledged into it)."""
        if self._created:
            for path in (Path(self.config.db), Path(self.config.db + ".wal")):
                path.unlink(missing_ok=True)

    def stop(self, grace_s: float = 10.0) -> None:
        """Stop accepting, finish and commit in-flight requests, close the store."""
        if self._started:
            assert self.grpc_server is not None
            assert self.http_server is not None
            assert self.grpc_front is not None
            self.grpc_front.stop_accepting()
            stopped = self.grpc_server.stop(grace_s)
            self.http_server.stop()
            stopped.wait(grace_s)
            self.grpc_front.close()
            if self._grpc_socket_dir is not None:
                remove_private_socket(self._grpc_socket_dir)
            self._started = False
        self._close_storage()
        discovery_path(self.config.db).unlink(missing_ok=True)

    def _close_storage(self) -> None:
        for face in getattr(self, "faces", {}).values():
            face.close()
        self.query.close()
        self.review.close()
        alerts = getattr(self, "alerts", None)
        if alerts is not None:
            alerts.close()
        lifecycle = getattr(self, "lifecycle", None)
        if lifecycle is not None:
            lifecycle.close()
        derived = getattr(self, "derived", None)
        if derived is not None:
            derived.close()
        self.writer.close()
        if derived is not None and derived.started:
            try:  # what the writer committed last, folded in (or the runs view computes from raw again)
                derived.finish()
            except Exception as exc:  # the next start continues from the watermark
                log.error("maintained state: finishing at stop failed: %s", exc)
        self.decoder.close()
        detach_history(self.con)
        try:
            self.con.execute("CHECKPOINT")
        finally:
            self.con.close()

    def __enter__(self) -> Receiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
