"""Memory write proposals. The helpers never write memory: an agent proposes, a human reviews (issue 5 derives
``memory_items`` from approved proposals only).

Scopes are emitted as one string array of ``type:ref`` pairs (``["project:proj_research",
"flow:deep_research"]``), which SQL splits on the first ``:``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from . import attributes as A
from ._ids import check_id, id_or_new
from ._scope import base_attributes, current_scope, emit_record, put
from ._tracer import current_tracer
from .errors import InvalidValueError
from .evidence import one_of, text

MEMORY_TYPES = ("procedural", "episodic", "semantic")
SCOPE_TYPES = ("organization", "user", "project", "flow", "skill", "session", "run")


@dataclass(frozen=True, slots=True)
class MemoryScope:
    """One scope a memory applies to, e.g. ``MemoryScope("flow", "deep_research")``."""

    type: str
    ref: str

    def __post_init__(self) -> None:
        one_of(self.type, SCOPE_TYPES, "scope type")
        text(self.ref, "scope ref")

    def encode(self) -> str:
        return f"{self.type}:{self.ref}"


ScopeLike = MemoryScope | tuple[str, str] | Mapping[str, str]


def _scope(value: ScopeLike) -> MemoryScope:
    if isinstance(value, MemoryScope):
        return value
    if isinstance(value, Mapping):
        return MemoryScope(value.get("type", ""), value.get("ref", ""))
    if isinstance(value, tuple) and len(value) == 2:
        return MemoryScope(*value)
    raise InvalidValueError(f"a scope is MemoryScope, (type, ref) or {{'type':..,'ref':..}}, got {value!r}")


def propose_memory(
    memory_type: str,
    content: str,
    *,
    scopes: Iterable[ScopeLike],
    rationale: str,
    summary: str | None = None,
    source_run_id: str | None = None,
    proposal_id: str | None = None,
) -> str:
    """Propose writing a procedural / episodic / semantic memory for some scopes. Returns the proposal id.

    ``source_run_id`` defaults to the current run. The proposal starts *pending*; its status is derived from
    reviews, never emitted.
    """
    pid = id_or_new(proposal_id, "memp", "proposal_id")
    one_of(memory_type, MEMORY_TYPES, "memory_type")
    text(content, "memory content")
    text(rationale, "rationale")
    encoded = tuple(_scope(s).encode() for s in scopes)
    if not encoded:
        raise InvalidValueError("a memory proposal needs at least one scope")
    scope = current_scope()
    rid = source_run_id if source_run_id is not None else scope.run_id
    if rid is not None:
        check_id(rid, "source_run_id")
    tracer = current_tracer()
    if tracer is not None:
        attrs = base_attributes(scope, A.KIND_MEMORY_PROPOSAL)
        attrs[A.MEMORY_PROPOSAL_ID] = pid
        attrs[A.MEMORY_PROPOSAL_MEMORY_TYPE] = memory_type
        attrs[A.MEMORY_PROPOSAL_CONTENT] = content
        put(attrs, A.MEMORY_PROPOSAL_SUMMARY, summary)
        attrs[A.MEMORY_PROPOSAL_SCOPES] = encoded
        put(attrs, A.MEMORY_PROPOSAL_SOURCE_RUN_ID, rid)
        attrs[A.MEMORY_PROPOSAL_RATIONALE] = rationale
        emit_record("otel_agent.memory_proposal", attrs, tracer=tracer)
    return pid
