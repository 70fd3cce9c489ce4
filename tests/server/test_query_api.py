"""The read-only query API (POST /v1/query as JSON or protobuf, gRPC QueryService) and ``otel-agent sql``:
results with column names and types, the row cap, the time limit, refusal of every statement that could
write, read files or change settings, and the CLI against a live receiver and against a closed file."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import pytest
import requests
from google.protobuf import struct_pb2
from google.rpc import status_pb2

from otel_agent.api.v1 import query_pb2, query_pb2_grpc
from otel_agent.server.receiver import discovery_path
from otel_agent.store.maintained import STATE_TABLES
from otel_agent.store.readers import readers_of
from tests.conftest import rows, wait_until
from tests.otlp_builders import T0, post_traces, span_request

ROOT = Path(__file__).resolve().parents[2]
TRACE_ID = bytes.fromhex("0af7651916cd43dd8448eb211c80319c")
SPANS = [
    {
        "trace_id": TRACE_ID,
        "span_id": bytes.fromhex(f"00f067aa0ba902b{i}"),
        "name": name,
        "start": T0 + i * 1_000_000,
        "attributes": {"gen_ai.usage.input_tokens": tokens, "gen_ai.request.model": "gpt-4o"},
    }
    for i, (name, tokens) in enumerate([("alpha", 10), ("beta", 20), ("gamma", 30)])
]
# What the seeded spans look like through "SELECT name, tokens ... ORDER BY name".
SEEDED = [("alpha", 10), ("beta", 20), ("gamma", 30)]
SEEDED_SQL = "SELECT name, (attributes->>'gen_ai.usage.input_tokens')::BIGINT AS tokens FROM spans ORDER BY name"
SLOW_SQL = "SELECT count(*) FROM range(100000000) a, range(100000000) b"


def seed(receiver) -> None:
    resp = post_traces(receiver.http_address, span_request(SPANS, service="query-tests"))
    assert resp.status_code == 200
    assert rows(receiver, "SELECT count(*) FROM spans") == [(3,)]


@pytest.fixture
def seeded(receiver):
    seed(receiver)
    return receiver


def post_json(receiver, body: dict, **kwargs) -> requests.Response:
    return requests.post(receiver.http_address + "/v1/query", json=body, timeout=30, **kwargs)


def post_proto(receiver, request: query_pb2.QueryRequest) -> requests.Response:
    return requests.post(
        receiver.http_address + "/v1/query",
        data=request.SerializeToString(),
        headers={"Content-Type": "application/x-protobuf"},
        timeout=30,
    )


def grpc_query(receiver, request: query_pb2.QueryRequest) -> query_pb2.QueryResponse:
    with grpc.insecure_channel(receiver.grpc_address) as channel:
        return query_pb2_grpc.QueryServiceStub(channel).Query(request, timeout=30)


def grpc_error(receiver, request: query_pb2.QueryRequest) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        grpc_query(receiver, request)
    return info.value


def plain(value: struct_pb2.Value):
    which = value.WhichOneof("kind")
    if which == "null_value":
        return None
    if which == "list_value":
        return [plain(v) for v in value.list_value.values]
    if which == "struct_value":
        return {k: plain(v) for k, v in value.struct_value.fields.items()}
    return getattr(value, which)


def assert_healthy_and_intact(receiver) -> None:
    health = requests.get(receiver.http_address + "/healthz", timeout=10)
    assert health.status_code == 200
    assert health.json()["status"] == "ready"
    assert rows(receiver, SEEDED_SQL) == SEEDED
    resp = post_json(receiver, {"sql": SEEDED_SQL})
    assert resp.status_code == 200
    assert [tuple(r["values"]) for r in resp.json()["rows"]] == SEEDED


# --- results ------------------------------------------------------------------------------------------


def test_http_json(seeded):
    resp = post_json(seeded, {"sql": SEEDED_SQL + " LIMIT 2"})
    assert resp.status_code == 200
    assert resp.headers["content-type"] == "application/json"
    doc = resp.json()
    assert doc["columns"] == [{"name": "name", "type": "VARCHAR"}, {"name": "tokens", "type": "BIGINT"}]
    assert doc["rows"] == [{"values": ["alpha", 10]}, {"values": ["beta", 20]}]
    assert doc.get("truncated", False) is False


def test_http_protobuf(seeded):
    resp = post_proto(seeded, query_pb2.QueryRequest(sql=SEEDED_SQL))
    assert resp.status_code == 200
    assert resp.headers["content-type"] == "application/x-protobuf"
    reply = query_pb2.QueryResponse.FromString(resp.content)
    assert [(c.name, c.type) for c in reply.columns] == [("name", "VARCHAR"), ("tokens", "BIGINT")]
    assert [tuple(plain(v) for v in r.values) for r in reply.rows] == SEEDED
    assert reply.truncated is False


def test_grpc_with_params_and_types(seeded):
    reply = grpc_query(
        seeded,
        query_pb2.QueryRequest(
            sql="SELECT trace_id, span_id, name, start_time, attributes, duration_ns, principal "
            "FROM spans WHERE name = ? AND (attributes->>'gen_ai.usage.input_tokens')::INT > ?",
            params=[struct_pb2.Value(string_value="beta"), struct_pb2.Value(number_value=15)],
        ),
    )
    assert [(c.name, c.type) for c in reply.columns] == [
        ("trace_id", "VARCHAR"),
        ("span_id", "VARCHAR"),
        ("name", "VARCHAR"),
        ("start_time", "TIMESTAMP_NS"),
        ("attributes", "JSON"),
        ("duration_ns", "BIGINT"),
        ("principal", "VARCHAR"),
    ]
    (row,) = reply.rows
    values = [plain(v) for v in row.values]
    assert values[:3] == [TRACE_ID.hex(), "00f067aa0ba902b1", "beta"]
    assert values[3].startswith("2025-11-24T")  # T0 + 1 ms as an ISO timestamp string
    assert json.loads(values[4]) == {"gen_ai.usage.input_tokens": 20, "gen_ai.request.model": "gpt-4o"}
    assert values[5:] == [5000, None]


def test_value_mapping(receiver):
    """Non-JSON types travel as strings, nested ones as lists and structs (the rules in query.proto)."""
    doc = post_json(
        receiver,
        {
            "sql": "SELECT 9007199254740993::BIGINT AS big, -3 AS small, 1.5::DOUBLE AS d, 1.25::DECIMAL(5,2) AS dec,"
            " true AS b, NULL AS n, [1, 2] AS l, {'k': 'v', 'n': 2} AS s, '\\x01\\xff'::BLOB AS blob,"
            " TIMESTAMP '2024-05-06 07:08:09.123456' AS ts, 'inf'::DOUBLE AS inf"
        },
    ).json()
    assert [c["type"] for c in doc["columns"]] == [
        "BIGINT",
        "INTEGER",
        "DOUBLE",
        "DECIMAL(5,2)",
        "BOOLEAN",
        '"NULL"',
        "INTEGER[]",
        "STRUCT(k VARCHAR, n INTEGER)",
        "BLOB",
        "TIMESTAMP",
        "DOUBLE",
    ]
    assert doc["rows"][0]["values"] == [
        "9007199254740993",
        -3,
        1.5,
        "1.25",
        True,
        None,
        [1, 2],
        {"k": "v", "n": 2},
        "01ff",
        "2024-05-06T07:08:09.123456",
        "inf",
    ]


def test_explain_allowed(seeded):
    for sql in ("EXPLAIN " + SEEDED_SQL, "EXPLAIN ANALYZE " + SEEDED_SQL):
        doc = post_json(seeded, {"sql": sql}).json()
        assert [c["name"] for c in doc["columns"]] == ["explain_key", "explain_value"], sql
        assert "spans" in doc["rows"][0]["values"][1], sql


def test_empty_result_still_has_columns(seeded):
    doc = post_json(seeded, {"sql": "SELECT name FROM spans WHERE false"}).json()
    assert doc["columns"] == [{"name": "name", "type": "VARCHAR"}]
    assert doc.get("rows", []) == []


# --- row cap and time limit ------------------------------------------------------------------------------


def test_row_cap_requested(seeded):
    doc = post_json(seeded, {"sql": SEEDED_SQL, "maxRows": 2}).json()
    assert [tuple(r["values"]) for r in doc["rows"]] == SEEDED[:2]
    assert doc["truncated"] is True
    reply = grpc_query(seeded, query_pb2.QueryRequest(sql=SEEDED_SQL, max_rows=1))
    assert len(reply.rows) == 1
    assert reply.truncated is True
    # Exactly at the cap is not truncation.
    doc = post_json(seeded, {"sql": SEEDED_SQL, "maxRows": 3}).json()
    assert len(doc["rows"]) == 3
    assert doc.get("truncated", False) is False


def test_server_row_cap(make_receiver):
    receiver = make_receiver(query_max_rows=5)
    for max_rows in (0, 5, 1000):  # default, equal, above the server's cap
        doc = post_json(receiver, {"sql": "SELECT range AS i FROM range(100)", "maxRows": max_rows}).json()
        assert [r["values"] for r in doc["rows"]] == [[i] for i in range(5)], max_rows
        assert doc["truncated"] is True
    reply = grpc_query(receiver, query_pb2.QueryRequest(sql="SELECT * FROM range(5)"))
    assert len(reply.rows) == 5
    assert reply.truncated is False


HANG_S = 30.0
"""A deadline that only catches a hang: unlimited, SLOW_SQL runs for hours; cut at its limit, it answers in well
under a second on a quiet machine and in a few seconds on two busy cores."""


def test_time_limit(make_receiver):
    receiver = make_receiver(query_timeout_s=0.3)
    seed(receiver)

    started = time.monotonic()
    resp = post_json(receiver, {"sql": SLOW_SQL})
    assert time.monotonic() - started < HANG_S
    assert resp.status_code == 408
    assert resp.json() == {
        "code": grpc.StatusCode.DEADLINE_EXCEEDED.value[0],
        "message": "query exceeded its time limit of 0.3 s",
    }

    started = time.monotonic()
    error = grpc_error(receiver, query_pb2.QueryRequest(sql=SLOW_SQL))
    assert time.monotonic() - started < HANG_S
    assert error.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert "time limit" in error.details()

    assert_healthy_and_intact(receiver)


def test_requested_time_limit_below_server_limit(seeded):
    started = time.monotonic()
    resp = post_json(seeded, {"sql": SLOW_SQL, "timeoutMs": 200})
    assert time.monotonic() - started < HANG_S
    assert resp.status_code == 408
    assert "0.2 s" in resp.json()["message"]
    assert_healthy_and_intact(seeded)


def test_ingest_continues_while_a_query_runs(make_receiver):
    """A long query holds only its own cursor: the writer commits while it runs."""
    # a time limit the seed's commit fits in on a loaded machine (the query runs until it is cut)
    receiver = make_receiver(query_timeout_s=5.0)
    outcome: list[int] = []
    worker = threading.Thread(target=lambda: outcome.append(post_json(receiver, {"sql": SLOW_SQL}).status_code))
    worker.start()
    wait_until(lambda: readers_of(receiver.con).active, "the slow query to hold its cursor")
    seed(receiver)  # acknowledged only after its commit
    assert worker.is_alive()
    worker.join()
    assert outcome == [408]
    assert_healthy_and_intact(receiver)


# --- refusals --------------------------------------------------------------------------------------------


def refused_cases(tmp: Path) -> list[tuple[str, str]]:
    """(statement, fragment of the error message); paths under ``tmp`` so their absence can be checked."""
    return [
        ("INSERT INTO spans (trace_id, span_id) VALUES ('a', 'b')", "not INSERT"),
        ("DELETE FROM spans", "not DELETE"),
        ("UPDATE spans SET name = 'x'", "not UPDATE"),
        ("CREATE TABLE evil (a INT)", "not CREATE"),
        ("DROP TABLE spans", "not DROP"),
        (f"COPY spans TO '{tmp}/x.csv'", "not COPY"),
        ("COPY spans TO '/tmp/x.csv'", "not COPY"),
        (f"ATTACH '{tmp}/y.duckdb'", "not ATTACH"),
        ("ATTACH '/tmp/y.duckdb'", "not ATTACH"),
        ("INSTALL httpfs", "not LOAD"),
        ("LOAD httpfs", "not LOAD"),
        ("SET threads=1", "not SET"),
        ("PRAGMA enable_profiling", "not PRAGMA"),
        ("CALL pragma_version()", "not CALL"),
        ("SELECT * FROM read_csv('/etc/passwd')", "file system operations are disabled"),
        ("SELECT * FROM read_text('/etc/hostname')", "file system operations are disabled"),
        ("SELECT * FROM read_blob('/etc/hostname')", "file system operations are disabled"),
        ("SELECT * FROM glob('/etc/*')", "file system operations are disabled"),
        ("SELECT 1; SELECT 2", "exactly one statement is allowed, got 2"),
        ("SELECT 1; DELETE FROM spans", "exactly one statement is allowed, got 2"),
        ("SELECT * FROM query('DELETE FROM spans')", "query() is not allowed"),
        ("SELEC 1", "cannot parse query"),
        ("", "exactly one statement is allowed, got 0"),
        # EXPLAIN is allowed, but EXPLAIN ANALYZE executes its statement: it must not be a way to write.
        ("EXPLAIN ANALYZE DELETE FROM spans", "read-only"),
        ("EXPLAIN ANALYZE INSERT INTO spans (trace_id, span_id) VALUES ('a', 'b')", "read-only"),
        ("EXPLAIN ANALYZE CREATE TABLE evil AS SELECT 1", "read-only"),
        (f"EXPLAIN ANALYZE COPY spans TO '{tmp}/z.csv'", "EXPLAIN of read-only statements (SELECT) only, not of COPY"),
        # The API runs reads only: no checkpoint, however it is spelled (issue 11, item 5).
        ("CHECKPOINT", "not CALL (CHECKPOINT)"),
        ("FORCE CHECKPOINT", "not CALL (FORCE)"),
        ("VACUUM", "not VACUUM"),
        ("VACUUM ANALYZE spans", "not VACUUM"),
        ("EXPLAIN ANALYZE CHECKPOINT", "not of CALL"),
        ("EXPLAIN ANALYZE VACUUM", "not of VACUUM"),
        ("EXPLAIN ANALYZE SELECT * FROM checkpoint()", "checkpoint() is not allowed in the query API: it writes"),
        ("SELECT * FROM checkpoint()", "checkpoint() is not allowed in the query API: it writes the store"),
        ('SELECT * FROM main."FORCE_CHECKPOINT"()', "force_checkpoint() is not allowed"),
        ("SELECT * FROM force_checkpoint('store0')", "force_checkpoint() is not allowed"),
        # ... and no file path of the store.
        ("SELECT path FROM duckdb_databases()", "duckdb_databases() is not allowed in the query API: it reveals"),
        ("SELECT * FROM pragma_database_list", "pragma_database_list is not allowed"),
        ("SELECT value FROM duckdb_settings()", "duckdb_settings() is not allowed"),
        ("SELECT current_setting('temp_directory')", "current_setting() is not allowed"),
        ("SELECT * FROM query /* hidden */ ('SELECT 1')", "query() is not allowed"),
        (
            "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1'))",
            "json_execute_serialized_sql() is not allowed in the query API: it runs SQL text",
        ),
    ]


def tables(receiver) -> list[tuple]:
    """The store's tables, but the maintained state's, which its thread creates at start (store/maintained.py)."""
    found = rows(receiver, "SELECT database_name, schema_name, table_name FROM duckdb_tables() ORDER BY ALL")
    return [t for t in found if t[2] not in STATE_TABLES]


def test_refused_over_http(seeded, tmp_path):
    target = tmp_path / "target"  # the store itself lives in tmp_path
    target.mkdir()
    tables_before = tables(seeded)
    for sql, fragment in refused_cases(target):
        for fmt in ("json", "protobuf"):
            if fmt == "json":
                resp = post_json(seeded, {"sql": sql})
                assert resp.headers["content-type"] == "application/json"
                status = resp.json()
            else:
                resp = post_proto(seeded, query_pb2.QueryRequest(sql=sql))
                assert resp.headers["content-type"] == "application/x-protobuf"
                message = status_pb2.Status.FromString(resp.content)
                status = {"code": message.code, "message": message.message}
            assert resp.status_code == 400, (sql, fmt, status)
            assert status["code"] == grpc.StatusCode.INVALID_ARGUMENT.value[0], sql
            assert fragment in status["message"], (sql, status["message"])
    assert not any(target.iterdir())
    assert_healthy_and_intact(seeded)
    assert tables(seeded) == tables_before
    assert rows(seeded, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'evil'") == [(0,)]
    assert rows(seeded, "SELECT count(*) FROM duckdb_databases() WHERE database_name = 'y'") == [(0,)]


def test_refused_over_grpc(seeded, tmp_path):
    target = tmp_path / "target"  # the store itself lives in tmp_path
    target.mkdir()
    tables_before = tables(seeded)
    for sql, fragment in refused_cases(target):
        error = grpc_error(seeded, query_pb2.QueryRequest(sql=sql))
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, sql
        assert fragment in error.details(), (sql, error.details())
    assert not any(target.iterdir())
    assert_healthy_and_intact(seeded)
    assert tables(seeded) == tables_before


def test_settings_unchanged_after_refusals(seeded):
    before = rows(seeded, "SELECT current_setting('threads'), current_setting('enable_external_access')")
    post_json(seeded, {"sql": "SET threads=1"})
    post_json(seeded, {"sql": "SET enable_external_access=true"})
    assert rows(seeded, "SELECT current_setting('threads'), current_setting('enable_external_access')") == before
    assert before[0][1] is False


@pytest.mark.parametrize(
    ("body", "headers", "status"),
    [
        (b"{not json", {"Content-Type": "application/json"}, 400),
        (b"\xff\xff\xff", {"Content-Type": "application/x-protobuf"}, 400),
        (b'{"sql": "SELECT 1"}', {"Content-Type": "text/plain"}, 415),
    ],
    ids=["bad-json", "bad-protobuf", "wrong-content-type"],
)
def test_malformed_query_request(seeded, body, headers, status):
    resp = requests.post(seeded.http_address + "/v1/query", data=body, headers=headers, timeout=10)
    assert resp.status_code == status
    assert requests.get(seeded.http_address + "/v1/query", timeout=10).status_code == 405
    assert_healthy_and_intact(seeded)


# --- otel-agent sql --------------------------------------------------------------------------------------


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "otel_agent", "sql", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


CLI_SQL = (
    "SELECT name, (attributes->>'gen_ai.usage.input_tokens')::BIGINT AS tokens, "
    "attributes->>'gen_ai.request.model' AS model, span_id FROM spans ORDER BY name"
)
CLI_JSON = [
    {"name": "alpha", "tokens": 10, "model": "gpt-4o", "span_id": "00f067aa0ba902b0"},
    {"name": "beta", "tokens": 20, "model": "gpt-4o", "span_id": "00f067aa0ba902b1"},
    {"name": "gamma", "tokens": 30, "model": "gpt-4o", "span_id": "00f067aa0ba902b2"},
]
CLI_CSV = [
    ["name", "tokens", "model", "span_id"],
    ["alpha", "10", "gpt-4o", "00f067aa0ba902b0"],
    ["beta", "20", "gpt-4o", "00f067aa0ba902b1"],
    ["gamma", "30", "gpt-4o", "00f067aa0ba902b2"],
]


def test_cli_live_then_closed(seeded):
    db = seeded.config.db
    assert json.loads(discovery_path(db).read_text())["http"] == seeded.http_address

    # Live: the receiver holds the file (no other process may open it), so this went through /v1/query.
    live_json = cli(CLI_SQL, "--db", db, "--format", "json")
    assert live_json.returncode == 0, live_json.stderr
    assert json.loads(live_json.stdout) == CLI_JSON
    live_csv = cli(CLI_SQL, "--db", db, "--format", "csv")
    assert live_csv.returncode == 0, live_csv.stderr
    assert list(csv.reader(io.StringIO(live_csv.stdout))) == CLI_CSV
    refused = cli("DELETE FROM spans", "--db", db)
    assert refused.returncode != 0
    assert "400" in refused.stderr
    assert "only read statements" in refused.stderr
    assert "DELETE" in refused.stderr
    assert rows(seeded, "SELECT count(*) FROM spans") == [(3,)]

    seeded.stop()
    assert not discovery_path(db).exists()

    # Closed: the same command opens the file read-only and prints the same values.
    closed_json = cli(CLI_SQL, "--db", db, "--format", "json")
    assert closed_json.returncode == 0, closed_json.stderr
    assert json.loads(closed_json.stdout) == CLI_JSON
    assert closed_json.stdout == live_json.stdout
    closed_csv = cli(CLI_SQL, "--db", db, "--format", "csv")
    assert closed_csv.stdout == live_csv.stdout
    table = cli("SELECT name, span_id FROM spans ORDER BY name", "--db", db)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["name", "span_id"]
    assert [line.split() for line in lines[2:5]] == [[s["name"], s["span_id"]] for s in CLI_JSON]
    assert lines[-1] == "(3 rows)"

    for sql in ("DELETE FROM spans", "EXPLAIN ANALYZE DELETE FROM spans", "COPY spans TO '/tmp/x.csv'"):
        refused = cli(sql, "--db", db)
        assert refused.returncode != 0, sql
        assert refused.stdout == "", sql
        assert "Error:" in refused.stderr, sql
    assert json.loads(cli(CLI_SQL, "--db", db, "--format", "json").stdout) == CLI_JSON


def test_cli_live_with_tokens(make_receiver, tmp_path):
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"tokens": [{"token": "q", "principal": "analyst", "roles": ["query"]}]}))
    receiver = make_receiver(tokens_file=str(tokens))
    db = receiver.config.db
    denied = cli("SELECT 1 AS one", "--db", db)
    assert denied.returncode != 0
    assert "401" in denied.stderr
    assert "missing bearer token" in denied.stderr
    allowed = cli("SELECT 1 AS one", "--db", db, "--token", "q", "--format", "json")
    assert allowed.returncode == 0, allowed.stderr
    assert json.loads(allowed.stdout) == [{"one": 1}]
    assert '"one": 1\n' in allowed.stdout  # an int, not the 1.0 of protobuf's JSON mapping
