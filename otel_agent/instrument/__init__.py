"""Instrumentation helpers: agents emit their whole run (steps, calls, evidence, artifacts, receipts)
as standard OpenTelemetry spans (GenAI conventions where they exist, ``otel_agent.*`` attributes elsewhere).

Depends on ``opentelemetry-api`` only. With no SDK configured every helper is a cheap no-op that still returns
ids (and still enforces budgets when asked to); the first one logs a warning saying so. A misused helper never
raises into the agent: it logs once per call site and marks its span ``otel_agent.misuse`` — unless strict
mode (``OTEL_AGENT_STRICT=1`` / ``configure(strict=True)``) asks it to raise. The vocabulary is
``registry.json`` beside this file, rendered as ``docs/semconv.md``."""

from __future__ import annotations

from ._misuse import STRICT_ENV
from ._scope import SpanHelper, current_operation
from ._tracer import flush, use_tracer_provider
from .artifacts import Artifact, add_artifact_version, create_artifact
from .authorizations import authorization
from .binding import ActionBinding
from .calls import ProviderCall, ToolInvocation, provider_call, tool_invocation
from .checks import Guard, Verifier, guard, guard_result, verifier, verifier_result
from .config import CAPTURE_CONTENT_ENV, configure
from .context import (
    BLOCK_TYPES,
    DEFAULT_SHARES,
    STEP_LOCAL_TOOL_PRIORITY,
    ContextBlock,
    ContextSnapshot,
    assemble_context,
)
from .decisions import badcase, decision_record
from .errors import (
    BudgetExceededError,
    CarrierError,
    ContextBudgetError,
    InstrumentError,
    InvalidIdError,
    InvalidValueError,
    NotActiveError,
    ReceiptError,
)
from .evidence import citation, claim, conflict, evidence_item, source
from .handoff import Acceptance, Delegation, Receipt, accept, delegate, parse_carrier, receipt_from_carrier
from .memory import MemoryScope, propose_memory
from .proxy import ProxyRequest, proxy_request
from .recovery import Recovery, recover
from .registry import load_registry
from .repairs import repair
from .runs import FlowRun, SkillInvocation, Step, current_run, flow_run, skill, step

__all__ = [
    "BLOCK_TYPES",
    "CAPTURE_CONTENT_ENV",
    "DEFAULT_SHARES",
    "STEP_LOCAL_TOOL_PRIORITY",
    "STRICT_ENV",
    "Acceptance",
    "ActionBinding",
    "Artifact",
    "BudgetExceededError",
    "CarrierError",
    "ContextBlock",
    "ContextBudgetError",
    "ContextSnapshot",
    "Delegation",
    "FlowRun",
    "Guard",
    "InstrumentError",
    "InvalidIdError",
    "InvalidValueError",
    "MemoryScope",
    "NotActiveError",
    "ProviderCall",
    "ProxyRequest",
    "Receipt",
    "ReceiptError",
    "Recovery",
    "SkillInvocation",
    "SpanHelper",
    "Step",
    "ToolInvocation",
    "Verifier",
    "accept",
    "add_artifact_version",
    "assemble_context",
    "authorization",
    "badcase",
    "citation",
    "claim",
    "configure",
    "conflict",
    "create_artifact",
    "current_operation",
    "current_run",
    "decision_record",
    "delegate",
    "evidence_item",
    "flow_run",
    "flush",
    "guard",
    "guard_result",
    "load_registry",
    "parse_carrier",
    "propose_memory",
    "provider_call",
    "proxy_request",
    "receipt_from_carrier",
    "recover",
    "repair",
    "skill",
    "source",
    "step",
    "tool_invocation",
    "use_tracer_provider",
    "verifier",
    "verifier_result",
]
