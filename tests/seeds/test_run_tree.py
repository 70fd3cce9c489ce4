"""Issue 15 item 10: `otel-agent run` draws evidence items, claims and artifact versions under their steps."""

from __future__ import annotations

from pathlib import Path

import otel_agent.instrument as oi
from tests.seeds.support import run_cli, store_of


def record() -> None:
    with oi.flow_run("research", run_id="run_tree"):
        with oi.step("search"):
            src = oi.source("https://example.org/a", source_id="src_a")
            oi.evidence_item(src, "LangGraph adoption grew 300%", confidence="high", evidence_id="ev_1")
        with oi.step("synthesize"):
            cl = oi.claim("Graph orchestration is mainstream", confidence="high", claim_id="cl_1")
            oi.citation(cl, "ev_1")
            oi.claim("Memory isolation is solved", confidence="low", claim_id="cl_2")
            oi.create_artifact("Report", artifact_id="art_1").add_version("# R", version_id="artv_1")


def test_records_hang_under_their_steps(tmp_path: Path) -> None:
    db = store_of(tmp_path / "s.duckdb", record)
    out = run_cli(db, "run", "run_tree")
    tree = out.splitlines()[out.splitlines().index("") + 1 :]
    prefixes = [
        "run research",
        "├─ step search",
        "│  └─ evidence ev_1",
        "└─ step synthesize",
        "   ├─ claim cl_1",
        "   ├─ claim cl_2",
        "   └─ artifact art_1 v1",
    ]
    assert len(tree) == len(prefixes)
    for line, prefix in zip(tree, prefixes, strict=True):
        assert line.startswith(prefix), (line, prefix)
    assert '│  └─ evidence ev_1  (high)  "LangGraph adoption grew 300%"' in tree[2]
    assert tree[4].startswith('   ├─ claim cl_1  supported  "Graph orchestration is mainstream"')
    assert tree[5].startswith('   ├─ claim cl_2  unverified  "Memory isolation is solved"')
