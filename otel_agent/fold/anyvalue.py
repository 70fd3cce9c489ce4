"""OTLP ``AnyValue`` → plain JSON, keeping every type distinguishable.

Attributes are stored as JSON text so SQL can read them with ``attributes->>'key'``. Plain JSON already
separates strings, ints (``3``), doubles (``3.0``), booleans, arrays and key-value lists (objects). The two
types plain JSON cannot carry use the OTLP-JSON ``AnyValue`` form, and nothing else does:

* bytes → ``{"bytesValue": "<base64>"}``
* NaN / ±Infinity → ``{"doubleValue": "NaN" | "Infinity" | "-Infinity"}``
* a key-value list that would look like one of those (a single key ``bytesValue``, ``doubleValue`` or
  ``kvlistValue``) is wrapped as ``{"kvlistValue": {...}}``.

This is the per-attribute hot spot of ingestion, so the common scalar cases are tested first.
"""

from __future__ import annotations

import base64
import math
from typing import Any

_AMBIGUOUS_KEYS = frozenset({"bytesValue", "doubleValue", "kvlistValue"})


def plain(value: Any) -> Any:
    """Convert one ``AnyValue`` message to its plain-JSON Python value."""
    which = value.WhichOneof("value")
    if which == "string_value":
        return value.string_value
    if which == "int_value":
        return value.int_value
    if which == "double_value":
        d = value.double_value
        if d - d == 0.0:
            return d
        return {"doubleValue": "NaN" if math.isnan(d) else ("Infinity" if d > 0 else "-Infinity")}
    if which == "bool_value":
        return value.bool_value
    if which == "array_value":
        return [plain(v) for v in value.array_value.values]
    if which == "kvlist_value":
        out = {kv.key: plain(kv.value) for kv in value.kvlist_value.values}
        if len(out) == 1 and next(iter(out)) in _AMBIGUOUS_KEYS:
            return {"kvlistValue": out}
        return out
    if which == "bytes_value":
        return {"bytesValue": base64.b64encode(value.bytes_value).decode("ascii")}
    if which == "string_value_strindex":
        # Only meaningful inside a profiles dictionary; kept as the index it is.
        return {"stringValueStrindex": value.string_value_strindex}
    return None
