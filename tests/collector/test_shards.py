"""``otel-agent sql --db a --db b``: shards attached read-only and queried as one, and the clear refusals
(a file a receiver holds, a file given twice, a file that is not a store). No Collector needed."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from otel_agent.errors import SchemaVersionError
from otel_agent.query.client import run_sql
from otel_agent.store.database import SCHEMA_VERSION
from otel_agent.store.shards import ShardAttachError
from tests.collector import workload
from tests.collector.workload import Workload
from tests.conftest import start_receiver


@pytest.fixture(scope="module")
def shard_set(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], Workload]:
    """Three closed stores holding the workload's spans split by trace id, written once per module through
    real receivers (the costly part); each test works on copies (``shards``)."""
    root = tmp_path_factory.mktemp("shard_set")
    w = workload.build(runs=2, seed=11)
    paths = []
    for i in range(3):
        path = root / f"s{i}.duckdb"
        receiver = start_receiver(path)
        try:
            part = [s for s in w.spans if s.context.trace_id % 3 == i]
            part_w = Workload(spans=part, logs=[], metrics=workload.MetricsData(resource_metrics=[]), handoffs=[])
            workload.send(part_w, grpc_endpoint=receiver.grpc_address, http_url=receiver.http_address)
        finally:
            receiver.stop()
        paths.append(path)
    return paths, w


def closed_shards(shard_set: tuple[list[Path], Workload], tmp_path: Path, n: int = 2) -> tuple[list[str], Workload]:
    """Copies of the first ``n`` shards in this test's folder (a test may write to or lock its copies)."""
    paths, w = shard_set
    copies = []
    for path in paths[:n]:
        copy = tmp_path / path.name
        shutil.copy(path, copy)
        assert not Path(str(path) + ".wal").exists()  # stopped receivers checkpoint: the file is the whole store
        copies.append(str(copy))
    return copies, w


def test_shards_are_queried_as_one(shard_set, tmp_path):
    paths, w = closed_shards(shard_set, tmp_path, n=3)
    per_shard = [run_sql("SELECT count(*) FROM spans", [p]).rows[0][0] for p in paths]
    assert all(per_shard)
    assert sum(per_shard) == len(w.spans)
    merged = run_sql("SELECT count(*), count(DISTINCT trace_id) FROM spans", paths)
    assert merged.rows == [(len(w.spans), len(w.trace_ids))]
    # The store's own facts are there too, as in a single store.
    assert run_sql("SELECT value FROM otel_agent_meta WHERE key = 'schema_version'", paths).rows == [(SCHEMA_VERSION,)]


def test_product_tables_are_merged_too(shard_set, tmp_path):
    """Reviews and writer-trust changes live in the shard that took them; merged queries see them all."""
    paths, _ = closed_shards(shard_set, tmp_path, n=2)
    for i, path in enumerate(paths):
        con = duckdb.connect(path)
        con.execute(
            "INSERT INTO reviews VALUES (?, 'claim', ?, 'annotate', 'alice', 'note', now(), NULL, NULL)",
            [f"rev_{i}", f"claim_{i}"],
        )
        con.close()
    merged = run_sql("SELECT review_id, target_id FROM reviews ORDER BY review_id", paths)
    assert merged.rows == [("rev_0", "claim_0"), ("rev_1", "claim_1")]
    assert run_sql("SELECT count(*) FROM trusted_writers", paths).rows == [(0,)]


def test_a_file_given_twice_is_refused(shard_set, tmp_path):
    paths, _ = closed_shards(shard_set, tmp_path)
    with pytest.raises(ShardAttachError, match="given twice"):
        run_sql("SELECT 1", [paths[0], paths[1], str(tmp_path / "." / "s0.duckdb")])


def test_a_file_that_is_not_a_store_is_refused(shard_set, tmp_path):
    paths, _ = closed_shards(shard_set, tmp_path)
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).execute("CREATE TABLE t (x INT)").close()
    with pytest.raises(SchemaVersionError, match="not an otel_agent store"):
        run_sql("SELECT 1", [paths[0], str(other)])
    with duckdb.connect(paths[1]) as con:
        con.execute("UPDATE otel_agent_meta SET value = '0' WHERE key = 'schema_version'")
    with pytest.raises(SchemaVersionError, match="schema version 0"):
        run_sql("SELECT 1", paths)


def test_a_shard_held_by_a_running_receiver_is_refused_with_a_hint(shard_set, make_receiver, tmp_path):
    paths, _ = closed_shards(shard_set, tmp_path)
    live = make_receiver(db=paths[1])  # this process now holds s1.duckdb
    assert live._started
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "otel_agent",
            "sql",
            "SELECT count(*) FROM spans",
            "--db",
            paths[0],
            "--db",
            paths[1],
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "held by an otel-agent receiver (pid " in done.stderr, done.stderr
    assert "receiver.json" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
