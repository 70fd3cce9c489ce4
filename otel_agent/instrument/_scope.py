"""The machinery every helper shares: where we are (a contextvar), span helpers, and one-shot record spans.

``_SCOPE`` holds an immutable snapshot of the enclosing run/step and the innermost active helper. It lives in
a ``ContextVar``, so threads and asyncio tasks each see their own (tasks inherit a copy of their creator's),
exactly like OpenTelemetry's own context.

A record (source, claim, receipt transition, ...) is a span that starts and ends at once: a span is exported
only when it ends, and a record must reach the backend even while its step or run is still open."""

from __future__ import annotations

import copy
import functools
import inspect
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, ClassVar, Self, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN, Link, Span, SpanKind, Status, StatusCode, TracerProvider

from . import _tracer
from . import attributes as A
from ._misuse import Problems, as_attribute, report
from ._validate import ref as valid_ref
from .errors import InstrumentError, InvalidValueError, NotActiveError

F = TypeVar("F", bound=Callable[..., Any])
_log = logging.getLogger("otel_agent.instrument")
AttributeValue = str | bool | int | float | Sequence[str] | Sequence[int] | Sequence[float] | Sequence[bool]


def _announce(tracer: trace.Tracer, span: Span, name: str, kind: SpanKind, attrs: Mapping[str, AttributeValue]) -> None:
    """Announce that ``span`` has started: a span is exported only when it ends, so a 40-minute run would be
    invisible for 40 minutes (and one that dies, for ever). The announcement is Logfire's pending span — a child
    of ``span`` that starts and ends at its start, with its attributes, ``logfire.span_type = pending_span`` and
    ``logfire.pending_parent_id`` (``span``'s parent, zeros for a root) — exported like any ended span, so within
    the span processor's delay (a BatchSpanProcessor's schedule delay: 5 s by default). The store reads it as
    ``span`` in progress until ``span`` itself arrives (docs/views-runs.md "Runs in progress"). Never raises."""
    try:
        start = getattr(span, "start_time", None) or time.time_ns()
        parent = getattr(span, "parent", None)
        pending_attrs = dict(attrs)
        pending_attrs[A.PENDING_SPAN_TYPE] = A.PENDING_SPAN
        pending_attrs[A.PENDING_PARENT_ID] = (
            format(parent.span_id, "016x") if parent is not None and parent.is_valid else A.NO_PARENT_ID
        )
        pending = tracer.start_span(
            name, context=trace.set_span_in_context(span), kind=kind, attributes=pending_attrs, start_time=start
        )
        pending.end(end_time=start)
    except Exception:  # instrumentation never breaks the agent
        _log.warning("otel_agent: announcing %r failed", name, exc_info=True)


class Scope:
    """Where code runs: enclosing flow run and step, inherited capture setting, innermost helper."""

    __slots__ = ("capture", "handle", "run", "step")

    def __init__(
        self,
        run: Any = None,
        step: Any = None,
        capture: bool | None = None,
        handle: SpanHelper | None = None,
    ) -> None:
        self.run = run
        self.step = step
        self.capture = capture
        self.handle = handle

    # Ids are read through the handles, which mint them lazily: with no SDK they are often never needed.
    @property
    def run_id(self) -> str | None:
        return None if self.run is None else self.run.run_id

    @property
    def step_id(self) -> str | None:
        return None if self.step is None else self.step.step_id

    @property
    def step_name(self) -> str | None:
        return None if self.step is None else self.step.name


ROOT = Scope()
UNKNOWN = "unknown"  # stands in, in a span name only, for a name the caller got wrong (the attribute is left out)
_SCOPE: ContextVar[Scope] = ContextVar("otel_agent_scope", default=ROOT)


def current_scope() -> Scope:
    return _SCOPE.get()


def base_attributes(scope: Scope, kind: str) -> dict[str, AttributeValue]:
    """record kind + the enclosing run and step ids: lets SQL find a record's run without walking parents."""
    attrs: dict[str, AttributeValue] = {A.RECORD_KIND: kind}
    run = scope.run
    if run is not None:
        attrs[A.RUN_ID] = run.run_id
    step = scope.step
    if step is not None:
        attrs[A.STEP_ID] = step.step_id
    return attrs


def put(attrs: dict[str, AttributeValue], key: str, value: AttributeValue | None) -> None:
    """Set ``key`` only when there is a value (the SDK rejects None, and empty arrays carry nothing)."""
    if value is None:
        return
    if isinstance(value, tuple | list) and not value:
        return
    attrs[key] = value


def shallow_copy(obj: Any) -> Any:
    """A new instance of ``obj``'s class with the same slot values (what ``copy.copy`` does by default), for
    ``__copy__`` methods that then reset their per-use state."""
    new = object.__new__(type(obj))
    for cls in type(obj).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if hasattr(obj, name):
                object.__setattr__(new, name, getattr(obj, name))
    if new._misuse is not None:
        new._misuse = list(new._misuse)
    return new


def put_span(span: Span, key: str, value: AttributeValue | None) -> None:
    """``span.set_attribute`` only when there is a value."""
    if value is not None:
        span.set_attribute(key, value)


def put_misuse(attrs: dict[str, AttributeValue], problems: Problems | None) -> None:
    """Record the misuse found while building a record on it (lenient mode; strict mode raised already)."""
    if problems:
        attrs[A.MISUSE] = as_attribute(problems)


def emit_record(
    name: str,
    attrs: Mapping[str, AttributeValue],
    *,
    kind: SpanKind = SpanKind.INTERNAL,
    links: Sequence[Link] | None = None,
    tracer: trace.Tracer | None = None,
) -> Span:
    """Emit a zero-length span now (child of the current span); returns it (ended) or INVALID_SPAN."""
    tracer = tracer or _tracer.current_tracer()
    if tracer is None:
        return INVALID_SPAN
    span = tracer.start_span(name, kind=kind, attributes=attrs, links=links)
    span.end()
    return span


def record_error(span: Span, exc: BaseException) -> None:
    span.set_attribute(A.ERROR_TYPE, type(exc).__qualname__)
    span.record_exception(exc, escaped=True)
    span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))


class SpanHelper:
    """Base of the helpers that time a block of work: a context manager (sync or async) and a decorator.

    Subclasses fill in ``_prepare`` (ids, validation), ``_open`` (name, kind, attributes, links at start),
    ``_child_scope`` and ``_close`` (attributes known only at the end). Instances are single-use; used as a
    decorator, each call works on a fresh shallow copy of the unentered template.

    Misuse (see ``_misuse``) found before the span starts is kept in ``_misuse`` and set on the span at start;
    misuse found while it runs is added to it then. Entering a used handle again, or using a method outside
    the block, logs and does nothing (strict mode: ``NotActiveError``).
    """

    __slots__ = ("_bind_token", "_misuse", "_otel_token", "_provider", "_refs", "_scope_token", "_span", "_state")
    _TAKES_REFS: ClassVar[bool] = False
    """Whether the work has an input / output ref (flow runs, steps, skills, provider calls, tool invocations)."""
    _ANNOUNCES: ClassVar[bool] = False
    """Whether its start is announced at once by a pending span (runs and steps: ``_announce``)."""

    def __init__(self, tracer_provider: TracerProvider | None = None) -> None:
        # Only what is read before __enter__; the other slots are assigned there (fewer stores on the no-SDK path).
        self._state = 0  # 0 new, 1 active, 2 done
        self._provider = tracer_provider
        self._misuse: Problems | None = None
        self._refs: dict[str, AttributeValue] | None = None

    # --- subclass hooks -------------------------------------------------------------------------------------
    def _prepare(self, parent: Scope) -> None:
        """Validate and assign ids; may raise before anything is emitted."""

    def _open(self, parent: Scope) -> tuple[str, SpanKind, dict[str, AttributeValue], Sequence[Link] | None]:
        raise NotImplementedError

    def _child_scope(self, parent: Scope) -> Scope:
        return Scope(parent.run, parent.step, parent.capture, self)

    def _close(self, span: Span) -> None:
        """Called before the span ends, only when there is a span (telemetry on)."""

    def _after_start(self, span: Span) -> None:
        """Called right after the span started and became current (e.g. to emit a record inside it)."""

    # --- context manager ------------------------------------------------------------------------------------
    def __enter__(self) -> Self:
        if self._state:
            report(NotActiveError(f"{type(self).__name__} objects are single-use; create a new one"), None, "ignored")
            return self
        bind_token = self._bind_token = None if self._provider is None else _tracer.bind(self._provider)
        parent = _SCOPE.get()
        try:
            self._prepare(parent)
        except BaseException:
            _tracer.unbind(bind_token)
            raise
        tracer = _tracer.current_tracer()
        if tracer is None:
            span = self._span = None
        else:
            name, kind, attrs, links = self._open(parent)
            if self._refs:
                attrs.update(self._refs)
            misuse = self._misuse
            if misuse:
                self._misuse = misuse = list(misuse)  # a decorator's copies must not share the template's list
                attrs[A.MISUSE] = as_attribute(misuse)
            span = self._span = tracer.start_span(name, kind=kind, attributes=attrs, links=links)
            self._otel_token = otel_context.attach(trace.set_span_in_context(span))
            if self._ANNOUNCES:
                _announce(tracer, span, name, kind, attrs)
        self._scope_token = _SCOPE.set(self._child_scope(parent))
        self._state = 1
        if span is not None:
            self._after_start(span)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if self._state != 1:
            return
        span = self._span
        try:
            if span is not None:
                if exc is not None:
                    record_error(span, exc)
                self._close(span)
        finally:
            self._state = 2
            _SCOPE.reset(self._scope_token)
            if span is not None:
                span.end()
                otel_context.detach(self._otel_token)
            if self._bind_token is not None:
                _tracer.unbind(self._bind_token)

    async def __aenter__(self) -> Self:
        return self.__enter__()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        self.__exit__(exc_type, exc, tb)

    # --- decorator ------------------------------------------------------------------------------------------
    def __call__(self, fn: F) -> F:
        template = self
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                with copy.copy(template):
                    return await fn(*args, **kwargs)

            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with copy.copy(template):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    # --- shared handle API ----------------------------------------------------------------------------------
    @property
    def span(self) -> Span:
        """The underlying OpenTelemetry span (``INVALID_SPAN`` when telemetry is off or outside the block)."""
        return self._span if self._state == 1 and self._span is not None else INVALID_SPAN

    @property
    def active(self) -> bool:
        return self._state == 1

    def _require_active(self) -> bool:
        """True inside the block; outside it the misuse is reported and the caller does nothing."""
        if self._state == 1:
            return True
        report(NotActiveError(f"{type(self).__name__} is not active (use it inside its with block)"), None, "ignored")
        return False

    def _problems(self) -> Problems:
        """This helper's misuse list (created on first use)."""
        if self._misuse is None:
            self._misuse = []
        return self._misuse

    def _sync_misuse(self) -> None:
        """Set ``otel_agent.misuse`` on the running span to everything found so far."""
        if self._misuse and self._state == 1 and self._span is not None:
            self._span.set_attribute(A.MISUSE, as_attribute(self._misuse))

    def _bad(self, error: InstrumentError, instead: str = "left out") -> None:
        """Report a misuse of this helper; lenient mode records it on the span (now, or when it starts)."""
        report(error, self._problems(), instead)
        self._sync_misuse()

    def _start_ref(self, key: str, value: object, what: str) -> None:
        """An ``input_ref`` / ``output_ref`` given to the constructor: set when the span starts."""
        checked = valid_ref(value, what, self._problems())
        if checked is not None:
            self._refs = {**(self._refs or {}), key: checked}

    def _set_ref(self, key: str, value: object, what: str) -> None:
        if not self._TAKES_REFS:
            self._bad(InvalidValueError(f"{type(self).__name__} takes no {what}"), "ignored")
            return
        if not self._require_active():
            return
        checked = valid_ref(value, what, self._problems())
        self._sync_misuse()
        if checked is not None and self._span is not None:
            self._span.set_attribute(key, checked)

    def set_input_ref(self, ref: str) -> None:
        """Where this work's input lives (``otel_agent.input.ref``: an artifact id, a URI, a content hash; never
        the content). Prefer the constructor's ``input_ref=``, which samplers see at start."""
        self._set_ref(A.INPUT_REF, ref, "input_ref")

    def set_output_ref(self, ref: str) -> None:
        """Where this work's output lives (``otel_agent.output.ref``), known when it finishes (seed 000's
        ``finishSpan({outputRef})``); replaces an earlier one."""
        self._set_ref(A.OUTPUT_REF, ref, "output_ref")

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        """Escape hatch for your own attributes (not under ``gen_ai.*``, ``otel.*`` or ``otel_agent.*``)."""
        if self._require_active() and self._span is not None:
            self._span.set_attribute(key, value)

    def fail(self, error_type: str, message: str | None = None) -> None:
        """Mark the work failed without raising (``error.type`` + ERROR status), e.g. a handled error."""
        if self._require_active() and self._span is not None:
            self._span.set_attribute(A.ERROR_TYPE, error_type)
            self._span.set_status(Status(StatusCode.ERROR, message or error_type))


def current_operation() -> SpanHelper | None:
    """The innermost active helper in this context (useful inside decorated functions)."""
    return _SCOPE.get().handle
