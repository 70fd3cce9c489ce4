"""What both transports answer: the OTLP Export response for a stored batch, and how long to tell a client
to wait before retrying. Each transport only encodes these in its own way (gRPC trailers, HTTP headers)."""

from __future__ import annotations

import random
from typing import Any

from otel_agent.fold.batch import FoldedBatch
from otel_agent.signals import SIGNALS

RETRY_AFTER_S = 1
"""The retry hint for retryable errors that bring none of their own (about a second, jittered)."""


def export_response(signal: str, batch: FoldedBatch) -> Any:
    """The Export*ServiceResponse for a stored batch, with partial success when items were rejected."""
    spec = SIGNALS[signal]
    response = spec.response_class()
    if batch.rejected:
        setattr(response.partial_success, spec.rejected_field, batch.rejected)
        response.partial_success.error_message = batch.error_message
    return response


def retry_delay_s(exc: BaseException) -> float:
    """The delay to suggest for a retryable error: the writer's estimate when full, else ~1 s, jittered.

    Jitter matters: SDK exporters use the server's hint instead of their own randomized backoff, so a fixed
    hint would bring every refused client back at the same instant."""
    suggested = getattr(exc, "retry_after_s", None)
    return suggested if suggested is not None else RETRY_AFTER_S * random.uniform(0.5, 1.5)
