"""The recent window of stored re-delivery keys, in memory, so that a group commit of live data needs no
duplicate query (issue 16; docs/scale.md, where the time goes).

Exactness is the point: ``RecentKeys`` holds *every* stored key whose time (the key's first column: a span's
``end_time``, a log record's or data point's ``time``) is at or after ``floor``, so for a batch whose key times
are all at or after ``floor`` the question "is any of these stored already?" has an exact answer here, and for
any other batch the writer asks the store (``ingest/*_duplicates.sql``), as before. Re-delivery and arrival
order still change nothing; the window only decides which of two exact answers is the cheaper.

A key is packed into one Python int, ``int(hex columns joined, 16) << 64 | time_ns``: the hex columns are the
fold's fixed-width lowercase ids (trace id 32 digits, span id 16, content hash 32), checked per batch, so
two different keys never pack alike. About 100 bytes a key in memory; ``max_keys`` bounds it.

The window follows the wall clock: keys older than ``window_s`` are dropped, and the oldest whole seconds are
dropped early when there are more than ``max_keys``; ``floor`` rises past whatever was dropped. At start it is
rebuilt from the store (``load``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from otel_agent.signals import Signal

_BUCKET_NS = 1_000_000_000
_LOWEST = -(1 << 63)
_HIGHEST = (1 << 63) - 1


@dataclass(frozen=True)
class BatchKeys:
    """One batch's main-table keys, packed (None when they cannot be packed exactly: an id of another width
    or not hex, a time before 1970), and the range of their times."""

    keys: list[int] | None
    low: int
    high: int


def batch_keys(spec: Signal, table: pa.Table) -> BatchKeys:
    """The packed keys of ``table``, the signal's main table (computed in the request's thread)."""
    if not table.num_rows:
        return BatchKeys([], _HIGHEST, _LOWEST)
    time_col, *hex_cols = spec.key
    times = table.column(time_col).cast(pa.int64())
    bounds = pc.min_max(times)
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    if low is None or high is None:
        return BatchKeys(None, _LOWEST, _HIGHEST)
    if low < 0 or times.null_count:
        return BatchKeys(None, low, high)
    texts = []
    for name in hex_cols:
        col = table.column(name)
        widths = pc.min_max(pc.utf8_length(col))
        if col.null_count or widths["min"].as_py() != widths["max"].as_py():
            return BatchKeys(None, low, high)
        texts.append(col)
    joined = pc.binary_join_element_wise(*texts, "") if len(texts) > 1 else texts[0]
    try:
        keys = [int(h, 16) << 64 | t for h, t in zip(joined.to_pylist(), times.to_pylist(), strict=True)]
    except ValueError:  # not hex
        return BatchKeys(None, low, high)
    return BatchKeys(keys, low, high)


class RecentKeys:
    """Every stored key of one signal with time ≥ ``floor`` (see the module docstring). Writer thread only."""

    def __init__(self, window_s: float, max_keys: int) -> None:
        self.window_ns = int(window_s * 1e9)
        self.max_keys = max_keys
        self.floor = _LOWEST
        self._all: set[int] = set()
        self._buckets: dict[int, set[int]] = {}

    def __len__(self) -> int:
        """Keys held."""
        return len(self._all)

    def covers(self, low: int) -> bool:
        """True when every stored key with time ≥ ``low`` is here."""
        return low >= self.floor

    def any_stored(self, keys: list[int]) -> bool:
        """Whether any of ``keys`` (of a batch ``covers`` said yes to) is stored already."""
        return not self._all.isdisjoint(keys)

    def committed(self, batch: BatchKeys) -> None:
        """A batch's keys are stored now. Keys that cannot be packed raise the floor past them instead (what is
        not here must be below the floor)."""
        if batch.keys is None:
            self.floor = max(self.floor, batch.high + 1)
            self.trim()
        else:
            self.add(batch.keys)

    def add(self, keys: list[int]) -> None:
        """Keys just committed (only those at or after ``floor`` are kept: older ones are the store's)."""
        floor, buckets, mask = self.floor, self._buckets, (1 << 64) - 1
        for key in keys:
            t = key & mask
            if t >= floor:
                buckets.setdefault(t // _BUCKET_NS, set()).add(key)
        self._all.update(k for k in keys if k & mask >= floor)
        self.trim()

    def trim(self, now_ns: int | None = None) -> None:
        """Drop whole seconds older than the window, then the oldest while over ``max_keys``."""
        cutoff = (time.time_ns() if now_ns is None else now_ns) - self.window_ns
        buckets = self._buckets
        while buckets:
            oldest = min(buckets)
            if (oldest + 1) * _BUCKET_NS > cutoff and len(self._all) <= self.max_keys:
                break
            self._all.difference_update(buckets.pop(oldest))
            self.floor = max(self.floor, (oldest + 1) * _BUCKET_NS)

    def load(self, con: duckdb.DuckDBPyConnection, spec: Signal) -> None:
        """Rebuild from the store: every key with time in the window (the newest ``max_keys`` of them)."""
        time_col, table = spec.key[0], spec.main_table
        cutoff = time.time_ns() - self.window_ns
        if con.execute(f"SELECT count(*) FROM (SELECT 1 FROM {table} LIMIT 1)").fetchall() == [(0,)]:
            self.floor = _LOWEST  # nothing stored: every key there is (none) is here
            return
        rows = con.sql(  # two ints of ours in the text: con.sql takes no parameters in every duckdb version
            f"SELECT {', '.join(spec.key)} FROM {table} WHERE epoch_ns({time_col}) >= {int(cutoff)} "
            f"ORDER BY {time_col} DESC LIMIT {int(self.max_keys) + 1}"
        ).to_arrow_table()
        self.floor = cutoff
        if rows.num_rows > self.max_keys:
            # Keys at the time of the first one left out may be only partly here: cover from just after it.
            last = rows.column(time_col).cast(pa.int64())[self.max_keys].as_py()
            self.floor = last + 1
            rows = rows.slice(0, self.max_keys)
        self.committed(batch_keys(spec, rows))
