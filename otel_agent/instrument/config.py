"""Library-wide settings: the tracer provider to use, whether content may be captured, whether misuse raises.

Content capture (prompts, completions, system instructions, tool arguments/results, raw model output in
badcases) is off by default, as the GenAI conventions require. Precedence, first match wins:

1. the ``capture_content=`` argument of the helper call itself;
2. the ``capture_content=`` argument of the enclosing ``flow_run`` (inherited by everything inside it);
3. ``configure(capture_content=...)``;
4. the environment variable ``OTEL_AGENT_CAPTURE_CONTENT`` (``true/1/yes/on`` or ``false/0/no/off``);
5. off.
"""

from __future__ import annotations

import logging
import os

from opentelemetry.trace import TracerProvider

from . import _misuse, _tracer

CAPTURE_CONTENT_ENV = "OTEL_AGENT_CAPTURE_CONTENT"

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"", "0", "false", "no", "off"})
_log = logging.getLogger(__name__)

_configured_capture: bool | None = None


def configure(
    *,
    tracer_provider: TracerProvider | None = None,
    capture_content: bool | None = None,
    strict: bool | None = None,
) -> None:
    """Set library defaults without touching OpenTelemetry's global provider.

    ``tracer_provider=None`` leaves the provider choice to the global one; ``capture_content=None`` and
    ``strict=None`` defer to the environment variables ``OTEL_AGENT_CAPTURE_CONTENT`` and
    ``OTEL_AGENT_STRICT``. ``strict=True``: a misused helper raises instead of logging and marking its span.
    """
    global _configured_capture
    _tracer.set_configured_provider(tracer_provider)
    _configured_capture = capture_content
    _misuse.set_configured_strict(strict)


def env_capture_content() -> bool | None:
    """The environment's answer, or None when unset. Unknown values count as off (with a warning)."""
    raw = os.environ.get(CAPTURE_CONTENT_ENV)
    if raw is None:
        return None
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value not in _FALSE:
        _log.warning("%s=%r is not a boolean; content capture stays off", CAPTURE_CONTENT_ENV, raw)
    return False


def resolve_capture(argument: bool | None, inherited: bool | None = None) -> bool:
    """Apply the documented precedence: argument > enclosing run > configure() > environment > off."""
    if argument is not None:
        return argument
    if inherited is not None:
        return inherited
    if _configured_capture is not None:
        return _configured_capture
    env = env_capture_content()
    return bool(env)
