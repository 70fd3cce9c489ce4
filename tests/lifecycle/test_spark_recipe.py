"""docs/archive.md's Spark recipe, run as written with a real Spark (pyspark 4.1 in local mode, the Iceberg
runtime and sqlite-jdbc jars from Maven Central, Java from the machine) over an archive a real receiver wrote:
Spark's counts and grouped sums equal DuckDB's over the same archive's Parquet, and a time filter prunes files
(EXPLAIN shows it handed to Iceberg; the scan's metrics show fewer files read than the table has).

Spark takes ~30-60 s to start on 2 busy cores, so this runs in its own `.ci/run` step after
`scripts/spark_deps.sh` (which installs pyspark and the jars): ``OTEL_AGENT_SPARK=1 python -m pytest -n 0
tests/lifecycle/test_spark_recipe.py``. Without ``OTEL_AGENT_SPARK=1`` it is skipped, saying so; with it, a
missing pyspark, jar or Java is a failure.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

import duckdb
import pytest

from tests.lifecycle.support import archive_three_days

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "archive.md"

pytestmark = [
    pytest.mark.skipif(
        os.environ.get("OTEL_AGENT_SPARK") != "1",
        reason="the Spark recipe test runs in its own .ci/run step (scripts/spark_deps.sh; OTEL_AGENT_SPARK=1)",
    ),
    pytest.mark.timeout(600),
]


def _spark_blocks() -> tuple[str, list[str]]:
    """The Python session block and the SQL blocks of the doc's Spark section, in order."""
    section = DOC.read_text().split("## Spark", 1)[1].split("\n## ", 1)[0]
    python = re.findall(r"```python\n(.*?)```", section, re.S)
    sql = [b for b in re.findall(r"```sql\n(.*?)```", section, re.S) if not b.startswith("-- DuckDB")]
    duck = [b for b in re.findall(r"```sql\n(.*?)```", section, re.S) if b.startswith("-- DuckDB")]
    assert len(python) == 1, python
    assert len(sql) == 2, sql
    assert len(duck) == 1, duck
    return python[0], [*sql, duck[0]]


def _scan_metrics(df) -> dict[str, int]:
    """The Iceberg scan's metrics of an executed DataFrame (its BatchScan node; AQE off, so it is a leaf)."""
    leaves = df._jdf.queryExecution().executedPlan().collectLeaves()
    for i in range(leaves.length()):
        leaf = leaves.apply(i)
        if leaf.nodeName().startswith("BatchScan"):
            metrics = leaf.metrics()
            names = ("resultDataFiles", "skippedDataFiles", "scannedDataManifests", "skippedDataManifests")
            return {k: int(metrics.apply(k).value()) for k in names}
    raise AssertionError("no BatchScan in the executed plan")


def test_spark_reads_the_archive_as_documented(make_receiver, tmp_path, monkeypatch) -> None:
    session_code, (count_sql, by_model_sql, duck_sql) = _spark_blocks()
    sent = archive_three_days(make_receiver, str(tmp_path / "archive"))

    monkeypatch.chdir(tmp_path)  # the recipe runs from the directory that holds archive/
    monkeypatch.setenv("OTEL_AGENT_SPARK_JARS", os.environ.get("OTEL_AGENT_SPARK_JARS", str(REPO / "build/spark-jars")))
    duck = duckdb.connect()
    duck_by_model = duck.execute(duck_sql).fetchall()
    parquet = "read_parquet('archive/signal=spans/**/*.parquet', hive_partitioning = true)"
    assert duck.execute(f"SELECT count(*) FROM {parquet}").fetchone() == (len(sent),)

    namespace: dict = {}
    exec(session_code, namespace)  # the doc's block, as written
    spark = namespace["spark"]
    try:
        spark.conf.set("spark.sql.adaptive.enabled", "false")  # the scan node stays a leaf of the executed plan
        spark.conf.set("spark.sql.shuffle.partitions", "2")  # without AQE a GROUP BY would run 200 tasks
        assert spark.sql(count_sql).collect()[0]["spans"] == len(sent)

        by_model = spark.sql(by_model_sql)
        got = [(r["model"], r["spans"], r["input_tokens"], r["busy_ns"]) for r in by_model.collect()]
        assert got == duck_by_model
        recent = [s for s in sent if s["name"].startswith("c")]  # only the 3-hours-ago spans are in the last 24 h
        want = {}
        for i, s in enumerate(recent):
            m = want.setdefault(f"model-{i % 3}", [0, 0, 0])
            m[0], m[1], m[2] = m[0] + 1, m[1] + 10 + i, m[2] + s["end"] - s["start"]
        assert got == [(k, *v) for k, v in sorted(want.items())]

        plan = spark.sql("EXPLAIN " + by_model_sql).collect()[0][0]
        assert re.search(r"IcebergScan\(table=otel_agent\.otel_agent\.spans.*filters=.*end_time_ts >= ", plan), plan
        metrics = _scan_metrics(by_model)
        files = spark.sql("SELECT partition.end_time_day AS day FROM otel_agent.otel_agent.spans.files").collect()
        # the files holding a span of the last 24 hours: Iceberg skips a file by its day partition and by its
        # column bounds, so the file of the day 24 h ago is skipped too when its spans (30 h ago) are older
        recent_days = {dt.datetime.fromtimestamp(s["end"] / 1e9, dt.UTC).date() for s in recent}
        in_range = [f for f in files if f["day"] in recent_days]
        assert len({f["day"] for f in files}) == 3  # one partition per day sent
        assert 0 < metrics["resultDataFiles"] == len(in_range) < len(files), (metrics, files)
        assert metrics["skippedDataManifests"] + metrics["skippedDataFiles"] > 0, metrics

        # the native timestamp and the lossless nanoseconds agree
        row = spark.sql(
            "SELECT count(*) AS n FROM otel_agent.otel_agent.spans "
            "WHERE unix_micros(end_time_ts) != CAST(floor(end_time / 1000) AS BIGINT)"
        ).collect()[0]
        assert row["n"] == 0
    finally:
        spark.stop()
