"""Every receipt window and comparison of 050_receipts.sql asserted just below, exactly at and just above its
boundary (one microsecond, the resolution of DuckDB's intervals): the acknowledgement window (orphaned), the
verification window (outcome_failed), the progress window (stuck), the clock skew allowed between delegation,
acceptance and completion (uncertain), a wait against the latest progress, a verification against a failure at
the same time, and the as-of cut-off itself. The windows are the defaults unless a case names its own
(test_receipts.py tests them at 119 s and 121 s only, where `>` and `>=` agree: issue 37)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest

from tests.derived_evidence.support import T0, T0_NS, Store, request, transition

US = 1
S = 1_000_000 * US
ACK, VERIFY, PROGRESS, SKEW = 120 * S, 120 * S, 15 * 60 * S, 5 * S
"""The default windows (receipt_attempts_at's parameters), in microseconds."""


def tr(op: str, name: str, at_us: int, service: str = "delegator", **fields: Any) -> dict[str, Any]:
    """A transition of attempt ``op`` (operation and handoff id) at T0 + ``at_us`` microseconds, exactly."""
    span = transition(op, op, name, 0, service=service, **fields)
    span["start"] = span["end"] = T0_NS + at_us * 1_000
    return span


class Case(NamedTuple):
    op: str
    transitions: list[dict[str, Any]]
    as_of_us: int
    state: str | None  # None: no row
    waiting_for: str | None
    why: str
    windows: dict[str, dt.timedelta]


def cases() -> Iterator[Case]:
    def case(op, spans, as_of, state, waiting_for=None, why="", **windows):
        return Case(op, spans, as_of, state, waiting_for, why, windows)

    # Acknowledgement window: delegated at 0, never accepted; orphaned only once MORE than the window has passed.
    for label, d, state, waiting, why in [
        ("below", -1, "waiting", "acknowledgement", "acknowledgement window open until 2026-01-01T10:02:00.000Z"),
        ("at", 0, "waiting", "acknowledgement", "acknowledgement window open until 2026-01-01T10:02:00.000Z"),
        ("above", +1, "orphaned", None, "not accepted within 00:02:00"),
    ]:
        yield case(f"ack_{label}", [tr(f"ack_{label}", "delegated", 0)], ACK + d, state, waiting, why)
        # the same boundary with a window of its own
        yield case(
            f"ack30_{label}", [tr(f"ack30_{label}", "delegated", 0)], 30 * S + d,
            state, waiting, why.replace("10:02:00", "10:00:30").replace("00:02:00", "00:00:30"),
            ack_window=dt.timedelta(seconds=30),
        )  # fmt: skip

    # Verification window: completed at 10 s; outcome_failed only once MORE than the window has passed.
    for label, d, state, waiting, why in [
        ("below", -1, "waiting", "verification", "verification window open until 2026-01-01T10:02:10.000Z"),
        ("at", 0, "waiting", "verification", "verification window open until 2026-01-01T10:02:10.000Z"),
        ("above", +1, "outcome_failed", None, "no verification within 00:02:00"),
    ]:
        op = f"verify_{label}"
        spans = [tr(op, "delegated", 0), tr(op, "accepted", 1 * S, "worker"), tr(op, "completed", 10 * S, "worker")]
        yield case(op, spans, 10 * S + VERIFY + d, state, waiting, why)

    # Progress window: last progress at 10 s (or only the acceptance at 1 s); stuck only once MORE than the
    # window has passed since.
    for label, d, state, why in [
        ("below", -1, "working", "within 00:15:00"),
        ("at", 0, "working", "within 00:15:00"),
        ("above", +1, "stuck", "no progress since"),
    ]:
        op = f"progress_{label}"
        spans = [tr(op, "delegated", 0), tr(op, "accepted", 1 * S, "worker"), tr(op, "progress", 10 * S, "worker")]
        yield case(op, spans, 10 * S + PROGRESS + d, state, None, why)
        op = f"accepted_{label}"
        spans = [tr(op, "delegated", 0), tr(op, "accepted", 1 * S, "worker")]
        yield case(op, spans, 1 * S + PROGRESS + d, state, None, why)

    # Clock skew: an acceptance up to 5 s before its delegation is tolerated, one more microsecond is not; the
    # same for a completion before its acceptance. Evaluated a minute later (working / waiting for verification).
    for label, d, state, waiting, why in [
        ("below", -1, "working", None, "last progress at"),
        ("at", 0, "working", None, "last progress at"),
        ("above", +1, "uncertain", None, "before its delegation"),
    ]:
        op = f"skew_accept_{label}"
        spans = [tr(op, "delegated", 60 * S), tr(op, "accepted", 60 * S - SKEW - d, "worker")]
        yield case(op, spans, 120 * S, state, waiting, why)
    for label, d, state, waiting, why in [
        ("below", -1, "waiting", "verification", "verification window open"),
        ("at", 0, "waiting", "verification", "verification window open"),
        ("above", +1, "uncertain", None, "before its acceptance"),
    ]:
        op = f"skew_complete_{label}"
        spans = [
            tr(op, "delegated", 0),
            tr(op, "accepted", 30 * S, "worker"),
            tr(op, "completed", 30 * S - SKEW - d, "worker"),
        ]
        yield case(op, spans, 60 * S, state, waiting, why)

    # A wait declared at or after the latest progress is a wait; one declared before it is over.
    for label, d, state, waiting, why in [
        ("before", -1, "working", None, "last progress at"),
        ("same", 0, "waiting", "approval", "waiting for approval since"),
        ("after", +1, "waiting", "approval", "waiting for approval since"),
    ]:
        op = f"wait_{label}"
        spans = [
            tr(op, "delegated", 0),
            tr(op, "accepted", 1 * S, "worker"),
            tr(op, "progress", 20 * S, "worker"),
            tr(op, "waiting", 20 * S + d, "worker", waiting_for="approval"),
        ]
        yield case(op, spans, 60 * S, state, waiting, why)

    # A verification after a failure wins; at the same time the two contradict; before it, the failure stands.
    for label, d, state, why in [
        ("before", -1, "outcome_failed", "verification failed at"),
        ("same", 0, "uncertain", "verified and failed at the same time"),
        ("after", +1, "verified", "outcome verified at"),
    ]:
        op = f"verdict_{label}"
        spans = [
            tr(op, "delegated", 0),
            tr(op, "accepted", 1 * S, "worker"),
            tr(op, "completed", 10 * S, "worker"),
            tr(op, "outcome_failed", 20 * S, reason="missing"),
            tr(op, "outcome_verified", 20 * S + d),
        ]
        yield case(op, spans, 60 * S, state, None, why)

    # The as-of cut-off: a transition at exactly as_of counts, one a microsecond later does not.
    for label, d, state, waiting in [
        ("before", -1, None, None),
        ("at", 0, "waiting", "acknowledgement"),
        ("after", +1, "waiting", "acknowledgement"),
    ]:
        op = f"asof_{label}"
        yield case(op, [tr(op, "delegated", 10 * S)], 10 * S + d, state, waiting, "window open" if state else "")
    # ... and a later transition not yet visible leaves the earlier state
    for label, d, state in [("before", -1, "waiting"), ("at", 0, "working"), ("after", +1, "working")]:
        op = f"asof_accept_{label}"
        spans = [tr(op, "delegated", 0), tr(op, "accepted", 10 * S, "worker")]
        yield case(op, spans, 10 * S + d, state, "acknowledgement" if state == "waiting" else None, "")


CASES = list(cases())


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    s = Store(tmp_path_factory.mktemp("windows") / "w.duckdb")
    s.ingest(request([span for c in CASES for span in c.transitions]))
    yield s
    s.close()


def rows_of(store: Store, macro: str, c: Case) -> list[dict[str, Any]]:
    """``macro`` (receipt_state_at or receipt_attempts_at) as of the case's time, with its windows."""
    named = "".join(f", {k} := ?" for k in c.windows)
    as_of = T0 + dt.timedelta(microseconds=c.as_of_us)
    sql = f"SELECT * FROM {macro}(?{named}) WHERE operation_id = ?"
    return store.dicts(sql, [as_of, *c.windows.values(), c.op])


@pytest.mark.parametrize("case", CASES, ids=[c.op for c in CASES])
def test_state_on_each_side_of_the_boundary(store: Store, case: Case) -> None:
    states = rows_of(store, "receipt_state_at", case)
    attempts = rows_of(store, "receipt_attempts_at", case)
    if case.state is None:
        assert states == attempts == []
        return
    for row in (*states, *attempts):
        assert (row["state"], row["waiting_for"]) == (case.state, case.waiting_for), row
        assert case.why in row["why"], row
    assert len(states) == len(attempts) == 1
