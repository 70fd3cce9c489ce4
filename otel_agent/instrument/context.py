"""Context snapshots: typed context blocks assembled under a token budget, recorded on the provider-call span.

``assemble_context`` is pure (no telemetry): it reserves the response budget, gives each of the ten block
types its share of the rest (defaults 12/14/12/10/8/28/8/3/3/2 %), places blocks by descending priority (ties
keep the caller's order) into their type's budget, truncates the first block that does not fit
(``truncate_words``) with a compression record, and drops blocks once their type's budget is spent. Step-local
tool descriptions (``selected_tools``) become a ``tool_descriptions`` block at priority 100 (id
``tool_block_id``, generated when absent) and replace any other tool descriptions (those are kept as
``excluded``), so a step only sees the tools it may use. Unused budget is not redistributed: the allocation
stays predictable and comparable across calls.

Ids: blocks without a ``block_id`` get a generated one. A compression record's id is ``cmp_<block id>`` when
the caller named the block (``ContextBlock.block_id`` or ``tool_block_id``), so the same input always gives
the same record ids; otherwise it is generated.

``ContextSnapshot.record_on(span)`` (called by ``provider_call(context_snapshot=...)`` or
``call.record_context(...)``) sets ``otel_agent.context.*`` attributes on the span and adds one event per type
allocation, per block and per compression. Block *content* is never emitted; record prompts with
``record_input`` under content capture.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from opentelemetry.trace import Span

from . import attributes as A
from ._ids import given_id, id_or_new, new_id
from ._misuse import Problems, report
from ._scope import AttributeValue, put
from .errors import ContextBudgetError, InvalidValueError

BLOCK_TYPES = (
    "instructions",
    "skill_guidance",
    "tool_descriptions",
    "task_state",
    "history",
    "retrieval_evidence",
    "artifacts",
    "environment",
    "examples",
    "dynamic_run_data",
)
DEFAULT_SHARES: Mapping[str, float] = {
    "instructions": 0.12,
    "skill_guidance": 0.14,
    "tool_descriptions": 0.12,
    "task_state": 0.10,
    "history": 0.08,
    "retrieval_evidence": 0.28,
    "artifacts": 0.08,
    "environment": 0.03,
    "examples": 0.03,
    "dynamic_run_data": 0.02,
}
STEP_LOCAL_TOOL_PRIORITY = 100
COMPRESSION_METHOD = "truncate_words"
Tokenizer = Callable[[str], int]


def count_words(content: str) -> int:
    """Default token estimate: whitespace-separated words (consistent with ``truncate_words``)."""
    return len(content.split())


@dataclass(frozen=True, slots=True)
class ContextBlock:
    """A block offered to the assembler. Give ``content`` (counted with the tokenizer) or ``token_count``."""

    type: str
    content: str | None = None
    token_count: int | None = None
    priority: int = 0
    block_id: str | None = None
    source_ref: str | None = None
    tool_names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PlacedBlock:
    """A block as assembled: ``status`` is included / truncated / dropped / excluded."""

    block_id: str
    type: str
    priority: int
    allocated_tokens: int  # what was left of the type's budget when this block was placed
    original_tokens: int
    used_tokens: int
    status: str
    content: str | None
    source_ref: str | None
    tool_names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Compression:
    compression_id: str
    block_id: str
    block_type: str
    method: str
    original_tokens: int
    compressed_tokens: int


@dataclass(frozen=True, slots=True)
class Allocation:
    type: str
    share: float
    budget_tokens: int
    used_tokens: int


@dataclass(frozen=True, slots=True)
class ContextSnapshot:
    snapshot_id: str
    total_budget_tokens: int
    response_reserve_tokens: int
    allocations: tuple[Allocation, ...]
    blocks: tuple[PlacedBlock, ...]
    compressions: tuple[Compression, ...]
    # misuse found while assembling (lenient mode); the provider call it is recorded on carries it
    problems: tuple[str, ...] = ()

    @property
    def available_tokens(self) -> int:
        return self.total_budget_tokens - self.response_reserve_tokens

    @property
    def used_tokens(self) -> int:
        return sum(b.used_tokens for b in self.blocks)

    @property
    def included(self) -> tuple[PlacedBlock, ...]:
        return tuple(b for b in self.blocks if b.status in ("included", "truncated"))

    def render(self, separator: str = "\n\n") -> str:
        """The included blocks' (possibly truncated) content, in placement order."""
        return separator.join(b.content for b in self.included if b.content)

    def record_on(self, span: Span) -> None:
        sid = self.snapshot_id
        span.set_attribute(A.CONTEXT_SNAPSHOT_ID, sid)
        span.set_attribute(A.CONTEXT_TOTAL_BUDGET_TOKENS, self.total_budget_tokens)
        span.set_attribute(A.CONTEXT_RESPONSE_RESERVE_TOKENS, self.response_reserve_tokens)
        span.set_attribute(A.CONTEXT_AVAILABLE_TOKENS, self.available_tokens)
        span.set_attribute(A.CONTEXT_USED_TOKENS, self.used_tokens)
        for a in self.allocations:
            span.add_event(
                A.EVENT_CONTEXT_ALLOCATION,
                {
                    A.CONTEXT_SNAPSHOT_ID: sid,
                    A.CONTEXT_BLOCK_TYPE: a.type,
                    A.CONTEXT_ALLOCATION_SHARE: a.share,
                    A.CONTEXT_ALLOCATION_BUDGET_TOKENS: a.budget_tokens,
                    A.CONTEXT_ALLOCATION_USED_TOKENS: a.used_tokens,
                },
            )
        for b in self.blocks:
            attrs: dict[str, AttributeValue] = {
                A.CONTEXT_SNAPSHOT_ID: sid,
                A.CONTEXT_BLOCK_ID: b.block_id,
                A.CONTEXT_BLOCK_TYPE: b.type,
                A.CONTEXT_BLOCK_PRIORITY: b.priority,
                A.CONTEXT_BLOCK_ALLOCATED_TOKENS: b.allocated_tokens,
                A.CONTEXT_BLOCK_ORIGINAL_TOKENS: b.original_tokens,
                A.CONTEXT_BLOCK_USED_TOKENS: b.used_tokens,
                A.CONTEXT_BLOCK_STATUS: b.status,
            }
            put(attrs, A.CONTEXT_BLOCK_SOURCE_REF, b.source_ref)
            put(attrs, A.CONTEXT_BLOCK_TOOL_NAMES, b.tool_names)
            span.add_event(A.EVENT_CONTEXT_BLOCK, attrs)
        for c in self.compressions:
            span.add_event(
                A.EVENT_CONTEXT_COMPRESSION,
                {
                    A.CONTEXT_SNAPSHOT_ID: sid,
                    A.CONTEXT_COMPRESSION_ID: c.compression_id,
                    A.CONTEXT_COMPRESSION_BLOCK_ID: c.block_id,
                    A.CONTEXT_BLOCK_TYPE: c.block_type,
                    A.CONTEXT_COMPRESSION_METHOD: c.method,
                    A.CONTEXT_COMPRESSION_ORIGINAL_TOKENS: c.original_tokens,
                    A.CONTEXT_COMPRESSION_COMPRESSED_TOKENS: c.compressed_tokens,
                },
            )


def _shares(overrides: Mapping[str, float] | None, problems: Problems) -> dict[str, float]:
    """Default shares with the caller's overrides; a bad override is ignored, overrides summing above 100 %
    are all ignored (reported)."""
    shares = dict(DEFAULT_SHARES)
    if overrides is None:
        return shares
    if not isinstance(overrides, Mapping):
        report(ContextBudgetError(f"shares must be a mapping, got {overrides!r}"), problems, "default shares")
        return shares
    for key, value in overrides.items():
        if key not in DEFAULT_SHARES:
            report(
                ContextBudgetError(f"unknown block type in shares: {key!r} (types: {list(BLOCK_TYPES)})"),
                problems,
                "ignored",
            )
        elif isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            report(
                ContextBudgetError(f"share of {key!r} must be a non-negative number, got {value!r}"),
                problems,
                "default share",
            )
        else:
            shares[key] = float(value)
    if sum(shares.values()) > 1.0 + 1e-9:
        report(ContextBudgetError(f"shares sum to {sum(shares.values()):.4f} > 1.0"), problems, "default shares")
        return dict(DEFAULT_SHARES)
    return shares


def _truncate(content: str, target: int, tokenizer: Tokenizer) -> str:
    words = content.split()
    if tokenizer is count_words:
        return " ".join(words[:target])
    lo, hi = 0, len(words)  # largest prefix of words whose token count fits
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if tokenizer(" ".join(words[:mid])) <= target:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo])


def _tool_block(
    selected_tools: Mapping[str, str] | Iterable[tuple[str, str]], block_id: str | None = None
) -> ContextBlock:
    pairs = list(selected_tools.items() if isinstance(selected_tools, Mapping) else selected_tools)
    return ContextBlock(
        type="tool_descriptions",
        content="\n".join(f"{name}: {description}" for name, description in pairs),
        priority=STEP_LOCAL_TOOL_PRIORITY,
        block_id=block_id,
        source_ref="step_local_tools",
        tool_names=tuple(name for name, _ in pairs),
    )


def _tokens(block: ContextBlock, tokenizer: Tokenizer, problems: Problems) -> int:
    if block.token_count is not None:
        if type(block.token_count) is int and block.token_count >= 0:
            return block.token_count
        report(
            InvalidValueError(f"token_count must be a non-negative int, got {block.token_count!r}"),
            problems,
            "counted from the content" if isinstance(block.content, str) else "0 tokens",
        )
    if not isinstance(block.content, str):
        if block.token_count is None:
            report(InvalidValueError("a context block needs content or token_count"), problems, "0 tokens")
        return 0
    return tokenizer(block.content)


def _budget(total: object, reserve: object, problems: Problems) -> tuple[int, int]:
    """(total, reserve) as given when possible: an impossible budget falls back to the default total (8000)
    and/or a reserve of 15 % of the total (the defaults' ratio)."""
    if type(total) is not int or total <= 0:
        report(ContextBudgetError(f"total_budget_tokens must be a positive int, got {total!r}"), problems, "8000")
        total = 8000
    if type(reserve) is not int or not 0 <= reserve < total:  # type: ignore[operator]
        fallback = total * 15 // 100  # type: ignore[operator]
        report(
            ContextBudgetError(f"need 0 <= response_reserve_tokens < total_budget_tokens, got {reserve!r} / {total!r}"),
            problems,
            f"reserve {fallback}",
        )
        reserve = fallback
    return total, reserve  # type: ignore[return-value]


def assemble_context(
    blocks: Sequence[ContextBlock],
    *,
    total_budget_tokens: int = 8000,
    response_reserve_tokens: int = 1200,
    shares: Mapping[str, float] | None = None,
    selected_tools: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
    tokenizer: Tokenizer = count_words,
    snapshot_id: str | None = None,
    tool_block_id: str | None = None,
) -> ContextSnapshot:
    """Place ``blocks`` under the budget; see the module docstring for the rules.

    ``tool_block_id`` is the id of the step-local tool block made from ``selected_tools`` (generated when
    absent; giving it without ``selected_tools`` is an error).
    """
    problems: Problems = []
    total_budget_tokens, response_reserve_tokens = _budget(total_budget_tokens, response_reserve_tokens, problems)
    type_shares = _shares(shares, problems)
    available = total_budget_tokens - response_reserve_tokens
    budgets = {t: math.floor(available * type_shares[t] + 1e-9) for t in BLOCK_TYPES}
    remaining = dict(budgets)

    offered = []
    for b in blocks:
        if isinstance(b, ContextBlock) and b.type in DEFAULT_SHARES:
            offered.append(b)
        else:
            what = f"type {b.type!r}" if isinstance(b, ContextBlock) else repr(b)
            report(InvalidValueError(f"unknown context block {what} (types: {list(BLOCK_TYPES)})"), problems, "ignored")
    step_local = selected_tools is not None
    if tool_block_id is not None:
        if not step_local:
            report(
                InvalidValueError("tool_block_id names the step-local tool block: pass selected_tools too"),
                problems,
                "ignored",
            )
        tool_block_id = given_id(tool_block_id, "tool_block_id", problems)
    if step_local:
        offered.insert(0, _tool_block(selected_tools, tool_block_id))  # type: ignore[arg-type]
    order = sorted(range(len(offered)), key=lambda i: (-offered[i].priority, i))

    placed: list[PlacedBlock] = []
    compressions: list[Compression] = []
    for i in order:
        block = offered[i]
        bid = id_or_new(block.block_id, "blk", "block_id", problems)
        original = _tokens(block, tokenizer, problems)
        allocated = remaining[block.type]
        content = block.content if isinstance(block.content, str) else None
        if step_local and block.type == "tool_descriptions" and i != 0:
            status, used, content = "excluded", 0, None
        elif original <= allocated:
            status, used = "included", original
        elif allocated > 0:
            status = "truncated"
            if content is not None:
                content = _truncate(content, allocated, tokenizer)
                used = tokenizer(content)
            else:
                used = allocated
            cid = new_id("cmp") if block.block_id is None else f"cmp_{bid}"
            compressions.append(Compression(cid, bid, block.type, COMPRESSION_METHOD, original, used))
        else:
            status, used, content = "dropped", 0, None
        remaining[block.type] -= used
        placed.append(
            PlacedBlock(
                bid,
                block.type,
                block.priority,
                allocated,
                original,
                used,
                status,
                content,
                block.source_ref,
                tuple(block.tool_names),
            )
        )

    allocations = tuple(Allocation(t, type_shares[t], budgets[t], budgets[t] - remaining[t]) for t in BLOCK_TYPES)
    sid = id_or_new(snapshot_id, "ctx", "snapshot_id", problems)
    return ContextSnapshot(
        sid,
        total_budget_tokens,
        response_reserve_tokens,
        allocations,
        tuple(placed),
        tuple(compressions),
        tuple(problems),
    )
