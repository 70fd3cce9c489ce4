"""``/sessions`` Sessions: conversations (runs sharing ``gen_ai.conversation.id``, else OpenInference
``session.id``), most recent first, with runs, failures, agents, tokens, cost and errors; ``/sessions/{id}``: one
conversation's runs in order, each with its cost and errors, and the conversation's totals. ``/evaluations``:
evaluation results (``gen_ai.evaluation.result``: log records, span events, feedback spans) by run or span, each
linked to the span it judged.

Read: ``read.sessions`` (the ``sessions``, ``runs`` and ``evaluations`` views). Templates: templates/sessions.html,
session.html, evaluations.html.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from otel_agent.console.pages import page_args, paged, text_arg
from otel_agent.console.security import Viewer
from otel_agent.errors import NotFoundError
from otel_agent.read import sessions


async def sessions_page(request: Request, console: Any, viewer: Viewer) -> Response:
    limit, offset = page_args(request)
    agent = text_arg(request, "agent")
    rows = await console.store.load(lambda q: sessions.sessions_table(q, None, agent, limit + 1, offset).dicts())
    rows, page = paged(rows, offset, limit)
    return console.html(
        request, viewer, "sessions.html", active="sessions", rows=rows, page=page, data={"sessions": rows, "page": page}
    )


async def session_page(request: Request, console: Any, viewer: Viewer) -> Response:
    session_id = request.path_params["session_id"]

    def load(q: Any) -> dict[str, Any]:
        found = sessions.sessions_table(q, session_id, None, 1).dicts()
        return {"session": found[0] if found else None, "runs": sessions.session_turns(q, session_id)}

    data = await console.store.load(load, key=("session", session_id))
    if data["session"] is None:
        raise NotFoundError(f"no session {session_id!r}")
    return console.html(request, viewer, "session.html", active="sessions", s=data["session"], runs=data["runs"],
                        data=data)  # fmt: skip


async def evaluations_page(request: Request, console: Any, viewer: Viewer) -> Response:
    run_id, trace_id, span_id = text_arg(request, "run"), text_arg(request, "trace"), text_arg(request, "span")
    limit, _ = page_args(request, default_limit=100)
    rows = await console.store.load(
        lambda q: sessions.evaluations_table(q, run_id, limit, trace_id=trace_id, span_id=span_id).dicts()
    )
    return console.html(
        request, viewer, "evaluations.html", active="sessions", rows=rows, run_id=run_id, trace_id=trace_id,
        span_id=span_id, data={"evaluations": rows},
    )  # fmt: skip


ROUTES = [
    ("/sessions", sessions_page, ["GET"], "query"),
    ("/sessions/{session_id:path}", session_page, ["GET"], "query"),  # an id may hold a slash
    ("/evaluations", evaluations_page, ["GET"], "query"),
]
