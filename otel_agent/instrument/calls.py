"""Provider calls (model inference, CLIENT spans) and tool invocations (``execute_tool``, INTERNAL spans).

One span per *logical* call: retries and provider/model fallbacks inside it are span events, and the span's
``gen_ai.provider.name`` / ``gen_ai.request.model`` end up naming what finally served the call (the first
choice is kept in ``otel_agent.fallback.original_*``). Usage and cost therefore belong to whoever answered."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from opentelemetry.trace import Link, Span, SpanKind

from . import attributes as A
from ._ids import check_id
from ._scope import UNKNOWN, AttributeValue, Scope, SpanHelper, base_attributes, put, put_span
from ._validate import count, one_of, strings, text
from .checks import guard_result
from .config import resolve_capture
from .errors import BudgetExceededError, InvalidValueError

if TYPE_CHECKING:
    from .context import ContextSnapshot


_OPERATIONS = sorted(A.INFERENCE_OPERATIONS)


def to_json(value: Any) -> str:
    """Content as a JSON string (the SDK takes only primitives and homogeneous arrays); str passes as-is.

    Raises ``ValueError`` for what JSON cannot hold (a circular structure)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class _Call(SpanHelper):
    """What provider calls and tool invocations share: retries, cost, budget counting, content gating, and the
    call's data dependencies (the artifacts it read and produced, its iteration)."""

    __slots__ = ("_capture_arg", "_cost", "_extra", "_inherited_capture", "_retries", "_run")
    _TAKES_REFS = True

    def __init__(self, capture_content: bool | None) -> None:
        # SpanHelper.__init__ inlined (this is the hottest constructor on the no-SDK path).
        self._state = 0
        self._provider = None
        self._misuse = None
        self._refs = None
        self._retries = 0
        self._cost = 0.0
        self._capture_arg = capture_content
        self._extra: dict[str, AttributeValue] | None = None  # start attributes beyond the common ones

    def _dependencies(
        self, input_artifacts: object, output_artifacts: object, iteration: object
    ) -> dict[str, AttributeValue]:
        """Validate the data-dependency arguments into start attributes (kept in ``_extra``)."""
        extra = self._extra = {} if self._extra is None else self._extra
        if input_artifacts is not None:
            put(extra, A.CALL_INPUT_ARTIFACTS, strings(input_artifacts, "input_artifacts", self._problems()))
        if output_artifacts is not None:
            put(extra, A.CALL_OUTPUT_ARTIFACTS, strings(output_artifacts, "output_artifacts", self._problems()))
        if iteration is not None:
            put(extra, A.ITERATION, count(iteration, "iteration", self._problems()))
        return extra

    def set_output_artifacts(self, names: Iterable[str]) -> None:
        """Name the artifacts / records this call produced (known once it answered); replaces earlier ones."""
        if not self._require_active():
            return
        produced = strings(names, "output_artifacts", self._problems())
        self._sync_misuse()
        if self._span is not None and produced:
            self._span.set_attribute(A.CALL_OUTPUT_ARTIFACTS, produced)

    def _prepare(self, parent: Scope) -> None:
        """Inherit the run's capture setting; count against (and maybe enforce) the run's budgets."""
        self._inherited_capture = parent.capture
        run = self._run = parent.run
        if run is None:
            return
        try:
            run.count_model_call() if self._model_call else run.count_tool_call()
        except BudgetExceededError as exc:
            guard_result(f"budget.{exc.budget}", passed=False, reason="budget_exceeded", stage="budget")
            raise

    @property
    def capture_content(self) -> bool:
        """Whether content may be recorded here (argument > enclosing run > configure() > env > off)."""
        return resolve_capture(self._capture_arg, self._inherited_capture)

    def retry(self, error_type: str | None = None) -> int:
        """Record that the call is being retried; returns the retry number (1 for the first retry)."""
        if not self._require_active():
            return self._retries
        self._retries += 1
        if self._span is not None:
            attrs: dict[str, AttributeValue] = {A.RETRY_ATTEMPT: self._retries}
            put(attrs, A.RETRY_ERROR_TYPE, error_type)
            self._span.add_event(A.EVENT_RETRY, attrs)
        return self._retries

    def set_cost(self, usd: float) -> None:
        """Cost in USD as reported or computed by the caller; replaces an earlier value; adds to the run."""
        if self._state != 1 and not self._require_active():
            return
        if type(usd) not in (float, int) or usd < 0:
            self._bad(InvalidValueError(f"cost must be a non-negative number of USD, got {usd!r}"))
            return
        usd = float(usd)
        delta, self._cost = usd - self._cost, usd
        if self._run is not None:
            self._run.add_cost(delta)
        if self._span is not None:
            self._span.set_attribute(A.COST_USD, usd)

    def _close(self, span: Span) -> None:
        if self._retries:
            span.set_attribute(A.RETRY_COUNT, self._retries)

    def _content(self, key: str, value: Any) -> bool:
        """Set a content attribute if capture is on; returns whether it was recorded."""
        if not self._require_active() or self._span is None or value is None or not self.capture_content:
            return False
        try:
            content = to_json(value)
        except ValueError as exc:
            self._bad(InvalidValueError(f"{key} cannot be written as JSON: {exc}"))
            return False
        self._span.set_attribute(key, content)
        return True


class ProviderCall(_Call):
    """A model call: span ``{operation} {model}`` (CLIENT) with GenAI usage, cost, retries and fallbacks."""

    __slots__ = ("_fallbacks", "_original", "_snapshot", "data_source_id", "model", "operation", "provider")
    _model_call = True

    def __init__(
        self,
        provider: str,
        model: str,
        *,
        operation: str = A.OP_CHAT,
        data_source_id: str | None = None,
        context_snapshot: ContextSnapshot | None = None,
        capture_content: bool | None = None,
        prompt_name: str | None = None,
        prompt_version: str | None = None,
        agent_name: str | None = None,
        input_artifacts: Sequence[str] | None = None,
        output_artifacts: Sequence[str] | None = None,
        token_estimate: int | None = None,
        iteration: int | None = None,
        input_ref: str | None = None,
        output_ref: str | None = None,
    ) -> None:
        super().__init__(capture_content)
        if input_ref is not None:
            self._start_ref(A.INPUT_REF, input_ref, "input_ref")
        if output_ref is not None:
            self._start_ref(A.OUTPUT_REF, output_ref, "output_ref")
        if (
            prompt_name is not None
            or prompt_version is not None
            or agent_name is not None
            or input_artifacts is not None
            or output_artifacts is not None
            or token_estimate is not None
            or iteration is not None
        ):
            extra = self._dependencies(input_artifacts, output_artifacts, iteration)
            problems = self._problems()
            if prompt_name is not None:
                put(extra, A.GEN_AI_PROMPT_NAME, text(prompt_name, "prompt_name", problems))
            if prompt_version is not None:
                put(extra, A.GEN_AI_PROMPT_VERSION, text(prompt_version, "prompt_version", problems))
            if agent_name is not None:
                put(extra, A.GEN_AI_AGENT_NAME, text(agent_name, "agent_name", problems))
            if token_estimate is not None:
                put(extra, A.CALL_TOKEN_ESTIMATE, count(token_estimate, "token_estimate", problems))
        if not isinstance(provider, str) or not provider or not isinstance(model, str) or not model:
            problems = self._problems()
            provider = text(provider, "provider", problems)  # type: ignore[assignment]
            model = text(model, "model", problems)  # type: ignore[assignment]
        if not isinstance(operation, str) or operation not in A.INFERENCE_OPERATIONS:
            operation = one_of(operation, _OPERATIONS, "operation", self._problems())  # type: ignore[assignment]
        self.provider: str | None = provider
        self.model: str | None = model
        self.operation: str | None = operation
        self.data_source_id = data_source_id
        self._fallbacks = 0
        self._original: tuple[str | None, str | None] | None = None
        self._snapshot = context_snapshot
        if context_snapshot is not None and context_snapshot.problems:
            self._problems().extend(context_snapshot.problems)  # reported when it was assembled

    def _open(self, parent: Scope) -> tuple[str, SpanKind, dict[str, AttributeValue], Sequence[Link] | None]:
        if self.operation is not None and self.provider is not None and self.model is not None:
            attrs: dict[str, AttributeValue] = {
                A.GEN_AI_OPERATION_NAME: self.operation,
                A.GEN_AI_PROVIDER_NAME: self.provider,
                A.GEN_AI_REQUEST_MODEL: self.model,
            }
        else:  # misused: what was invalid is left out
            attrs = {}
            put(attrs, A.GEN_AI_OPERATION_NAME, self.operation)
            put(attrs, A.GEN_AI_PROVIDER_NAME, self.provider)
            put(attrs, A.GEN_AI_REQUEST_MODEL, self.model)
        attrs.update(base_attributes(parent, A.KIND_PROVIDER_CALL))
        put(attrs, A.GEN_AI_DATA_SOURCE_ID, self.data_source_id)
        if self._extra:
            attrs.update(self._extra)
        return self._name(), SpanKind.CLIENT, attrs, None

    def _name(self) -> str:
        return f"{self.operation or UNKNOWN} {self.model or UNKNOWN}"

    def _after_start(self, span: Span) -> None:
        if self._snapshot is not None:
            self._snapshot.record_on(span)

    def set_usage(
        self,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        *,
        cache_read_input_tokens: int | None = None,
        cache_creation_input_tokens: int | None = None,
        reasoning_output_tokens: int | None = None,
    ) -> None:
        """Token usage as the provider reported it (input includes cached tokens, per the conventions)."""
        if self._state != 1 and not self._require_active():
            return
        span = self._span
        # input/output first, unrolled: the common case, and this is on the no-SDK hot path
        if input_tokens is not None:
            if type(input_tokens) is not int or input_tokens < 0:  # bool is rejected too
                self._bad_count(input_tokens, "input_tokens")
            elif span is not None:
                span.set_attribute(A.GEN_AI_USAGE_INPUT_TOKENS, input_tokens)
        if output_tokens is not None:
            if type(output_tokens) is not int or output_tokens < 0:
                self._bad_count(output_tokens, "output_tokens")
            elif span is not None:
                span.set_attribute(A.GEN_AI_USAGE_OUTPUT_TOKENS, output_tokens)
        if cache_read_input_tokens is None and cache_creation_input_tokens is None and reasoning_output_tokens is None:
            return
        for key, value, what in (
            (A.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, cache_read_input_tokens, "cache_read_input_tokens"),
            (A.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS, cache_creation_input_tokens, "cache_creation_input_tokens"),
            (A.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, reasoning_output_tokens, "reasoning_output_tokens"),
        ):
            if value is None:
                continue
            if type(value) is not int or value < 0:
                self._bad_count(value, what)
            elif span is not None:
                span.set_attribute(key, value)

    def _bad_count(self, value: object, what: str) -> None:
        self._bad(InvalidValueError(f"{what} must be a non-negative int, got {value!r}"))

    def set_token_estimate(self, tokens: int) -> None:
        """The caller's own estimate of the call's tokens, for when the provider reports no usage."""
        if not self._require_active():
            return
        estimate = count(tokens, "token_estimate", self._problems())
        self._sync_misuse()
        if self._span is not None and estimate is not None:
            self._span.set_attribute(A.CALL_TOKEN_ESTIMATE, estimate)

    def set_response(
        self,
        *,
        model: str | None = None,
        response_id: str | None = None,
        finish_reasons: Iterable[str] | None = None,
    ) -> None:
        """What the provider answered: the model that produced it, its response id, the finish reasons."""
        if not self._require_active() or self._span is None:
            return
        if model is not None:
            self._span.set_attribute(A.GEN_AI_RESPONSE_MODEL, model)
        if response_id is not None:
            self._span.set_attribute(A.GEN_AI_RESPONSE_ID, response_id)
        if finish_reasons is not None:
            reasons = strings(finish_reasons, "finish_reasons", self._problems())
            if reasons:
                self._span.set_attribute(A.GEN_AI_RESPONSE_FINISH_REASONS, reasons)
            self._sync_misuse()

    def fallback(
        self,
        *,
        to_provider: str | None = None,
        to_model: str | None = None,
        reason: str | None = None,
        status: str | None = None,
    ) -> None:
        """Switch to another provider and/or model: an event, and the span is renamed after the new model.

        ``status``: how the attempt on the new provider/model went (``succeeded`` / ``failed``), when it is known
        as the fallback is recorded (seed 000's recordFallbackAttempt). Left out, SQL derives it: an attempt
        followed by another fallback failed, the last one went as the call went."""
        if not self._require_active():
            return
        if status is not None:
            status = one_of(status, A.FALLBACK_STATUSES, "fallback status", self._problems())
            self._sync_misuse()
        new_provider = to_provider or self.provider
        new_model = to_model or self.model
        if (new_provider, new_model) == (self.provider, self.model):
            self._bad(InvalidValueError("a fallback must change the provider or the model"), "no fallback recorded")
            return
        self._fallbacks += 1
        span = self._span
        if span is not None:
            attrs: dict[str, AttributeValue] = {}
            put(attrs, A.FALLBACK_FROM_PROVIDER, self.provider)
            put(attrs, A.FALLBACK_FROM_MODEL, self.model)
            put(attrs, A.FALLBACK_TO_PROVIDER, new_provider)
            put(attrs, A.FALLBACK_TO_MODEL, new_model)
            put(attrs, A.FALLBACK_REASON, reason)
            put(attrs, A.FALLBACK_STATUS, status)
            span.add_event(A.EVENT_FALLBACK, attrs)
            if self._original is None:
                put_span(span, A.FALLBACK_ORIGINAL_PROVIDER, self.provider)
                put_span(span, A.FALLBACK_ORIGINAL_MODEL, self.model)
            put_span(span, A.GEN_AI_PROVIDER_NAME, new_provider)
            put_span(span, A.GEN_AI_REQUEST_MODEL, new_model)
        if self._original is None:
            self._original = (self.provider, self.model)
        self.provider, self.model = new_provider, new_model
        if span is not None:
            span.update_name(self._name())

    def record_context(self, snapshot: ContextSnapshot) -> None:
        """Record an assembled context snapshot on this call (attributes + per-block events)."""
        if not self._require_active():
            return
        if snapshot.problems:
            self._problems().extend(snapshot.problems)  # reported when it was assembled
            self._sync_misuse()
        if self._span is not None:
            snapshot.record_on(self._span)

    def record_input(self, messages: Any, *, system_instructions: Any = None) -> bool:
        """``gen_ai.input.messages`` (+ ``gen_ai.system_instructions``) when content capture is on."""
        recorded = self._content(A.GEN_AI_INPUT_MESSAGES, messages)
        if recorded and system_instructions is not None:
            self._content(A.GEN_AI_SYSTEM_INSTRUCTIONS, system_instructions)
        return recorded

    def record_output(self, messages: Any) -> bool:
        """``gen_ai.output.messages`` when content capture is on."""
        return self._content(A.GEN_AI_OUTPUT_MESSAGES, messages)

    def _close(self, span: Span) -> None:
        if self._retries:
            span.set_attribute(A.RETRY_COUNT, self._retries)
        if self._fallbacks:
            span.set_attribute(A.FALLBACK_COUNT, self._fallbacks)


class ToolInvocation(_Call):
    """A tool execution: span ``execute_tool {name}`` (INTERNAL)."""

    __slots__ = ("call_id", "name", "provider", "tool_type")
    _model_call = False

    def __init__(
        self,
        name: str,
        *,
        call_id: str | None = None,
        tool_type: str = "function",
        provider: str | None = None,
        capture_content: bool | None = None,
        input_artifacts: Sequence[str] | None = None,
        output_artifacts: Sequence[str] | None = None,
        iteration: int | None = None,
        input_ref: str | None = None,
        output_ref: str | None = None,
    ) -> None:
        super().__init__(capture_content)
        if input_ref is not None:
            self._start_ref(A.INPUT_REF, input_ref, "input_ref")
        if output_ref is not None:
            self._start_ref(A.OUTPUT_REF, output_ref, "output_ref")
        if input_artifacts is not None or output_artifacts is not None or iteration is not None:
            self._dependencies(input_artifacts, output_artifacts, iteration)
        if not isinstance(name, str) or not name:
            name = text(name, "tool name", self._problems())  # type: ignore[assignment]
        self.name: str | None = name
        self.call_id = None if call_id is None else check_id(call_id, "call_id", self._problems())
        self.tool_type = tool_type
        self.provider = provider

    def _open(self, parent: Scope) -> tuple[str, SpanKind, dict[str, AttributeValue], Sequence[Link] | None]:
        attrs: dict[str, AttributeValue] = {A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL}
        put(attrs, A.GEN_AI_TOOL_NAME, self.name)
        attrs.update(base_attributes(parent, A.KIND_TOOL))
        put(attrs, A.GEN_AI_TOOL_CALL_ID, self.call_id)
        put(attrs, A.GEN_AI_TOOL_TYPE, self.tool_type)
        put(attrs, A.TOOL_PROVIDER, self.provider)
        if self._extra:
            attrs.update(self._extra)
        return f"{A.OP_EXECUTE_TOOL} {self.name or UNKNOWN}", SpanKind.INTERNAL, attrs, None

    def record_arguments(self, arguments: Any) -> bool:
        """``gen_ai.tool.call.arguments`` when content capture is on."""
        return self._content(A.GEN_AI_TOOL_CALL_ARGUMENTS, arguments)

    def record_result(self, result: Any) -> bool:
        """``gen_ai.tool.call.result`` when content capture is on."""
        return self._content(A.GEN_AI_TOOL_CALL_RESULT, result)


provider_call = ProviderCall
tool_invocation = ToolInvocation
