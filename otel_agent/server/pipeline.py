"""Transport-independent consumption: admit → decode → write → acknowledge after commit.

Both transports call ``IngestPipeline.export`` (the Collector's receiver/consumer split): they only turn
bytes and headers into a call and the call's outcome into their own status codes.
"""

from __future__ import annotations

from concurrent.futures.process import BrokenProcessPool

from otel_agent.errors import DecoderUnavailableError
from otel_agent.fold.batch import FoldedBatch
from otel_agent.ingest.decoder import Decoder
from otel_agent.ingest.writer import Writer
from otel_agent.server.auth import Authenticator


class IngestPipeline:
    def __init__(self, decoder: Decoder, writer: Writer, auth: Authenticator) -> None:
        self.decoder = decoder
        self.writer = writer
        self.auth = auth

    def export(self, signal: str, fmt: str, payload: bytes, authorization: str | None) -> FoldedBatch:
        """Store one request; returns once its data has committed. Raises an ``OtelAgentError`` subclass."""
        principal = self.auth.authenticate(authorization, "ingest")
        admission = self.writer.admit(len(payload))
        try:
            batch = self.decoder.submit(signal, fmt, payload, principal.name).result()
        except BrokenProcessPool as exc:
            self.writer.release(admission)
            raise DecoderUnavailableError("a decode worker died; retry") from exc
        except BaseException:
            self.writer.release(admission)
            raise
        return self.writer.submit(batch, admission).result()
