"""The group commit (``ingest.writer``): one transaction for every batch the writer thread gathered, with the
re-delivery check and the inserts, on the writer's connection; then each batch's reply. A group that fails is
committed again one batch at a time, so one bad batch does not fail its neighbours.

Runs only on the writer thread (``ingest.writer_thread``), which owns the connection.
"""

from __future__ import annotations

import logging
import time
from contextlib import suppress

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from otel_agent.errors import StorageError
from otel_agent.fold.batch import FoldedBatch
from otel_agent.ingest.admission import AdmissionControl
from otel_agent.ingest.jobs import BatchJob, Job, WriteJob
from otel_agent.ingest.recent import RecentKeys, batch_keys
from otel_agent.ingest.writer_stats import WriterStats, timed_stage
from otel_agent.signals import SIGNALS, Signal
from otel_agent.store.database import SEQ_TABLES
from otel_agent.store.recycle import BlockCache
from otel_agent.store.statements import statement

log = logging.getLogger(__name__)

INGEST_SEQUENCE = "ingest_seq_gen"
"""The store's sequence of group commits (store/schema/005_ingest_seq.sql)."""


def _repeats(table: pa.Table, keys: tuple[str, ...]) -> int:
    """Rows of ``table`` whose key appears earlier in it (two copies of one span in one group commit)."""
    return table.num_rows - table.group_by(list(keys)).aggregate([]).num_rows


def _with_seq(table: pa.Table, seq: int) -> pa.Table:
    """``table`` with an ``ingest_seq`` column of ``seq`` on every row."""
    column = pc.fill_null(pa.nulls(table.num_rows, pa.int64()), pa.scalar(seq, pa.int64()))
    return table.append_column("ingest_seq", column)


class GroupCommit:
    """Commits groups of jobs on ``con``: batches together (``commit_group``), write jobs each in its own
    transaction. ``recent_max_keys`` > 0 keeps a window of recently stored keys per signal (``ingest.recent``),
    rebuilt from the store here, so that live data's re-delivery check does not ask the store."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        *,
        stats: WriterStats,
        admission: AdmissionControl,
        block_cache: BlockCache,
        recent_window_s: float,
        recent_max_keys: int,
    ) -> None:
        self.con = con
        self.stats = stats
        self.admission = admission
        self.block_cache = block_cache
        # Every statement is read once, at start: a missing file fails here, not on the first request.
        self._sql = {
            name: statement(name)
            for spec in SIGNALS.values()
            for statements in (spec.statements, *(t.statements for t in spec.lookups))
            for name in (statements.duplicates, statements.insert_all, statements.insert_new)
            if name
        }
        # Rebuilt from the store before the thread starts (0 keys: no window, every check asks the store).
        self._recent: dict[str, RecentKeys] = {}
        if recent_max_keys > 0:
            for name, spec in SIGNALS.items():
                self._recent[name] = RecentKeys(recent_window_s, recent_max_keys)
                self._recent[name].load(con, spec)
        # Rows are stamped with their group commit's number where the store has the sequence (open_store's stores;
        # a bare connection with the raw tables only, as some tests make, has none).
        self._sequenced = bool(
            con.execute(
                "SELECT count(*) FROM duckdb_sequences() "
                "WHERE sequence_name = ? AND database_name = current_database()",
                [INGEST_SEQUENCE],
            ).fetchall()[0][0]
        )
        self.ingest_seq: int | None = None
        """The number of the last group commit (``ingest_seq`` of its rows); None before the first or without the
        sequence."""

    def prepare(self, job: BatchJob) -> None:
        """Pack ``job``'s re-delivery keys (in the submitting thread, off the writer's) when its signal has a
        recent window."""
        batch = job.batch
        if batch.signal in self._recent:
            spec = SIGNALS[batch.signal]
            main = batch.tables.get(spec.main_table)
            job.keys = batch_keys(spec, main if main is not None else spec.tables[spec.main_table].empty_table())

    def commit_group(self, group: list[Job]) -> None:
        """Run ``group``'s write jobs, then commit its batches in one transaction and answer each."""
        batches: list[BatchJob] = []
        for job in group:
            if isinstance(job, WriteJob):
                self.run_write_job(job)
            else:
                batches.append(job)
        if not batches:
            return
        try:
            self.commit(batches)
            outcome: list[BaseException | None] = [None] * len(batches)
        except Exception as exc:  # one bad batch must not fail its neighbours: retry each alone
            log.warning("group commit of %d batches failed (%s); committing one by one", len(batches), exc)
            self.stats.failed_commits += 1
            outcome = []
            for job in batches:
                try:
                    self.commit([job])
                    outcome.append(None)
                except Exception as single:
                    log.error("commit failed: %s", single)
                    outcome.append(StorageError(f"commit failed: {single}"))
        for job, err in zip(batches, outcome, strict=True):
            self.admission.release(job.admission)
            if err is None:
                job.future.set_result(job.batch)
            else:
                job.future.set_exception(err)

    def run_write_job(self, job: WriteJob) -> None:
        """``job.fn(con)`` in its own transaction; its result or exception goes to its future."""
        con = self.con
        try:
            self.block_cache.ensure_attached()
            con.execute("BEGIN")
            result = job.fn(con)
            con.execute("COMMIT")
        except BaseException as exc:
            with suppress(duckdb.Error):
                con.execute("ROLLBACK")
            job.future.set_exception(exc)
            return
        job.future.set_result(result)

    def commit(self, jobs: list[BatchJob]) -> None:
        """One transaction for ``jobs`` (raises when it fails; nothing of it is then stored), timed."""
        started = time.monotonic()
        self._commit_sql(jobs)
        elapsed = max(time.monotonic() - started, 1e-4)
        self.stats.commit_seconds += elapsed
        self.admission.committed(sum(j.batch.payload_bytes for j in jobs), elapsed)

    def _commit_sql(self, jobs: list[BatchJob]) -> None:
        con = self.con
        by_signal: dict[str, list[BatchJob]] = {}
        for j in jobs:
            by_signal.setdefault(j.batch.signal, []).append(j)
        self.block_cache.ensure_attached()
        con.execute("BEGIN")
        try:
            if self._sequenced:  # one number for the whole group commit (the rows' ingest_seq)
                self.ingest_seq = int(con.execute(f"SELECT nextval('{INGEST_SEQUENCE}')").fetchall()[0][0])
            for signal, members in by_signal.items():
                self._insert_signal(SIGNALS[signal], members)
            with timed_stage(self.stats, "commit"):
                con.execute("COMMIT")
        except BaseException:
            with suppress(duckdb.Error):
                con.execute("ROLLBACK")
            raise
        with timed_stage(self.stats, "duplicates"):  # stored now: the recent window takes their keys
            for signal, members in by_signal.items():
                recent = self._recent.get(signal)
                if recent is not None:
                    for j in members:
                        if j.keys is not None:
                            recent.committed(j.keys)
        batches = [j.batch for j in jobs]
        self.stats.commits += 1
        self.stats.batches += len(batches)
        self.stats.items += sum(b.accepted for b in batches)

    def _insert_signal(self, spec: Signal, jobs: list[BatchJob]) -> None:
        """Insert one signal's part of a group commit: all of it when none of its items is stored or repeated
        (the fast path), else only the new ones (``docs/schema.md``, re-delivery). Whether any is stored is
        answered by the recent window when it covers every key's time, else by the store."""
        con, sql, statements = self.con, self._sql, spec.statements
        members = [j.batch for j in jobs]
        with timed_stage(self.stats, "prepare"):
            incoming: dict[str, pa.Table] = {}
            for name, schema in spec.tables.items():
                parts = [m.tables[name] for m in members if name in m.tables]
                incoming[name] = pa.concat_tables(parts) if parts else schema.empty_table()
                if self.ingest_seq is not None and name in SEQ_TABLES:
                    incoming[name] = _with_seq(incoming[name], self.ingest_seq)
                con.register("incoming_" + name, incoming[name])
        with timed_stage(self.stats, "duplicates"):
            recent = self._recent.get(spec.name)
            keys = [j.keys for j in jobs]
            if recent is not None and all(k is not None and k.keys is not None and recent.covers(k.low) for k in keys):
                packed = [key for k in keys for key in k.keys]  # type: ignore[union-attr]
                repeated = len(set(packed)) != len(packed)
                stored = recent.any_stored(packed)
            else:
                repeated = _repeats(incoming[spec.main_table], spec.key)
                (stored,) = con.execute(sql[statements.duplicates]).fetchall()[0]
                self.stats.duplicate_queries += 1
        fast = not (stored or repeated)
        with timed_stage(self.stats, "insert"):
            con.execute(sql[statements.insert_all if fast else statements.insert_new]).fetchall()
            self._write_lookup_tables(spec, members, fast)
        with timed_stage(self.stats, "prepare"):
            for name in spec.tables:
                con.unregister("incoming_" + name)

    def _write_lookup_tables(self, spec: Signal, members: list[FoldedBatch], fast: bool) -> None:
        """The lookup tables' rows the fold computed (traces: lineage_keys and parsed_retrieval_documents,
        store/schema/060_lineage_keys.sql, 070_retrieval_documents.sql). On the re-delivery path their SQL
        rules are applied to the spans stored now instead. Each statement runs only when the batch has rows for
        it: DuckDB plans every statement anew, ~1 ms even for an empty insert, on this one thread."""
        con, sql = self.con, self._sql
        for lookup in spec.lookups:
            parts = [
                m.tables[lookup.name] for m in members if lookup.name in m.tables and m.tables[lookup.name].num_rows
            ]
            if not parts:
                continue
            if fast:
                con.register("incoming_" + lookup.name, pa.concat_tables(parts))
                con.execute(sql[lookup.statements.insert_all]).fetchall()
                con.unregister("incoming_" + lookup.name)
            else:
                con.execute(sql[lookup.statements.insert_new]).fetchall()
