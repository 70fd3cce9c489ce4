"""``/artifacts`` Artifacts; ``/artifacts/{artifact_id}``: versions with status, source step and evidence refs, a
diff between any two versions (``?a=1&b=2``), the rendered Markdown report of a version (``?v=N``), downloads
of the report (``report.md``) and of the run's JSON bundle, and approve / reject of a version
(``POST /artifacts/{artifact_id}/review``).

Read: ``read.artifacts`` (artifacts_page, artifact_detail) and ``read.reports.build_report`` (the same text as
``otel-agent export report``). Templates: templates/artifacts.html, artifact.html.
"""

from __future__ import annotations

import difflib
import re
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


_WORDS = re.compile(r"\s+|\w+|[^\w\s]")


def _word_diff(old: str, new: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The segments of a changed line pair: (tag, text) with tag "" (same), "del" (only in old) or "ins" (only in
    new), compared word by word."""
    a, b = _WORDS.findall(old), _WORDS.findall(new)
    old_segs: list[tuple[str, str]] = []
    new_segs: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            old_segs.append(("", "".join(a[i1:i2])))
            new_segs.append(("", "".join(b[j1:j2])))
            continue
        if i2 > i1:
            old_segs.append(("del", "".join(a[i1:i2])))
        if j2 > j1:
            new_segs.append(("ins", "".join(b[j1:j2])))
    return old_segs, new_segs


def diff_lines(old: str, new: str, old_label: str, new_label: str) -> list[dict[str, Any]]:
    """A unified diff (3 lines of context), bounded, each line ``{"cls": add|del|hunk|"", "segs": [(tag, text)]}``;
    a changed line paired with its replacement marks the words that changed (``ins`` / ``del``)."""
    a, b = old.splitlines(), new.splitlines()
    out: list[dict[str, Any]] = [{"cls": "hunk", "segs": [("", f"--- {old_label}")]},
                                 {"cls": "hunk", "segs": [("", f"+++ {new_label}")]}]  # fmt: skip
    groups = list(difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(3))
    if not groups:
        return []
    for group in groups:
        i1, j1 = group[0][1], group[0][3]
        i2, j2 = group[-1][2], group[-1][4]
        out.append({"cls": "hunk", "segs": [("", f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@")]})
        for op, o1, o2, n1, n2 in group:
            if op == "equal":
                out += [{"cls": "", "segs": [("", " " + line)]} for line in a[o1:o2]]
                continue
            olds, news = a[o1:o2], b[n1:n2]
            pairs = [_word_diff(x, y) for x, y in zip(olds, news, strict=False)] if op == "replace" else []
            for k, line in enumerate(olds):
                segs = pairs[k][0] if k < len(pairs) else [("", line)]
                out.append({"cls": "del", "segs": [("", "-"), *segs]})
            for k, line in enumerate(news):
                segs = pairs[k][1] if k < len(pairs) else [("", line)]
                out.append({"cls": "add", "segs": [("", "+"), *segs]})
        if len(out) >= MAX_DIFF_LINES:
            out = out[:MAX_DIFF_LINES]
            out.append({"cls": "hunk", "segs": [("", f"… diff cut at {MAX_DIFF_LINES} lines")]})
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
