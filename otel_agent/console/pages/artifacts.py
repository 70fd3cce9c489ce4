"""``/artifacts`` Artifacts; ``/artifacts/{artifact_id}``: versions with status, source step and evidence refs, a
diff between any two versions (``?a=1&b=2``), the rendered Markdown report of a version (``?v=N``), downloads
of the report (``report.md``) and of the run's JSON bundle, and approve / reject of a version
(``POST /artifacts/{artifact_id}/review``).

Read: ``read.artifacts`` (artifacts_page, artifact_detail) and ``read.reports.build_report`` (the same text as
``otel-agent export report``). Templates: templates/artifacts.html, artifact.html.
"""

from __future__ import annotations

import difflib
from typing import Any

from markdown_it import MarkdownIt
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import Response

from otel_agent.console.pages import int_arg, page_args, paged, text_arg
from otel_agent.console.render import q as quote_segment
from otel_agent.console.reviews import review_action
from otel_agent.console.security import Viewer
from otel_agent.errors import NotFoundError
from otel_agent.read import artifacts as read_artifacts
from otel_agent.read.artifacts import artifact_detail
from otel_agent.read.reports import build_report

MAX_DIFF_LINES = 2000
# CommonMark with raw HTML disabled: HTML in a report is shown as text; markdown-it refuses javascript: and
# other unsafe link schemes itself.
_MD = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def render_markdown(text: str) -> Markup:
    return Markup(_MD.render(text))


def diff_lines(old: str, new: str, old_label: str, new_label: str) -> list[tuple[str, str]]:
    """(css class, line) of a unified diff, bounded."""
    out: list[tuple[str, str]] = []
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), old_label, new_label, lineterm="", n=3)
    for line in lines:
        cls = (
            "add"
            if line.startswith("+")
            else "del"
            if line.startswith("-")
            else "hunk"
            if line.startswith("@@")
            else ""
        )
        out.append((cls, line))
        if len(out) >= MAX_DIFF_LINES:
            out.append(("hunk", f"… diff cut at {MAX_DIFF_LINES} lines"))
            break
    return out


async def artifacts_page(request: Request, console: Any, viewer: Viewer) -> Response:
    limit, offset = page_args(request)
    text = text_arg(request, "q")
    rows = await console.store.load(lambda q: read_artifacts.artifacts_page(q, text, limit, offset))
    rows, page = paged(rows, offset, limit)
    return console.html(request, viewer, "artifacts.html", active="artifacts", rows=rows, page=page)


async def artifact_page(request: Request, console: Any, viewer: Viewer) -> Response:
    artifact_id = request.path_params["artifact_id"]
    shown = int_arg(request, "v", 0, 0, 1_000_000)

    def load(q: Any) -> dict[str, Any] | None:
        detail = artifact_detail(q, artifact_id)
        if detail is None:
            return None
        versions = detail.versions
        chosen = next((v for v in versions if v["version"] == shown), None) or (versions[-1] if versions else None)
        report = build_report(q, chosen["version_id"]) if chosen is not None else None
        return {"detail": detail, "chosen": chosen, "report": report}

    data = await console.store.load(load)
    if data is None:
        raise NotFoundError(f"no artifact {artifact_id!r}")
    detail = data["detail"]
    versions = detail.versions
    by_number = {v["version"]: v for v in versions}
    diff = None
    if len(versions) >= 2:
        a = int_arg(request, "a", versions[-2]["version"], 1, 1_000_000)
        b = int_arg(request, "b", versions[-1]["version"], 1, 1_000_000)
        if a in by_number and b in by_number:
            va, vb = by_number[a], by_number[b]
            diff = {"a": a, "b": b, "lines": diff_lines(va["content"] or "", vb["content"] or "", f"v{a}", f"v{b}")}
    report = data["report"]
    return console.html(
        request, viewer, "artifact.html", active="artifacts", artifact=detail.artifact, versions=versions,
        chosen=data["chosen"], report=report, report_html=render_markdown(report.markdown) if report else None,
        diff=diff, reviews=detail.reviews, action=f"/artifacts/{quote_segment(artifact_id)}/review",
        reviewed=request.query_params.get("reviewed"), data=data,
    )  # fmt: skip


async def report_download(request: Request, console: Any, viewer: Viewer) -> Response:
    artifact_id = request.path_params["artifact_id"]
    version = int_arg(request, "v", 0, 0, 1_000_000) or None
    report = await console.store.load(lambda q: build_report(q, artifact_id, version))
    return Response(
        report.markdown, media_type="text/markdown; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="report-v{report.version}.md"'},
    )  # fmt: skip


async def artifact_review(request: Request, console: Any, viewer: Viewer) -> Response:
    back = f"/artifacts/{quote_segment(request.path_params['artifact_id'])}"
    return await review_action(request, console, viewer, ("artifact_version",), back)


ROUTES = [
    ("/artifacts", artifacts_page, ["GET"], "query"),
    ("/artifacts/{artifact_id}", artifact_page, ["GET"], "query"),
    ("/artifacts/{artifact_id}/report.md", report_download, ["GET"], "query"),
    ("/artifacts/{artifact_id}/review", artifact_review, ["POST"], "review"),
]
