"""The work the writer thread takes from its queue (``ingest.writer``): a decoded request to group-commit
(``BatchJob``), or a function to run in its own transaction (``WriteJob``: reviews, trust grants)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import duckdb

from otel_agent.fold.batch import FoldedBatch
from otel_agent.ingest.admission import Admission
from otel_agent.ingest.recent import BatchKeys


@dataclass
class BatchJob:
    """A decoded request to group-commit; ``future`` resolves with the batch once it has committed."""

    batch: FoldedBatch
    admission: Admission
    future: Future[FoldedBatch]
    keys: BatchKeys | None = None
    """The batch's re-delivery keys, packed in the submitting thread (None: no recent window)."""

    @property
    def items(self) -> int:
        """The batch's items, which count toward a group's ``batch_max_items``."""
        return self.batch.items


@dataclass
class WriteJob:
    """A function to run in its own transaction on the writer thread (see ``Writer.run_write``)."""

    fn: Callable[[duckdb.DuckDBPyConnection], Any]
    future: Future[Any]
    items: int = 0


Job = BatchJob | WriteJob
