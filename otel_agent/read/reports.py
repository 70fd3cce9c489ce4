"""The Markdown report of an artifact version, with citations injected after each claim: a document the read
layer assembles from an artifact version and the lineage of its claims, the same text for ``otel-agent export
report``, the console's artifact page and its download.

The version's content is the report as the agent wrote it. Each claim bound to the version
(``claims.artifact_version_id``) is looked up in that text; right after it come markers for the evidence that
supports it (a valid citation of recorded, non-rejected evidence produced for the claim's action), markers with
``weak`` / ``invalid`` / ``mismatch`` (evidence bound to another action) for other citations, and a note when
the claim is not supported (unverified, conflicted, rejected, with why). Markers are the evidence ids
(``inline``, the default: seed 000's ``- claim text [evidence_123] [evidence_124]``) or numbers in order of
first citation (``numbered``). Citation texts the agent already wrote after the claim (``[1]``) are replaced by
ours. Claims not found in the text are listed after it. A References section gives each evidence item's
excerpt and source under its marker, and a footer says which version this is, how it was reviewed and the
artifact's run (a version recorded outside any run still belongs to its artifact's run).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from otel_agent.read.artifacts import artifact_row, resolve_version, version_lineage
from otel_agent.read.source import Source

CitationStyle = Literal["inline", "numbered"]
CITATION_STYLES: tuple[CitationStyle, ...] = ("inline", "numbered")


@dataclass
class Report:
    markdown: str
    artifact_id: str
    version_id: str
    version: int
    versions: int
    status: str
    claims: int
    references: int
    claims_not_in_text: list[str] = field(default_factory=list)


@dataclass
class _Claim:
    claim_id: str
    text: str
    status: str
    why: str
    paths: list[dict[str, Any]]


def _one_line(text: str | None, limit: int = 300) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _claims(paths: list[dict[str, Any]]) -> list[_Claim]:
    claims: dict[str, _Claim] = {}
    for p in paths:
        c = claims.get(p["claim_id"])
        if c is None:
            c = _Claim(p["claim_id"], p["claim_text"] or "", p["claim_status"], p["claim_why"], [])
            claims[p["claim_id"]] = c
        if p["citation_id"] is not None:
            c.paths.append(p)
    return list(claims.values())


class _Numbering:
    """One marker per evidence item, in order of first citation: its number (``numbered``) or its id
    (``inline``)."""

    def __init__(self, style: CitationStyle = "inline") -> None:
        self.style = style
        self.numbers: dict[str, int | str] = {}
        self.paths: dict[str, dict[str, Any]] = {}

    def markers(self, claim: _Claim) -> str:
        marks = []
        for p in claim.paths:
            if not p["evidence_found"] or p["evidence_status"] == "rejected":
                continue  # rejected or unrecorded evidence supports nothing: no marker
            eid = p["evidence_id"]
            if eid not in self.numbers:
                # an id is telemetry: shown on one line and without brackets that would end the marker
                label = _one_line(eid, 120).replace("[", "(").replace("]", ")")
                self.numbers[eid] = len(self.numbers) + 1 if self.style == "numbered" else label
                self.paths[eid] = p
            n = self.numbers[eid]
            why = "mismatch" if p.get("binding_mismatch") else p["citation_status"] or "unchecked"
            marks.append(f"[{n}]" if p["supports"] else f"[{n} {why}]")
        text = " ".join(dict.fromkeys(marks))
        if claim.status != "supported":
            text += f"{' ' if text else ''}*({claim.status}: {claim.why})*"
        return text


def _locate(content: str, text: str) -> tuple[int, int] | None:
    """Where the claim's text is in the content: as written; else without its final punctuation; else ignoring
    case and the amount of white space."""
    if not text.strip():
        return None
    pos = content.find(text)
    if pos >= 0:
        return pos, pos + len(text)
    core = text.strip().rstrip(".!?;:").strip()
    if not core:
        return None
    pos = content.find(core)
    if pos >= 0:
        return pos, pos + len(core)
    m = re.search(r"\s+".join(re.escape(w) for w in core.split()), content, re.IGNORECASE)
    return (m.start(), m.end()) if m else None


def _inject(content: str, claims: list[_Claim], numbering: _Numbering) -> tuple[str, list[_Claim]]:
    """The content with markers after each claim found in it; and the claims not found."""
    found: list[tuple[int, int, _Claim]] = []
    missing: list[_Claim] = []
    for c in claims:
        span = _locate(content, c.text)
        (missing.append(c) if span is None else found.append((*span, c)))
    found.sort(key=lambda x: (x[0], -x[1], x[2].claim_id))
    out: list[str] = []
    cursor = 0
    for pos, end, c in found:
        if pos < cursor:  # overlaps a claim already marked (one claim's text inside another's)
            missing.append(c)
            continue
        out.append(content[cursor:end])
        written = {p["citation_text"] for p in c.paths if p["citation_text"]}
        if written:  # drop the citation texts the agent wrote right after the claim; ours replace them
            pattern = re.compile(r"(?:[ \t]*(?:" + "|".join(re.escape(w) for w in sorted(written)) + "))+")
            m = pattern.match(content, end)
            if m:
                end = m.end()
        marks = numbering.markers(c)
        out.append(f" {marks}" if marks else "")
        cursor = end
    out.append(content[cursor:])
    return "".join(out), missing


def _reference(n: int | str, p: dict[str, Any]) -> str:
    parts = [f'[{n}] "{_one_line(p["excerpt"])}"']
    title = _one_line(p["source_title"], 120) if p["source_title"] else None
    url = p["source_url"]
    if url and title:
        parts.append(f"[{title}]({url})")
    elif url or title:
        parts.append(url or title)
    facts = []
    if p["source_provider"]:
        facts.append(p["source_provider"])
    if p["source_retrieved_at"]:
        facts.append(f"retrieved {str(p['source_retrieved_at'])[:10]}")
    conf = p["evidence_confidence"] or (f"score {p['evidence_score']:g}" if p["evidence_score"] is not None else None)
    ident = f"evidence `{p['evidence_id']}`" + (f", {conf}" if conf else "")
    if p["evidence_status"] in ("approved", "rejected"):
        ident += f", {p['evidence_status']} by review"
    facts.append(ident)
    if p["source_id"]:
        facts.append(f"source `{p['source_id']}`")
    return " — ".join(parts) + " · " + " · ".join(facts)


def build_report(src: Source, ident: str, version: int | None = None, citations: CitationStyle = "inline") -> Report:
    """The report of the version ``ident`` names (``read.artifacts.resolve_version``), as ``otel-agent export
    report``, the console's artifact page and its download show it."""
    if citations not in CITATION_STYLES:
        raise ValueError(f"citations must be one of {', '.join(CITATION_STYLES)}, got {citations!r}")
    v = resolve_version(src, ident, version)
    artifact = artifact_row(src, v["artifact_id"])
    artifact = artifact or {"name": None, "type": None, "run_id": v["run_id"], "versions": v["version"]}
    paths = version_lineage(src, v["version_id"])
    claims = _claims(paths)
    numbering = _Numbering(citations)
    content = v["content"] or ""
    fenced = artifact.get("type") not in (None, "markdown_report") and content.lstrip()[:1] in ("{", "[")
    if fenced:
        body, missing = f"```json\n{content.rstrip()}\n```\n", claims
    else:
        body, missing = _inject(content, claims, numbering)
    lines = []
    if not content.lstrip().startswith("#"):
        lines += [f"# {artifact.get('name') or v['artifact_id']}", ""]
    lines.append(body.rstrip("\n"))
    if missing:
        lines += ["", "## Claims" if fenced else "## Claims not found in the text", ""]
        lines += [f"- {c.text} {numbering.markers(c)}".rstrip() for c in missing]
    if numbering.numbers:
        lines += ["", "## References", ""]
        lines += ["- " + _reference(n, numbering.paths[eid]) for eid, n in numbering.numbers.items()]
    status = v["status"]
    review = f" by {v['reviewed_by']} at {str(v['reviewed_at'])[:19]}" if v["reviewed_by"] else ""
    counts: dict[str, int] = {}
    for c in claims:
        counts[c.status] = counts.get(c.status, 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "none bound to this version"
    run_id = artifact.get("run_id") or v["run_id"]
    run = f"run `{run_id}`" if run_id else "no run"
    if v["run_id"] != run_id:
        where = f"in run `{v['run_id']}`" if v["run_id"] else "outside a run"
        run += f" (this version recorded {where})"
    lines += [
        "",
        "---",
        "",
        f"*Artifact `{v['artifact_id']}` version {v['version']} of {artifact.get('versions')} (`{v['version_id']}`),"
        f" {status}{review}; {run}; content sha256 `{(v['content_sha256'] or '')[:12]}`."
        f" Claims: {summary}.*",
    ]
    return Report(
        markdown="\n".join(lines) + "\n",
        artifact_id=v["artifact_id"],
        version_id=v["version_id"],
        version=v["version"],
        versions=artifact.get("versions") or v["version"],
        status=status,
        claims=len(claims),
        references=len(numbering.numbers),
        claims_not_in_text=[c.claim_id for c in missing],
    )
