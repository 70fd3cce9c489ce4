"""OTLP/JSON → protobuf messages, following the OTLP JSON rules that differ from protobuf's JSON mapping.

protobuf's ``json_format`` already accepts lowerCamelCase keys, enums as integers, 64-bit integers as strings
or numbers and "NaN"/"Infinity" doubles, and can ignore unknown fields. What OTLP changes is the encoding of
trace and span ids: hex strings, not base64. So ids are rewritten to base64 first, then parsed.

The text is read with orjson, which is strict where the standard library is not, so that hostile input is
refused as invalid JSON before protobuf sees it: numbers beyond a double (``1e400``, which ``json`` turns into
infinity and protobuf's integer parsing then into ``OverflowError``), lone surrogates (which upb cannot encode),
bare ``NaN``, and nesting deeper than 1024 levels (``json`` recurses until ``RecursionError``). ``json_format``
then refuses messages nested deeper than 100 levels.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson
from google.protobuf import json_format
from google.protobuf.message import Message

from otel_agent.errors import InvalidPayloadError

_ID_KEYS = ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")


def _hex_to_b64(obj: dict[str, Any], where: str) -> None:
    for key in _ID_KEYS:
        value = obj.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise InvalidPayloadError(f"{where}.{key}: expected a hex string")
        try:
            obj[key] = base64.b64encode(bytes.fromhex(value)).decode("ascii")
        except ValueError as exc:
            raise InvalidPayloadError(f"{where}.{key}: {value!r} is not hex") from exc


def _items(obj: Any, *keys: str) -> list[Any]:
    """obj[k1] (or its snake_case spelling) as a list, tolerating absence."""
    for key in keys:
        if isinstance(obj, dict) and key in obj:
            value = obj[key]
            if value is None:
                return []
            if not isinstance(value, list):
                raise InvalidPayloadError(f"{key}: expected a list")
            return value
    return []


def _fix_trace_ids(doc: dict[str, Any]) -> None:
    for i, rs in enumerate(_items(doc, "resourceSpans", "resource_spans")):
        for j, ss in enumerate(_items(rs, "scopeSpans", "scope_spans")):
            for k, span in enumerate(_items(ss, "spans")):
                where = f"resourceSpans[{i}].scopeSpans[{j}].spans[{k}]"
                if not isinstance(span, dict):
                    raise InvalidPayloadError(f"{where}: expected an object")
                _hex_to_b64(span, where)
                for m, link in enumerate(_items(span, "links")):
                    if isinstance(link, dict):
                        _hex_to_b64(link, f"{where}.links[{m}]")


def _fix_log_ids(doc: dict[str, Any]) -> None:
    for i, rl in enumerate(_items(doc, "resourceLogs", "resource_logs")):
        for j, sl in enumerate(_items(rl, "scopeLogs", "scope_logs")):
            for k, rec in enumerate(_items(sl, "logRecords", "log_records")):
                if isinstance(rec, dict):
                    _hex_to_b64(rec, f"resourceLogs[{i}].scopeLogs[{j}].logRecords[{k}]")


def _fix_metric_ids(doc: dict[str, Any]) -> None:
    for rm in _items(doc, "resourceMetrics", "resource_metrics"):
        for sm in _items(rm, "scopeMetrics", "scope_metrics"):
            for metric in _items(sm, "metrics"):
                if not isinstance(metric, dict):
                    continue
                for kind in ("gauge", "sum", "histogram", "exponentialHistogram", "exponential_histogram"):
                    data = metric.get(kind)
                    if not isinstance(data, dict):
                        continue
                    for point in _items(data, "dataPoints", "data_points"):
                        for ex in _items(point, "exemplars"):
                            if isinstance(ex, dict):
                                _hex_to_b64(ex, f"metric {metric.get('name')!r} exemplar")


_FIXERS = {"traces": _fix_trace_ids, "logs": _fix_log_ids, "metrics": _fix_metric_ids}


def parse_otlp_json(payload: bytes, message: Message, signal: str) -> Message:
    """Parse an OTLP/JSON body into ``message`` (an empty Export*ServiceRequest) and return it."""
    try:
        doc = orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        raise InvalidPayloadError(f"invalid JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise InvalidPayloadError("invalid OTLP/JSON: the body must be a JSON object")
    _FIXERS[signal](doc)
    try:
        json_format.ParseDict(doc, message, ignore_unknown_fields=True)
    except Exception as exc:
        # json_format is a parser of hostile input: whatever it raises for a body (ParseError mostly, but
        # fuzzing also found TypeError, binascii.Error and OverflowError) means the body is not an OTLP message.
        raise InvalidPayloadError(f"invalid OTLP/JSON: {exc}") from exc
    return message


def response_json(message: Message) -> bytes:
    """A response message in OTLP/JSON (lowerCamelCase, defaults omitted)."""
    return json_format.MessageToJson(message, indent=None).encode()
