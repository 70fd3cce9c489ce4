"""Attribute, event and value names emitted by the helpers.

The authoritative description of each name (type, requirement level, example) is ``registry.json`` beside this
file; a test keeps the two in step. Standard GenAI names are spelled out here on purpose instead of importing
``opentelemetry.semconv._incubating`` (whose ``gen_ai`` constants are deprecated and may move).
"""

from __future__ import annotations

from typing import Final

PREFIX: Final = "otel_agent."

# --- standard names (OpenTelemetry GenAI conventions and general conventions) -------------------------------
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
GEN_AI_RESPONSE_ID: Final = "gen_ai.response.id"
GEN_AI_RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: Final = "gen_ai.usage.cache_creation.input_tokens"
GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: Final = "gen_ai.usage.reasoning.output_tokens"
GEN_AI_AGENT_NAME: Final = "gen_ai.agent.name"
GEN_AI_PROMPT_NAME: Final = "gen_ai.prompt.name"
GEN_AI_PROMPT_VERSION: Final = "gen_ai.prompt.version"
GEN_AI_AGENT_ID: Final = "gen_ai.agent.id"
GEN_AI_WORKFLOW_NAME: Final = "gen_ai.workflow.name"
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
GEN_AI_DATA_SOURCE_ID: Final = "gen_ai.data_source.id"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
GEN_AI_TOOL_TYPE: Final = "gen_ai.tool.type"
GEN_AI_TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
GEN_AI_INPUT_MESSAGES: Final = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
GEN_AI_SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
GEN_AI_REQUEST_STREAM: Final = "gen_ai.request.stream"
ERROR_TYPE: Final = "error.type"

# gen_ai.operation.name values used here
OP_INVOKE_WORKFLOW: Final = "invoke_workflow"
OP_EXECUTE_TOOL: Final = "execute_tool"
OP_APPLY_GUARDRAIL: Final = "apply_guardrail"
OP_CHAT: Final = "chat"
INFERENCE_OPERATIONS: Final = frozenset({"chat", "text_completion", "generate_content", "embeddings", "retrieval"})

# Logfire's "pending span" (no OpenTelemetry convention exists for in-progress spans; the spec's open request
# points at this one): a span announcing that its parent span has started. Emitted for runs and steps as Logfire
# emits it, so that the store reads one shape from both (docs/semconv.md "Runs in progress").
PENDING_SPAN_TYPE: Final = "logfire.span_type"
PENDING_SPAN: Final = "pending_span"
PENDING_PARENT_ID: Final = "logfire.pending_parent_id"
NO_PARENT_ID: Final = "0000000000000000"

# --- project names: common ----------------------------------------------------------------------------------
RECORD_KIND: Final = "otel_agent.record.kind"
RUN_ID: Final = "otel_agent.run.id"
STEP_ID: Final = "otel_agent.step.id"
STEP_NAME: Final = "otel_agent.step.name"
ITERATION: Final = "otel_agent.iteration"
COST_USD: Final = "otel_agent.cost.usd"
MISUSE: Final = "otel_agent.misuse"  # what the caller got wrong (lenient mode), see _misuse.py
# seed 000's startSpan({inputRef}) / finishSpan({outputRef}): where a unit of work's input / output lives (an
# artifact id, a URI, a content hash), never the content itself
INPUT_REF: Final = "otel_agent.input.ref"
OUTPUT_REF: Final = "otel_agent.output.ref"

# --- flow run -----------------------------------------------------------------------------------------------
RUN_BUDGET_MAX_MODEL_CALLS: Final = "otel_agent.run.budget.max_model_calls"
RUN_BUDGET_MAX_TOOL_CALLS: Final = "otel_agent.run.budget.max_tool_calls"
RUN_BUDGET_MAX_COST_USD: Final = "otel_agent.run.budget.max_cost_usd"
RUN_BUDGET_EXCEEDED: Final = "otel_agent.run.budget.exceeded"
RUN_BUDGET_EXCEEDED_LIMITS: Final = "otel_agent.run.budget.exceeded_limits"
RUN_USAGE_MODEL_CALLS: Final = "otel_agent.run.usage.model_calls"
RUN_USAGE_TOOL_CALLS: Final = "otel_agent.run.usage.tool_calls"
RUN_USAGE_COST_USD: Final = "otel_agent.run.usage.cost_usd"
RUN_TARGET: Final = "otel_agent.run.target"  # the engine / target the run acts on (free form)
EVENT_BUDGET_EXCEEDED: Final = "otel_agent.budget_exceeded"
BUDGET_NAME: Final = "otel_agent.budget.name"
BUDGET_LIMIT: Final = "otel_agent.budget.limit"
BUDGET_USED: Final = "otel_agent.budget.used"

# --- skill --------------------------------------------------------------------------------------------------
SKILL_NAME: Final = "otel_agent.skill.name"
SKILL_VERSION: Final = "otel_agent.skill.version"
SKILL_INVOCATION_ID: Final = "otel_agent.skill.invocation_id"

# --- provider call / tool invocation ------------------------------------------------------------------------
RETRY_COUNT: Final = "otel_agent.retry.count"
EVENT_RETRY: Final = "otel_agent.retry"
RETRY_ATTEMPT: Final = "otel_agent.retry.attempt"
RETRY_ERROR_TYPE: Final = "otel_agent.retry.error_type"
FALLBACK_COUNT: Final = "otel_agent.fallback.count"
FALLBACK_ORIGINAL_PROVIDER: Final = "otel_agent.fallback.original_provider"
FALLBACK_ORIGINAL_MODEL: Final = "otel_agent.fallback.original_model"
EVENT_FALLBACK: Final = "otel_agent.fallback"
FALLBACK_FROM_PROVIDER: Final = "otel_agent.fallback.from_provider"
FALLBACK_FROM_MODEL: Final = "otel_agent.fallback.from_model"
FALLBACK_TO_PROVIDER: Final = "otel_agent.fallback.to_provider"
FALLBACK_TO_MODEL: Final = "otel_agent.fallback.to_model"
FALLBACK_REASON: Final = "otel_agent.fallback.reason"
FALLBACK_STATUS: Final = "otel_agent.fallback.status"
FALLBACK_STATUSES: Final = ("succeeded", "failed")
# proxy requests (seed 000's proxy_request spans): a GenAI inference span recorded by an LLM proxy / gateway
PROXY_CLIENT: Final = "otel_agent.proxy.client"
PROXY_STREAM_CHUNKS: Final = "otel_agent.proxy.stream_chunks"
TOOL_PROVIDER: Final = "otel_agent.tool.provider"
# a call's data dependencies (seed 001's agent_runs.json): what it read, what it produced, its own token estimate
CALL_INPUT_ARTIFACTS: Final = "otel_agent.call.input_artifacts"
CALL_OUTPUT_ARTIFACTS: Final = "otel_agent.call.output_artifacts"
CALL_TOKEN_ESTIMATE: Final = "otel_agent.call.token_estimate"

# --- guard / verifier ---------------------------------------------------------------------------------------
GUARD_NAME: Final = "otel_agent.guard.name"
GUARD_OUTCOME: Final = "otel_agent.guard.outcome"
GUARD_REASON: Final = "otel_agent.guard.reason"
GUARD_STAGE: Final = "otel_agent.guard.stage"
GUARD_TARGET_ID: Final = "otel_agent.guard.target_id"
VERIFIER_NAME: Final = "otel_agent.verifier.name"
VERIFIER_OUTCOME: Final = "otel_agent.verifier.outcome"
VERIFIER_SCORE: Final = "otel_agent.verifier.score"
VERIFIER_REASON: Final = "otel_agent.verifier.reason"
VERIFIER_TARGET_ID: Final = "otel_agent.verifier.target_id"

# --- evidence -----------------------------------------------------------------------------------------------
SOURCE_ID: Final = "otel_agent.source.id"
SOURCE_URL: Final = "otel_agent.source.url"
SOURCE_TITLE: Final = "otel_agent.source.title"
SOURCE_PROVIDER: Final = "otel_agent.source.provider"
SOURCE_RETRIEVED_AT: Final = "otel_agent.source.retrieved_at"
SOURCE_METADATA: Final = "otel_agent.source.metadata"
EVIDENCE_ID: Final = "otel_agent.evidence.id"
EVIDENCE_SOURCE_ID: Final = "otel_agent.evidence.source_id"
EVIDENCE_EXCERPT: Final = "otel_agent.evidence.excerpt"
EVIDENCE_CONFIDENCE: Final = "otel_agent.evidence.confidence"
EVIDENCE_SUPPORTS_STEP: Final = "otel_agent.evidence.supports_step"
EVIDENCE_METADATA: Final = "otel_agent.evidence.metadata"
CLAIM_ID: Final = "otel_agent.claim.id"
CLAIM_TEXT: Final = "otel_agent.claim.text"
CLAIM_CONFIDENCE: Final = "otel_agent.claim.confidence"
CLAIM_ARTIFACT_VERSION_ID: Final = "otel_agent.claim.artifact_version_id"
CITATION_ID: Final = "otel_agent.citation.id"
CITATION_CLAIM_ID: Final = "otel_agent.citation.claim_id"
CITATION_EVIDENCE_ID: Final = "otel_agent.citation.evidence_id"
CITATION_TEXT: Final = "otel_agent.citation.text"
CITATION_STATUS: Final = "otel_agent.citation.status"
CONFLICT_ID: Final = "otel_agent.conflict.id"
CONFLICT_CLAIM_IDS: Final = "otel_agent.conflict.claim_ids"
CONFLICT_EVIDENCE_IDS: Final = "otel_agent.conflict.evidence_ids"
CONFLICT_DESCRIPTION: Final = "otel_agent.conflict.description"
CONFLICT_SEVERITY: Final = "otel_agent.conflict.severity"

# --- artifacts ----------------------------------------------------------------------------------------------
ARTIFACT_ID: Final = "otel_agent.artifact.id"
ARTIFACT_TYPE: Final = "otel_agent.artifact.type"
ARTIFACT_NAME: Final = "otel_agent.artifact.name"
ARTIFACT_VERSION_ID: Final = "otel_agent.artifact_version.id"
ARTIFACT_VERSION_NUMBER: Final = "otel_agent.artifact_version.number"
ARTIFACT_VERSION_PREVIOUS_ID: Final = "otel_agent.artifact_version.previous_id"
ARTIFACT_VERSION_CONTENT: Final = "otel_agent.artifact_version.content"
ARTIFACT_VERSION_CONTENT_SHA256: Final = "otel_agent.artifact_version.content_sha256"
ARTIFACT_VERSION_SOURCE_STEP_ID: Final = "otel_agent.artifact_version.source_step_id"
ARTIFACT_VERSION_EVIDENCE_IDS: Final = "otel_agent.artifact_version.evidence_ids"

# --- decisions and badcases ---------------------------------------------------------------------------------
DECISION_ID: Final = "otel_agent.decision.id"
DECISION_NAME: Final = "otel_agent.decision.name"
DECISION_MODEL_DECISION: Final = "otel_agent.decision.model_decision"
DECISION_MODEL_ACTION: Final = "otel_agent.decision.model_action"
DECISION_EFFECTIVE_DECISION: Final = "otel_agent.decision.effective_decision"
DECISION_EFFECTIVE_ACTION: Final = "otel_agent.decision.effective_action"
DECISION_EXPECTED_ACTION: Final = "otel_agent.decision.expected_action"
DECISION_POLICY_PASSED: Final = "otel_agent.decision.policy_passed"
DECISION_MISMATCH: Final = "otel_agent.decision.mismatch"
DECISION_REVIEW_REQUIRED: Final = "otel_agent.decision.review_required"
DECISION_REASON: Final = "otel_agent.decision.reason"
DECISION_EVIDENCE_REFS: Final = "otel_agent.decision.evidence_refs"
BADCASE_ID: Final = "otel_agent.badcase.id"
BADCASE_STAGE: Final = "otel_agent.badcase.stage"
BADCASE_ERROR_TYPE: Final = "otel_agent.badcase.error_type"
BADCASE_MESSAGE: Final = "otel_agent.badcase.message"
BADCASE_PROVIDER: Final = "otel_agent.badcase.provider"
BADCASE_MODEL: Final = "otel_agent.badcase.model"
BADCASE_RAW_MODEL_OUTPUT: Final = "otel_agent.badcase.raw_model_output"
BADCASE_RAW_MODEL_OUTPUT_TRUNCATED: Final = "otel_agent.badcase.raw_model_output_truncated"
BADCASE_RAW_MODEL_OUTPUT_BYTES: Final = "otel_agent.badcase.raw_model_output_bytes"
# the action a record was produced for / is about (seed 001: evidence bound to its action)
ACTION_RUN_ID: Final = "otel_agent.action.run_id"
ACTION_CONFIG_HASH: Final = "otel_agent.action.config_hash"
ACTION_VARIANT: Final = "otel_agent.action.variant"

# repairs (seed 001's repair_history.json): the transition from one candidate to the next
REPAIR_ID: Final = "otel_agent.repair.id"
REPAIR_ACTION: Final = "otel_agent.repair.action"
REPAIR_APPLIED: Final = "otel_agent.repair.applied"
REPAIR_TARGET: Final = "otel_agent.repair.target"
REPAIR_BEFORE: Final = "otel_agent.repair.before"
REPAIR_AFTER: Final = "otel_agent.repair.after"
REPAIR_REASON: Final = "otel_agent.repair.reason"
REPAIR_COMPUTED_BY: Final = "otel_agent.repair.computed_by"
REPAIR_COMPUTED_BY_NAME: Final = "otel_agent.repair.computed_by_name"
REPAIR_FROM_VERSION_ID: Final = "otel_agent.repair.from_version_id"
REPAIR_TO_VERSION_ID: Final = "otel_agent.repair.to_version_id"
# authorizations (seed 001's manifest "authorization"): who allowed what, when (the record's time). The keys say
# "authz", not "authorization": the receiver's default redaction drops every key with the word authorization
# (an HTTP credential header), which would empty the record.
AUTHORIZATION_ID: Final = "otel_agent.authz.id"
AUTHORIZATION_BY: Final = "otel_agent.authz.by"
AUTHORIZATION_SCOPE: Final = "otel_agent.authz.scope"
AUTHORIZATION_GRANTED: Final = "otel_agent.authz.granted"
AUTHORIZATION_REASON: Final = "otel_agent.authz.reason"
# recoveries (seed 002): a bounded response to a receipt in trouble, with its authority and limits
RECOVERY_ID: Final = "otel_agent.recovery.id"
RECOVERY_TRANSITION: Final = "otel_agent.recovery.transition"
RECOVERY_MODE: Final = "otel_agent.recovery.mode"
RECOVERY_AUTHORITY: Final = "otel_agent.recovery.authority"
RECOVERY_ACTION: Final = "otel_agent.recovery.action"
RECOVERY_TRIGGER: Final = "otel_agent.recovery.trigger"
RECOVERY_MAX_ATTEMPTS: Final = "otel_agent.recovery.max_attempts"
RECOVERY_MAX_COST_USD: Final = "otel_agent.recovery.max_cost_usd"
RECOVERY_TIME_LIMIT_S: Final = "otel_agent.recovery.time_limit_s"
RECOVERY_SUCCESS_EVIDENCE: Final = "otel_agent.recovery.success_evidence"
RECOVERY_ATTEMPT: Final = "otel_agent.recovery.attempt"
RECOVERY_COST_USD: Final = "otel_agent.recovery.cost_usd"
RECOVERY_REASON: Final = "otel_agent.recovery.reason"
RECOVERY_EVIDENCE_REF: Final = "otel_agent.recovery.evidence_ref"

# --- memory -------------------------------------------------------------------------------------------------
MEMORY_PROPOSAL_ID: Final = "otel_agent.memory_proposal.id"
MEMORY_PROPOSAL_MEMORY_TYPE: Final = "otel_agent.memory_proposal.memory_type"
MEMORY_PROPOSAL_CONTENT: Final = "otel_agent.memory_proposal.content"
MEMORY_PROPOSAL_SUMMARY: Final = "otel_agent.memory_proposal.summary"
MEMORY_PROPOSAL_SCOPES: Final = "otel_agent.memory_proposal.scopes"
MEMORY_PROPOSAL_SOURCE_RUN_ID: Final = "otel_agent.memory_proposal.source_run_id"
MEMORY_PROPOSAL_RATIONALE: Final = "otel_agent.memory_proposal.rationale"

# --- context snapshot (attributes on the provider-call span, plus events) -----------------------------------
CONTEXT_SNAPSHOT_ID: Final = "otel_agent.context.snapshot_id"
CONTEXT_TOTAL_BUDGET_TOKENS: Final = "otel_agent.context.total_budget_tokens"
CONTEXT_RESPONSE_RESERVE_TOKENS: Final = "otel_agent.context.response_reserve_tokens"
CONTEXT_AVAILABLE_TOKENS: Final = "otel_agent.context.available_tokens"
CONTEXT_USED_TOKENS: Final = "otel_agent.context.used_tokens"
EVENT_CONTEXT_ALLOCATION: Final = "otel_agent.context.allocation"
EVENT_CONTEXT_BLOCK: Final = "otel_agent.context.block"
EVENT_CONTEXT_COMPRESSION: Final = "otel_agent.context.compression"
CONTEXT_ALLOCATION_SHARE: Final = "otel_agent.context.allocation.share"
CONTEXT_ALLOCATION_BUDGET_TOKENS: Final = "otel_agent.context.allocation.budget_tokens"
CONTEXT_ALLOCATION_USED_TOKENS: Final = "otel_agent.context.allocation.used_tokens"
CONTEXT_BLOCK_ID: Final = "otel_agent.context.block.id"
CONTEXT_BLOCK_TYPE: Final = "otel_agent.context.block.type"
CONTEXT_BLOCK_PRIORITY: Final = "otel_agent.context.block.priority"
CONTEXT_BLOCK_ALLOCATED_TOKENS: Final = "otel_agent.context.block.allocated_tokens"
CONTEXT_BLOCK_ORIGINAL_TOKENS: Final = "otel_agent.context.block.original_tokens"
CONTEXT_BLOCK_USED_TOKENS: Final = "otel_agent.context.block.used_tokens"
CONTEXT_BLOCK_STATUS: Final = "otel_agent.context.block.status"
CONTEXT_BLOCK_SOURCE_REF: Final = "otel_agent.context.block.source_ref"
CONTEXT_BLOCK_TOOL_NAMES: Final = "otel_agent.context.block.tool_names"
CONTEXT_COMPRESSION_ID: Final = "otel_agent.context.compression.id"
CONTEXT_COMPRESSION_BLOCK_ID: Final = "otel_agent.context.compression.block_id"
CONTEXT_COMPRESSION_METHOD: Final = "otel_agent.context.compression.method"
CONTEXT_COMPRESSION_ORIGINAL_TOKENS: Final = "otel_agent.context.compression.original_tokens"
CONTEXT_COMPRESSION_COMPRESSED_TOKENS: Final = "otel_agent.context.compression.compressed_tokens"

# --- handoff receipts ---------------------------------------------------------------------------------------
RECEIPT_OPERATION_ID: Final = "otel_agent.receipt.operation_id"
RECEIPT_HANDOFF_ID: Final = "otel_agent.receipt.handoff_id"
RECEIPT_TRANSITION: Final = "otel_agent.receipt.transition"
RECEIPT_EXPECTED_ARTIFACT: Final = "otel_agent.receipt.expected_artifact"
RECEIPT_REASON: Final = "otel_agent.receipt.reason"
RECEIPT_WAITING_FOR: Final = "otel_agent.receipt.waiting_for"
RECEIPT_TARGET: Final = "otel_agent.receipt.target"
RECEIPT_ARTIFACT_REF: Final = "otel_agent.receipt.artifact_ref"
LINK_TYPE: Final = "otel_agent.link.type"

# Carrier keys (header-style so a carrier can travel as HTTP headers or message properties unchanged).
CARRIER_OPERATION_ID: Final = "otel-agent-operation-id"
CARRIER_HANDOFF_ID: Final = "otel-agent-handoff-id"

# --- record kinds (values of otel_agent.record.kind) --------------------------------------------------------
KIND_FLOW_RUN: Final = "flow_run"
KIND_STEP: Final = "step"
KIND_SKILL: Final = "skill_invocation"
KIND_PROVIDER_CALL: Final = "provider_call"
KIND_TOOL: Final = "tool_invocation"
KIND_PROXY_REQUEST: Final = "proxy_request"
KIND_GUARD: Final = "guard_result"
KIND_VERIFIER: Final = "verifier_result"
KIND_SOURCE: Final = "source"
KIND_EVIDENCE: Final = "evidence_item"
KIND_CLAIM: Final = "claim"
KIND_CITATION: Final = "citation"
KIND_CONFLICT: Final = "conflict"
KIND_ARTIFACT: Final = "artifact"
KIND_ARTIFACT_VERSION: Final = "artifact_version"
KIND_DECISION: Final = "decision"
KIND_BADCASE: Final = "badcase"
KIND_REPAIR: Final = "repair"
KIND_AUTHORIZATION: Final = "authorization"
KIND_RECOVERY: Final = "recovery"
KIND_MEMORY_PROPOSAL: Final = "memory_proposal"
KIND_RECEIPT: Final = "receipt_transition"
KIND_HANDOFF_WORK: Final = "handoff_work"

RECORD_KINDS: Final = (
    KIND_FLOW_RUN,
    KIND_STEP,
    KIND_SKILL,
    KIND_PROVIDER_CALL,
    KIND_TOOL,
    KIND_PROXY_REQUEST,
    KIND_GUARD,
    KIND_VERIFIER,
    KIND_SOURCE,
    KIND_EVIDENCE,
    KIND_CLAIM,
    KIND_CITATION,
    KIND_CONFLICT,
    KIND_ARTIFACT,
    KIND_ARTIFACT_VERSION,
    KIND_DECISION,
    KIND_BADCASE,
    KIND_REPAIR,
    KIND_AUTHORIZATION,
    KIND_RECOVERY,
    KIND_MEMORY_PROPOSAL,
    KIND_RECEIPT,
    KIND_HANDOFF_WORK,
)
