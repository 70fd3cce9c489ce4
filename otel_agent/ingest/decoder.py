"""Where decoding runs: in the caller's thread, or in a small pool of worker processes this module manages.

Folding OTLP into columns is pure-Python work bound by the GIL (REFERENCE §6: the hot spot). In the
receiver, worker processes do it so that it runs beside the gRPC/HTTP threads and DuckDB's commit instead
of taking turns with them; the embedded exporter decodes inline. Both call the same ``decode_payload``.

Why not ``concurrent.futures.ProcessPoolExecutor``: a worker killed while it sends its result back (an
out-of-memory kill does this) can leave the executor waiting forever, with no error to react to. This pool
is small enough to trust by reading it: each worker is one process and one socket, used by one request at a
time; a request that waits on a worker is bounded by ``timeout_s``, after which the supervisor kills the
worker, and the request sees its socket close. Every failure is the same event — the socket closed — and
has the same answer: the worker is discarded and replaced, the request gets ``DecoderUnavailableError``
(UNAVAILABLE / 503, retryable).
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Protocol

from otel_agent.errors import DecoderUnavailableError
from otel_agent.fold.batch import FoldedBatch
from otel_agent.fold.decode import decode_payload
from otel_agent.fold.redact import Redactor, Rule
from otel_agent.ingest.decode_worker import read_reply

log = logging.getLogger(__name__)

_SUPERVISE_EVERY_S = 0.1
_START_TIMEOUT_S = 60.0
"""How long a new worker may take to import and answer ``ready`` (interpreter start on a loaded machine)."""


class Decoder(Protocol):
    """What the receiver needs of a decoder: the inline one (tests, ``--decode-workers 0``) or the process pool."""

    restarts: int
    """Workers replaced so far (shown by ``/healthz``)."""

    def decode(self, signal: str, fmt: str, payload: bytes, principal: str | None) -> FoldedBatch:
        """The request's rows; raises ``InvalidPayloadError`` for bad input, ``DecoderUnavailableError``
        when no decode could be had in time (retryable)."""
        ...

    def unavailable(self) -> str | None:
        """Why the decoder cannot take requests right now (None: ready). Shown by ``/healthz``."""
        ...

    def close(self) -> None:
        """Stop decoding and release the workers, if any."""


def _now_us() -> int:
    return time.time_ns() // 1000


class InlineDecoder:
    """Decodes in the calling thread."""

    restarts = 0

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.redactor = Redactor(rules)

    def decode(self, signal: str, fmt: str, payload: bytes, principal: str | None) -> FoldedBatch:
        """Decode in this thread (errors are raised to the caller as they are)."""
        return decode_payload(signal, fmt, payload, self.redactor, principal, _now_us())

    def unavailable(self) -> str | None:
        """Never unavailable: there is no worker to wait for."""
        return None

    def close(self) -> None:
        """Nothing to release."""


@dataclass(eq=False)
class _Worker:
    proc: subprocess.Popen[bytes]
    conn: Connection
    started_at: float = field(default_factory=time.monotonic)
    ready: bool = False
    deadline: float | None = None
    """Set while a request is in the worker: past it, the supervisor kills the worker."""
    killed: bool = False

    def kill(self) -> None:
        self.killed = True
        with contextlib.suppress(OSError):
            self.proc.kill()


class ProcessDecoder:
    """Decodes in ``workers`` processes (``otel_agent.ingest.decode_worker``), each used by one request at
    a time. A request waits at most ``timeout_s`` for a free worker and at most ``timeout_s`` for its
    decode; past either it gets ``DecoderUnavailableError``.

    One supervisor thread starts every worker (so ``PR_SET_PDEATHSIG``, which follows the thread that
    started a process, lasts as long as the pool), replaces dead ones, and kills workers that hold a
    request past its deadline. Workers are started with ``subprocess``, not ``multiprocessing``: no
    resource-tracker process to leave behind, and nothing inherited but the one socket.
    """

    def __init__(self, rules: tuple[Rule, ...], workers: int, timeout_s: float = 30.0) -> None:
        self._rules = rules
        self._wanted = workers
        self.timeout_s = timeout_s
        self.restarts = 0
        self._cond = threading.Condition()
        self._workers: list[_Worker] = []  # every live or starting worker
        self._idle: list[_Worker] = []
        self._closing = False
        self._first_start = threading.Event()
        self._supervisor = threading.Thread(target=self._supervise, name="otel-agent-decode-supervisor", daemon=True)
        self._supervisor.start()
        if not self._first_start.wait(_START_TIMEOUT_S) or not self._idle:
            self.close()
            raise RuntimeError("decode workers did not start")

    # -- requests ----------------------------------------------------------------------------------------
    def decode(self, signal: str, fmt: str, payload: bytes, principal: str | None) -> FoldedBatch:
        """Decode in a free worker; a worker that dies or overruns the deadline gives ``DecoderUnavailableError``."""
        job = pickle.dumps((signal, fmt, payload, principal, _now_us()), protocol=pickle.HIGHEST_PROTOCOL)
        worker = self._checkout()
        try:
            worker.conn.send_bytes(job)
            reply = worker.conn.recv_bytes()
        except (EOFError, OSError) as exc:
            self._discard(worker)
            why = "passed the decode time limit" if worker.killed else "died"
            raise DecoderUnavailableError(f"a decode worker {why} while holding the request; retry") from exc
        self._checkin(worker)
        try:
            ok, value = read_reply(reply)
        except Exception as exc:  # an error type that cannot be rebuilt here
            raise RuntimeError(f"decode worker reply could not be read: {exc}") from exc
        if ok:
            return value
        raise value

    def _checkout(self) -> _Worker:
        give_up = time.monotonic() + self.timeout_s
        with self._cond:
            while True:
                if self._closing:
                    raise DecoderUnavailableError("the decoder is shutting down")
                while self._idle:
                    worker = self._idle.pop()
                    if worker.proc.poll() is None and not worker.killed:
                        worker.deadline = time.monotonic() + self.timeout_s
                        return worker
                    self._drop_locked(worker)
                left = give_up - time.monotonic()
                if left <= 0:
                    raise DecoderUnavailableError(f"no decode worker free within {self.timeout_s:g} s; retry")
                self._cond.wait(left)

    def _checkin(self, worker: _Worker) -> None:
        with self._cond:
            worker.deadline = None
            if worker.killed or worker.proc.poll() is not None or self._closing:
                self._drop_locked(worker)
            else:
                self._idle.append(worker)
                self._cond.notify()

    def _discard(self, worker: _Worker) -> None:
        with self._cond:
            self._drop_locked(worker)

    def _drop_locked(self, worker: _Worker) -> None:
        """Forget a worker (idempotent); the supervisor starts its replacement."""
        if worker in self._workers:
            self._workers.remove(worker)
            if worker in self._idle:
                self._idle.remove(worker)
            if not self._closing:
                log.warning("decode worker %d lost; starting a replacement", worker.proc.pid)
                self.restarts += 1
            self._cond.notify_all()
        worker.kill()
        worker.conn.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            worker.proc.wait(timeout=5)  # reap it: no zombie left

    # -- health ------------------------------------------------------------------------------------------
    def unavailable(self) -> str | None:
        """Why requests may be refused now: fewer ready workers than wanted (None when all are ready)."""
        with self._cond:
            ready = sum(1 for w in self._workers if w.ready and not w.killed and w.proc.poll() is None)
        if ready < self._wanted:
            return f"decode workers restarting ({ready} of {self._wanted} ready)"
        return None

    @property
    def pids(self) -> list[int]:
        """The PIDs of the current workers (for tests and diagnostics)."""
        with self._cond:
            return [w.proc.pid for w in self._workers]

    # -- the supervisor ----------------------------------------------------------------------------------
    def _supervise(self) -> None:
        try:
            while True:
                with self._cond:
                    if self._closing:
                        break
                    self._reap_locked()
                    missing = self._wanted - len(self._workers)
                for _ in range(missing):
                    self._spawn()
                self._finish_starts()
        except Exception:  # never let the pool die silently
            log.exception("decode supervisor failed")
            raise
        finally:
            self._stop_workers()

    def _reap_locked(self) -> None:
        now = time.monotonic()
        for worker in list(self._workers):
            if worker.deadline is not None and now > worker.deadline and not worker.killed:
                log.warning("decode worker %d passed the decode time limit; killing it", worker.proc.pid)
                worker.kill()  # the request waiting on it sees its socket close
            elif not worker.ready and now - worker.started_at > _START_TIMEOUT_S:
                log.warning("decode worker %d did not start; killing it", worker.proc.pid)
                self._drop_locked(worker)
            elif worker.deadline is None and (worker.killed or worker.proc.poll() is not None):
                self._drop_locked(worker)  # died while idle (or while starting)

    def _spawn(self) -> None:
        parent_end, child_end = socket.socketpair()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # the parent's imports, whatever set them
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "otel_agent.ingest.decode_worker", str(child_end.fileno()), str(os.getpid())],
                pass_fds=(child_end.fileno(),),
                stdin=subprocess.DEVNULL,
                env=env,
                close_fds=True,
                # its own process group: a signal to the receiver's group (Ctrl-C, `timeout`, `kill -- -PGID`)
                # is the receiver's to handle; it stops its workers itself (decode_worker.main)
                process_group=0,
            )
        except OSError as exc:
            log.error("cannot start a decode worker: %s", exc)
            parent_end.close()
            time.sleep(1.0)
            return
        finally:
            child_end.close()
        conn = Connection(parent_end.detach())
        with contextlib.suppress(OSError):  # it died already: the supervisor will see it
            conn.send(self._rules)
        with self._cond:
            self._workers.append(_Worker(proc, conn))

    def _finish_starts(self) -> None:
        """Wait (one supervision period) for starting workers to say ``ready``; then they take requests."""
        with self._cond:
            starting = {w.conn: w for w in self._workers if not w.ready}
        ready = wait(list(starting), timeout=_SUPERVISE_EVERY_S) if starting else []
        if not starting:
            time.sleep(_SUPERVISE_EVERY_S)
        with self._cond:
            for conn in ready:
                worker = starting[conn]
                try:
                    ok = conn.recv() == "ready"
                except (EOFError, OSError):
                    ok = False
                if not ok:
                    self._drop_locked(worker)
                    continue
                worker.ready = True
                self._idle.append(worker)
                self._cond.notify()
            if len(self._idle) == self._wanted:
                self._first_start.set()

    def _stop_workers(self) -> None:
        with self._cond:
            workers = list(self._workers)
            self._workers.clear()
            self._idle.clear()
            self._cond.notify_all()
        for worker in workers:
            worker.conn.close()  # the worker sees EOF and exits
        for worker in workers:
            try:
                worker.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.proc.wait()
        self._first_start.set()

    def close(self) -> None:
        """Stop the supervisor, which stops and reaps every worker."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if threading.current_thread() is not self._supervisor:
            self._supervisor.join()


def make_decoder(rules: tuple[Rule, ...], workers: int, timeout_s: float = 30.0) -> Decoder:
    """The process pool for ``workers`` > 0, else decoding in the calling thread."""
    return ProcessDecoder(rules, workers, timeout_s) if workers > 0 else InlineDecoder(rules)
