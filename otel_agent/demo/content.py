"""The demo's fixed story: every id, text, number and model output, so that each run records the same thing.

Nothing here is fetched or generated: the "providers" answer from these tables. URLs use the reserved
``example.*`` domains. Times are fixed strings, except the span timestamps, which are when the demo ran.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

# --- run, steps, skills ------------------------------------------------------------------------------------
WORKFLOW = "deep_research"
RUN_ID = "run_demo_deep_research"
AGENT_NAME = "research_agent"
AGENT_SERVICE = "deep-research-agent"
QUESTION = "How do agent frameworks orchestrate multi-agent work today?"
RETRIEVED_AT = "2026-08-20T10:00:00.000+00:00"

BUDGET_MAX_MODEL_CALLS = 8
BUDGET_MAX_TOOL_CALLS = 8
BUDGET_MAX_COST_USD = 0.25

STEP_PLAN = "step_demo_plan"
STEP_SEARCH = "step_demo_search"
STEP_VERIFY = "step_demo_verify"
STEP_SYNTHESIZE = "step_demo_synthesize"
STEP_HANDOFF = "step_demo_fact_check"

SKILL_PLANNER = ("research-planner", "1.0.0", "skill_demo_planner")
SKILL_VERIFIER = ("citation-verifier", "0.3.0", "skill_demo_verifier")
SKILL_WRITER = ("report-writer", "2.1.0", "skill_demo_writer")

# --- plan: a context snapshot and a malformed first answer ---------------------------------------------------
PLANNER_PROVIDER, PLANNER_MODEL = "openai", "gpt-4o"
CONTEXT_SNAPSHOT_ID = "ctx_demo_plan"
PLANNER_TOOL_BLOCK_ID = "blk_demo_step_tools"  # the step-local tool block made from PLANNER_STEP_TOOLS
CONTEXT_TOTAL_BUDGET = 1000
CONTEXT_RESPONSE_RESERVE = 200
PLANNER_INSTRUCTIONS = " ".join(
    [
        "You are the planner of a deep research flow.",
        "Split the question into at most three subquestions that can be answered from public sources.",
        "Prefer primary sources such as release notes, maintainers' posts and surveys with a stated method.",
        "Never answer the question yourself; only plan the research.",
        "Return JSON with a subquestions array and nothing else.",
    ]
    * 3
)
PLANNER_SKILL_GUIDANCE = (
    "research-planner@1.0.0: one subquestion per dimension (adoption, capabilities, open problems); "
    "name the evidence each subquestion needs; keep subquestions short."
)
PLANNER_GENERIC_TOOLS = "web_search: search the web. web_fetch: fetch a page. code_exec: run Python."
PLANNER_STEP_TOOLS = {
    "web_search": "search the web index and return ranked results with URLs",
    "web_fetch": "fetch one URL and return its readable text",
}
PLANNER_TASK_STATE = f"question: {QUESTION} completed steps: none"
PLANNER_ENVIRONMENT = "date: 2026-08-20 locale: en-US"
PLANNER_EXAMPLE = 'question: compare vector databases -> {"subquestions": ["adoption", "features", "limits"]}'
PLANNER_RUN_DATA = f"run: {RUN_ID} budget: 8 model calls, 8 tool calls, 0.25 USD"
PLANNER_BAD_OUTPUT = '{"subquestions": ["adoption" "capabilities"]}'
SUBQUESTIONS = (
    "How widely is graph-based orchestration adopted?",
    "Which frameworks offer graph-based multi-agent workflows?",
    "What remains hard in multi-agent systems?",
)
PLANNER_OUTPUT = json.dumps({"subquestions": list(SUBQUESTIONS)}, separators=(",", ":"))
BADCASE_PLAN = "bad_demo_plan_json"

# --- search: a retry, then a fallback ------------------------------------------------------------------------
SEARCH_PROVIDER, SEARCH_MODEL = "tavily", "search"
SEARCH_FALLBACK_PROVIDER = "exa"
SEARCH_DATA_SOURCE = "web_index"
SEARCH_RESPONSE_ID = "exa_resp_demo_1"


@dataclass(frozen=True)
class Source:
    source_id: str
    url: str
    title: str
    evidence_id: str
    excerpt: str
    confidence: str
    tool_call_id: str


SOURCES = (
    Source(
        "src_demo_langgraph",
        "https://example.org/langgraph-adoption-2026",
        "LangGraph adoption report",
        "ev_demo_langgraph",
        "LangGraph adoption grew 300% year over year among the surveyed teams.",
        "high",
        "call_demo_fetch_1",
    ),
    Source(
        "src_demo_autogen",
        "https://example.org/autogen-0-4-release-notes",
        "AutoGen v0.4 release notes",
        "ev_demo_autogen",
        "AutoGen v0.4 introduces graph-based workflows for multi-agent conversations.",
        "medium",
        "call_demo_fetch_2",
    ),
    Source(
        "src_demo_survey_a",
        "https://example.com/state-of-agents-2025",
        "State of agents survey 2025",
        "ev_demo_survey_a",
        "40% of teams building agents use graph-based orchestration.",
        "medium",
        "call_demo_fetch_3",
    ),
    Source(
        "src_demo_survey_b",
        "https://example.net/agent-engineering-census",
        "Agent engineering census",
        "ev_demo_survey_b",
        "Only 25% of production agent teams use graph-based orchestration.",
        "medium",
        "call_demo_fetch_4",
    ),
)
EV = {s.evidence_id.removeprefix("ev_demo_"): s.evidence_id for s in SOURCES}  # short name -> evidence id

# --- verify: draft claims, a blocked uncited claim, a conflict ----------------------------------------------
VERIFY_TOOL_CALL = "call_demo_citation_lookup"


@dataclass(frozen=True)
class Claim:
    key: str
    text: str
    confidence: str
    evidence: tuple[str, ...]  # evidence ids cited, in citation order
    citation_status: str = "valid"


DRAFT_CLAIMS = (
    Claim("graph", "Graph-based orchestration is becoming mainstream.", "high", (EV["langgraph"], EV["autogen"])),
    Claim("share", "40% of agent teams use graph-based orchestration.", "medium", (EV["survey_a"],)),
    Claim("memory", "Memory isolation between agents is a solved problem.", "medium", ()),
)
GUARD_CITATION = "output.citation_required"
CONFLICT_ID = "conflict_demo_adoption_share"
CONFLICT_DESCRIPTION = "Sources disagree on the share of teams using graph-based orchestration (40% vs 25%)."


def draft_claim_id(claim: Claim) -> str:
    return f"claim_demo_draft_{claim.key}"


# --- synthesize: a markdown report v1, a policy gate, a regenerated v2 --------------------------------------
WRITER_PROVIDER, WRITER_MODEL = "anthropic", "claude-sonnet-4-5"
# The team's LLM proxy serves the writer's v2 call: it asks Bedrock first, which throttles, and falls back to
# the writer's provider (seed 000's proxy_request and proxy_fallback), streaming the report back in chunks.
PROXY_CLIENT = AGENT_SERVICE
PROXY_FIRST_PROVIDER = "aws.bedrock"
PROXY_FALLBACK_REASON = "throttled"
PROXY_STREAM_CHUNKS = 24
REPORT_ID = "art_demo_report"
REPORT_TITLE = "Agent orchestration frameworks: state of practice"
REPORT_V1 = "artv_demo_report_v1"
REPORT_V2 = "artv_demo_report_v2"
BUNDLE_ID = "art_demo_evidence_bundle"
BUNDLE_V1 = "artv_demo_evidence_bundle_v1"
DECISION_ID = "dec_demo_publish_report"
REPAIR_ID = "rep_demo_hedge_claim"
# v2's publish decision: a figure from disagreeing sources needs an editor's sign-off (policy), which a human gives
PUBLISH_V2_DECISION_ID = "dec_demo_publish_report_v2"
EDITOR = "editor_demo"
MEMORY_PROPOSAL_ID = "memp_demo_conflicting_figures"
PROJECT = "proj_demo_research"

CLAIMS_V1 = (
    DRAFT_CLAIMS[0],
    Claim("share", DRAFT_CLAIMS[1].text, "medium", (EV["survey_a"],), citation_status="weak"),
)
CLAIMS_V2 = (
    DRAFT_CLAIMS[0],
    Claim(
        "share",
        "Between 25% and 40% of agent teams use graph-based orchestration; the surveys disagree.",
        "low",
        (EV["survey_a"], EV["survey_b"]),
    ),
)


def version_claim_id(version: int, claim: Claim) -> str:
    return f"claim_demo_v{version}_{claim.key}"


def citation_id(version: int, claim: Claim, index: int) -> str:
    return f"cit_demo_v{version}_{claim.key}_{index}"


def render_report(claims: tuple[Claim, ...]) -> str:
    """The seed's report format: one bullet per claim, its evidence ids as citations."""
    lines = [f"# {REPORT_TITLE}", ""]
    for c in claims:
        refs = " ".join(f"[{e}]" for e in c.evidence)
        lines.append(f"- {c.text.rstrip('.')}{' ' + refs if refs else ''}")
    return "\n".join(lines) + "\n"


def render_bundle() -> str:
    """The evidence bundle (JSON, sorted keys) behind report v2."""
    bundle = {
        "runId": RUN_ID,
        "sources": [{"id": s.source_id, "url": s.url, "title": s.title} for s in SOURCES],
        "evidence": [
            {"id": s.evidence_id, "sourceId": s.source_id, "excerpt": s.excerpt, "confidence": s.confidence}
            for s in SOURCES
        ],
        "claims": [{"id": version_claim_id(2, c), "text": c.text} for c in CLAIMS_V2],
        "conflicts": [{"id": CONFLICT_ID, "evidence": [EV["survey_a"], EV["survey_b"]], "severity": "high"}],
    }
    return json.dumps(bundle, indent=2, sort_keys=True) + "\n"


# Token usage and cost of each model call (fixed, as a provider would report them).
USAGE = {
    "plan": (420, 64, 0.0018),
    "search": (32, 0, 0.008),
    "report_v1": (1350, 180, 0.0067),
    "report_v2": (1420, 196, 0.0072),
}

# --- the fact-check handoff (and one delegation nobody accepts) ---------------------------------------------
FACT_CHECK_OPERATION = "op_demo_fact_check"
FACT_CHECK_HANDOFF_ID = "hof_demo_fact_check"
FACT_CHECK_ARTIFACT = "fact_check_report"
FACT_CHECK_TARGET = "fact_checker"
TRANSLATE_OPERATION = "op_demo_translate_summary"
TRANSLATE_HANDOFF_ID = "hof_demo_translate_summary"
TRANSLATE_ARTIFACT = "translated_summary"
TRANSLATE_TARGET = "translator"
# the translator is known to be offline: a bounded automatic recovery re-delegates once to a backup (seed 002)
TRANSLATE_RECOVERY_ID = "rec_demo_translate_summary"
TRANSLATE_RETRY_HANDOFF_ID = "hof_demo_translate_summary_2"
TRANSLATE_BACKUP_TARGET = "translator_backup"
RECOVERY_AUTHORITY = "policy:redelegate_once"
RECOVERY_TIME_LIMIT_S = 600.0
APPROVER = "lead_researcher"  # authorises the worker's fallback source
AUTHORIZATION_ID = "auth_demo_fallback_source"

WORKER_WORKFLOW = "fact_check"
WORKER_RUN_ID = "run_demo_fact_check"
WORKER_AGENT = "fact_checker"
WORKER_SERVICE = "fact-check-worker"
WORKER_STEP_CHECK = "step_demo_check_sources"
WORKER_STEP_WRITE = "step_demo_write_fact_check"
WORKER_SKILL = ("fact-checker", "0.9.0", "skill_demo_fact_checker")
WAITING_FOR = "approval:fallback_source"
UNREACHABLE_SOURCE = "src_demo_survey_b"  # the worker needs approval to use an archived copy instead
FACT_CHECK_ARTIFACT_ID = "art_demo_fact_check"
FACT_CHECK_VERSION_ID = "artv_demo_fact_check_v1"


def worker_fetch_call_id(source: Source) -> str:
    return f"call_demo_worker_fetch_{source.source_id.removeprefix('src_demo_')}"


def render_fact_check(subject: str) -> str:
    lines = [f"# Fact check of {subject}", ""]
    for c in CLAIMS_V2:
        lines.append(f"- supported: {c.text} ({', '.join(c.evidence)})")
    lines.append(f"- note: {UNREACHABLE_SOURCE} read from an archived copy (approved)")
    return "\n".join(lines) + "\n"
