"""Pieces every signal's fold shares: attribute lists to JSON, resource and scope columns, id checks."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from otel_agent.fold.anyvalue import RawValueDecoder, plain
from otel_agent.fold.redact import Redactor

# orjson: ~0.6 µs for a 12-key object against ~3.6 µs for the standard library's C encoder. Keys are
# sorted so that the stored text does not depend on the order the sender used (or a map's iteration
# order). Non-finite doubles never reach it (anyvalue wraps them).
_SORTED = orjson.OPT_SORT_KEYS


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value, option=_SORTED)


EMPTY_OBJECT = b"{}"


def attrs_json(kvs: Any, redactor: Redactor) -> bytes:
    """A repeated ``KeyValue`` field as UTF-8 JSON object text, after redaction.

    The common scalar types are converted inline (this is the hottest loop of ingestion); everything
    else goes through ``anyvalue.plain``.
    """
    if not kvs:
        return EMPTY_OBJECT
    d = {}
    for kv in kvs:
        v = kv.value
        which = v.WhichOneof("value")
        if which == "string_value":
            d[kv.key] = v.string_value
        elif which == "int_value":
            d[kv.key] = v.int_value
        elif which == "bool_value":
            d[kv.key] = v.bool_value
        else:
            d[kv.key] = plain(v, redactor)
    return _dumps(redactor.apply(d))


def map_json(attributes: Any, redactor: Redactor, values: RawValueDecoder) -> bytes:
    """A shadow-parsed attribute map (key → serialized AnyValue) as JSON object text, after redaction."""
    return dumps(map_dict(attributes, redactor, values))


def map_dict(attributes: Any, redactor: Redactor, values: RawValueDecoder) -> dict[str, Any]:
    """A shadow-parsed attribute map as a dict of plain values, after redaction (``dumps`` gives its JSON)."""
    if not attributes:
        return {}
    decode = values.decode
    return redactor.apply({key: decode(raw, redactor) for key, raw in attributes.items()})


def dumps(value: Any) -> bytes:
    """JSON text of a plain value, keys sorted (the form every JSON column is stored in)."""
    return _dumps(value) if value else EMPTY_OBJECT


def attrs_dict(kvs: Any, redactor: Redactor) -> dict[str, Any]:
    """A repeated ``KeyValue`` field as a dict, for nesting inside other JSON values."""
    return redactor.apply({kv.key: plain(kv.value, redactor) for kv in kvs})


def to_json(value: Any) -> bytes:
    return _dumps(value)


@dataclass
class ResourceInfo:
    service_name: str | None
    attributes: bytes
    dropped: int
    entity_refs: str | None
    schema_url: str


def resource_info(resource_container: Any, redactor: Redactor) -> ResourceInfo:
    res = resource_container.resource
    service_name = None
    attributes = attrs_dict(res.attributes, redactor)
    service_name = attributes.get("service.name")  # after redaction: a dropped name is not kept here either
    if service_name is not None and not isinstance(service_name, str):
        service_name = orjson.dumps(service_name).decode()
    entity_refs = None
    if len(res.entity_refs):
        entity_refs = to_json(
            [
                {
                    "schema_url": e.schema_url,
                    "type": e.type,
                    "id_keys": list(e.id_keys),
                    "description_keys": list(e.description_keys),
                }
                for e in res.entity_refs
            ]
        )
    return ResourceInfo(
        service_name=service_name,
        attributes=_dumps(attributes) if attributes else EMPTY_OBJECT,
        dropped=res.dropped_attributes_count,
        entity_refs=entity_refs,
        schema_url=resource_container.schema_url,
    )


def resource_scope(res: ResourceInfo, scope_container: Any, redactor: Redactor) -> tuple[Any, ...]:
    """The values of ``RESOURCE_SCOPE_COLUMNS`` for every row of one ScopeSpans/ScopeLogs/ScopeMetrics."""
    scope = scope_container.scope
    return (
        res.service_name,
        res.attributes,
        res.dropped,
        res.entity_refs,
        res.schema_url,
        scope.name,
        scope.version,
        attrs_json(scope.attributes, redactor),
        scope.dropped_attributes_count,
        scope_container.schema_url,
    )


def scope_digest(resource: Any, scope: Any) -> Any:
    """MD5 state over a resource and a scope (deterministic protobuf). A record's content hash continues from
    a ``copy()`` of it, so the resource and scope are hashed once per scope group, not once per record."""
    digest = hashlib.md5(resource.SerializeToString(deterministic=True), usedforsecurity=False)
    digest.update(scope.SerializeToString(deterministic=True))
    return digest


def extend_resource_scope(
    cols: dict[str, list], res: ResourceInfo, scope_container: Any, redactor: Redactor, n: int
) -> None:
    """Repeat the resource and scope values of one scope group on its ``n`` rows."""
    if n:
        for name, value in zip(RESOURCE_SCOPE_COLUMNS, resource_scope(res, scope_container, redactor), strict=True):
            cols[name].extend([value] * n)


def fill_ingest_columns(cols: dict[str, list], n: int, principal: str | None, received_at_us: int) -> None:
    cols["principal"] = [principal] * n
    cols["received_at"] = [received_at_us] * n


RESOURCE_SCOPE_COLUMNS = (
    "service_name",
    "resource_attributes",
    "resource_dropped_attributes_count",
    "resource_entity_refs",
    "resource_schema_url",
    "scope_name",
    "scope_version",
    "scope_attributes",
    "scope_dropped_attributes_count",
    "scope_schema_url",
)
