"""Context snapshots, blocks and compressions; memory proposals, approved memory items and memory_for(scopes);
decisions (model vs effective, mismatch) and badcases."""

from __future__ import annotations

from otel_agent.read.reviews import write_review


def review(store, *args):
    return store.write(lambda con: write_review(con, *args))


def test_context_snapshot_blocks_and_compressions(store):
    (snap,) = store.dicts("SELECT * FROM context_snapshots")
    assert (snap["snapshot_id"], snap["provider"], snap["model"], snap["run_id"]) == (
        "ctx_1",
        "openai",
        "gpt-4o",
        "run_main",
    )
    assert (snap["total_budget_tokens"], snap["response_reserve_tokens"], snap["available_tokens"]) == (
        8000,
        1200,
        6800,
    )
    assert (snap["blocks"], snap["included_blocks"], snap["compressions"]) == (3, 3, 1)
    blocks = store.dicts("SELECT * FROM context_blocks ORDER BY placement")
    assert [(b["block_type"], b["priority"], b["status"]) for b in blocks] == [
        ("tool_descriptions", 100, "included"),
        ("instructions", 0, "truncated"),
        ("history", 0, "included"),
    ]
    assert blocks[0]["tool_names"] == ["web_fetch", "web_extract"]
    assert blocks[0]["source_ref"] == "step_local_tools"
    assert (blocks[1]["allocated_tokens"], blocks[1]["original_tokens"], blocks[1]["used_tokens"]) == (816, 1200, 816)
    assert snap["used_tokens"] == sum(b["used_tokens"] for b in blocks)
    (comp,) = store.dicts("SELECT * FROM context_compressions")
    assert (comp["block_id"], comp["block_type"], comp["method"]) == (
        blocks[1]["block_id"],
        "instructions",
        "truncate_words",
    )
    assert (comp["original_tokens"], comp["compressed_tokens"], comp["saved_tokens"]) == (1200, 816, 384)
    allocations = dict(store.rows("SELECT block_type, share FROM context_allocations"))
    assert len(allocations) == 10
    assert allocations["retrieval_evidence"] == 0.28


def test_memory_needs_approval_and_is_scoped(store):
    statuses = dict(store.rows("SELECT proposal_id, status FROM memory_proposals"))
    assert statuses == {"memp_1": "pending", "memp_2": "pending", "memp_3": "pending"}
    assert store.rows("SELECT count(*) FROM memory_items") == [(0,)]
    review(store, "memory", "memp_1", "approve", "alice", "good rule")
    review(store, "memory_proposal", "memp_2", "approve", "alice")
    review(store, "memory", "memp_3", "reject", "alice", "not a fact")
    assert dict(store.rows("SELECT proposal_id, status FROM memory_proposals"))["memp_3"] == "rejected"
    items = store.dicts("SELECT * FROM memory_items ORDER BY memory_id")
    assert [i["memory_id"] for i in items] == ["memp_1", "memp_2"]
    assert items[0]["scope_list"] == [
        {"type": "project", "ref": "proj_research"},
        {"type": "flow", "ref": "deep_research"},
    ]
    assert (items[0]["approved_by"], items[0]["approval_reason"]) == ("alice", "good rule")

    def memory_for(*scopes):
        return [r[0] for r in store.rows("SELECT memory_id FROM memory_for(?)", [list(scopes)])]

    run_scopes = ["organization:acme", "project:proj_research", "flow:deep_research", "run:run_main"]
    assert memory_for(*run_scopes) == ["memp_1", "memp_2"]  # procedural first, then the episodic run summary
    assert memory_for("project:proj_research", "flow:deep_research") == ["memp_1"]
    assert memory_for("flow:deep_research") == []  # memp_1 also needs its project: no leak to other projects
    assert memory_for("project:other") == []  # memp_3 was rejected


def test_decisions_and_badcases(store):
    decisions = {r["decision_id"]: r for r in store.dicts("SELECT * FROM decisions")}
    d1 = decisions["dec_1"]
    assert (d1["model_decision"], d1["effective_decision"], d1["mismatch"], d1["review_required"]) == (
        "accept",
        "human_review",
        True,
        True,
    )
    assert d1["evidence_refs"] == ["ev_a1"]
    assert d1["iteration"] == 1
    assert d1["run_id"] == "run_main"
    assert decisions["dec_2"]["mismatch"] is False
    (bad,) = store.dicts("SELECT * FROM badcases")
    assert (bad["stage"], bad["error_type"], bad["message"], bad["provider"], bad["model"]) == (
        "json_parse",
        "ValueError",
        "bad json",
        "openai",
        "gpt-4o",
    )
    assert (bad["run_id"], bad["iteration"], bad["raw_model_output"]) == ("run_main", 1, None)
