"""Access to ``registry.json``: the machine-readable vocabulary (attributes, spans, events, links, carrier).

Schema (version 1)::

    {"schema_version": 1, "prefix": "otel_agent.",
     "attributes": [{"name", "type", "requirement_level", "description", "example", "standard",
                     "applies_to"}],
     "spans":  [{"record_kind", "record_id"?, "record_ref"?, "helper", "name", "kind", "description",
                 "attributes", "events", "links"}],
     "events": [{"name", "description", "attributes"}],
     "links":  [{"from", "to", "attributes", "description"}],
     "carrier": {"keys": [...], "description"}}

``type`` is an OpenTelemetry attribute type: ``string``, ``int``, ``double``, ``boolean`` or ``string[]``.
``record_id`` / ``record_ref`` name the attribute holding the record's own id and the id of the record it
points at; the receiver copies them into the typed ``spans.record_id`` / ``spans.record_ref`` columns
(``otel_agent.fold.promoted``).
``requirement_level`` is ``required``, ``conditionally_required``, ``recommended`` or ``opt_in``.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

ATTRIBUTE_TYPES = ("string", "int", "double", "boolean", "string[]")
REQUIREMENT_LEVELS = ("required", "conditionally_required", "recommended", "opt_in")


@cache
def _load() -> str:
    return resources.files(__package__).joinpath("registry.json").read_text(encoding="utf-8")


def load_registry() -> dict[str, Any]:
    """A fresh copy of the registry (callers may mutate it)."""
    return json.loads(_load())


def attribute_types() -> dict[str, str]:
    """Attribute name -> registry type, for every attribute (project and standard)."""
    return {a["name"]: a["type"] for a in load_registry()["attributes"]}
