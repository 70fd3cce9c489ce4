"""The web console: server-rendered pages over the derived views (issue 13, docs/console.md).

One module per page family under ``pages/``, its template under ``templates/`` and its queries as named ``.sql``
files under ``otel_agent/store/console/`` (a reader finds page, query and template by name). Everything shown comes
from telemetry, written by someone else: templates autoescape, no data reaches a script, and every response carries
a strict Content-Security-Policy (``security.py``).
"""
