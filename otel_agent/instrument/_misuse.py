"""What a helper does when it is misused: by default it never raises into the agent.

OpenTelemetry's error-handling rule is that instrumentation must not throw into the application. So a helper
given a value outside its documented vocabulary (any ``InstrumentError`` except ``BudgetExceededError``, which
is an explicit opt-in) by default:

- logs one warning per call site — the first frame of agent code outside this package — not per call, so a
  misuse inside a loop costs one log line;
- records the message on its span as ``otel_agent.misuse`` (string[]; the ``data_quality`` view lists them);
- carries on with the documented fallback (the value left out, or a generated id in place of a bad record id).

With ``OTEL_AGENT_STRICT=1`` (or ``configure(strict=True)``) it raises the error instead, at the same point it
would have been found; the project's own tests run that way.

Only the rare path costs anything: the environment is read, and the stack walked, when a misuse happens.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading

from .errors import InstrumentError

STRICT_ENV = "OTEL_AGENT_STRICT"
MAX_MESSAGE_CHARS = 240  # a message quotes the bad value: bounded, so a huge or secret-ish value is not copied whole
MAX_MESSAGES = 16  # per span
MAX_SITES = 4096  # call sites remembered; past it, further sites are not logged (one line says so)

_TRUE = frozenset({"1", "true", "yes", "on"})
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_CONTEXTLIB = contextlib.__file__  # ExitStack.enter_context(helper): the site is the caller of enter_context
log = logging.getLogger("otel_agent.instrument")

_configured_strict: bool | None = None
_sites: set[tuple[str, int]] = set()
_sites_lock = threading.Lock()

Problems = list[str]


def set_configured_strict(value: bool | None) -> None:
    global _configured_strict
    _configured_strict = value


def strict() -> bool:
    """Whether misuse raises: ``configure(strict=)`` if set, else ``OTEL_AGENT_STRICT`` (true/1/yes/on)."""
    if _configured_strict is not None:
        return _configured_strict
    return os.environ.get(STRICT_ENV, "").strip().lower() in _TRUE


def call_site() -> tuple[str, int]:
    """File and line of the innermost frame outside this package: the agent code that called the helper."""
    frame = sys._getframe(1)
    while frame is not None and (
        frame.f_code.co_filename.startswith(_PACKAGE_DIR) or frame.f_code.co_filename == _CONTEXTLIB
    ):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return "<unknown>", 0
    return frame.f_code.co_filename, frame.f_lineno


def as_attribute(problems: Problems) -> tuple[str, ...]:
    """The value of ``otel_agent.misuse``: the first ``MAX_MESSAGES`` problems."""
    return tuple(problems[:MAX_MESSAGES])


def report(error: InstrumentError, problems: Problems | None = None, instead: str = "left out") -> None:
    """A misuse: raise ``error`` in strict mode; else log it once for its call site and add it to ``problems``.

    ``instead`` says what the helper does in its place (``left out``, ``a generated id is used``, ...)."""
    if strict():
        raise error
    message = f"{error}"
    if len(message) > MAX_MESSAGE_CHARS:
        message = message[: MAX_MESSAGE_CHARS - 1] + "…"
    message = f"{message} ({instead})"
    if problems is not None and len(problems) < MAX_MESSAGES:
        problems.append(message)
    site = call_site()
    with _sites_lock:
        if site in _sites or len(_sites) > MAX_SITES:
            return
        _sites.add(site)
        full = len(_sites) > MAX_SITES
    log.warning(
        "%s:%d: otel_agent.instrument misuse: %s; marked on the span as otel_agent.misuse "
        "(logged once per call site; OTEL_AGENT_STRICT=1 raises instead)",
        site[0],
        site[1],
        message,
    )
    if full:
        log.warning("otel_agent.instrument: misuse at more than %d call sites; no further sites are logged", MAX_SITES)


def forget_call_sites() -> None:
    """Forget which call sites were logged (tests only: a test that counts warnings starts from none)."""
    with _sites_lock:
        _sites.clear()
