"""Commands: ``otel-agent alerts`` (the alerts and their state; ``--history``, ``--deliveries``) and its decisions
``alerts ack | silence | unsilence`` (issue 36). Reads go through the read layer (``read.alerts``); decisions go
to the live receiver that holds the file (its ``/v1/alerts/decision``, the ``review`` role), else straight into
the file, as reviews do (``read.alerts.decide_where``).
"""

from __future__ import annotations

import json
from typing import Any

import click

from otel_agent.config import DEFAULT_DB
from otel_agent.options import db_option, reading_options, receiver_option, token_option
from otel_agent.read.alerts import STATES
from otel_agent.read.stores import Where


@click.group(invoke_without_command=True)
@click.option("--state", type=click.Choice(STATES), default=None, help="Only alerts in this state.")
@click.option("--rule", default=None, help="Only the alerts of this rule.")
@click.option("--history", is_flag=True, help="The events (fired, resolved, acknowledged, silenced), newest first.")
@click.option("--deliveries", is_flag=True, help="The webhook delivery attempts, newest first.")
@reading_options
@click.pass_context
def alerts(
    ctx: click.Context,
    state: str | None,
    rule: str | None,
    history: bool,
    deliveries: bool,
    where: Where,
    fmt: str,
    max_rows: int,
) -> None:
    """Alerts of the receiver's rules (--alert-rules): firing first (critical first, newest first), then resolved.

    States: firing; acknowledged and silenced (firing ones someone acknowledged, or whose notifications are
    silenced); resolved. Acknowledge or silence one with `otel-agent alerts ack | silence RULE KEY`.
    """
    if ctx.invoked_subcommand is not None:
        return
    from otel_agent.cli.render import emit
    from otel_agent.read.alerts import alerts_table, deliveries_table, history_table
    from otel_agent.read.stores import open_source

    with open_source(where) as src:
        if history:
            result = history_table(src, rule=rule, limit=max_rows, max_rows=max_rows)
        elif deliveries:
            result = deliveries_table(src, limit=max_rows, max_rows=max_rows)
        else:
            result = alerts_table(src, state=state, rule=rule, max_rows=max_rows)
            # the evidence is for --format json and the console; on a terminal, columns no alert has a value in
            # give their width to the summary
            optional = (
                {"acknowledged_by", "silenced_until", "resolved_at", "acknowledged_at"} if fmt == "table" else set()
            )
            empty = {
                c for i, c in enumerate(result.columns) if c in optional and all(r[i] is None for r in result.rows)
            }
            hidden = {"evidence", "acknowledged_at", "rule_kind", "times_fired"} if fmt == "table" else {"evidence"}
            keep = [i for i, c in enumerate(result.columns) if c not in hidden and c not in empty]
            result = result.with_rows(
                [result.columns[i] for i in keep],
                [result.types[i] for i in keep],
                [tuple(row[i] for i in keep) for row in result.rows],
            )
    emit(result, fmt)


def _decision_command(name: str, decision: str, doc: str) -> click.Command:
    @click.command(name, help=doc)
    @click.argument("rule")
    @click.argument("key")
    @click.option("--by", "actor", required=True, envvar="OTEL_AGENT_REVIEWER", show_envvar=True, help="Who decides.")
    @click.option("--reason", default=None, help="Why.")
    @db_option(writes=True)
    @receiver_option
    @token_option
    @click.option("--json", "as_json", is_flag=True, help="Print the stored event as JSON.")
    def command(
        rule: str,
        key: str,
        actor: str,
        reason: str | None,
        db: str | None,
        receiver: str | None,
        token: str | None,
        as_json: bool,
        **extra: Any,
    ) -> None:
        import datetime as dt

        from otel_agent.alerts.rules import parse_duration
        from otel_agent.read.alerts import decide_where

        until = None
        if decision == "silenced":
            try:
                until = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=parse_duration(extra["for_"], "--for"))
            except ValueError as exc:
                raise click.BadParameter(str(exc), param_hint="--for") from None
        where = Where((db or DEFAULT_DB,), receiver, token)
        stored = decide_where(where, decision, rule, key, actor, reason, until)
        if as_json:
            click.echo(json.dumps(stored, indent=2, default=str))
            return
        until_text = f" until {stored['silenced_until']}" if stored.get("silenced_until") else ""
        click.echo(
            f"{stored['event_id']}: {decision} {stored['rule']} {stored['alert_key']}{until_text} by {stored['actor']}"
            f" at {stored['event_at']} ({stored['via']})"
        )

    if decision == "silenced":
        command = click.option(
            "--for", "for_", required=True, help="How long no notification is sent (e.g. 30m, 2h, 1d)."
        )(command)
    return command


alerts.add_command(
    _decision_command("ack", "acknowledged", "Acknowledge the firing alert KEY of RULE (someone is on it).")
)
alerts.add_command(
    _decision_command(
        "silence", "silenced", "Send no notification for alert KEY of RULE ('*': every key) for a while (--for)."
    )
)
alerts.add_command(_decision_command("unsilence", "unsilenced", "End a silence of KEY of RULE ('*': of the rule)."))

COMMANDS: list[click.Command] = [alerts]
