"""The web console: server-rendered pages over the derived views (issue 13, docs/console.md).

One module per page family under ``pages/``, its template under ``templates/``; what a page shows is one call of
the read layer (``otel_agent.read``), which every page also answers as JSON (``.json`` or ``Accept:
application/json``). Everything shown comes
from telemetry, written by someone else: templates autoescape, no data reaches a script, and every response carries
a strict Content-Security-Policy (``security.py``).
"""
