"""Where decoding runs: in the caller's thread, or in a pool of worker processes.

Folding OTLP into columns is pure-Python work bound by the GIL (REFERENCE §6: the hot spot). In the
receiver, worker processes do it so that it runs beside the gRPC/HTTP threads and DuckDB's commit instead
of taking turns with them; the embedded exporter decodes inline. Both call the same ``decode_payload``.
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Protocol

from otel_agent.fold.batch import FoldedBatch
from otel_agent.fold.decode import decode_payload
from otel_agent.fold.redact import Redactor, Rule

log = logging.getLogger(__name__)


class Decoder(Protocol):
    def submit(self, signal: str, fmt: str, payload: bytes, principal: str | None) -> Future[FoldedBatch]: ...

    def close(self) -> None: ...


def _now_us() -> int:
    return time.time_ns() // 1000


class InlineDecoder:
    """Decodes in the calling thread; the returned future is already done."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.redactor = Redactor(rules)

    def submit(self, signal: str, fmt: str, payload: bytes, principal: str | None) -> Future[FoldedBatch]:
        fut: Future[FoldedBatch] = Future()
        try:
            fut.set_result(decode_payload(signal, fmt, payload, self.redactor, principal, _now_us()))
        except BaseException as exc:  # delivered to the caller through the future
            fut.set_exception(exc)
        return fut

    def close(self) -> None:
        pass


_worker_redactor: Redactor | None = None


def _init_worker(rules: tuple[Rule, ...]) -> None:
    global _worker_redactor
    _worker_redactor = Redactor(rules)


def _decode_in_worker(signal: str, fmt: str, payload: bytes, principal: str | None, at_us: int) -> FoldedBatch:
    assert _worker_redactor is not None
    return decode_payload(signal, fmt, payload, _worker_redactor, principal, at_us)


class ProcessDecoder:
    """Decodes in ``workers`` spawned processes (spawn, not fork: the parent runs gRPC threads).

    A worker that dies (killed, out of memory) breaks a ``ProcessPoolExecutor`` for good; the pool is then
    replaced, so the requests that were in it get a retryable error (see ``IngestPipeline``) and the next
    ones are decoded by fresh workers.
    """

    def __init__(self, rules: tuple[Rule, ...], workers: int) -> None:
        self._rules = rules
        self._workers = workers
        self._lock = threading.Lock()
        self.restarts = 0
        self.pool = self._new_pool()

    def _new_pool(self) -> ProcessPoolExecutor:
        ctx = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(
            max_workers=self._workers, mp_context=ctx, initializer=_init_worker, initargs=(self._rules,)
        )
        # Start the workers now, not on the first request.
        for f in [pool.submit(_init_worker, self._rules) for _ in range(self._workers)]:
            f.result()
        return pool

    def _replace(self, broken: ProcessPoolExecutor) -> ProcessPoolExecutor:
        with self._lock:
            if self.pool is broken:
                log.warning("a decode worker died; starting a new pool of %d workers", self._workers)
                broken.shutdown(wait=False, cancel_futures=True)
                self.pool = self._new_pool()
                self.restarts += 1
            return self.pool

    def submit(self, signal: str, fmt: str, payload: bytes, principal: str | None) -> Future[FoldedBatch]:
        pool = self.pool
        try:
            fut = pool.submit(_decode_in_worker, signal, fmt, payload, principal, _now_us())
        except BrokenProcessPool:
            pool = self._replace(pool)
            fut = pool.submit(_decode_in_worker, signal, fmt, payload, principal, _now_us())

        def replace_if_broken(done: Future[FoldedBatch]) -> None:
            if isinstance(done.exception(), BrokenProcessPool):
                threading.Thread(target=self._replace, args=(pool,), daemon=True).start()

        fut.add_done_callback(replace_if_broken)
        return fut

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=False)


def make_decoder(rules: tuple[Rule, ...], workers: int) -> Decoder:
    return ProcessDecoder(rules, workers) if workers > 0 else InlineDecoder(rules)
