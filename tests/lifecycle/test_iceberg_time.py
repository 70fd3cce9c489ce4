"""The Iceberg tables carry times an engine reads natively and are partitioned by day: beside each lossless
nanosecond column a ``<column>_ts`` timestamptz, ``day(end_time_ts)`` partitions for spans, so a time filter
plans only the days in range; a table made by an earlier release (no such columns, no partitions) evolves in
place and keeps its rows."""

from __future__ import annotations

import datetime as dt
import time

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import GreaterThanOrEqual

from otel_agent.lifecycle.iceberg import IcebergMirror
from tests.lifecycle.support import healthz, hours_ago, send, spans_at


def test_spans_are_partitioned_by_day_with_a_native_timestamp(make_receiver, tmp_path) -> None:
    archive = tmp_path / "archive"
    r = make_receiver(retention="1h", archive=str(archive))
    sent = spans_at(hours_ago(50), 200, "old") + spans_at(hours_ago(3), 100, "new")  # two days apart at least
    send(r.grpc_address, sent)
    deadline = time.monotonic() + 60
    while (report := healthz(r.http_address)["lifecycle"])["rows_deleted"].get("spans", 0) < len(sent):
        assert time.monotonic() < deadline, report
        time.sleep(0.1)
    r.stop()
    catalog = SqlCatalog("otel_agent", uri=f"sqlite:///{archive}/iceberg_catalog.db", warehouse=f"file://{archive}")
    table = catalog.load_table("otel_agent.spans")
    assert [(f.name, str(f.transform)) for f in table.spec().fields] == [("end_time_day", "day")]
    assert str(table.schema().find_field("end_time_ts").field_type) == "timestamptz"
    assert str(table.schema().find_field("end_time").field_type) == "long"  # the lossless value stays
    rows = table.scan(selected_fields=("span_id", "end_time", "end_time_ts", "start_time_ts")).to_arrow().to_pylist()
    want = {s["span_id"].hex(): s for s in sent}
    assert len(rows) == len(sent)
    for row in rows:
        span = want[row["span_id"]]
        assert row["end_time"] == span["end"]
        assert row["end_time_ts"] == dt.datetime.fromtimestamp(span["end"] // 1000 / 1e6, dt.UTC)
        assert row["start_time_ts"] == dt.datetime.fromtimestamp(span["start"] // 1000 / 1e6, dt.UTC)
    everything = list(table.scan().plan_files())
    since = hours_ago(4).replace(hour=0, minute=0, second=0, microsecond=0)  # the new spans' whole day
    recent = list(table.scan(row_filter=GreaterThanOrEqual("end_time_ts", since.isoformat())).plan_files())
    assert len(recent) < len(everything)  # the old day's files are not planned
    assert all("end_time_day=" in t.file.file_path for t in everything)
    days = {t.file.file_path.split("end_time_day=")[1][:10] for t in recent}
    assert days == {hours_ago(3).date().isoformat()}
    assert sum(t.file.record_count for t in recent) == 100


def test_a_table_made_before_the_time_columns_evolves_in_place(tmp_path) -> None:
    uri, warehouse = f"sqlite:///{tmp_path}/catalog.db", f"file://{tmp_path}/wh"
    old_schema = pa.schema([("span_id", pa.string()), ("end_time", pa.int64())])
    catalog = SqlCatalog("otel_agent", uri=uri, warehouse=warehouse)
    catalog.create_namespace("otel_agent")
    catalog.create_table("otel_agent.spans", schema=old_schema).append(
        pa.table({"span_id": ["a"], "end_time": [1_700_000_000_123_456_789]}, schema=old_schema)
    )  # what an earlier release made: no _ts column, no partition, default retries
    end = pa.array([1_800_000_000_987_654_321], pa.timestamp("ns"))
    assert IcebergMirror(uri, warehouse).append("spans", pa.table({"span_id": ["b"], "end_time": end}), "f.parquet")
    table = SqlCatalog("otel_agent", uri=uri, warehouse=warehouse).load_table("otel_agent.spans")
    assert [f.name for f in table.schema().fields] == ["span_id", "end_time", "end_time_ts"]
    assert [f.name for f in table.spec().fields] == ["end_time_day"]
    assert table.properties["commit.retry.num-retries"] == "0"
    rows = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["span_id"])
    assert rows == [
        {"span_id": "a", "end_time": 1_700_000_000_123_456_789, "end_time_ts": None},  # appended before: NULL
        {"span_id": "b", "end_time": 1_800_000_000_987_654_321,
         "end_time_ts": dt.datetime(2027, 1, 15, 8, 0, 0, 987654, tzinfo=dt.UTC)},
    ]  # fmt: skip
    assert IcebergMirror(uri, warehouse).table("spans", pa.schema([])) is not None  # up to date: no new commit
    assert len(SqlCatalog("otel_agent", uri=uri, warehouse=warehouse).load_table("otel_agent.spans").snapshots()) == 2
