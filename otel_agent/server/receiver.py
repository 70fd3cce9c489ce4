"""The receiver as one object: store, writer, decoders, both transports. Both transports start or neither.

Shutdown order keeps the durability contract: stop taking new requests, let the in-flight ones finish
(each is answered only after its commit), commit whatever is still queued, then close the file.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from otel_agent.config import ReceiverConfig
from otel_agent.fold.redact import load_rules
from otel_agent.ingest.decoder import make_decoder
from otel_agent.ingest.writer import Writer
from otel_agent.query.readonly import lock_down
from otel_agent.server.auth import Authenticator
from otel_agent.server.grpc_transport import build_grpc_server
from otel_agent.server.http_transport import HttpServer, build_app
from otel_agent.server.pipeline import IngestPipeline
from otel_agent.server.query_service import QueryService
from otel_agent.server.review_service import ReviewService
from otel_agent.store.database import open_store

log = logging.getLogger(__name__)


def discovery_path(db: str | Path) -> Path:
    """Where a running receiver says how to reach it, so ``otel-agent sql --db`` can find it."""
    return Path(str(db) + ".receiver.json")


class Receiver:
    def __init__(self, config: ReceiverConfig) -> None:
        self.config = config
        self.auth = Authenticator.from_file(config.tokens_file)
        rules = load_rules(config.redaction_rules, use_defaults=not config.no_default_redaction)
        self.con = open_store(
            config.db, checkpoint_threshold=config.checkpoint_threshold, memory_limit=config.memory_limit
        )
        lock_down(self.con)
        self.writer = Writer(
            self.con,
            max_inflight_bytes=config.queue_max_bytes,
            batch_max_items=config.batch_max_items,
            batch_timeout_s=config.batch_timeout_ms / 1000,
        )
        self.decoder = make_decoder(rules, config.decode_workers)
        self.pipeline = IngestPipeline(self.decoder, self.writer, self.auth)
        self.query = QueryService(self.con, self.auth, max_rows=config.query_max_rows, timeout_s=config.query_timeout_s)
        self.review = ReviewService(self.writer, self.auth)
        self.grpc_server = None
        self.http_server: HttpServer | None = None
        self.grpc_port = 0
        self.http_port = 0
        self._started = False

    def start(self) -> Receiver:
        # HTTP first: its socket is ours to close if gRPC then fails to bind, whereas a gRPC server that
        # bound a port keeps it until the process exits, started or not.
        try:
            app = build_app(self.pipeline, self.query, self.config.max_message_bytes, review=self.review)
            self.http_server = HttpServer(
                app, self.config.http_endpoint, "debug" if self.config.log_level == "debug" else "warning"
            )
            self.http_port = self.http_server.port
            self.grpc_server, self.grpc_port = build_grpc_server(
                self.config.grpc_endpoint,
                self.pipeline,
                self.query,
                max_message_bytes=self.config.max_message_bytes,
                review=self.review,
            )
        except BaseException:
            if self.http_server is not None:
                self.http_server.sock.close()
            self._close_storage()
            raise
        self.grpc_server.start()
        self.http_server.start()
        self._started = True
        self._write_discovery()
        log.info(
            "otel-agent receiver: gRPC %s, HTTP %s, db %s",
            self.grpc_address,
            self.http_address,
            self.config.db,
        )
        return self

    @property
    def grpc_address(self) -> str:
        host = self.config.grpc_endpoint.rpartition(":")[0]
        return f"{host}:{self.grpc_port}"

    @property
    def http_address(self) -> str:
        host = self.config.http_endpoint.rpartition(":")[0]
        return f"http://{host}:{self.http_port}"

    def _write_discovery(self) -> None:
        path = discovery_path(self.config.db)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"pid": os.getpid(), "grpc": self.grpc_address, "http": self.http_address}) + "\n")
        tmp.replace(path)

    def stop(self, grace_s: float = 10.0) -> None:
        """Stop accepting, finish and commit in-flight requests, close the store."""
        if self._started:
            assert self.grpc_server is not None and self.http_server is not None
            stopped = self.grpc_server.stop(grace_s)
            self.http_server.stop()
            stopped.wait(grace_s)
            self._started = False
        self._close_storage()
        discovery_path(self.config.db).unlink(missing_ok=True)

    def _close_storage(self) -> None:
        self.writer.close()
        self.decoder.close()
        try:
            self.con.execute("CHECKPOINT")
        finally:
            self.con.close()

    def __enter__(self) -> Receiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
