"""Pin the ids the helpers mint on their own, so that every demo run has the same record ids.

The demo passes an explicit id to every helper that takes one. Three ids cannot be passed (see the report of
issue 3): the handoff id ``delegate()`` mints per attempt, the id of the step-local tool block
``assemble_context(selected_tools=)`` adds, and the ids of compression records. All come from
``otel_agent.instrument._ids.new_id`` (``<prefix>_<salt><counter>``); inside ``pinned_ids`` the salt and the
counter are fixed, so the same sequence of calls mints the same ids. This touches a private module on purpose
and only for the duration of a demo run; it goes away once those helpers accept ids.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def pinned_ids(salt: str) -> Iterator[None]:
    """Ids minted inside the block are ``<prefix>_<salt><n>`` with n = 1, 2, … (restored afterwards)."""
    from otel_agent.instrument import _ids

    saved = _ids._SALT, _ids._counter
    _ids._SALT, _ids._counter = salt, itertools.count(1)
    try:
        yield
    finally:
        _ids._SALT, _ids._counter = saved
