"""Commands: review, trust, receipts, lineage (issue 5). Heavy modules are imported inside command bodies (see
cli/main.py).

Writes (review, trust) go to the live receiver that holds the file (its ReviewService, found through
``<db>.receiver.json``, or ``--receiver``), else straight into the file (``read.reviews.review_where``). Reads go
through the read layer (``read.receipts``, ``read.evidence``).
"""

from __future__ import annotations

import json
from typing import Any

import click

from otel_agent.config import DEFAULT_DB
from otel_agent.options import UTC_TIME, db_option, reading_options, receiver_option, token_option
from otel_agent.read.receipts import ACK_WINDOW_S, PROGRESS_WINDOW_S, STATES, VERIFICATION_WINDOW_S
from otel_agent.read.review_targets import KIND_ALIASES, all_decisions, kinds_accepting
from otel_agent.read.stores import Where


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
        from otel_agent.read.reviews import review_where

        where = Where((db or DEFAULT_DB,), receiver, token)
        stored = review_where(where, kind, record_id, verb, reviewer, reason)
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
    from otel_agent.read.reviews import trust_where

    change = trust_where(Where((db or DEFAULT_DB,), receiver, token), principal, service_name, not revoke, changed_by,
                         reason)  # fmt: skip
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
    where: Where,
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
    from otel_agent.read.receipts import Windows, receipts_table
    from otel_agent.read.stores import open_source

    at = None if as_of is None else as_of.isoformat(sep=" ")
    kind = "recoveries" if recoveries else "attempts" if attempts else "operations"
    windows = Windows(ack_window, progress_window, verification_window)
    with open_source(where) as src:
        result = receipts_table(src, kind=kind, as_of=at, windows=windows, state=state, max_rows=max_rows)
    emit(result, fmt)


@click.command()
@click.argument("claim_id")
@reading_options
def lineage(claim_id: str, where: Where, fmt: str, max_rows: int) -> None:
    """Claim → citation → evidence item → source, one row per path, with statuses."""
    from otel_agent.cli.render import emit
    from otel_agent.errors import NotFoundError
    from otel_agent.read.evidence import lineage_table
    from otel_agent.read.stores import open_source

    with open_source(where) as src:
        result = lineage_table(src, claim_id, max_rows)
    if not result.rows:
        raise NotFoundError(f"no claim with id {claim_id!r} (list them with: otel-agent claims)")
    emit(result, fmt)


COMMANDS: list[click.Command] = [review, trust, receipts, lineage]
