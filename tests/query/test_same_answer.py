"""Same answer live or from the file (issue 11, item 15): ``otel-agent sql`` prints the same bytes, in every
``--format``, whether the query went through a live receiver's API or opened the closed file read-only.

The receiver runs in this process and holds the file (no other process may open it), so the live runs of the
real command can only have gone through its query API; then it stops, and the same commands read the file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from otel_agent.server.receiver import discovery_path
from tests.otlp_builders import T0, post_traces, span_request

ROOT = Path(__file__).resolve().parents[2]
FORMATS = ("table", "csv", "json")

SCALARS = """
SELECT 42 AS small_int, -7::TINYINT AS tiny, 9007199254740993::BIGINT AS big_int,
       170141183460469231731687303715884105727::HUGEINT AS huge, 18446744073709551615::UBIGINT AS ubig,
       1.5::DOUBLE AS dbl, 0.1 + 0.2 AS dbl_sum, 1e300::DOUBLE AS dbl_big, 'inf'::DOUBLE AS dbl_inf,
       1.25::DECIMAL(5, 2) AS dec, 123456789012345678.125::DECIMAL(38, 3) AS dec38,
       TIMESTAMP '2024-05-06 07:08:09.123456' AS ts, TIMESTAMP_NS '2024-05-06 07:08:09.123456789' AS ts_ns,
       TIMESTAMPTZ '2024-05-06 07:08:09.5+02' AS ts_tz, DATE '2024-02-29' AS day, INTERVAL 90 MINUTE AS span,
       NULL AS nothing, NULL::INTEGER AS no_int, 'héllo ✓ 日本 🚀' AS unicode, true AS yes,
       '5f3a1c2e-9b7d-4e8f-a1b2-c3d4e5f60718'::UUID AS id, '\\x01\\xff'::BLOB AS bytes
"""
NESTED = """
SELECT [1, 2, 3] AS ints, [9007199254740993, -1]::BIGINT[] AS big_ints, [[1, 2], [3]] AS nested_ints,
       [NULL, 1] AS with_null, [1.5::DECIMAL(3, 1)] AS decimals, [TIMESTAMP '2024-01-01 00:00:01'] AS stamps,
       {'k': 'v', 'n': 2, 'l': [1, 2], 'ts': TIMESTAMP '2024-05-06 07:08:09'} AS struct,
       MAP {'a': 1, 'b': 2} AS map_str, MAP {1: 'x', 2: 'ü'} AS map_int,
       '{"a": [1, 2.5, null], "b": {"c": "日本"}}'::JSON AS doc, []::INTEGER[] AS empty, {'x': NULL} AS null_struct
"""
STORED = """
SELECT span_id, name, start_time, end_time, duration_ns, attributes, attributes->'gen_ai.usage.input_tokens' AS tokens,
       (attributes->>'gen_ai.usage.input_tokens')::BIGINT AS tokens_int, service_name, principal
FROM spans ORDER BY span_id
"""
AGGREGATE = """
SELECT name, count(*) AS n, sum(duration_ns) AS total_ns, avg(duration_ns) AS avg_ns,
       list(span_id ORDER BY span_id) AS span_ids, min(start_time) AS first
FROM spans GROUP BY name ORDER BY name
"""
QUERIES = {"scalars": SCALARS, "nested": NESTED, "stored": STORED, "aggregate": AGGREGATE}

SPANS = [
    {
        "trace_id": bytes.fromhex("0af7651916cd43dd8448eb211c80319c"),
        "span_id": bytes.fromhex(f"00f067aa0ba902b{i}"),
        "name": name,
        "start": T0 + i * 1_000_123,
        "end": T0 + i * 1_000_123 + 5_000_000_007,
        "attributes": {
            "gen_ai.usage.input_tokens": tokens,
            "gen_ai.request.model": "gpt-4o",
            "scores": [1, 2, 3],
            "ratio": 0.25,
            "note": "naïve ✓",
        },
    }
    for i, (name, tokens) in enumerate([("chat", 10), ("chat", 2**53 + 1), ("execute_tool 検索", 30)])
]


def otel_agent_sql(sql: str, db: str, fmt: str) -> subprocess.CompletedProcess:
    # A time zone that is not UTC, the same for both runs: TIMESTAMPTZ values print in the reader's zone.
    env = {**os.environ, "TZ": "Asia/Kolkata"}
    return subprocess.run(
        [sys.executable, "-m", "otel_agent", "sql", sql, "--db", db, "--format", fmt],
        capture_output=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )


def run_all(db: str) -> dict[tuple[str, str], bytes]:
    out = {}
    for name, sql in QUERIES.items():
        for fmt in FORMATS:
            done = otel_agent_sql(sql, db, fmt)
            assert done.returncode == 0, (name, fmt, done.stderr.decode())
            assert done.stderr == b"", (name, fmt, done.stderr.decode())
            out[name, fmt] = done.stdout
    return out


def test_same_bytes_live_and_from_the_file(receiver):
    resp = post_traces(receiver.http_address, span_request(SPANS, service="same-answer ✓"))
    assert resp.status_code == 200
    db = receiver.config.db
    assert discovery_path(db).exists()

    live = run_all(db)
    receiver.stop()
    assert not discovery_path(db).exists()
    closed = run_all(db)

    for key in live:
        assert live[key] == closed[key], (key, live[key].decode(), closed[key].decode())

    # And the one encoding is the exact one: ints stay ints inside lists and structs, timestamps print with a
    # space, big integers and decimals keep every digit.
    scalars = json.loads(live["scalars", "json"])[0]
    assert scalars["big_int"] == 9007199254740993
    assert isinstance(scalars["big_int"], int)
    assert scalars["huge"] == 170141183460469231731687303715884105727
    assert scalars["ubig"] == 18446744073709551615
    assert scalars["dec38"] == "123456789012345678.125"
    assert scalars["ts"] == "2024-05-06 07:08:09.123456"
    assert scalars["ts_tz"] == "2024-05-06 10:38:09.500000+05:30"  # printed in the reader's zone
    assert scalars["unicode"] == "héllo ✓ 日本 🚀"
    assert scalars["nothing"] is None
    nested = json.loads(live["nested", "json"])[0]
    assert nested["ints"] == [1, 2, 3]
    assert all(type(v) is int for v in nested["ints"])
    assert nested["big_ints"] == [9007199254740993, -1]
    assert nested["nested_ints"] == [[1, 2], [3]]
    assert nested["with_null"] == [None, 1]
    assert nested["struct"] == {"k": "v", "n": 2, "l": [1, 2], "ts": "2024-05-06 07:08:09"}
    assert nested["map_str"] == {"a": 1, "b": 2}
    assert nested["doc"] == {"a": [1, 2.5, None], "b": {"c": "日本"}}  # a JSON value travels as JSON
    stored = json.loads(live["stored", "json"])
    assert [r["tokens_int"] for r in stored] == [10, 2**53 + 1, 30]
    assert "T" not in stored[0]["start_time"]
    assert stored[0]["duration_ns"] == 5_000_000_007
    aggregate = json.loads(live["aggregate", "json"])
    assert [(r["name"], r["n"], r["total_ns"]) for r in aggregate] == [
        ("chat", 2, 10_000_000_014),
        ("execute_tool 検索", 1, 5_000_000_007),
    ]
    assert b"\xe6\xa4\x9c\xe7\xb4\xa2" in live["aggregate", "table"]  # 検索, unescaped
