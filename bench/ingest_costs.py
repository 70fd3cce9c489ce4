"""CPU cost of each step of the ingest path per 1,000 spans, measured one step at a time in one process (thread
CPU time, so the figures hold on a shared machine where wall-clock throughput does not).

Steps: protobuf parse + fold (the decode worker; through the Rust fold when it is built, and the Python fold,
``OTEL_AGENT_NATIVE_FOLD=off``), pickling the folded batch there and unpickling it in the
receiver (the decode-result path), the same through Arrow IPC instead, packing the re-delivery keys
(ingest/recent.py), and the writer's group commit of N requests: concat + register, the duplicate query it
replaces, the inserts, COMMIT.

    python bench/ingest_costs.py                  # 512-span requests, groups of 4
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_spans import make_request

from otel_agent.fold import native
from otel_agent.fold.decode import PROTOBUF, decode_payload
from otel_agent.fold.redact import Redactor
from otel_agent.ingest.recent import batch_keys
from otel_agent.signals import TRACES
from otel_agent.store.database import open_store
from otel_agent.store.statements import statement


def cpu(fn, repeat: int) -> float:
    """Thread CPU seconds per call of ``fn`` (median of ``repeat`` calls)."""
    times = []
    for _ in range(repeat):
        t0 = time.thread_time()
        fn()
        times.append(time.thread_time() - t0)
    return sorted(times)[len(times) // 2]


def ipc_bytes(tables: dict[str, pa.Table]) -> list[bytes]:
    out = []
    for t in tables.values():
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, t.schema) as w:
            w.write_table(t)
        out.append(sink.getvalue().to_pybytes())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spans", type=int, default=512)
    ap.add_argument("--group", type=int, default=4, help="requests per group commit")
    ap.add_argument("--commits", type=int, default=40)
    args = ap.parse_args()
    per_k = 1000 / args.spans
    redactor = Redactor()
    now = time.time_ns()
    payloads = [
        make_request(args.spans, now + i * args.spans * 20_000, 7_000 + i, spacing_ns=20_000)
        for i in range(args.group * args.commits)
    ]
    batches = [decode_payload("traces", PROTOBUF, p, redactor, None, 0) for p in payloads]
    rows: list[tuple[str, float]] = []
    fold = lambda: decode_payload("traces", PROTOBUF, payloads[0], redactor, None, 0)  # noqa: E731
    lineage = make_request(args.spans, now, 99, spacing_ns=20_000, lineage=True)
    fold_lineage = lambda: decode_payload("traces", PROTOBUF, lineage, redactor, None, 0)  # noqa: E731
    for label, setting in (("Rust", "on"), ("Python", "off")):
        if setting == "on" and not native.available():
            continue
        os.environ[native.NATIVE_FOLD_ENV] = setting
        rows.append((f"parse + fold, {label} (decode worker)", cpu(fold, 15) * per_k))
        rows.append((f"  the same, --lineage mix, {label}", cpu(fold_lineage, 15) * per_k))
    os.environ.pop(native.NATIVE_FOLD_ENV)
    blob = pickle.dumps(batches[0], protocol=pickle.HIGHEST_PROTOCOL)
    rows.append(("pickle.dumps of the batch (worker)", cpu(lambda: pickle.dumps(batches[0], protocol=5), 30) * per_k))
    rows.append(("pickle.loads of the batch (receiver, GIL)", cpu(lambda: pickle.loads(blob), 30) * per_k))
    ipc = ipc_bytes(batches[0].tables)
    rows.append(("Arrow IPC write (worker)", cpu(lambda: ipc_bytes(batches[0].tables), 30) * per_k))
    rows.append(("Arrow IPC read (receiver, GIL)",
                 cpu(lambda: [pa.ipc.open_stream(b).read_all() for b in ipc], 30) * per_k))  # fmt: skip
    main_table = batches[0].tables["spans"]
    rows.append(("pack re-delivery keys (request thread)", cpu(lambda: batch_keys(TRACES, main_table), 30) * per_k))

    with tempfile.TemporaryDirectory() as tmp:
        con = open_store(str(Path(tmp) / "costs.duckdb"))
        stage = dict.fromkeys(("concat + register", "duplicate query", "inserts", "COMMIT"), 0.0)
        dup_sql, ins_sql = statement("ingest/spans_duplicates"), statement("ingest/spans_insert_all")
        for c in range(args.commits):
            group = batches[c * args.group : (c + 1) * args.group]
            t0 = time.thread_time()
            con.execute("BEGIN")
            for name in TRACES.tables:
                con.register("incoming_" + name, pa.concat_tables([b.tables[name] for b in group]))
            t1 = time.thread_time()
            con.execute(dup_sql).fetchall()
            t2 = time.thread_time()
            con.execute(ins_sql).fetchall()
            t3 = time.thread_time()
            con.execute("COMMIT")
            t4 = time.thread_time()
            for name in TRACES.tables:
                con.unregister("incoming_" + name)
            for k, v in zip(stage, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
                stage[k] += v
        con.close()
        spans = args.commits * args.group * args.spans
        rows += [(f"writer: {k}", v / spans * 1000) for k, v in stage.items()]
    print(f"CPU ms per 1,000 spans ({args.spans}-span requests, {args.group} per group commit; thread CPU time)")
    for name, ms in rows:
        print(f"  {name:<44} {ms * 1000:7.2f}")


if __name__ == "__main__":
    main()
