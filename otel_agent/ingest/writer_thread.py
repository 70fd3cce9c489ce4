"""The writer thread (``ingest.writer``): takes jobs from its queue, gathers a group (up to ``batch_max_items``
items, waiting up to ``batch_timeout_s`` for more), hands it to the group commit, then lets the checkpointer run.
Before each wait for work it runs one bounded maintenance step (retention's deletes), and every
``MAINTENANCE_IDLE_S`` while idle.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from contextlib import suppress

from otel_agent.errors import ShuttingDownError
from otel_agent.ingest.admission import AdmissionControl
from otel_agent.ingest.checkpoints import Checkpointer
from otel_agent.ingest.group_commit import GroupCommit
from otel_agent.ingest.jobs import BatchJob, Job
from otel_agent.ingest.maintenance import MAINTENANCE_IDLE_S, Maintenance

log = logging.getLogger(__name__)


class WriterThread:
    """The one thread that owns the write connection: started here, stopped by ``close``."""

    def __init__(
        self,
        group_commit: GroupCommit,
        checkpointer: Checkpointer,
        admission: AdmissionControl,
        *,
        maintenance: Maintenance | None,
        batch_max_items: int,
        batch_timeout_s: float,
    ) -> None:
        self.group_commit = group_commit
        self.checkpointer = checkpointer
        self.admission = admission
        self.maintenance = maintenance
        self.batch_max_items = batch_max_items
        self.batch_timeout_s = batch_timeout_s
        self._queue: queue.Queue[Job | None] = queue.Queue()
        self._lock = threading.Lock()  # guards _closed and the stop marker
        self._closed = False  # the stop marker is queued: nothing put after it would be answered
        self.thread = threading.Thread(target=self._run, name="otel-agent-writer", daemon=True)
        self.thread.start()

    @property
    def queue_depth(self) -> int:
        """Jobs queued, not yet taken."""
        return self._queue.qsize()

    def enqueue(self, job: Job) -> None:
        """Queue a job, or fail its future when the thread has stopped (it would never be answered)."""
        with self._lock:
            if not self._closed:
                self._queue.put(job)
                return
        if isinstance(job, BatchJob):
            self.admission.release(job.admission)
        job.future.set_exception(ShuttingDownError("the receiver is shutting down"))

    def close(self) -> None:
        """Commit everything already queued, then stop the thread; jobs queued later are refused."""
        with self._lock:
            self._closed = True
            self._queue.put(None)
        self.thread.join()

    def _run(self) -> None:
        while True:
            first = self._next_job()
            if first is None:
                return
            group = [first]
            items = first.items
            deadline = time.monotonic() + self.batch_timeout_s
            stop = False
            while items < self.batch_max_items:
                try:
                    remaining = deadline - time.monotonic()
                    nxt = self._queue.get(timeout=remaining) if remaining > 0 else self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                group.append(nxt)
                items += nxt.items
            self.group_commit.commit_group(group)
            self.checkpointer.after_group(waiting=not self._queue.empty())
            if stop:
                return

    def _next_job(self) -> Job | None:
        """The next job to commit. With maintenance (otel_agent/lifecycle), one bounded step runs before each
        wait: between group commits under load, every ``MAINTENANCE_IDLE_S`` when idle."""
        if self.maintenance is None:
            return self._queue.get()
        while True:
            try:
                busy = self.maintenance.step(self.group_commit.con)
            except Exception as exc:  # maintenance must never stop ingest
                log.error("writer maintenance step failed: %s", exc)
                busy = False
            with suppress(queue.Empty):
                return self._queue.get(timeout=0 if busy else MAINTENANCE_IDLE_S)
