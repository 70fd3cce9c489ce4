"""Commands: review, trust, receipts, lineage, export (issue 5). Heavy modules are imported inside command bodies
(see cli/main.py).

Writes (review, trust) go to the live receiver that holds the file (its ReviewService, found through
``<db>.receiver.json``, or ``--receiver``), else straight into the file. Reads go through ``run_sql``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from otel_agent.cli.options import UTC_TIME, db_option, reading_options, receiver_option, token_option
from otel_agent.cli.receipts import (
    ACK_WINDOW_S,
    ATTEMPTS_SQL,
    PROGRESS_WINDOW_S,
    RECEIPTS_SQL,
    RECOVERIES_SQL,
    STATES,
    VERIFICATION_WINDOW_S,
    receipt_params,
)
from otel_agent.config import DEFAULT_DB
from otel_agent.server.review_targets import KIND_ALIASES, all_decisions, kinds_accepting


def _client(url: str, token: str | None) -> Any:
    from otel_agent.query.api_client import ReceiverClient

    return ReceiverClient(url, token, timeout_s=60)


def _write_file(db: str, fn: Any) -> Any:
    """Run ``fn(con)`` in one transaction on the store file itself (no receiver holds it)."""
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


def submit_review(
    db: str,
    receiver: str | None,
    token: str | None,
    kind: str,
    target_id: str,
    decision: str,
    reviewer: str,
    reason: str | None,
) -> dict[str, Any]:
    """Record one review where the data is; returns the stored review (snake_case keys)."""
    from otel_agent.api.v1 import review_pb2
    from otel_agent.query.client import live_receiver
    from otel_agent.server.review_service import write_review

    url = receiver or live_receiver(db)
    if url:
        client = _client(url, token)
        doc = client.review(
            review_pb2.ReviewRequest(
                target_kind=kind, target_id=target_id, decision=decision, reviewer=reviewer, reason=reason or ""
            )
        )
        return {
            "review_id": doc.review_id,
            "target_kind": doc.target_kind,
            "target_id": doc.target_id,
            "decision": doc.decision,
            "reviewer": doc.reviewer,
            "reason": doc.reason or None,
            "reviewed_at": doc.reviewed_at,
            "principal": doc.principal or None,
            "target_snapshot_json": doc.target_snapshot_json,
            "via": client.url,
        }
    record = _write_file(db, lambda con: write_review(con, kind, target_id, decision, reviewer, reason))
    return {**record.as_dict(), "via": db}


def _review_command(verb: str) -> click.Command:
    kinds = kinds_accepting(verb)

    @click.command(verb)
    @click.argument("kind", type=click.Choice(kinds))
    @click.argument("record_id")
    @click.option("--reviewer", required=True, envvar="OTEL_AGENT_REVIEWER", show_envvar=True, help="Who decides.")
    @click.option("--reason", default=None, help="Why" + (" (the annotation itself)." if verb == "annotate" else "."))
    @db_option(writes=True)
    @receiver_option
    @token_option
    @click.option("--json", "as_json", is_flag=True, help="Print the stored review as JSON.")
    def command(
        kind: str,
        record_id: str,
        reviewer: str,
        reason: str | None,
        db: str | None,
        receiver: str | None,
        token: str | None,
        as_json: bool,
    ) -> None:
        if verb == "annotate" and not reason:
            raise click.UsageError("annotate needs --reason TEXT (the annotation)")
        stored = submit_review(db or DEFAULT_DB, receiver, token, kind, record_id, verb, reviewer, reason)
        if as_json:
            click.echo(json.dumps(stored, indent=2))
        else:
            click.echo(
                f"{stored['review_id']}: {stored['decision']} {stored['target_kind']} {stored['target_id']} "
                f"by {stored['reviewer']} at {stored['reviewed_at']} ({stored['via']})"
            )

    what = " or ".join(sorted({KIND_ALIASES[k].replace("_", " ") for k in kinds}))
    command.help = (
        f"{verb.capitalize()} a {what} (KIND RECORD_ID). Appends one row to the reviews table, with a copy of the "
        "record as it was; an unknown id is an error and writes nothing. Goes through the receiver holding "
        f"the file, if any. KIND: {', '.join(kinds)}."
    )
    return command


@click.group()
def review() -> None:
    """Human review of evidence records: approve, reject, annotate; acknowledge or resolve conflicts."""


for _verb in all_decisions():
    review.add_command(_review_command(_verb))


@click.command()
@click.argument("principal")
@click.argument("service_name")
@click.option("--revoke", is_flag=True, help="Withdraw the grant instead.")
@click.option("--by", "changed_by", required=True, envvar="OTEL_AGENT_REVIEWER", show_envvar=True, help="Who.")
@click.option("--reason", default=None, help="Why.")
@db_option(writes=True)
@receiver_option
@token_option
def trust(
    principal: str,
    service_name: str,
    revoke: bool,
    changed_by: str,
    reason: str | None,
    db: str | None,
    receiver: str | None,
    token: str | None,
) -> None:
    """Let an authenticated PRINCIPAL write handoff receipts as SERVICE_NAME ('*': any service).

    Without any grant, a principal is trusted only for the service of its own name. A principal with grants is
    trusted exactly for the services granted (the latest grant or revocation of each pair counts). Receipt
    transitions from untrusted writers are kept and make their operation 'uncertain'.
    """
    from otel_agent.api.v1 import review_pb2
    from otel_agent.query.client import live_receiver
    from otel_agent.server.review_service import write_trust

    db = db or DEFAULT_DB
    url = receiver or live_receiver(db)
    if url:
        doc = _client(url, token).set_writer_trust(
            review_pb2.WriterTrustRequest(
                principal=principal,
                service_name=service_name,
                trusted=not revoke,
                changed_by=changed_by,
                reason=reason or "",
            )
        )
        change_id, changed_at = doc.change_id, doc.changed_at
    else:
        change = _write_file(db, lambda con: write_trust(con, principal, service_name, not revoke, changed_by, reason))
        change_id, changed_at = change.change_id, change.changed_at
    verb = "revoked" if revoke else "granted"
    click.echo(f"{change_id}: {verb} {principal} -> {service_name} by {changed_by} at {changed_at}")


WINDOW = click.FloatRange(min=0, min_open=True)


@click.command()
@click.option("--state", type=click.Choice(STATES), default=None, help="Only operations in this state.")
@click.option(
    "--at", "as_of", type=UTC_TIME, default=None, help="Evaluate as of this UTC time (e.g. 2026-01-01T10:00:00) [now]."
)
@click.option("--ack-window", type=WINDOW, default=ACK_WINDOW_S, show_default=True, help="Seconds to acknowledge.")
@click.option(
    "--progress-window", type=WINDOW, default=PROGRESS_WINDOW_S, show_default=True, help="Seconds between progress."
)
@click.option(
    "--verification-window",
    type=WINDOW,
    default=VERIFICATION_WINDOW_S,
    show_default=True,
    help="Seconds to verify a completion.",
)
@click.option("--attempts", is_flag=True, help="One row per handoff attempt instead of per operation.")
@click.option(
    "--recoveries", is_flag=True, help="The recoveries of each operation: authority, limits, whether one was exceeded."
)
@reading_options
def receipts(
    state: str | None,
    as_of: Any,
    ack_window: float,
    progress_window: float,
    verification_window: float,
    attempts: bool,
    recoveries: bool,
    db: tuple[str, ...],
    receiver: str | None,
    token: str | None,
    fmt: str,
    max_rows: int,
) -> None:
    """Handoff receipts: per operation, whether responsibility moved and the promised result was observed.

    States: verified, orphaned (not accepted within the acknowledgement window), working, waiting (a named
    dependency, an acknowledgement or a verification is pending), stuck (no progress within the window),
    outcome_failed, uncertain (records disagree or a writer is not trusted). Problems first.

    --recoveries: each recovery of an operation (oi.recover) with its authority and limits, whether a limit was
    exceeded, and the operation's state (--state filters on it).
    """
    from otel_agent.cli.render import emit
    from otel_agent.query.client import run_sql

    at = None if as_of is None else as_of.isoformat(sep=" ")
    params = receipt_params(at, ack_window, progress_window, verification_window, state)
    if recoveries:
        params = [at, *params]  # the recoveries' own as-of time first
    result = run_sql(
        RECOVERIES_SQL if recoveries else ATTEMPTS_SQL if attempts else RECEIPTS_SQL,
        list(db) or [DEFAULT_DB],
        receiver=receiver,
        token=token,
        params=params,
        max_rows=max_rows,
    )
    emit(result, fmt)


# The whole excerpt: --format table cuts long text for the terminal, csv and json never do.
LINEAGE_SQL = """
SELECT claim_id, claim_status, citation_id, citation_status, evidence_id, evidence_status, supports,
       excerpt, source_id, source_url, source_provider, source_retrieved_at
FROM claim_lineage_of(?) ORDER BY citation_id NULLS FIRST, evidence_id
"""


@click.command()
@click.argument("claim_id")
@reading_options
def lineage(claim_id: str, db: tuple[str, ...], receiver: str | None, token: str | None, fmt: str,
            max_rows: int) -> None:  # fmt: skip
    """Claim → citation → evidence item → source, one row per path, with statuses."""
    from otel_agent.cli.render import emit
    from otel_agent.errors import NotFoundError
    from otel_agent.query.client import run_sql

    result = run_sql(
        LINEAGE_SQL, list(db) or [DEFAULT_DB], receiver=receiver, token=token, params=[claim_id], max_rows=max_rows
    )
    if not result.rows:
        raise NotFoundError(f"no claim with id {claim_id!r} (list them with: otel-agent claims)")
    emit(result, fmt)


@click.group()
def export() -> None:
    """Export an artifact version as a Markdown report, or a run's evidence as a JSON bundle."""


def _emit(text: str, out: str | None) -> None:
    if out:
        Path(out).write_text(text, encoding="utf-8")
        click.echo(f"wrote {out}", err=True)
    else:
        click.echo(text, nl=False, color=True)  # data: escape sequences in it are kept


@export.command("report")
@click.argument("artifact_or_version_id")
@click.option(
    "--version",
    "version",
    type=click.IntRange(min=1),
    default=None,
    help="Version number [latest approved, else latest].",
)
@click.option(
    "--citations",
    type=click.Choice(["inline", "numbered"]),
    default="inline",
    show_default=True,
    help="inline: evidence ids after each claim ([ev_123] [ev_124]); numbered: [1] [2] and a References list.",
)
@click.option(
    "--out", "-o", type=click.Path(dir_okay=False), default=None, help="Write to this file instead of standard output."
)
@db_option(multiple=True)
@receiver_option
@token_option
def export_report(
    artifact_or_version_id: str,
    version: int | None,
    citations: str,
    out: str | None,
    db: tuple[str, ...],
    receiver: str | None,
    token: str | None,
) -> None:
    """The Markdown report of an artifact version, with citations injected after each claim."""
    from otel_agent.export import Reader, build_report

    reader = Reader(list(db) or [DEFAULT_DB], receiver, token)
    report = build_report(reader, artifact_or_version_id, version, citations)  # type: ignore[arg-type]
    _emit(report.markdown, out)


@export.command("bundle")
@click.argument("run_id")
@click.option(
    "--out", "-o", type=click.Path(dir_okay=False), default=None, help="Write to this file instead of standard output."
)
@db_option(multiple=True)
@receiver_option
@token_option
def export_bundle(run_id: str, out: str | None, db: tuple[str, ...], receiver: str | None, token: str | None) -> None:
    """The JSON evidence bundle of a run (runId, sources, evidence, claims, citations, conflicts, reviews,
    artifacts)."""
    from otel_agent.export import Reader, build_bundle

    bundle = build_bundle(Reader(list(db) or [DEFAULT_DB], receiver, token), run_id)
    _emit(json.dumps(bundle, indent=2, ensure_ascii=False) + "\n", out)


COMMANDS: list[click.Command] = [review, trust, receipts, lineage, export]
