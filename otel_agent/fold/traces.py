"""ExportTraceServiceRequest → ``spans``, ``span_events``, ``span_links`` Arrow tables.

This loop is the ingest hot spot (REFERENCE §6): the request is parsed with the map-shaped shadow types
(``shadow``) so attributes decode without a message object per value, per-span work is kept to
local-variable appends, and everything per resource or scope is computed once and repeated.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from otel_agent.errors import InvalidPayloadError
from otel_agent.fold.anyvalue import RawValueDecoder
from otel_agent.fold.batch import (
    BEYOND_TIMESTAMPS,
    INGEST_FIELDS,
    RESOURCE_SCOPE_FIELDS,
    TIMESTAMP_LIMIT,
    FoldedBatch,
    Rejections,
    quoted,
    table,
)
from otel_agent.fold.common import extend_resource_scope, fill_ingest_columns, json_text, raw_map_dict, resource_info
from otel_agent.fold.lineage import is_retrieval_span_name, is_retrieval_span_scope
from otel_agent.fold.lookups import SpanLookups
from otel_agent.fold.promoted import PROMOTED_COLUMNS, RECORD_KIND_KEY, RUN_ID_KEY, as_text, promote, record_keys
from otel_agent.fold.redact import Redactor

SPAN_KINDS = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
STATUS_CODES = ("UNSET", "OK", "ERROR")

SPANS_SCHEMA = pa.schema(
    [
        pa.field("trace_id", pa.string()),
        pa.field("span_id", pa.string()),
        pa.field("parent_span_id", pa.string()),
        pa.field("trace_state", pa.string()),
        pa.field("flags", pa.uint32()),
        pa.field("name", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("start_time", pa.timestamp("ns")),
        pa.field("end_time", pa.timestamp("ns")),
        pa.field("duration_ns", pa.int64()),
        pa.field("status_code", pa.string()),
        pa.field("status_message", pa.string()),
        pa.field("attributes", pa.string()),
        pa.field("dropped_attributes_count", pa.uint32()),
        pa.field("dropped_events_count", pa.uint32()),
        pa.field("dropped_links_count", pa.uint32()),
        *RESOURCE_SCOPE_FIELDS,
        *INGEST_FIELDS,
        # promoted attributes (fold/promoted.py), last so that stores migrated from schema 1 have the same order
        *(pa.field(name, pa.string()) for name in PROMOTED_COLUMNS),
    ]
)

SPAN_EVENTS_SCHEMA = pa.schema(
    [
        pa.field("trace_id", pa.string()),
        pa.field("span_id", pa.string()),
        pa.field("event_index", pa.uint32()),
        pa.field("time", pa.timestamp("ns")),
        pa.field("name", pa.string()),
        pa.field("attributes", pa.string()),
        pa.field("dropped_attributes_count", pa.uint32()),
    ]
)

SPAN_LINKS_SCHEMA = pa.schema(
    [
        pa.field("trace_id", pa.string()),
        pa.field("span_id", pa.string()),
        pa.field("link_index", pa.uint32()),
        pa.field("linked_trace_id", pa.string()),
        pa.field("linked_span_id", pa.string()),
        pa.field("trace_state", pa.string()),
        pa.field("flags", pa.uint32()),
        pa.field("attributes", pa.string()),
        pa.field("dropped_attributes_count", pa.uint32()),
    ]
)

_VALUES = RawValueDecoder()

ZERO_TRACE_ID = bytes(16)
ZERO_SPAN_ID = bytes(8)


def fold_traces(
    request: Any,
    redactor: Redactor,
    principal: str | None,
    received_at_us: int,
    values: RawValueDecoder = _VALUES,
) -> FoldedBatch:
    """Fold a ``shadow.ShadowTraceRequest`` (see ``decode.parse_request``) into Arrow tables."""
    cols: dict[str, list] = {name: [] for name in SPANS_SCHEMA.names}
    ev: dict[str, list] = {name: [] for name in SPAN_EVENTS_SCHEMA.names}
    ln: dict[str, list] = {name: [] for name in SPAN_LINKS_SCHEMA.names}
    # every column bound by its name: the schema's order is the table's, not the fold's
    c_tid, c_sid, c_pid, c_ts = cols["trace_id"], cols["span_id"], cols["parent_span_id"], cols["trace_state"]
    c_flags, c_name, c_kind = cols["flags"], cols["name"], cols["kind"]
    c_st, c_et, c_dur = cols["start_time"], cols["end_time"], cols["duration_ns"]
    c_sc, c_sm, c_attr = cols["status_code"], cols["status_message"], cols["attributes"]
    c_da, c_de, c_dl = cols["dropped_attributes_count"], cols["dropped_events_count"], cols["dropped_links_count"]
    c_run, c_rkind, c_rid, c_rref = cols["run_id"], cols["record_kind"], cols["record_id"], cols["record_ref"]
    keys = record_keys()
    lookups = SpanLookups()  # lineage keys of our records, documents of other conventions' retrieval spans
    items = 0
    rejected = Rejections("span")
    for rs in request.resource_spans:
        res = resource_info(rs, redactor)
        for ss in rs.scope_spans:
            before = len(c_tid)
            retrieval_scope = is_retrieval_span_scope(ss.scope.name)
            for span in ss.spans:
                items += 1
                tid_raw, sid_raw, pid_raw = span.trace_id, span.span_id, span.parent_span_id
                if len(tid_raw) != 16 or len(sid_raw) != 8 or (pid_raw and len(pid_raw) != 8):
                    raise InvalidPayloadError(
                        f"span {items - 1}: trace_id must be 16 bytes and span_id/parent_span_id 8 bytes "
                        f"(got {len(tid_raw)}, {len(sid_raw)}, {len(pid_raw)})"
                    )
                if tid_raw == ZERO_TRACE_ID or sid_raw == ZERO_SPAN_ID:
                    rejected.add(f"span {items - 1} ({quoted(span.name)}): all-zero trace_id or span_id")
                    continue
                st, et = span.start_time_unix_nano, span.end_time_unix_nano
                if (st | et) >= TIMESTAMP_LIMIT:
                    rejected.add(f"span {items - 1} ({quoted(span.name)}): {BEYOND_TIMESTAMPS}")
                    continue
                tid = tid_raw.hex()
                sid = sid_raw.hex()
                events = span.events
                if events:
                    times = 0  # every event time or-ed: one operation per event for the limit check
                    for i, event in enumerate(events):
                        t = event.time_unix_nano
                        times |= t
                        ev["trace_id"].append(tid)
                        ev["span_id"].append(sid)
                        ev["event_index"].append(i)
                        ev["time"].append(t)
                        ev["name"].append(event.name)
                        ev["attributes"].append(json_text(raw_map_dict(event.attributes, redactor, values)))
                        ev["dropped_attributes_count"].append(event.dropped_attributes_count)
                    if times >= TIMESTAMP_LIMIT:  # rare: take this span's events back out
                        for column in ev.values():
                            del column[-len(events) :]
                        rejected.add(f"span {items - 1} ({quoted(span.name)}): an event's {BEYOND_TIMESTAMPS}")
                        continue
                links = span.links
                if links:
                    for i, link in enumerate(links):
                        ltid, lsid = link.trace_id, link.span_id
                        if len(ltid) != 16 or len(lsid) != 8:
                            raise InvalidPayloadError(f"span {items - 1}: link {i} has an id of wrong length")
                        ln["trace_id"].append(tid)
                        ln["span_id"].append(sid)
                        ln["link_index"].append(i)
                        ln["linked_trace_id"].append(ltid.hex())
                        ln["linked_span_id"].append(lsid.hex())
                        ln["trace_state"].append(link.trace_state)
                        ln["flags"].append(link.flags)
                        ln["attributes"].append(json_text(raw_map_dict(link.attributes, redactor, values)))
                        ln["dropped_attributes_count"].append(link.dropped_attributes_count)
                c_tid.append(tid)
                c_sid.append(sid)
                c_pid.append(pid_raw.hex() if pid_raw and pid_raw != ZERO_SPAN_ID else None)
                c_ts.append(span.trace_state)
                c_flags.append(span.flags)
                name = span.name
                c_name.append(name)
                kind = span.kind
                c_kind.append(SPAN_KINDS[kind] if 0 <= kind < 6 else str(kind))
                c_st.append(st)
                c_et.append(et)
                c_dur.append(et - st)
                status = span.status
                code = status.code
                c_sc.append(STATUS_CODES[code] if 0 <= code < 3 else str(code))
                c_sm.append(status.message)
                attributes = raw_map_dict(span.attributes, redactor, values)
                c_attr.append(json_text(attributes))
                # promoted columns; spans that are no record of ours (most) skip promote(): ~3% of the whole fold
                if RECORD_KIND_KEY in attributes:
                    run_id, record_kind, record_id, record_ref = promote(attributes, keys)
                    c_run.append(run_id)
                    c_rkind.append(record_kind)
                    c_rid.append(record_id)
                    c_rref.append(record_ref)
                    lookups.add_record(record_kind, record_id, record_ref, attributes, et)
                else:
                    run_id = attributes.get(RUN_ID_KEY)
                    c_run.append(run_id if run_id is None or type(run_id) is str else as_text(run_id))
                    c_rkind.append(None)
                    c_rid.append(None)
                    c_rref.append(None)
                if retrieval_scope or is_retrieval_span_name(name):
                    lookups.add_retrieval(tid, sid, et, attributes, res.service_name)
                c_da.append(span.dropped_attributes_count)
                c_de.append(span.dropped_events_count)
                c_dl.append(span.dropped_links_count)
            extend_resource_scope(cols, res, ss, redactor, len(c_tid) - before)
    rejected.check(items)
    fill_ingest_columns(cols, len(c_tid), principal, received_at_us)
    return FoldedBatch(
        signal="traces",
        tables={
            "spans": table(cols, SPANS_SCHEMA),
            "span_events": table(ev, SPAN_EVENTS_SCHEMA),
            "span_links": table(ln, SPAN_LINKS_SCHEMA),
            **lookups.tables(),
        },
        items=items,
        rejected=rejected.count,
        error_message=rejected.message,
    )
