"""Admission: flow control of the receiver's memory, one piece of the writer (``ingest.writer``).

A request reserves its payload size as its body is read (HTTP) or before it is decoded (gRPC, whose messages
arrive whole; reading starts only while the bound has room) and releases it after its commit, so memory held by
reading, decoding, queueing and committing is bounded. A request that does not fit gets ``QueueFullError`` at
once (a retryable reply with a jittered ``Retry-After``), never a silent drop.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass
from typing import Protocol

from otel_agent.errors import QueueFullError, ShuttingDownError


@dataclass
class Admission:
    """Bytes a request holds against the in-flight bound, from before its body is read to its commit."""

    nbytes: int
    released: bool = False


class Refusals(Protocol):
    """Where refusals are counted (the writer's ``WriterStats``)."""

    refused: int


class AdmissionControl:
    """The in-flight bound: ``max_inflight_bytes`` across every admitted request; refusals counted in
    ``counters.refused``; the commit rate (fed by the writer) sizes the retry hint."""

    def __init__(self, max_inflight_bytes: int, counters: Refusals) -> None:
        self.max_inflight_bytes = max_inflight_bytes
        self.counters = counters
        self._lock = threading.Lock()
        self._inflight = 0
        self._commit_rate = 0.0  # payload bytes committed per second of commit work (moving average)
        self._accepting = True

    @property
    def inflight_bytes(self) -> int:
        """Payload bytes admitted and not yet released."""
        return self._inflight

    @property
    def accepting(self) -> bool:
        """False once ``stop`` was called: new requests are refused as shutting down."""
        return self._accepting

    def admit(self, nbytes: int) -> Admission:
        """Reserve room for a request of ``nbytes``; raises when full or stopping.

        A request larger than the whole bound is still admitted when nothing else is in flight, so one big
        request cannot be refused forever.
        """
        admission = Admission(0)
        self.grow(admission, nbytes)
        return admission

    def grow(self, admission: Admission, nbytes: int) -> None:
        """Reserve ``nbytes`` more for an admitted request whose body is still being read (the same rule
        as ``admit``: refused when the bound is passed while other requests hold bytes)."""
        with self._lock:
            if not self._accepting:
                raise ShuttingDownError("the receiver is shutting down")
            others = self._inflight - admission.nbytes
            if others and self._inflight + nbytes > self.max_inflight_bytes:
                raise self._refusal_locked()
            self._inflight += nbytes
            admission.nbytes += nbytes

    def check_room(self) -> None:
        """Raise the reply ``admit`` would give when the bound is already reached: the gate a transport
        passes before it reads a body whose size it cannot know in advance."""
        with self._lock:
            if not self._accepting:
                raise ShuttingDownError("the receiver is shutting down")
            if self._inflight >= self.max_inflight_bytes:
                raise self._refusal_locked()

    def _refusal_locked(self) -> QueueFullError:
        self.counters.refused += 1
        return QueueFullError(
            f"in-flight data at its bound ({self._inflight} of {self.max_inflight_bytes} bytes)",
            retry_after_s=self.retry_after_s(),
        )

    def retry_after_s(self) -> float:
        """A jittered hint for refused clients: about the time to drain what is in flight, at least 1 s.

        Jitter matters: SDK exporters use the server's hint instead of their own randomized backoff, so a
        fixed hint would bring every refused client back at the same instant.
        """
        drain = self._inflight / self._commit_rate if self._commit_rate else 0.0
        return max(1.0, drain) * random.uniform(0.5, 1.5)

    def release(self, admission: Admission) -> None:
        """Give back an admission's bytes (once; a second release is a no-op)."""
        with self._lock:
            if not admission.released:
                admission.released = True
                self._inflight -= admission.nbytes

    def committed(self, nbytes: int, seconds: float) -> None:
        """A group commit of ``nbytes`` payload took ``seconds``: the drain rate the retry hint uses."""
        rate = nbytes / max(seconds, 1e-4)
        self._commit_rate = rate if not self._commit_rate else 0.8 * self._commit_rate + 0.2 * rate

    def stop(self) -> None:
        """Refuse every new request from now on."""
        with self._lock:
            self._accepting = False
