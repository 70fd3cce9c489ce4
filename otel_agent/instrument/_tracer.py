"""Which tracer the helpers use, and the cheap "nothing is configured" test.

Resolution order: a provider bound to the current context (``use_tracer_provider`` /
``flow_run(tracer_provider=)`` / ``accept(tracer_provider=)``) > one set with ``configure(tracer_provider=)``
> the global provider.

``current_tracer()`` returns ``None`` when spans would be no-ops; every helper then skips all span work. That
is what keeps the no-SDK cost far below the API's own no-op path (~7 µs for ``start_as_current_span`` here):
calling ``trace.get_tracer_provider()`` alone costs ~1 µs, so while no global provider is set we look at the
API module's ``_TRACER_PROVIDER`` slot (set-once by design) and fall back to the public call if that slot ever
disappears.

Nothing configured at all (no provider bound, configured or set globally) logs one warning, the first time a
helper looks: every helper is then a silent no-op, which is rarely what was meant. A provider chosen on purpose
to record nothing (``NoOpTracerProvider``, ``OTEL_SDK_DISABLED``) is not warned about."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from importlib import metadata

from opentelemetry import trace
from opentelemetry.trace import NoOpTracer, NoOpTracerProvider, ProxyTracerProvider, Tracer, TracerProvider

INSTRUMENTATION_NAME = "otel_agent"

try:
    INSTRUMENTATION_VERSION = metadata.version("otel-agent")
except metadata.PackageNotFoundError:  # running from a source tree that was never installed
    INSTRUMENTATION_VERSION = "0.0.0"

_NOOP = object()  # sentinel: "resolved, and it is a no-op"
# Read once: os.environ lookups cost ~1 µs, half the no-SDK budget. (If set, the API builds the provider from
# it on the first get_tracer_provider() call, after which the global slot is filled and this is not consulted.)
_ENV_PROVIDER = bool(os.environ.get("OTEL_PYTHON_TRACER_PROVIDER"))
_MISSING = object()

# Holds a Tracer, _NOOP, or None (= not bound in this context); the provider beside it serves flush() only.
_BOUND: ContextVar[object] = ContextVar("otel_agent_bound_tracer", default=None)
_BOUND_PROVIDER: ContextVar[TracerProvider | None] = ContextVar("otel_agent_bound_provider", default=None)
_configured: object = None  # Tracer, _NOOP or None
_configured_provider: TracerProvider | None = None
_global: object = None  # cached once the global provider is known (it can be set only once)
_warned_no_sdk = False
_log = logging.getLogger("otel_agent.instrument")
NO_SDK_WARNING = (
    "no OpenTelemetry SDK is configured: otel_agent.instrument helpers record nothing until a TracerProvider "
    "is set (trace.set_tracer_provider, configure(tracer_provider=) or use_tracer_provider); see docs/semconv.md "
    "(logged once)"
)


def _no_sdk() -> None:
    global _warned_no_sdk
    if not _warned_no_sdk:
        _warned_no_sdk = True
        _log.warning(NO_SDK_WARNING)


def tracer_for(provider: TracerProvider | None) -> object:
    """Tracer for ``provider`` (or the no-op sentinel); ``None`` means "use the global provider"."""
    if provider is None:
        return None
    if isinstance(provider, NoOpTracerProvider | ProxyTracerProvider):
        return _NOOP
    tracer = trace.get_tracer(INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION, tracer_provider=provider)
    return _NOOP if isinstance(tracer, NoOpTracer) else tracer


def _resolve_global() -> Tracer | None:
    global _global
    slot = getattr(trace, "_TRACER_PROVIDER", _MISSING)
    if slot is None and not _ENV_PROVIDER:
        if not _warned_no_sdk:
            _no_sdk()
        return None  # nothing set yet; may still be set later, so do not cache
    provider = trace.get_tracer_provider()
    if isinstance(provider, ProxyTracerProvider):
        if not _warned_no_sdk:
            _no_sdk()
        return None
    _global = tracer_for(provider)
    return None if _global is _NOOP else _global  # type: ignore[return-value]


def current_tracer() -> Tracer | None:
    """The tracer to emit with, or ``None`` when nothing would be recorded."""
    bound = _BOUND.get()
    if bound is None:
        bound = _configured
        if bound is None:
            bound = _global
            if bound is None:
                return _resolve_global()
    return None if bound is _NOOP else bound  # type: ignore[return-value]


Binding = tuple[Token[object], Token[TracerProvider | None]]


def bind(provider: TracerProvider | None) -> Binding | None:
    """Bind ``provider`` to the current context; returns tokens for ``unbind`` (None: nothing bound)."""
    if provider is None:
        return None
    return _BOUND.set(tracer_for(provider)), _BOUND_PROVIDER.set(provider)


def unbind(tokens: Binding | None) -> None:
    if tokens is not None:
        _BOUND_PROVIDER.reset(tokens[1])
        _BOUND.reset(tokens[0])


@contextmanager
def use_tracer_provider(provider: TracerProvider) -> Iterator[None]:
    """Emit through ``provider`` inside this block (and tasks started in it); the global is untouched."""
    tokens = bind(provider)
    try:
        yield
    finally:
        unbind(tokens)


def current_provider() -> TracerProvider:
    """The provider the helpers emit through here (bound > configured > global)."""
    return _BOUND_PROVIDER.get() or _configured_provider or trace.get_tracer_provider()


def flush(timeout_millis: int = 30_000) -> bool:
    """Export what the current provider has buffered now (e.g. right after a receipt transition in a worker
    that may die, or before a long wait). False if the provider reports a timeout; True when it has nothing
    to flush (no SDK)."""
    force_flush = getattr(current_provider(), "force_flush", None)
    return True if force_flush is None else bool(force_flush(timeout_millis))


def set_configured_provider(provider: TracerProvider | None) -> None:
    global _configured, _configured_provider
    _configured = tracer_for(provider)
    _configured_provider = provider


def reset_global_cache() -> None:
    """Forget the cached global tracer (tests only: the real global can be set once per process)."""
    global _global
    _global = None
