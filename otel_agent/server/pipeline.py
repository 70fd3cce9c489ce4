"""Transport-independent consumption: gate → read → admit → decode → write → acknowledge after commit.

Both transports go through ``IngestPipeline`` (the Collector's receiver/consumer split): they only turn
bytes and headers into calls and the calls' outcomes into their own status codes. The order is the point:
a request is authenticated from its headers and checked against the in-flight bound (``gate``) before its
body is read, so an unauthenticated or over-the-bound client never makes the receiver hold its body.
"""

from __future__ import annotations

from otel_agent.fold.batch import FoldedBatch
from otel_agent.ingest.decoder import Decoder
from otel_agent.ingest.writer import Admission, Writer
from otel_agent.server.auth import Authenticator, Principal


class IngestPipeline:
    """The ingest path both transports share: authenticate and admit, decode, then write."""

    def __init__(self, decoder: Decoder, writer: Writer, auth: Authenticator) -> None:
        self.decoder = decoder
        self.writer = writer
        self.auth = auth

    def gate(self, authorization: str | None) -> Principal:
        """Before the body is read: the caller's principal (it needs the ``ingest`` role), and a refusal at
        once when in-flight data is already at its bound. Raises ``UnauthenticatedError``,
        ``PermissionDeniedError``, ``QueueFullError`` or ``ShuttingDownError``."""
        principal = self.auth.authenticate(authorization, "ingest")
        self.writer.check_room()
        return principal

    def admit(self, nbytes: int = 0) -> Admission:
        """Reserve ``nbytes`` of the in-flight bound (grow it with ``writer.grow`` while reading)."""
        return self.writer.admit(nbytes)

    def reserve(self, admission: Admission, total: int) -> None:
        """Make ``admission`` cover ``total`` bytes (called as a body is read); raises ``QueueFullError``
        beyond the bound."""
        extra = total - admission.nbytes
        if extra > 0:
            self.writer.grow(admission, extra)

    def export(self, signal: str, fmt: str, payload: bytes, principal: Principal, admission: Admission) -> FoldedBatch:
        """Store one request's body; returns once its data has committed. ``admission`` is released here
        (after the commit, or on any failure). Raises an ``OtelAgentError`` subclass."""
        try:
            self.reserve(admission, len(payload))
            batch = self.decoder.decode(signal, fmt, payload, principal.name)
        except BaseException:
            self.writer.release(admission)
            raise
        return self.writer.submit(batch, admission).result()

    def unavailable(self) -> str | None:
        """Why ingest cannot take requests now (None: ready); ``/healthz`` answers 503 with it."""
        if not self.writer.accepting:
            return "shutting down"
        return self.decoder.unavailable()
