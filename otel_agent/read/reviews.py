"""Human review and writer trust, the read layer's writes: the append-only product writes of
proto/otel_agent/api/v1/review.proto, whichever face asks (the review API, the console, the CLI, MCP).

``write_review`` / ``write_trust`` take a DuckDB connection inside a transaction: ``otel-agent review`` runs them
on the file directly when no receiver holds it. The receiver prepares a review (validation and the copy of the
record) on a read cursor and runs only the INSERT on its writer thread (``Writer.run_write``). Either way one row
is appended (to ``reviews`` or ``trusted_writers``); nothing is ever updated or deleted. A review stores a copy of
the reviewed record as its view shows it just before the review.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from otel_agent.errors import InvalidPayloadError, NotFoundError
from otel_agent.read.review_targets import (  # the one table of kinds
    TARGETS,
    VERDICT_REQUIRES,
    canonical_kind,
    decisions_for,
)
from otel_agent.store.database import store_cursor

if TYPE_CHECKING:
    import duckdb

MAX_TEXT = 4096


def checked_text(value: str | None, what: str, *, required: bool) -> str | None:
    """A person's text for a decision (reviews, trust changes, alert decisions): stripped, required or None when
    empty, at most ``MAX_TEXT`` characters (else ``InvalidPayloadError``)."""
    value = (value or "").strip()
    if not value:
        if required:
            raise InvalidPayloadError(f"{what} is required")
        return None
    if len(value) > MAX_TEXT:
        raise InvalidPayloadError(f"{what} is longer than {MAX_TEXT} characters")
    return value


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


def _new_id(prefix: str) -> str:
    """Time-ordered: ``<prefix>_<ns since epoch, hex><8 random hex>``."""
    return f"{prefix}_{time.time_ns():016x}{os.urandom(4).hex()}"


def _iso(ts: _dt.datetime) -> str:
    return ts.astimezone(_dt.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


@dataclass
class ReviewRecord:
    """One row of ``reviews``, as the API returns it."""

    review_id: str
    target_kind: str
    target_id: str
    decision: str
    reviewer: str
    reason: str | None
    reviewed_at: str
    principal: str | None
    target_snapshot_json: str

    def as_dict(self) -> dict[str, Any]:
        """The record's fields by name (the API reply's fields)."""
        return asdict(self)


def snapshot(con: duckdb.DuckDBPyConnection, kind: str, target_id: str) -> str | None:
    """The record's row in its view as a JSON object, or None when there is no such record."""
    view, column = TARGETS[kind]
    rows = con.execute(f"SELECT to_json(t)::VARCHAR FROM {view} t WHERE {column} = ? LIMIT 1", [target_id]).fetchall()
    return rows[0][0] if rows else None


def prepare_review(
    con: duckdb.DuckDBPyConnection,
    target_kind: str,
    target_id: str,
    decision: str,
    reviewer: str,
    reason: str | None = None,
    *,
    principal: str | None = None,
    now: _dt.datetime | None = None,
) -> ReviewRecord:
    """Validate and copy the target record (a read: any connection or cursor will do). Raises
    ``InvalidPayloadError`` for an invalid kind, decision or reviewer and ``NotFoundError`` for an unknown id."""
    kind = canonical_kind(target_kind)
    target = checked_text(target_id, "target id", required=True)
    verdict = (decision or "").strip().lower()
    if verdict not in decisions_for(kind):
        raise InvalidPayloadError(
            f"a {kind} review decision is one of {list(decisions_for(kind))}, not {(decision or '')[:64]!r}"
        )
    who = checked_text(reviewer, "reviewer", required=True)
    why = checked_text(reason, "reason", required=False)
    copy = snapshot(con, kind, target)  # type: ignore[arg-type]
    if copy is None:
        raise NotFoundError(f"no {kind} with id {target!r}: nothing was written")
    if kind in VERDICT_REQUIRES:
        column, required, governed, rule = VERDICT_REQUIRES[kind]
        state = json.loads(copy).get(column)
        if verdict in governed and state != required:
            raise InvalidPayloadError(f"{rule}; {kind} {target!r} has {column} {state!r}: nothing was written")
    reviewed_at = now or _now()
    return ReviewRecord(_new_id("rev"), kind, target, verdict, who, why, _iso(reviewed_at), principal, copy)  # type: ignore[arg-type]


def insert_review(con: duckdb.DuckDBPyConnection, record: ReviewRecord) -> ReviewRecord:
    """Append a prepared review to ``reviews``."""
    con.execute(
        "INSERT INTO reviews (review_id, target_kind, target_id, decision, reviewer, reason, reviewed_at, principal,"
        " target_snapshot) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            record.review_id,
            record.target_kind,
            record.target_id,
            record.decision,
            record.reviewer,
            record.reason,
            _dt.datetime.fromisoformat(record.reviewed_at.replace("Z", "+00:00")),
            record.principal,
            record.target_snapshot_json,
        ],
    ).fetchall()
    return record


def write_review(con: duckdb.DuckDBPyConnection, *args: Any, **kwargs: Any) -> ReviewRecord:
    """``prepare_review`` (its arguments, one signature) then ``insert_review`` on the same connection: validate,
    copy the target record, append one row to ``reviews`` (nothing is written on an error)."""
    return insert_review(con, prepare_review(con, *args, **kwargs))


@dataclass
class TrustChange:
    """One row of ``trusted_writers``: a grant or revocation, as written."""

    change_id: str
    principal: str
    service_name: str
    trusted: bool
    changed_by: str
    reason: str | None
    changed_at: str


def write_trust(
    con: duckdb.DuckDBPyConnection,
    principal: str,
    service_name: str,
    trusted: bool,
    changed_by: str,
    reason: str | None = None,
    *,
    now: _dt.datetime | None = None,
) -> TrustChange:
    """Append a grant (``trusted``) or revocation of ``principal`` writing receipts as ``service_name``."""
    who = checked_text(principal, "principal", required=True)
    service = checked_text(service_name, "service name", required=True)
    by = checked_text(changed_by, "changed_by", required=True)
    why = checked_text(reason, "reason", required=False)
    changed_at = now or _now()
    change = TrustChange(_new_id("trust"), who, service, bool(trusted), by, why, _iso(changed_at))  # type: ignore[arg-type]
    con.execute(
        "INSERT INTO trusted_writers (change_id, principal, service_name, trusted, changed_by, reason, changed_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        [change.change_id, who, service, bool(trusted), by, why, changed_at],
    ).fetchall()
    return change


class Reviews:
    """Reviews and trust changes of a live store, written through its writer: the lookup on a read cursor
    beside the writer, only the INSERT on the writer's thread (``writer.run_write``), so ingestion is not held
    up. ``writer``: an object with ``con`` (the store's connection) and ``run_write(fn)``."""

    def __init__(self, writer: Any) -> None:
        self.writer = writer

    def submit(
        self, target_kind: str, target_id: str, decision: str, reviewer: str, reason: str | None, principal: str | None
    ) -> ReviewRecord:
        """Append one review written by an already authenticated ``principal``."""
        # The lookup reads the derived views (on a large store, a second or so): on a cursor, beside the writer.
        with store_cursor(self.writer.con) as cursor:
            record = prepare_review(cursor, target_kind, target_id, decision, reviewer, reason, principal=principal)
        self.writer.run_write(lambda con: insert_review(con, record))
        return record

    def set_trust(
        self, principal: str, service_name: str, trusted: bool, changed_by: str, reason: str | None
    ) -> TrustChange:
        """Append a grant or revocation through the writer."""
        return self.writer.run_write(  # type: ignore[no-any-return]
            lambda con: write_trust(con, principal, service_name, trusted, changed_by, reason)
        )


def _write_file(db: str, fn: Any) -> Any:
    """Run ``fn(con)`` in one transaction on the store file itself (no receiver holds it)."""
    from pathlib import Path

    import duckdb

    from otel_agent.errors import StoreHeldError
    from otel_agent.query.client import StoreNotFoundError
    from otel_agent.store.database import open_store

    if not Path(db).exists():
        raise StoreNotFoundError(f"no DuckDB file at {db}")
    try:
        con = open_store(db)
    except duckdb.IOException as exc:
        raise StoreHeldError(
            f"cannot open {db} for writing ({exc}); if a receiver holds it, pass --receiver URL"
        ) from exc
    try:
        con.execute("BEGIN")
        result = fn(con)
        con.execute("COMMIT")
        return result
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        con.close()


def review_where(
    where: Any, kind: str, target_id: str, decision: str, reviewer: str, reason: str | None
) -> dict[str, Any]:
    """Record one review where the data is (``read.stores.Where``): through the receiver named or holding the
    file (its ReviewService, as its authenticated principal), else into the file itself. Returns the stored
    review (snake_case keys) and ``via`` (the receiver's address or the file)."""
    from otel_agent.read.stores import receiver_of

    url = receiver_of(where)
    if url:
        from otel_agent.api.v1 import review_pb2
        from otel_agent.query.api_client import ReceiverClient

        client = ReceiverClient(url, where.token, timeout_s=60)
        request = review_pb2.ReviewRequest(
            target_kind=kind, target_id=target_id, decision=decision, reviewer=reviewer, reason=reason or ""
        )
        doc = client.review(request)
        return {
            "review_id": doc.review_id, "target_kind": doc.target_kind, "target_id": doc.target_id,
            "decision": doc.decision, "reviewer": doc.reviewer, "reason": doc.reason or None,
            "reviewed_at": doc.reviewed_at, "principal": doc.principal or None,
            "target_snapshot_json": doc.target_snapshot_json, "via": client.url,
        }  # fmt: skip
    db = where.files[0]
    record = _write_file(db, lambda con: write_review(con, kind, target_id, decision, reviewer, reason))
    return {**record.as_dict(), "via": db}


def trust_where(
    where: Any, principal: str, service_name: str, trusted: bool, changed_by: str, reason: str | None
) -> TrustChange:
    """Append a grant or revocation where the data is (as ``review_where``)."""
    from otel_agent.read.stores import receiver_of

    url = receiver_of(where)
    if url:
        from otel_agent.api.v1 import review_pb2
        from otel_agent.query.api_client import ReceiverClient

        doc = ReceiverClient(url, where.token, timeout_s=60).set_writer_trust(
            review_pb2.WriterTrustRequest(
                principal=principal, service_name=service_name, trusted=trusted, changed_by=changed_by,
                reason=reason or "",
            )
        )  # fmt: skip
        return TrustChange(doc.change_id, principal, service_name, trusted, changed_by, reason, doc.changed_at)
    db = where.files[0]
    return _write_file(db, lambda con: write_trust(con, principal, service_name, trusted, changed_by, reason))  # type: ignore[no-any-return]
