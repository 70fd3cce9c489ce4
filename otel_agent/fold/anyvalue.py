"""OTLP ``AnyValue`` → plain JSON, keeping every type distinguishable.

Attributes are stored as JSON text so SQL can read them with ``attributes->>'key'``. Plain JSON already
separates strings, ints (``3``), doubles (``3.0``), booleans, arrays and key-value lists (objects). The two
types plain JSON cannot carry use the OTLP-JSON ``AnyValue`` form, and nothing else does:

* bytes → ``{"bytesValue": "<base64>"}``
* NaN / ±Infinity → ``{"doubleValue": "NaN" | "Infinity" | "-Infinity"}``
* a key-value list that would look like one of those (a single key ``bytesValue``, ``doubleValue`` or
  ``kvlistValue``) is wrapped as ``{"kvlistValue": {...}}``.

Two entry points: ``plain`` takes a parsed ``AnyValue`` message; ``RawValueDecoder.decode`` takes its serialized
bytes (see ``shadow``), decodes the common scalars directly and parses anything else with the generated class.

Values are hostile input: arrays and key-value lists may nest at most ``MAX_DEPTH`` levels (a value deeper than
that is refused as ``InvalidPayloadError`` before its inner levels are converted), and bytes that do not parse as
an ``AnyValue`` are refused the same way. protobuf itself refuses messages nested deeper than 100 levels while
parsing (upb's limit, and ``json_format``'s for OTLP/JSON); a key-value list level is three messages deep, so
that limit alone would refuse key-value lists nested 30 to 32 deep depending on where the value sits (an
exemplar's attributes are the deepest place). ``MAX_DEPTH`` is below it everywhere: one limit for every value,
in both encodings (tests/server/test_malformed.py checks the deepest place).
"""

from __future__ import annotations

import base64
import math
import struct
from typing import TYPE_CHECKING, Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from otel_agent.errors import InvalidPayloadError

if TYPE_CHECKING:
    from otel_agent.fold.redact import Redactor

_AMBIGUOUS_KEYS = frozenset({"bytesValue", "doubleValue", "kvlistValue"})
_unpack_double = struct.Struct("<d").unpack_from

MAX_DEPTH = 24
"""Levels of arrays and key-value lists an attribute value or log body may nest (documented in docs/schema.md).
A string inside 24 arrays is stored; inside 25 the request is refused."""


def _too_deep() -> InvalidPayloadError:
    return InvalidPayloadError(f"an attribute value or log body is nested deeper than {MAX_DEPTH} levels")


def plain(value: Any, redactor: Redactor | None = None, depth: int = MAX_DEPTH) -> Any:
    """Convert one ``AnyValue`` message to its plain-JSON Python value.

    Keys inside key-value lists go through ``redactor`` too, so a credential nested in a map is dropped.
    ``depth`` is how many more levels of arrays and key-value lists may follow.
    """
    which = value.WhichOneof("value")
    if which == "string_value":
        return value.string_value
    if which == "int_value":
        return value.int_value
    if which == "double_value":
        return _double(value.double_value)
    if which == "bool_value":
        return value.bool_value
    if which == "array_value":
        if not depth:
            raise _too_deep()
        return [plain(v, redactor, depth - 1) for v in value.array_value.values]
    if which == "kvlist_value":
        if not depth:
            raise _too_deep()
        out = {kv.key: plain(kv.value, redactor, depth - 1) for kv in value.kvlist_value.values}
        if redactor is not None:
            out = redactor.apply(out)
        if len(out) == 1 and next(iter(out)) in _AMBIGUOUS_KEYS:
            return {"kvlistValue": out}
        return out
    if which == "bytes_value":
        return {"bytesValue": base64.b64encode(value.bytes_value).decode("ascii")}
    if which == "string_value_strindex":
        # Only meaningful inside a profiles dictionary; kept as the index it is.
        return {"stringValueStrindex": value.string_value_strindex}
    return None


def _double(d: float) -> Any:
    if d - d == 0.0:
        return d
    return {"doubleValue": "NaN" if math.isnan(d) else ("Infinity" if d > 0 else "-Infinity")}


def _scalar(raw: bytes) -> tuple[bool, Any]:
    """(decoded, value) for the canonical one-field encodings of string, int, double and bool."""
    n = len(raw)
    if n < 2:
        return False, None
    tag = raw[0]
    if tag == 0x0A:  # string_value, length < 128
        if raw[1] < 0x80 and raw[1] + 2 == n:
            try:
                return True, raw[2:].decode()
            except UnicodeDecodeError:
                return False, None
    elif tag == 0x18:  # int_value, varint
        result = shift = 0
        pos = 1
        while pos < n:
            b = raw[pos]
            result |= (b & 0x7F) << shift
            pos += 1
            if b < 0x80:
                if pos == n:
                    return True, result - (1 << 64) if result >= 1 << 63 else result
                break
            shift += 7
    elif tag == 0x21:  # double_value, fixed64
        if n == 9:
            return True, _double(_unpack_double(raw, 1)[0])
    elif tag == 0x10 and n == 2 and raw[1] < 2:  # bool_value
        return True, raw[1] == 1
    return False, None


class RawValueDecoder:
    """Decodes serialized AnyValues, caching scalars: model names, operation names, providers and other
    string values recur across spans, and a dict lookup is cheaper than any decoding."""

    def __init__(self, max_cached: int = 65_536) -> None:
        self._cache: dict[bytes, Any] = {}
        self._max = max_cached

    def decode(self, raw: bytes, redactor: Redactor | None = None) -> Any:
        value = self._cache.get(raw)
        if value is not None:
            return value
        ok, value = _scalar(raw)
        if not ok:
            # Anything else (arrays, key-value lists, bytes, long strings, unusual encodings): the real thing.
            try:
                message = AnyValue.FromString(raw)
            except DecodeError as exc:  # bad UTF-8, truncated, nested past protobuf's limit
                raise InvalidPayloadError(f"invalid attribute value: {exc}") from exc
            return plain(message, redactor)
        if value is not None and not isinstance(value, dict) and len(self._cache) < self._max:
            self._cache[raw] = value
        return value
