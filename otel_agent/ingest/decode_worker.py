"""The decode worker process: ``python -m otel_agent.ingest.decode_worker FD PARENT_PID``.

It reads jobs from the connection on file descriptor FD (one socket of a socketpair, see
``ingest.decoder.ProcessDecoder``), decodes each with ``decode_payload`` and sends back
``(True, FoldedBatch)`` or ``(False, error)`` (``reply`` / ``read_reply``: the batch's Arrow tables travel as
Arrow IPC streams, not pickled). The first message is the redaction rules; the worker answers
it with ``"ready"``.

It ignores SIGINT and SIGTERM (the receiver stops it; see ``main``) and never outlives the receiver: on
Linux the kernel kills it when the thread that started it ends (``PR_SET_PDEATHSIG``), and everywhere it exits
when its connection closes (the parent's end is closed by the kernel when the parent dies) or when its parent
PID changes (re-parented to init), checked every second.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import os
import pickle
import signal
import sys
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING

from otel_agent.errors import OtelAgentError

if TYPE_CHECKING:
    import pyarrow as pa

_PR_SET_PDEATHSIG = 1
_LIVENESS_CHECK_S = 1.0


def die_with_parent(parent_pid: int) -> None:
    """Ask the kernel to SIGKILL this process when its parent goes (Linux only; elsewhere the liveness
    checks of ``serve`` do it), then make sure the parent had not already gone before the request."""
    if sys.platform.startswith("linux"):
        # No prctl to call (OSError, AttributeError): the liveness checks still apply.
        with contextlib.suppress(OSError, AttributeError):
            # CDLL(None): the symbols already loaded into this process, libc's prctl among them.
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:
        os._exit(0)


def _ipc(table: pa.Table) -> bytes:
    import pyarrow as pa  # imported by the fold already; here not at module level, see serve()

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as stream:
        stream.write_table(table)
    return sink.getvalue().to_pybytes()


def reply(ok: bool, value: object) -> bytes:
    """The reply to one job: ``(True, batch without its tables, [(name, Arrow IPC stream)])`` or ``(False,
    error, [])``, pickled. Arrow IPC because it is what the tables already are in memory: writing it costs
    the worker ~0.3 CPU ms per 1,000 spans and reading it the receiver ~0.2, against ~2.4 and ~0.8 for
    pickling the tables (bench/ingest_costs.py); the receiver's side holds the GIL.

    An error the parent might not be able to rebuild (a third-party exception type) travels as a
    ``RuntimeError`` naming it."""
    from otel_agent.fold.batch import FoldedBatch

    if ok and isinstance(value, FoldedBatch):
        tables = [(name, _ipc(table)) for name, table in value.tables.items()]
        return pickle.dumps((True, dataclasses.replace(value, tables={}), tables), protocol=pickle.HIGHEST_PROTOCOL)
    if not ok and not isinstance(value, OtelAgentError):
        value = RuntimeError(f"decode worker: {type(value).__name__}: {value}")
    try:
        return pickle.dumps((ok, value, []), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # an unpicklable error: say what it was
        why = RuntimeError(f"decode worker: unpicklable {type(value).__name__}: {exc}")
        return pickle.dumps((False, why, []))


def read_reply(data: bytes) -> tuple[bool, object]:
    """``(ok, FoldedBatch or error)`` from a ``reply`` (in the receiver)."""
    import pyarrow as pa

    ok, value, tables = pickle.loads(data)
    if ok:
        value.tables = {name: pa.ipc.open_stream(pa.py_buffer(blob)).read_all() for name, blob in tables}
    return ok, value


def serve(conn: Connection, parent_pid: int) -> None:
    """Answer decode jobs from the parent on ``conn`` until it closes its end or dies."""
    # Imported here, after die_with_parent: the imports take most of a worker's start-up.
    from otel_agent.fold.decode import decode_payload
    from otel_agent.fold.redact import Redactor

    redactor = Redactor(conn.recv())
    conn.send("ready")
    while True:
        if not conn.poll(_LIVENESS_CHECK_S):
            if os.getppid() != parent_pid:
                return
            continue
        try:
            job = conn.recv_bytes()
        except (EOFError, OSError):
            return  # the parent closed its end, or died
        signal_name, fmt, payload, principal, received_at_us = pickle.loads(job)
        try:
            answer = reply(True, decode_payload(signal_name, fmt, payload, redactor, principal, received_at_us))
        except Exception as exc:  # delivered to the request that sent the job
            answer = reply(False, exc)
        try:
            conn.send_bytes(answer)
        except OSError:
            return


def main(argv: list[str]) -> int:
    """Entry point of a worker process: ``argv`` is the inherited socket's fd and the parent's pid."""
    fd, parent_pid = int(argv[1]), int(argv[2])
    die_with_parent(parent_pid)
    # The receiver stops its workers itself (it closes their sockets once every request is answered). A worker
    # is started in a process group of its own, so Ctrl-C in a terminal and `timeout` (which signal the
    # receiver's group) do not reach it; SIGTERM and SIGINT sent to every process of a service (systemd's
    # control group) are ignored, or the receiver would see its workers die while it is still answering.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    serve(Connection(fd), parent_pid)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
