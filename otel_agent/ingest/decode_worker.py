"""The decode worker process: ``python -m otel_agent.ingest.decode_worker FD PARENT_PID``.

It reads jobs from the connection on file descriptor FD (one socket of a socketpair, see
``ingest.decoder.ProcessDecoder``), decodes each with ``decode_payload`` and sends back
``(True, FoldedBatch)`` or ``(False, error)``. The first message is the redaction rules; the worker answers
it with ``"ready"``.

It never outlives the receiver: on Linux the kernel kills it when the thread that started it ends
(``PR_SET_PDEATHSIG``), and everywhere it exits when its connection closes (the parent's end is closed by
the kernel when the parent dies) or when its parent PID changes (re-parented to init), checked every second.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pickle
import signal
import sys
from multiprocessing.connection import Connection

from otel_agent.errors import OtelAgentError

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


def _reply(ok: bool, value: object) -> bytes:
    """The pickled reply. An error the parent might not be able to rebuild (a third-party exception type)
    travels as a ``RuntimeError`` naming it."""
    if not ok and not isinstance(value, OtelAgentError):
        value = RuntimeError(f"decode worker: {type(value).__name__}: {value}")
    try:
        return pickle.dumps((ok, value), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # an unpicklable error: say what it was
        return pickle.dumps((False, RuntimeError(f"decode worker: unpicklable {type(value).__name__}: {exc}")))


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
            reply = _reply(True, decode_payload(signal_name, fmt, payload, redactor, principal, received_at_us))
        except Exception as exc:  # delivered to the request that sent the job
            reply = _reply(False, exc)
        try:
            conn.send_bytes(reply)
        except OSError:
            return


def main(argv: list[str]) -> int:
    """Entry point of a worker process: ``argv`` is the inherited socket's fd and the parent's pid."""
    fd, parent_pid = int(argv[1]), int(argv[2])
    die_with_parent(parent_pid)
    # Ctrl-C in a terminal reaches the whole process group: the receiver shuts its workers down itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    serve(Connection(fd), parent_pid)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
