"""Memory write proposals. The helpers never write memory: an agent proposes, a human reviews (issue 5 derives
``memory_items`` from approved proposals only).

Scopes are emitted as one string array of ``type:ref`` pairs (``["project:proj_research",
"flow:deep_research"]``), which SQL splits on the first ``:``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from . import attributes as A
from ._ids import check_id, id_or_new
from ._misuse import Problems, report
from ._scope import base_attributes, current_scope, emit_record, put, put_misuse
from ._tracer import current_tracer
from ._validate import one_of, text
from .errors import InvalidValueError

MEMORY_TYPES = ("procedural", "episodic", "semantic")
SCOPE_TYPES = ("organization", "user", "project", "flow", "skill", "session", "run")


@dataclass(frozen=True, slots=True)
class MemoryScope:
    """One scope a memory applies to, e.g. ``MemoryScope("flow", "deep_research")``; its type is one of seed
    000's scopes (``SCOPE_TYPES``: organization, user, project, flow, skill, session, run).

    Checked when it is made, like any helper argument: an unknown type (``MemoryScope("team", …)``) or an empty
    ref is a misuse, logged once per call site (raised in strict mode), and the scope is kept as given;
    ``propose_memory`` then leaves it out of the proposal and marks the proposal's span (``otel_agent.misuse``),
    where the ``data_quality`` view lists it."""

    type: str
    ref: str

    def __post_init__(self) -> None:
        _check_scope(self.type, self.ref, None, "kept; a memory proposal leaves it out")

    def encode(self) -> str:
        return f"{self.type}:{self.ref}"


ScopeLike = MemoryScope | tuple[str, str] | Mapping[str, str]


def _scope(value: ScopeLike, problems: Problems) -> str | None:
    """The encoded scope, or None (reported) when it is not a valid one."""
    if isinstance(value, MemoryScope):
        kind, ref = value.type, value.ref
    elif isinstance(value, Mapping):
        kind, ref = value.get("type", ""), value.get("ref", "")
    elif isinstance(value, tuple) and len(value) == 2:
        kind, ref = value
    else:
        report(
            InvalidValueError(f"a scope is MemoryScope, (type, ref) or {{'type':..,'ref':..}}, got {value!r}"),
            problems,
        )
        return None
    if not _check_scope(kind, ref, problems):
        return None
    return f"{kind}:{ref}"


def _check_scope(kind: object, ref: object, problems: Problems | None, instead: str = "left out") -> bool:
    """Whether ``kind`` is a known scope type and ``ref`` a non-empty string; a problem is reported (``report``:
    logged and added to ``problems``, raised in strict mode) saying what is done ``instead``."""
    if not (isinstance(kind, str) and kind in SCOPE_TYPES):
        report(InvalidValueError(f"scope type must be one of {list(SCOPE_TYPES)}, got {kind!r}"), problems, instead)
        return False
    if not (isinstance(ref, str) and ref):
        report(InvalidValueError(f"scope ref must be a non-empty string, got {ref!r}"), problems, instead)
        return False
    return True


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
    problems: Problems = []
    pid = id_or_new(proposal_id, "memp", "proposal_id", problems)
    memory_type = one_of(memory_type, MEMORY_TYPES, "memory_type", problems)  # type: ignore[assignment]
    content = text(content, "memory content", problems)  # type: ignore[assignment]
    rationale = text(rationale, "rationale", problems)  # type: ignore[assignment]
    if isinstance(scopes, str | bytes) or not hasattr(scopes, "__iter__"):
        report(InvalidValueError(f"scopes must be a sequence of scopes, got {scopes!r}"), problems)
        scopes = ()
    encoded = tuple(e for e in (_scope(s, problems) for s in scopes) if e is not None)
    if not encoded:
        report(InvalidValueError("a memory proposal needs at least one scope"), problems, "recorded without")
    scope = current_scope()
    if source_run_id is not None:
        source_run_id = check_id(source_run_id, "source_run_id", problems)  # left out: the current run
    rid = source_run_id if source_run_id is not None else scope.run_id
    tracer = current_tracer()
    if tracer is not None:
        attrs = base_attributes(scope, A.KIND_MEMORY_PROPOSAL)
        attrs[A.MEMORY_PROPOSAL_ID] = pid
        put(attrs, A.MEMORY_PROPOSAL_MEMORY_TYPE, memory_type)
        put(attrs, A.MEMORY_PROPOSAL_CONTENT, content)
        put(attrs, A.MEMORY_PROPOSAL_SUMMARY, summary)
        put(attrs, A.MEMORY_PROPOSAL_SCOPES, encoded)
        put(attrs, A.MEMORY_PROPOSAL_SOURCE_RUN_ID, rid)
        put(attrs, A.MEMORY_PROPOSAL_RATIONALE, rationale)
        put_misuse(attrs, problems)
        emit_record("otel_agent.memory_proposal", attrs, tracer=tracer)
    return pid
