"""The straightforward good design, as the yardstick for ``bench/ingest.py`` (issue 16).

One grpcio server (a thread pool), the generated OTLP message parsed with protobuf's upb backend, attributes
as JSON text (orjson), one Arrow table per request, one writer thread that group-commits whatever is queued
into one DuckDB file, and the reply only after COMMIT. No decode processes, no re-delivery check, no lookup
tables, no admission bound: what a careful engineer writes in an afternoon. Events and links are JSON columns
of the span row.

    python bench/baseline_receiver.py --db base.duckdb --grpc-port 4317   # prints "ready" when serving
"""

from __future__ import annotations

import argparse
import queue
import signal
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import duckdb
import grpc
import orjson
import pyarrow as pa
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

SCHEMA = pa.schema(
    [
        ("trace_id", pa.string()),
        ("span_id", pa.string()),
        ("parent_span_id", pa.string()),
        ("name", pa.string()),
        ("kind", pa.int32()),
        ("start_time", pa.timestamp("ns")),
        ("end_time", pa.timestamp("ns")),
        ("status_code", pa.int32()),
        ("status_message", pa.string()),
        ("attributes", pa.string()),
        ("events", pa.string()),
        ("links", pa.string()),
        ("service_name", pa.string()),
        ("resource_attributes", pa.string()),
        ("scope_name", pa.string()),
    ]
)
DDL = """CREATE TABLE IF NOT EXISTS spans (trace_id VARCHAR, span_id VARCHAR, parent_span_id VARCHAR, name VARCHAR,
kind INTEGER, start_time TIMESTAMP_NS, end_time TIMESTAMP_NS, status_code INTEGER, status_message VARCHAR,
attributes JSON, events JSON, links JSON, service_name VARCHAR, resource_attributes JSON, scope_name VARCHAR)"""
EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
OK = ExportTraceServiceResponse().SerializeToString()


def value(v: Any) -> Any:
    which = v.WhichOneof("value")
    if which == "array_value":
        return [value(x) for x in v.array_value.values]
    if which == "kvlist_value":
        return {kv.key: value(kv.value) for kv in v.kvlist_value.values}
    if which == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, which) if which else None


def attrs(kvs: Any) -> dict[str, Any]:
    return {kv.key: value(kv.value) for kv in kvs}


def fold(payload: bytes) -> pa.Table:
    request = ExportTraceServiceRequest.FromString(payload)
    cols: dict[str, list] = {f.name: [] for f in SCHEMA}
    for rs in request.resource_spans:
        resource = attrs(rs.resource.attributes)
        resource_json = orjson.dumps(resource).decode()
        service = resource.get("service.name")
        for ss in rs.scope_spans:
            for s in ss.spans:
                cols["trace_id"].append(s.trace_id.hex())
                cols["span_id"].append(s.span_id.hex())
                cols["parent_span_id"].append(s.parent_span_id.hex())
                cols["name"].append(s.name)
                cols["kind"].append(s.kind)
                cols["start_time"].append(s.start_time_unix_nano)
                cols["end_time"].append(s.end_time_unix_nano)
                cols["status_code"].append(s.status.code)
                cols["status_message"].append(s.status.message)
                cols["attributes"].append(orjson.dumps(attrs(s.attributes)).decode())
                events = [
                    {"time": e.time_unix_nano, "name": e.name, "attributes": attrs(e.attributes)} for e in s.events
                ]
                links = [
                    {"trace_id": li.trace_id.hex(), "span_id": li.span_id.hex(), "attributes": attrs(li.attributes)}
                    for li in s.links
                ]
                cols["events"].append(orjson.dumps(events).decode())
                cols["links"].append(orjson.dumps(links).decode())
                cols["service_name"].append(service)
                cols["resource_attributes"].append(resource_json)
                cols["scope_name"].append(ss.scope.name)
    return pa.Table.from_pydict(cols, schema=SCHEMA)


class Writer(threading.Thread):
    """One thread, one connection: takes everything queued, one INSERT and one COMMIT, then answers all."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        super().__init__(daemon=True)
        self.con = con
        self.jobs: queue.Queue[tuple[pa.Table, Future[None]] | None] = queue.Queue()

    def run(self) -> None:
        while True:
            first = self.jobs.get()
            if first is None:
                return
            group = [first]
            while True:
                try:
                    nxt = self.jobs.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    self.jobs.put(None)
                    break
                group.append(nxt)
            try:
                incoming = pa.concat_tables([t for t, _ in group])  # noqa: F841 (read by name below)
                self.con.execute("BEGIN")
                self.con.execute("INSERT INTO spans SELECT * FROM incoming")
                self.con.execute("COMMIT")
                for _, f in group:
                    f.set_result(None)
            except Exception as exc:
                self.con.execute("ROLLBACK")
                for _, f in group:
                    f.set_exception(exc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--grpc-port", type=int, required=True)
    ap.add_argument("--threads", type=int, default=16)
    args = ap.parse_args()
    con = duckdb.connect(args.db)
    con.execute(DDL)
    writer = Writer(con)
    writer.start()

    def export(payload: bytes, context: grpc.ServicerContext) -> bytes:
        future: Future[None] = Future()
        writer.jobs.put((fold(payload), future))
        future.result()
        return OK

    handler = grpc.unary_unary_rpc_method_handler(export, request_deserializer=None, response_serializer=None)
    server = grpc.server(
        ThreadPoolExecutor(max_workers=args.threads),
        options=[("grpc.max_receive_message_length", 64 << 20)],
    )
    server.add_generic_rpc_handlers(
        [
            grpc.method_handlers_generic_handler(
                "opentelemetry.proto.collector.trace.v1.TraceService", {"Export": handler}
            )
        ]
    )
    server.add_insecure_port(f"127.0.0.1:{args.grpc_port}")
    server.start()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    print("ready", flush=True)
    done.wait()
    server.stop(10).wait()
    writer.jobs.put(None)
    writer.join()
    con.execute("CHECKPOINT")
    con.close()
    sys.exit(0)


if __name__ == "__main__":
    main()
