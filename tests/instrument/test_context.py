"""Context snapshot assembly (budget, shares, priorities, truncation) and its record on the provider call."""

from __future__ import annotations

import pytest
from instrument_support import Spans

import otel_agent.instrument as oi
from otel_agent.instrument import attributes as A

EXPECTED_BUDGETS = {
    "instructions": 816,
    "skill_guidance": 952,
    "tool_descriptions": 816,
    "task_state": 680,
    "history": 544,
    "retrieval_evidence": 1904,
    "artifacts": 544,
    "environment": 204,
    "examples": 204,
    "dynamic_run_data": 136,
}


def words(n: int, word: str = "w") -> str:
    return " ".join(f"{word}{i}" for i in range(n))


def test_default_shares_and_budgets() -> None:
    assert sum(oi.DEFAULT_SHARES.values()) == pytest.approx(1.0)
    assert [round(oi.DEFAULT_SHARES[t] * 100) for t in oi.BLOCK_TYPES] == [12, 14, 12, 10, 8, 28, 8, 3, 3, 2]
    snap = oi.assemble_context([])
    assert (snap.total_budget_tokens, snap.response_reserve_tokens, snap.available_tokens) == (8000, 1200, 6800)
    assert {a.type: a.budget_tokens for a in snap.allocations} == EXPECTED_BUDGETS
    assert snap.used_tokens == 0
    assert snap.blocks == ()
    assert snap.compressions == ()


def test_priority_order_truncation_and_drop() -> None:
    blocks = [
        oi.ContextBlock("retrieval_evidence", words(1500, "low"), priority=1, block_id="b_low"),
        oi.ContextBlock("retrieval_evidence", words(1000, "high"), priority=5, block_id="b_high"),
        oi.ContextBlock("retrieval_evidence", words(10, "last"), priority=0, block_id="b_last"),
        oi.ContextBlock("instructions", token_count=100, block_id="b_instr"),
    ]
    snap = oi.assemble_context(blocks)
    placed = {b.block_id: b for b in snap.blocks}
    assert [b.block_id for b in snap.blocks] == ["b_high", "b_low", "b_last", "b_instr"]  # priority, then order
    assert (placed["b_high"].status, placed["b_high"].used_tokens, placed["b_high"].allocated_tokens) == (
        "included",
        1000,
        1904,
    )
    low = placed["b_low"]
    assert (low.status, low.original_tokens, low.allocated_tokens, low.used_tokens) == ("truncated", 1500, 904, 904)
    assert low.content == words(904, "low")
    assert (placed["b_last"].status, placed["b_last"].used_tokens, placed["b_last"].content) == ("dropped", 0, None)
    assert (placed["b_instr"].status, placed["b_instr"].used_tokens) == ("included", 100)
    (compression,) = snap.compressions
    assert (compression.block_id, compression.block_type, compression.method) == (
        "b_low",
        "retrieval_evidence",
        "truncate_words",
    )
    assert (compression.original_tokens, compression.compressed_tokens) == (1500, 904)
    alloc = {a.type: a for a in snap.allocations}
    assert alloc["retrieval_evidence"].used_tokens == 1904
    assert alloc["instructions"].used_tokens == 100
    assert snap.used_tokens == 2004
    assert snap.render().startswith("high0 high1")
    assert "last0" not in snap.render()


def test_step_local_tools_are_top_priority_and_replace_other_tool_descriptions() -> None:
    snap = oi.assemble_context(
        [
            oi.ContextBlock("instructions", "be careful", priority=200),
            oi.ContextBlock("tool_descriptions", "web_search: x\ngithub_create_issue: y", block_id="all_tools"),
        ],
        selected_tools={"web_fetch": "fetch a page", "web_extract": "extract text"},
    )
    tool_block = next(b for b in snap.blocks if b.source_ref == "step_local_tools")
    assert tool_block.priority == oi.STEP_LOCAL_TOOL_PRIORITY == 100
    assert tool_block.tool_names == ("web_fetch", "web_extract")
    assert tool_block.content == "web_fetch: fetch a page\nweb_extract: extract text"
    assert tool_block.status == "included"
    other = next(b for b in snap.blocks if b.block_id == "all_tools")
    assert (other.status, other.used_tokens) == ("excluded", 0)
    assert [b.priority for b in snap.blocks] == [200, 100, 0]


def test_custom_tokenizer_and_shares() -> None:
    def chars(text: str) -> int:
        return (len(text) + 3) // 4

    snap = oi.assemble_context(
        [oi.ContextBlock("history", "abcdefgh " * 200)],
        total_budget_tokens=1100,
        response_reserve_tokens=100,
        shares={"history": 0.05, "retrieval_evidence": 0.31},
        tokenizer=chars,
    )
    (block,) = snap.blocks
    assert block.allocated_tokens == 50
    assert block.status == "truncated"
    assert block.used_tokens == chars(block.content) <= 50
    assert chars(block.content + " abcdefgh") > 50  # the largest prefix of words that fits


@pytest.mark.parametrize(
    "kwargs",
    [
        {"total_budget_tokens": 100, "response_reserve_tokens": 100},
        {"response_reserve_tokens": -1},
        {"shares": {"history": 0.5}},
        {"shares": {"memories": 0.0}},
        {"shares": {"history": -0.01}},
    ],
)
def test_impossible_budgets(kwargs: dict) -> None:
    with pytest.raises(oi.ContextBudgetError):
        oi.assemble_context([], **kwargs)


def test_block_validation() -> None:
    with pytest.raises(oi.InvalidValueError):
        oi.assemble_context([oi.ContextBlock("memories", "x")])
    with pytest.raises(oi.InvalidValueError):
        oi.assemble_context([oi.ContextBlock("history")])


def test_snapshot_is_recorded_on_the_provider_call(spans: Spans) -> None:
    snap = oi.assemble_context(
        [
            oi.ContextBlock("retrieval_evidence", words(2000), block_id="ev_block", source_ref="search"),
            oi.ContextBlock("history", token_count=10, block_id="hist"),
        ],
        selected_tools=[("web_fetch", "fetch")],
        snapshot_id="ctx_1",
    )
    with oi.provider_call("openai", "gpt-4o", context_snapshot=snap):
        pass
    with oi.provider_call("openai", "gpt-4o") as call:
        call.record_context(snap)  # same snapshot recorded explicitly on a second call
    first, second = spans.kind("provider_call")
    for s in (first, second):
        assert s.attributes[A.CONTEXT_SNAPSHOT_ID] == "ctx_1"
        assert s.attributes[A.CONTEXT_TOTAL_BUDGET_TOKENS] == 8000
        assert s.attributes[A.CONTEXT_RESPONSE_RESERVE_TOKENS] == 1200
        assert s.attributes[A.CONTEXT_AVAILABLE_TOKENS] == 6800
        assert s.attributes[A.CONTEXT_USED_TOKENS] == 1904 + 10 + 2
    events = first.events
    allocations = [e for e in events if e.name == A.EVENT_CONTEXT_ALLOCATION]
    blocks = [e for e in events if e.name == A.EVENT_CONTEXT_BLOCK]
    compressions = [e for e in events if e.name == A.EVENT_CONTEXT_COMPRESSION]
    assert len(allocations) == 10
    assert all(e.attributes[A.CONTEXT_SNAPSHOT_ID] == "ctx_1" for e in events)
    retrieval = next(e for e in allocations if e.attributes[A.CONTEXT_BLOCK_TYPE] == "retrieval_evidence")
    assert dict(retrieval.attributes)[A.CONTEXT_ALLOCATION_SHARE] == 0.28
    assert retrieval.attributes[A.CONTEXT_ALLOCATION_BUDGET_TOKENS] == 1904
    assert retrieval.attributes[A.CONTEXT_ALLOCATION_USED_TOKENS] == 1904
    assert [e.attributes[A.CONTEXT_BLOCK_STATUS] for e in blocks] == ["included", "truncated", "included"]
    tools = blocks[0].attributes
    assert tools[A.CONTEXT_BLOCK_PRIORITY] == 100
    assert tools[A.CONTEXT_BLOCK_TOOL_NAMES] == ("web_fetch",)
    truncated = dict(blocks[1].attributes)
    assert truncated == {
        A.CONTEXT_SNAPSHOT_ID: "ctx_1",
        A.CONTEXT_BLOCK_ID: "ev_block",
        A.CONTEXT_BLOCK_TYPE: "retrieval_evidence",
        A.CONTEXT_BLOCK_PRIORITY: 0,
        A.CONTEXT_BLOCK_ALLOCATED_TOKENS: 1904,
        A.CONTEXT_BLOCK_ORIGINAL_TOKENS: 2000,
        A.CONTEXT_BLOCK_USED_TOKENS: 1904,
        A.CONTEXT_BLOCK_STATUS: "truncated",
        A.CONTEXT_BLOCK_SOURCE_REF: "search",
    }
    (compression,) = compressions
    assert compression.attributes[A.CONTEXT_COMPRESSION_BLOCK_ID] == "ev_block"
    assert compression.attributes[A.CONTEXT_COMPRESSION_METHOD] == "truncate_words"
    assert compression.attributes[A.CONTEXT_COMPRESSION_ORIGINAL_TOKENS] == 2000
    assert compression.attributes[A.CONTEXT_COMPRESSION_COMPRESSED_TOKENS] == 1904
    assert compression.attributes[A.CONTEXT_COMPRESSION_ID] == snap.compressions[0].compression_id


def test_given_tool_block_and_block_ids_name_the_blocks_and_their_compressions(spans: Spans) -> None:
    snap = oi.assemble_context(
        [
            oi.ContextBlock("retrieval_evidence", words(2000), block_id="ev_block"),
            oi.ContextBlock("tool_descriptions", "all: tools", block_id="all_tools"),
        ],
        selected_tools={f"tool_{i}": words(100) for i in range(10)},  # ~1010 words > the 816 tool budget
        tool_block_id="blk_step_tools",
        snapshot_id="ctx_ids",
    )
    placed = {b.block_id: b for b in snap.blocks}
    assert list(placed) == ["blk_step_tools", "ev_block", "all_tools"]
    assert placed["blk_step_tools"].source_ref == "step_local_tools"
    assert placed["blk_step_tools"].status == placed["ev_block"].status == "truncated"
    assert [(c.compression_id, c.block_id) for c in snap.compressions] == [
        ("cmp_blk_step_tools", "blk_step_tools"),
        ("cmp_ev_block", "ev_block"),
    ]
    with oi.provider_call("openai", "gpt-4o", context_snapshot=snap):
        pass
    events = spans.one("provider_call").events
    blocks = [e.attributes for e in events if e.name == A.EVENT_CONTEXT_BLOCK]
    compressions = [e.attributes for e in events if e.name == A.EVENT_CONTEXT_COMPRESSION]
    assert blocks[0][A.CONTEXT_BLOCK_ID] == "blk_step_tools"
    assert blocks[0][A.CONTEXT_BLOCK_SOURCE_REF] == "step_local_tools"
    assert [(c[A.CONTEXT_COMPRESSION_ID], c[A.CONTEXT_COMPRESSION_BLOCK_ID]) for c in compressions] == [
        ("cmp_blk_step_tools", "blk_step_tools"),
        ("cmp_ev_block", "ev_block"),
    ]
    again = oi.assemble_context(
        [
            oi.ContextBlock("retrieval_evidence", words(2000), block_id="ev_block"),
            oi.ContextBlock("tool_descriptions", "all: tools", block_id="all_tools"),
        ],
        selected_tools={f"tool_{i}": words(100) for i in range(10)},
        tool_block_id="blk_step_tools",
        snapshot_id="ctx_ids",
    )
    assert again == snap  # same input, same ids


def test_generated_tool_block_and_compression_ids_stay_unique() -> None:
    def snapshot() -> oi.ContextSnapshot:
        return oi.assemble_context(
            [oi.ContextBlock("retrieval_evidence", words(2000))],
            selected_tools={f"tool_{i}": words(100) for i in range(10)},
        )

    snaps = [snapshot() for _ in range(3)]
    tool_ids = [s.blocks[0].block_id for s in snaps]
    block_ids = [b.block_id for s in snaps for b in s.blocks]
    compression_ids = [c.compression_id for s in snaps for c in s.compressions]
    assert all(s.blocks[0].source_ref == "step_local_tools" for s in snaps)
    assert all(i.startswith("blk_") for i in tool_ids)
    assert len(set(block_ids)) == len(block_ids) == 6
    assert len(set(compression_ids)) == len(compression_ids) == 6
    assert all(i.startswith("cmp_") and not i.startswith("cmp_blk_") for i in compression_ids)


def test_tool_block_id_is_validated_and_needs_selected_tools() -> None:
    with pytest.raises(oi.InvalidValueError, match="selected_tools"):
        oi.assemble_context([], tool_block_id="blk_tools")
    for bad in ("", "x" * 257, 7):
        with pytest.raises(oi.InvalidIdError):
            oi.assemble_context([], selected_tools={"web_fetch": "fetch"}, tool_block_id=bad)  # type: ignore[arg-type]
