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

from otel_agent.cli.options import db_option, format_option, receiver_option, token_option

DEFAULT_DB = "./otel_agent.duckdb"
RECORD_VERBS = ("approve", "reject", "annotate")
CONFLICT_VERBS = ("acknowledge", "resolve")
STATES = ("verified", "orphaned", "working", "waiting", "stuck", "outcome_failed", "uncertain")
KINDS = ("evidence_item", "evidence", "claim", "artifact_version", "version", "memory_proposal", "memory", "conflict")


def _fail(exc: Exception) -> click.ClickException:
    return click.ClickException(str(exc))


def _post(url: str, path: str, body: dict[str, Any], token: str | None) -> dict[str, Any]:
    """POST a protobuf-JSON body to the receiver's API; the answer as a dict, errors as exceptions."""
    import requests

    from otel_agent.errors import NotFoundError, OtelAgentError
    from otel_agent.query.client import ReceiverUnreachableError

    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        resp = requests.post(url.rstrip("/") + path, data=json.dumps(body), headers=headers, timeout=60)
    except requests.RequestException as exc:
        raise ReceiverUnreachableError(f"receiver {url} did not answer: {exc}") from exc
    try:
        doc = resp.json() if resp.content else {}
    except ValueError:
        doc = {"message": resp.text}
    if resp.status_code == 404:
        raise NotFoundError(doc.get("message", resp.text))
    if resp.status_code != 200:
        raise OtelAgentError(f"receiver answered {resp.status_code}: {doc.get('message', resp.text)}")
    return doc


def _write_file(db: str, fn: Any) -> Any:
    """Run ``fn(con)`` in one transaction on the store file itself (no receiver holds it)."""
    import duckdb

    from otel_agent.query.client import StoreNotFoundError
    from otel_agent.store.database import open_store

    if not Path(db).exists():
        raise StoreNotFoundError(f"no DuckDB file at {db}")
    try:
        con = open_store(db)
    except duckdb.IOException as exc:
        raise click.ClickException(
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
    from otel_agent.query.client import live_receiver
    from otel_agent.server.review_service import write_review

    url = receiver or live_receiver(db)
    if url:
        doc = _post(
            url,
            "/v1/review",
            {"targetKind": kind, "targetId": target_id, "decision": decision, "reviewer": reviewer, "reason": reason},
            token,
        )
        return {
            "review_id": doc.get("reviewId"),
            "target_kind": doc.get("targetKind"),
            "target_id": doc.get("targetId"),
            "decision": doc.get("decision"),
            "reviewer": doc.get("reviewer"),
            "reason": doc.get("reason") or None,
            "reviewed_at": doc.get("reviewedAt"),
            "principal": doc.get("principal") or None,
            "target_snapshot_json": doc.get("targetSnapshotJson"),
            "via": url,
        }
    record = _write_file(db, lambda con: write_review(con, kind, target_id, decision, reviewer, reason))
    return {**record.as_dict(), "via": db}


def _review_command(verb: str) -> click.Command:
    conflict_only = verb in CONFLICT_VERBS
    kinds = ("conflict",) if conflict_only else KINDS

    @click.command(verb)
    @click.argument("kind", type=click.Choice(kinds))
    @click.argument("record_id")
    @click.option("--reviewer", required=True, envvar="OTEL_AGENT_REVIEWER", show_envvar=True, help="Who decides.")
    @click.option("--reason", default=None, help="Why" + (" (the annotation itself)." if verb == "annotate" else "."))
    @db_option()
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
        from otel_agent.errors import OtelAgentError

        if verb == "annotate" and not reason:
            raise click.UsageError("annotate needs --reason TEXT (the annotation)")
        try:
            stored = submit_review(db or DEFAULT_DB, receiver, token, kind, record_id, verb, reviewer, reason)
        except OtelAgentError as exc:
            raise _fail(exc) from exc
        if as_json:
            click.echo(json.dumps(stored, indent=2))
        else:
            click.echo(
                f"{stored['review_id']}: {stored['decision']} {stored['target_kind']} {stored['target_id']} "
                f"by {stored['reviewer']} at {stored['reviewed_at']} ({stored['via']})"
            )

    what = "a conflict" if conflict_only else "an evidence item, claim, artifact version or memory proposal"
    command.help = (
        f"{verb.capitalize()} {what} (KIND RECORD_ID). Appends one row to the reviews table, with a copy of the "
        "record as it was; an unknown id is an error and writes nothing. Goes through the receiver holding "
        "the file, if any."
    )
    return command


@click.group()
def review() -> None:
    """Human review of evidence records: approve, reject, annotate; acknowledge or resolve conflicts."""


for _verb in (*RECORD_VERBS, *CONFLICT_VERBS):
    review.add_command(_review_command(_verb))


@click.command()
@click.argument("principal")
@click.argument("service_name")
@click.option("--revoke", is_flag=True, help="Withdraw the grant instead.")
@click.option("--by", "changed_by", required=True, envvar="OTEL_AGENT_REVIEWER", show_envvar=True, help="Who.")
@click.option("--reason", default=None, help="Why.")
@db_option()
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
    from otel_agent.errors import OtelAgentError
    from otel_agent.query.client import live_receiver
    from otel_agent.server.review_service import write_trust

    db = db or DEFAULT_DB
    try:
        url = receiver or live_receiver(db)
        if url:
            body = {
                "principal": principal,
                "serviceName": service_name,
                "trusted": not revoke,
                "changedBy": changed_by,
                "reason": reason,
            }
            doc = _post(url, "/v1/writer_trust", body, token)
            change_id, changed_at = doc.get("changeId"), doc.get("changedAt")
        else:
            change = _write_file(
                db, lambda con: write_trust(con, principal, service_name, not revoke, changed_by, reason)
            )
            change_id, changed_at = change.change_id, change.changed_at
    except OtelAgentError as exc:
        raise _fail(exc) from exc
    verb = "revoked" if revoke else "granted"
    click.echo(f"{change_id}: {verb} {principal} -> {service_name} by {changed_by} at {changed_at}")


RECEIPTS_SQL = """
SELECT operation_id, state, why, waiting_for, ack_latency_s, attempts, current_handoff_id AS handoff_id,
       expected_artifact, delegator, acceptors, last_transition_at
FROM receipt_state_at(
    coalesce(CAST(? AS TIMESTAMP), timezone('UTC', now())),
    ack_window := to_microseconds(CAST(? * 1e6 AS BIGINT)),
    progress_window := to_microseconds(CAST(? * 1e6 AS BIGINT)),
    verification_window := to_microseconds(CAST(? * 1e6 AS BIGINT)))
WHERE ? IS NULL OR state = ?
ORDER BY CASE state WHEN 'uncertain' THEN 0 WHEN 'orphaned' THEN 1 WHEN 'stuck' THEN 2 WHEN 'outcome_failed' THEN 3
                    WHEN 'waiting' THEN 4 WHEN 'working' THEN 5 ELSE 6 END,
         last_transition_at DESC, operation_id
"""

ATTEMPTS_SQL = """
SELECT operation_id, handoff_id, state, why, waiting_for, ack_latency_s, expected_artifact, delegator, acceptors,
       delegated_at, last_transition_at
FROM receipt_attempts_at(
    coalesce(CAST(? AS TIMESTAMP), timezone('UTC', now())),
    ack_window := to_microseconds(CAST(? * 1e6 AS BIGINT)),
    progress_window := to_microseconds(CAST(? * 1e6 AS BIGINT)),
    verification_window := to_microseconds(CAST(? * 1e6 AS BIGINT)))
WHERE ? IS NULL OR state = ?
ORDER BY operation_id, delegated_at NULLS FIRST, handoff_id
"""


@click.command()
@click.option("--state", type=click.Choice(STATES), default=None, help="Only operations in this state.")
@click.option("--at", "as_of", default=None, help="Evaluate as of this UTC time (e.g. 2026-01-01T10:00:00) [now].")
@click.option("--ack-window", type=float, default=120.0, show_default=True, help="Seconds to acknowledge.")
@click.option("--progress-window", type=float, default=900.0, show_default=True, help="Seconds between progress.")
@click.option(
    "--verification-window", type=float, default=900.0, show_default=True, help="Seconds to verify a completion."
)
@click.option("--attempts", is_flag=True, help="One row per handoff attempt instead of per operation.")
@db_option(multiple=True)
@receiver_option
@token_option
@format_option
@click.option("--max-rows", type=int, default=10_000, show_default=True, help="Row cap.")
def receipts(
    state: str | None,
    as_of: str | None,
    ack_window: float,
    progress_window: float,
    verification_window: float,
    attempts: bool,
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
    """
    from otel_agent.cli.render import render
    from otel_agent.errors import OtelAgentError
    from otel_agent.query.client import run_sql

    params = [as_of, ack_window, progress_window, verification_window, state, state]
    try:
        result = run_sql(
            ATTEMPTS_SQL if attempts else RECEIPTS_SQL,
            list(db) or [DEFAULT_DB],
            receiver=receiver,
            token=token,
            params=params,
            max_rows=max_rows,
        )
    except OtelAgentError as exc:
        raise _fail(exc) from exc
    click.echo(render(result, fmt))


LINEAGE_SQL = """
SELECT claim_id, claim_status, citation_id, citation_status, evidence_id, evidence_status, supports,
       left(excerpt, 60) AS excerpt, source_id, source_url, source_provider, source_retrieved_at
FROM claim_lineage_of(?) ORDER BY citation_id NULLS FIRST, evidence_id
"""


@click.command()
@click.argument("claim_id")
@db_option(multiple=True)
@receiver_option
@token_option
@format_option
def lineage(claim_id: str, db: tuple[str, ...], receiver: str | None, token: str | None, fmt: str) -> None:
    """Claim → citation → evidence item → source, one row per path, with statuses."""
    from otel_agent.cli.render import render
    from otel_agent.errors import OtelAgentError
    from otel_agent.query.client import run_sql

    try:
        result = run_sql(LINEAGE_SQL, list(db) or [DEFAULT_DB], receiver=receiver, token=token, params=[claim_id])
    except OtelAgentError as exc:
        raise _fail(exc) from exc
    if not result.rows:
        raise click.ClickException(f"no claim with id {claim_id!r}")
    click.echo(render(result, fmt))


@click.group()
def export() -> None:
    """Export an artifact version as a Markdown report, or a run's evidence as a JSON bundle."""


def _emit(text: str, out: str | None) -> None:
    if out:
        Path(out).write_text(text, encoding="utf-8")
        click.echo(f"wrote {out}", err=True)
    else:
        click.echo(text, nl=False)


@export.command("report")
@click.argument("artifact_or_version_id")
@click.option("--version", "version", type=int, default=None, help="Version number [latest approved, else latest].")
@click.option("--out", "-o", default=None, help="Write to this file instead of standard output.")
@db_option(multiple=True)
@receiver_option
@token_option
def export_report(
    artifact_or_version_id: str,
    version: int | None,
    out: str | None,
    db: tuple[str, ...],
    receiver: str | None,
    token: str | None,
) -> None:
    """The Markdown report of an artifact version, with citations injected after each claim."""
    from otel_agent.errors import OtelAgentError
    from otel_agent.export import Reader, build_report

    try:
        report = build_report(Reader(list(db) or [DEFAULT_DB], receiver, token), artifact_or_version_id, version)
    except OtelAgentError as exc:
        raise _fail(exc) from exc
    _emit(report.markdown, out)


@export.command("bundle")
@click.argument("run_id")
@click.option("--out", "-o", default=None, help="Write to this file instead of standard output.")
@db_option(multiple=True)
@receiver_option
@token_option
def export_bundle(run_id: str, out: str | None, db: tuple[str, ...], receiver: str | None, token: str | None) -> None:
    """The JSON evidence bundle of a run (runId, sources, evidence, claims, citations, conflicts, reviews,
    artifacts)."""
    from otel_agent.errors import OtelAgentError
    from otel_agent.export import Reader, build_bundle

    try:
        bundle = build_bundle(Reader(list(db) or [DEFAULT_DB], receiver, token), run_id)
    except OtelAgentError as exc:
        raise _fail(exc) from exc
    _emit(json.dumps(bundle, indent=2, ensure_ascii=False) + "\n", out)


COMMANDS: list[click.Command] = [review, trust, receipts, lineage, export]
