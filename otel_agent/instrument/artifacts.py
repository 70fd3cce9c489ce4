"""Artifacts and their versions. Regenerating adds a version; nothing is ever replaced.

``create_artifact`` emits an ``otel_agent.artifact`` record and returns an ``Artifact`` handle whose
``add_version`` emits ``otel_agent.artifact_version`` records numbered 1, 2, 3… with a pointer to the previous
version. A version added from elsewhere (another process, a later run) uses ``add_artifact_version`` with the
artifact id; its number and previous id are then whatever the caller knows (SQL orders versions by time and
id).

The content is always emitted, with its SHA-256: an artifact version *is* the product's output, explicitly
handed over to be kept (content capture governs prompts and completions, not deliverables).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence

from . import attributes as A
from ._ids import check_id, check_ids, id_or_new
from ._misuse import Problems, report
from ._scope import base_attributes, current_scope, emit_record, put, put_misuse
from ._tracer import current_tracer
from ._validate import optional_count, text
from .errors import InvalidValueError

WELL_KNOWN_TYPES = ("markdown_report", "evidence_bundle")


def add_artifact_version(
    artifact_id: str,
    content: str,
    *,
    source_step_id: str | None = None,
    evidence_ids: Sequence[str] = (),
    version_id: str | None = None,
    number: int | None = None,
    previous_version_id: str | None = None,
    iteration: int | None = None,
) -> str:
    """Add a version to an existing artifact (by id). ``source_step_id`` defaults to the current step; use a
    label such as ``"manual"`` for versions no step produced. ``iteration``: the round this version is the
    candidate of (seed 001's candidate history; default: its step's). Returns the version id."""
    problems: Problems = []
    artifact_id = check_id(artifact_id, "artifact_id", problems)  # type: ignore[assignment]
    vid = id_or_new(version_id, "artv", "version_id", problems)
    if not isinstance(content, str):
        report(InvalidValueError("artifact content must be a string (serialise JSON bundles first)"), problems)
        content = None  # type: ignore[assignment]
    refs = check_ids(evidence_ids, "evidence_ids", problems)
    if number is not None and (isinstance(number, bool) or not isinstance(number, int) or number < 1):
        report(InvalidValueError(f"version number must be a positive int, got {number!r}"), problems)
        number = None
    iteration = optional_count(iteration, "iteration", problems)
    tracer = current_tracer()
    if tracer is not None:
        scope = current_scope()
        attrs = base_attributes(scope, A.KIND_ARTIFACT_VERSION)
        put(attrs, A.ARTIFACT_ID, artifact_id)
        attrs[A.ARTIFACT_VERSION_ID] = vid
        put(attrs, A.ARTIFACT_VERSION_NUMBER, number)
        put(attrs, A.ARTIFACT_VERSION_PREVIOUS_ID, previous_version_id)
        if content is not None:
            attrs[A.ARTIFACT_VERSION_CONTENT] = content
            attrs[A.ARTIFACT_VERSION_CONTENT_SHA256] = hashlib.sha256(content.encode("utf-8")).hexdigest()
        put(
            attrs,
            A.ARTIFACT_VERSION_SOURCE_STEP_ID,
            source_step_id if source_step_id is not None else scope.step_id,
        )
        put(attrs, A.ARTIFACT_VERSION_EVIDENCE_IDS, refs)
        put(attrs, A.ITERATION, iteration)
        put_misuse(attrs, problems)
        emit_record("otel_agent.artifact_version", attrs, tracer=tracer)
    return vid


class Artifact:
    """Handle on an artifact created here: keeps the version count and the latest version id."""

    __slots__ = ("_lock", "artifact_id", "artifact_type", "name", "run_id", "versions")

    def __init__(self, artifact_id: str, artifact_type: str, name: str, run_id: str | None) -> None:
        self.artifact_id = artifact_id
        self.artifact_type = artifact_type
        self.name = name
        self.run_id = run_id
        self.versions: list[str] = []
        self._lock = threading.Lock()

    @property
    def latest_version_id(self) -> str | None:
        return self.versions[-1] if self.versions else None

    def add_version(
        self,
        content: str,
        *,
        source_step_id: str | None = None,
        evidence_ids: Sequence[str] = (),
        version_id: str | None = None,
        iteration: int | None = None,
    ) -> str:
        """Add version ``len(versions) + 1``; returns its id."""
        with self._lock:
            vid = add_artifact_version(
                self.artifact_id,
                content,
                source_step_id=source_step_id,
                evidence_ids=evidence_ids,
                version_id=version_id,
                number=len(self.versions) + 1,
                previous_version_id=self.latest_version_id,
                iteration=iteration,
            )
            self.versions.append(vid)
        return vid


def create_artifact(
    name: str,
    *,
    artifact_type: str = "markdown_report",
    artifact_id: str | None = None,
    run_id: str | None = None,
) -> Artifact:
    """Create an artifact container (``markdown_report``, ``evidence_bundle`` or any other lowercase type) in
    the given run (default: the current run)."""
    problems: Problems = []
    name = text(name, "artifact name", problems)  # type: ignore[assignment]
    artifact_type = text(artifact_type, "artifact_type", problems)  # type: ignore[assignment]
    aid = id_or_new(artifact_id, "art", "artifact_id", problems)
    scope = current_scope()
    if run_id is not None:
        run_id = check_id(run_id, "run_id", problems)  # left out: the current run, as when not given
    rid = run_id if run_id is not None else scope.run_id
    tracer = current_tracer()
    if tracer is not None:
        attrs = base_attributes(scope, A.KIND_ARTIFACT)
        put(attrs, A.RUN_ID, rid)
        attrs[A.ARTIFACT_ID] = aid
        put(attrs, A.ARTIFACT_TYPE, artifact_type)
        put(attrs, A.ARTIFACT_NAME, name)
        put_misuse(attrs, problems)
        emit_record("otel_agent.artifact", attrs, tracer=tracer)
    return Artifact(aid, artifact_type, name, rid)
