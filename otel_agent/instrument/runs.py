"""The run hierarchy's upper levels: flow run (``invoke_workflow``), step and skill invocation.

A flow run counts the model calls, tool calls and cost recorded inside it (in any thread or task that
inherited its context) and compares them with its optional budgets. Budgets are observed by default; with
``enforce_budgets=True`` a call that would start beyond a budget raises ``BudgetExceededError`` instead."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import ClassVar, Self

from opentelemetry.trace import Link, Span, SpanKind, TracerProvider

from . import attributes as A
from ._ids import given_id, new_id
from ._scope import UNKNOWN, AttributeValue, Scope, SpanHelper, base_attributes, current_scope, put, shallow_copy
from ._validate import amount, optional_count, text
from .errors import BudgetExceededError


class FlowRun(SpanHelper):
    """A whole agent run: span ``invoke_workflow {workflow}`` (INTERNAL), the root of the hierarchy."""

    __slots__ = (
        "_exceeded",
        "_given_run_id",
        "_lock",
        "_run_id",
        "agent_id",
        "agent_name",
        "capture_content",
        "conversation_id",
        "cost_usd",
        "enforce_budgets",
        "max_cost_usd",
        "max_model_calls",
        "max_tool_calls",
        "model_calls",
        "target",
        "tool_calls",
        "workflow",
    )
    _TAKES_REFS = True
    _ANNOUNCES = True

    def __init__(
        self,
        workflow: str,
        *,
        run_id: str | None = None,
        max_model_calls: int | None = None,
        max_tool_calls: int | None = None,
        max_cost_usd: float | None = None,
        enforce_budgets: bool = False,
        agent_name: str | None = None,
        agent_id: str | None = None,
        conversation_id: str | None = None,
        capture_content: bool | None = None,
        tracer_provider: TracerProvider | None = None,
        target: str | None = None,
        input_ref: str | None = None,
        output_ref: str | None = None,
    ) -> None:
        super().__init__(tracer_provider)
        problems = self._problems()
        if input_ref is not None:
            self._start_ref(A.INPUT_REF, input_ref, "input_ref")
        if output_ref is not None:
            self._start_ref(A.OUTPUT_REF, output_ref, "output_ref")
        self.workflow: str | None = text(workflow, "workflow", problems)
        # the engine / target the run acts on (seed 001's manifest "engine": unity); free form
        self.target: str | None = None if target is None else text(target, "target", problems)
        self._given_run_id = given_id(run_id, "run_id", problems)
        self._run_id: str | None = self._given_run_id
        # an invalid budget is no budget (left out), never a guessed one
        self.max_model_calls = optional_count(max_model_calls, "max_model_calls", problems)
        self.max_tool_calls = optional_count(max_tool_calls, "max_tool_calls", problems)
        self.max_cost_usd = None if max_cost_usd is None else amount(max_cost_usd, "max_cost_usd", problems)
        self.enforce_budgets = enforce_budgets
        self.agent_name = agent_name
        self.agent_id = agent_id
        self.conversation_id = conversation_id
        self.capture_content = capture_content
        self.model_calls = 0
        self.tool_calls = 0
        self.cost_usd = 0.0
        self._exceeded: list[str] = []
        self._lock = threading.Lock()

    def __copy__(self) -> FlowRun:  # decorator use: a fresh run (new id unless one was given) per call
        run: FlowRun = shallow_copy(self)
        run._state = 0
        run._run_id = self._given_run_id
        run.model_calls = run.tool_calls = 0
        run.cost_usd = 0.0
        run._exceeded = []
        run._lock = threading.Lock()
        return run

    @property
    def run_id(self) -> str:
        """The run id: the one given, or one minted on first use."""
        if self._run_id is None:
            self._run_id = new_id("run")
        return self._run_id

    def _open(self, parent: Scope) -> tuple[str, SpanKind, dict[str, AttributeValue], Sequence[Link] | None]:
        attrs: dict[str, AttributeValue] = {A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_WORKFLOW}
        put(attrs, A.GEN_AI_WORKFLOW_NAME, self.workflow)
        attrs[A.RECORD_KIND] = A.KIND_FLOW_RUN
        attrs[A.RUN_ID] = self.run_id
        put(attrs, A.GEN_AI_AGENT_NAME, self.agent_name)
        put(attrs, A.GEN_AI_AGENT_ID, self.agent_id)
        put(attrs, A.GEN_AI_CONVERSATION_ID, self.conversation_id)
        put(attrs, A.RUN_BUDGET_MAX_MODEL_CALLS, self.max_model_calls)
        put(attrs, A.RUN_BUDGET_MAX_TOOL_CALLS, self.max_tool_calls)
        put(attrs, A.RUN_BUDGET_MAX_COST_USD, self.max_cost_usd)
        put(attrs, A.RUN_TARGET, self.target)
        return f"{A.OP_INVOKE_WORKFLOW} {self.workflow or UNKNOWN}", SpanKind.INTERNAL, attrs, None

    def _child_scope(self, parent: Scope) -> Scope:
        # A nested flow run starts a fresh run scope: steps inside belong to it, not to the outer step.
        capture = self.capture_content if self.capture_content is not None else parent.capture
        return Scope(self, None, capture, self)

    def _close(self, span: Span) -> None:
        span.set_attribute(A.RUN_USAGE_MODEL_CALLS, self.model_calls)
        span.set_attribute(A.RUN_USAGE_TOOL_CALLS, self.tool_calls)
        span.set_attribute(A.RUN_USAGE_COST_USD, self.cost_usd)
        if self.has_budget:
            span.set_attribute(A.RUN_BUDGET_EXCEEDED, bool(self._exceeded))
            if self._exceeded:
                span.set_attribute(A.RUN_BUDGET_EXCEEDED_LIMITS, tuple(self._exceeded))

    # --- budgets --------------------------------------------------------------------------------------------
    @property
    def has_budget(self) -> bool:
        return self.max_model_calls is not None or self.max_tool_calls is not None or self.max_cost_usd is not None

    @property
    def budget_exceeded(self) -> tuple[str, ...]:
        """Names of the budgets exceeded so far (``model_calls``, ``tool_calls``, ``cost_usd``)."""
        return tuple(self._exceeded)

    def _over(self, name: str, limit: float | None, used: float) -> None:
        if limit is None or used <= limit or name in self._exceeded:
            return
        self._exceeded.append(name)
        if self._state == 1 and self._span is not None:
            self._span.add_event(
                A.EVENT_BUDGET_EXCEEDED,
                {A.BUDGET_NAME: name, A.BUDGET_LIMIT: float(limit), A.BUDGET_USED: float(used)},
            )

    def count_model_call(self) -> None:
        self._count("model_calls")

    def count_tool_call(self) -> None:
        self._count("tool_calls")

    def _count(self, name: str) -> None:
        """One more call of ``name`` ("model_calls" | "tool_calls"). With enforced budgets, a call when that
        count or the cost is already at its limit raises first and is not counted."""
        limit = getattr(self, f"max_{name}")
        with self._lock:
            used = getattr(self, name)
            if self.enforce_budgets:
                for budget, cap, now in ((name, limit, used), ("cost_usd", self.max_cost_usd, self.cost_usd)):
                    if cap is not None and now >= cap:
                        raise BudgetExceededError(budget, cap, now)
            setattr(self, name, used + 1)
            self._over(name, limit, used + 1)

    def add_cost(self, usd: float) -> None:
        with self._lock:
            self.cost_usd += usd
            self._over("cost_usd", self.max_cost_usd, self.cost_usd)


class _IdentifiedHelper(SpanHelper):
    """A helper with an id: the one given, else one minted (prefix ``_ID_PREFIX``) on first use. A copy
    (decorator use) starts again from the given id, so each call of a decorated function mints its own."""

    __slots__ = ("_given_id", "_id")
    _ID_PREFIX: ClassVar[str]
    _TAKES_REFS = True  # steps and skills

    def _set_given_id(self, given: str | None) -> None:
        self._given_id = given
        self._id: str | None = given

    def __copy__(self) -> Self:
        new = shallow_copy(self)
        new._state = 0
        new._id = self._given_id
        return new

    def _minted_id(self) -> str:
        if self._id is None:
            self._id = new_id(self._ID_PREFIX)
        return self._id


class Step(_IdentifiedHelper):
    """One step of a run: span ``step {name}`` (INTERNAL)."""

    __slots__ = ("iteration", "name")
    _ID_PREFIX = "step"
    _ANNOUNCES = True

    def __init__(
        self,
        name: str,
        *,
        step_id: str | None = None,
        iteration: int | None = None,
        input_ref: str | None = None,
        output_ref: str | None = None,
    ) -> None:
        super().__init__()
        if input_ref is not None:
            self._start_ref(A.INPUT_REF, input_ref, "input_ref")
        if output_ref is not None:
            self._start_ref(A.OUTPUT_REF, output_ref, "output_ref")
        problems = None
        if not isinstance(name, str) or not name or step_id is not None or iteration is not None:
            problems = self._problems()
        self.name: str | None = text(name, "step name", problems) if problems is not None else name
        self._set_given_id(given_id(step_id, "step_id", problems))
        self.iteration = optional_count(iteration, "iteration", problems)

    @property
    def step_id(self) -> str:
        """The step id: the one given, or one minted on first use."""
        return self._minted_id()

    def _open(self, parent: Scope) -> tuple[str, SpanKind, dict[str, AttributeValue], Sequence[Link] | None]:
        attrs: dict[str, AttributeValue] = {A.RECORD_KIND: A.KIND_STEP}
        put(attrs, A.RUN_ID, parent.run_id)
        attrs[A.STEP_ID] = self.step_id
        put(attrs, A.STEP_NAME, self.name)
        put(attrs, A.ITERATION, self.iteration)
        return f"step {self.name or UNKNOWN}", SpanKind.INTERNAL, attrs, None

    def _child_scope(self, parent: Scope) -> Scope:
        return Scope(parent.run, self, parent.capture, self)


class SkillInvocation(_IdentifiedHelper):
    """A skill (``name@version``) used inside a step: span ``skill {name}@{version}`` (INTERNAL)."""

    __slots__ = ("name", "version")
    _ID_PREFIX = "skill"

    def __init__(
        self,
        name: str,
        version: str,
        *,
        invocation_id: str | None = None,
        input_ref: str | None = None,
        output_ref: str | None = None,
    ) -> None:
        super().__init__()
        if input_ref is not None:
            self._start_ref(A.INPUT_REF, input_ref, "input_ref")
        if output_ref is not None:
            self._start_ref(A.OUTPUT_REF, output_ref, "output_ref")
        problems = self._problems()
        self.name: str | None = text(name, "skill name", problems)
        self.version: str | None = text(version, "skill version", problems)
        self._set_given_id(given_id(invocation_id, "invocation_id", problems))

    @property
    def invocation_id(self) -> str:
        """The invocation id: the one given, or one minted on first use."""
        return self._minted_id()

    def _open(self, parent: Scope) -> tuple[str, SpanKind, dict[str, AttributeValue], Sequence[Link] | None]:
        attrs = base_attributes(parent, A.KIND_SKILL)
        put(attrs, A.SKILL_NAME, self.name)
        put(attrs, A.SKILL_VERSION, self.version)
        attrs[A.SKILL_INVOCATION_ID] = self.invocation_id
        return f"skill {self.name or UNKNOWN}@{self.version or UNKNOWN}", SpanKind.INTERNAL, attrs, None


# Lower-case aliases: the helpers read as verbs at the call site (``with flow_run("research") as run:``).
flow_run = FlowRun
step = Step
skill = SkillInvocation


def current_run() -> FlowRun | None:
    """The flow run enclosing the current code, if any."""
    return current_scope().run
