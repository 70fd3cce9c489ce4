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
from ._scope import AttributeValue, Scope, SpanHelper, base_attributes, put
from .checks import guard_result
from .config import resolve_capture
from .errors import BudgetExceededError, InvalidValueError

if TYPE_CHECKING:
    from .context import ContextSnapshot


def to_json(value: Any) -> str:
    """Content as a JSON string (the SDK takes only primitives and homogeneous arrays); str passes as-is."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _bad_count(value: object, what: str) -> InvalidValueError:
    return InvalidValueError(f"{what} must be a non-negative int, got {value!r}")


class _Call(SpanHelper):
    """What provider calls and tool invocations share: retries, cost, budget counting, content gating."""

    __slots__ = ("_retries", "_cost", "_capture_arg", "_inherited_capture", "_run")

    def __init__(self, capture_content: bool | None) -> None:
        # SpanHelper.__init__ inlined (this is the hottest constructor on the no-SDK path).
        self._state = 0
        self._provider = None
        self._retries = 0
        self._cost = 0.0
        self._capture_arg = capture_content

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
        self._require_active()
        self._retries += 1
        if self._span is not None:
            attrs: dict[str, AttributeValue] = {A.RETRY_ATTEMPT: self._retries}
            put(attrs, A.RETRY_ERROR_TYPE, error_type)
            self._span.add_event(A.EVENT_RETRY, attrs)
        return self._retries

    def set_cost(self, usd: float) -> None:
        """Cost in USD as reported or computed by the caller; replaces an earlier value; adds to the run."""
        if self._state != 1:
            self._require_active()
        if type(usd) not in (float, int) or usd < 0:
            raise InvalidValueError(f"cost must be a non-negative number of USD, got {usd!r}")
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
        self._require_active()
        if self._span is None or value is None or not self.capture_content:
            return False
        self._span.set_attribute(key, to_json(value))
        return True


class ProviderCall(_Call):
    """A model call: span ``{operation} {model}`` (CLIENT) with GenAI usage, cost, retries and fallbacks."""

    __slots__ = ("provider", "model", "operation", "data_source_id", "_fallbacks", "_original", "_snapshot")
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
    ) -> None:
        super().__init__(capture_content)
        if not isinstance(provider, str) or not provider or not isinstance(model, str) or not model:
            raise InvalidValueError("provider and model must be non-empty strings")
        if operation not in A.INFERENCE_OPERATIONS:
            raise InvalidValueError(f"operation must be one of {sorted(A.INFERENCE_OPERATIONS)}, got {operation!r}")
        self.provider = provider
        self.model = model
        self.operation = operation
        self.data_source_id = data_source_id
        self._fallbacks = 0
        self._original: tuple[str, str] | None = None
        self._snapshot = context_snapshot

    def _open(self, parent: Scope) -> tuple[str, SpanKind, dict[str, AttributeValue], Sequence[Link] | None]:
        attrs: dict[str, AttributeValue] = {
            A.GEN_AI_OPERATION_NAME: self.operation,
            A.GEN_AI_PROVIDER_NAME: self.provider,
            A.GEN_AI_REQUEST_MODEL: self.model,
        }
        attrs.update(base_attributes(parent, A.KIND_PROVIDER_CALL))
        put(attrs, A.GEN_AI_DATA_SOURCE_ID, self.data_source_id)
        return f"{self.operation} {self.model}", SpanKind.CLIENT, attrs, None

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
        if self._state != 1:
            self._require_active()
        span = self._span
        # input/output first, unrolled: the common case, and this is on the no-SDK hot path
        if input_tokens is not None:
            if type(input_tokens) is not int or input_tokens < 0:  # bool is rejected too
                raise _bad_count(input_tokens, "input_tokens")
            if span is not None:
                span.set_attribute(A.GEN_AI_USAGE_INPUT_TOKENS, input_tokens)
        if output_tokens is not None:
            if type(output_tokens) is not int or output_tokens < 0:
                raise _bad_count(output_tokens, "output_tokens")
            if span is not None:
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
                raise _bad_count(value, what)
            if span is not None:
                span.set_attribute(key, value)

    def set_response(
        self,
        *,
        model: str | None = None,
        response_id: str | None = None,
        finish_reasons: Iterable[str] | None = None,
    ) -> None:
        self._require_active()
        if self._span is None:
            return
        if model is not None:
            self._span.set_attribute(A.GEN_AI_RESPONSE_MODEL, model)
        if response_id is not None:
            self._span.set_attribute(A.GEN_AI_RESPONSE_ID, response_id)
        if finish_reasons is not None:
            self._span.set_attribute(A.GEN_AI_RESPONSE_FINISH_REASONS, tuple(finish_reasons))

    def fallback(
        self, *, to_provider: str | None = None, to_model: str | None = None, reason: str | None = None
    ) -> None:
        """Switch to another provider and/or model: an event, and the span is renamed after the new model."""
        self._require_active()
        new_provider = to_provider or self.provider
        new_model = to_model or self.model
        if (new_provider, new_model) == (self.provider, self.model):
            raise InvalidValueError("a fallback must change the provider or the model")
        self._fallbacks += 1
        span = self._span
        if span is not None:
            attrs: dict[str, AttributeValue] = {
                A.FALLBACK_FROM_PROVIDER: self.provider,
                A.FALLBACK_FROM_MODEL: self.model,
                A.FALLBACK_TO_PROVIDER: new_provider,
                A.FALLBACK_TO_MODEL: new_model,
            }
            put(attrs, A.FALLBACK_REASON, reason)
            span.add_event(A.EVENT_FALLBACK, attrs)
            if self._original is None:
                span.set_attribute(A.FALLBACK_ORIGINAL_PROVIDER, self.provider)
                span.set_attribute(A.FALLBACK_ORIGINAL_MODEL, self.model)
            span.set_attribute(A.GEN_AI_PROVIDER_NAME, new_provider)
            span.set_attribute(A.GEN_AI_REQUEST_MODEL, new_model)
            span.update_name(f"{self.operation} {new_model}")
        if self._original is None:
            self._original = (self.provider, self.model)
        self.provider, self.model = new_provider, new_model

    def record_context(self, snapshot: ContextSnapshot) -> None:
        """Record an assembled context snapshot on this call (attributes + per-block events)."""
        self._require_active()
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

    __slots__ = ("name", "call_id", "tool_type", "provider")
    _model_call = False

    def __init__(
        self,
        name: str,
        *,
        call_id: str | None = None,
        tool_type: str = "function",
        provider: str | None = None,
        capture_content: bool | None = None,
    ) -> None:
        super().__init__(capture_content)
        if not isinstance(name, str) or not name:
            raise InvalidValueError("tool name must be a non-empty string")
        self.name = name
        self.call_id = None if call_id is None else check_id(call_id, "call_id")
        self.tool_type = tool_type
        self.provider = provider

    def _open(self, parent: Scope) -> tuple[str, SpanKind, dict[str, AttributeValue], Sequence[Link] | None]:
        attrs: dict[str, AttributeValue] = {
            A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
            A.GEN_AI_TOOL_NAME: self.name,
        }
        attrs.update(base_attributes(parent, A.KIND_TOOL))
        put(attrs, A.GEN_AI_TOOL_CALL_ID, self.call_id)
        put(attrs, A.GEN_AI_TOOL_TYPE, self.tool_type)
        put(attrs, A.TOOL_PROVIDER, self.provider)
        return f"{A.OP_EXECUTE_TOOL} {self.name}", SpanKind.INTERNAL, attrs, None

    def record_arguments(self, arguments: Any) -> bool:
        """``gen_ai.tool.call.arguments`` when content capture is on."""
        return self._content(A.GEN_AI_TOOL_CALL_ARGUMENTS, arguments)

    def record_result(self, result: Any) -> bool:
        """``gen_ai.tool.call.result`` when content capture is on."""
        return self._content(A.GEN_AI_TOOL_CALL_RESULT, result)


provider_call = ProviderCall
tool_invocation = ToolInvocation
