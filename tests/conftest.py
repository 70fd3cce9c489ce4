"""Shared fixtures: real receivers on ephemeral loopback ports over real DuckDB files."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pytest

import otel_agent.store
from otel_agent.config import ReceiverConfig
from otel_agent.errors import ConfigError
from otel_agent.main import serving
from otel_agent.server.receiver import Receiver
from otel_agent.store.database import SCHEMA_VERSION, open_store, store_cursor
from otel_agent.store.prices import PRICES_ENV

# The whole suite runs the instrumentation helpers in strict mode: a misuse raises instead of being logged and
# recorded on its span (docs/semconv.md, "When a helper is misused"). Subprocesses inherit it. Tests of the
# lenient default turn it off for themselves.
os.environ["OTEL_AGENT_STRICT"] = "1"


# Parallel runs (pytest-xdist, ``-n auto --dist loadscope`` in pyproject.toml): the tests of one module go to one
# worker together, so a module-scoped fixture (a receiver, a store, a browser) is set up once, and a folder of
# SHARED_GROUPS goes to one worker whole. (Not xdist's ``xdist_group`` mark: with pytest 9 its ``--dist
# loadgroup`` groups nothing, it renames ``item._nodeid``, which pytest no longer reads: pytest-xdist issue 1386.)
SHARED_GROUPS = {
    # the session-scoped demo store, receiver and third-party store of every console module; and Playwright's
    # module-scoped browser must not interleave with other modules' asyncio (tests/console/conftest.py)
    "tests/console": "tests/console",
}
"""Folders whose modules share session-scoped fixtures: one work unit (one worker) for the whole folder."""


def xdist_group_of(nodeid: str) -> str:
    """The work unit of a test: its folder if SHARED_GROUPS names it, else its module."""
    module = nodeid.split("::", 1)[0]
    return SHARED_GROUPS.get(module.rsplit("/", 1)[0], module)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadscope`` with ``xdist_group_of``'s units (largest first, as loadscope orders them)."""
    if config.getvalue("dist") != "loadscope":
        return None  # another --dist asked for on the command line: xdist's own
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_group_of(nodeid)

    return GroupScheduling(config, log)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """A test marked ``serial`` runs alone: while it runs (set-up, call, tear-down) no test of another xdist worker
    does. For tests that bound a latency or a rate against the wall clock, or that need every core.

    A readers-writer lock over two files shared by the run's workers: every test holds ``run.lock`` shared, a
    serial test exclusive; the turnstile stops new tests from starting while a serial test waits for its turn.
    Without xdist (``-n 0``) there is no one to wait for.
    """
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None:
        yield
        return
    serial = item.get_closest_marker("serial") is not None
    base = Path(tempfile.gettempdir()) / f"otel-agent-tests-{run}"
    with open(f"{base}.turnstile", "a") as turnstile, open(f"{base}.lock", "a") as lock:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        if not serial:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        fcntl.flock(lock, fcntl.LOCK_EX if serial else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
            if serial:
                fcntl.flock(turnstile, fcntl.LOCK_UN)


def wait_until(predicate: Callable[[], Any], what: str, timeout_s: float = 60.0, every_s: float = 0.05) -> Any:
    """Poll ``predicate`` until it returns something true (returned), failing with ``what`` after ``timeout_s``:
    how a test waits for a state it can observe (a counter of /healthz, a row, a file) instead of sleeping for a
    time it hopes is long enough. The timeout only catches a hang."""
    deadline = time.monotonic() + timeout_s
    while not (value := predicate()):
        assert time.monotonic() < deadline, f"waited {timeout_s:g} s for {what}"
        time.sleep(every_s)
    return value


EMPTY_STORES_KEPT = 8
"""Empty stores kept in the temporary directory (one per version of the store's code and SQL)."""


@functools.cache
def _empty_store_path() -> Path:
    package = Path(otel_agent.store.__file__).parent  # the code the tests run, wherever it was imported from
    digest = hashlib.sha256(json.dumps([SCHEMA_VERSION, duckdb.__version__]).encode())
    for source in sorted(p for p in package.rglob("*") if p.suffix in (".py", ".sql", ".csv", ".txt", ".json")):
        digest.update(str(source.relative_to(package)).encode() + b"\0" + source.read_bytes() + b"\0")
    return Path(tempfile.gettempdir()) / "otel-agent-empty-stores" / f"{digest.hexdigest()[:20]}.duckdb"


def empty_store() -> Path:
    """An empty store of this checkout, as a first open for writing leaves it, made once and kept in the temporary
    directory under a key of everything that decides its contents: the store package's code and SQL, the schema
    version and DuckDB's version (so xdist workers, later runs and a mutation run's forked sessions share it, and
    a changed view file or a mutated one makes another). Made without a user price file (prices are data,
    reloaded on every open)."""
    path = _empty_store_path()
    if path.exists():
        return path
    folder = path.parent
    folder.mkdir(exist_ok=True)
    partial = folder / f"{path.stem}.{os.getpid()}.partial"
    user_prices = os.environ.pop(PRICES_ENV, None)
    try:
        open_store(partial).close()
    finally:
        if user_prices is not None:
            os.environ[PRICES_ENV] = user_prices
    assert not Path(f"{partial}.wal").exists(), "a closed store is checkpointed: the file is the whole store"
    os.replace(partial, path)  # whole or not at all, whoever makes it first
    for old in sorted(folder.glob("*.duckdb"), key=lambda p: p.stat().st_mtime)[:-EMPTY_STORES_KEPT]:
        old.unlink(missing_ok=True)
    return path


def new_store(path: str | Path) -> str:
    """Make ``path`` an empty store of this checkout (``empty_store``'s copy), as a store opened for writing
    leaves it on a first open, and return it as a string; a path that exists (or ``:memory:``) is left alone.

    A store's first open binds every derived view (~1.5 s of CPU on an idle machine, far more on a busy one);
    a reopen whose stored fingerprint matches this checkout's derived SQL keeps them (store/database.py,
    ``open_store``). So tests copy one empty store: the copy is what every receiver restart or exporter reopens
    in production, and tests of the first open itself (creation, migration, the files a failed start removes)
    call ``open_store`` or the receiver (``first_open=True``) on a path that does not exist."""
    if str(path) == ":memory:" or Path(path).exists():
        return str(path)
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(empty_store(), path)
    except OSError:  # a path the test means to be refused (under a file, not writable, a full disk): the
        with contextlib.suppress(OSError):  # store's own open reports it
            Path(path).unlink(missing_ok=True)
    return str(path)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_receiver(db: str | Path, *, first_open: bool = False, **overrides: Any) -> Receiver:
    """A receiver started in this process on ephemeral loopback ports over ``db`` as ``otel-agent serve`` runs
    it (the console and MCP on its HTTP endpoint), decoding in the request thread (``decode_workers=0``: fast to
    start) unless ``overrides`` say otherwise; the caller stops it. A new ``db`` is a copy of an empty store
    (``new_store``) unless ``first_open``: then the receiver creates it."""
    settings: dict[str, Any] = {
        "db": str(db) if first_open else new_store(db),
        "grpc_endpoint": "127.0.0.1:0",
        "http_endpoint": "127.0.0.1:0",
        "decode_workers": 0,
    }
    settings.update(overrides)
    return serving(ReceiverConfig.resolve(**settings)).start()


@pytest.fixture
def make_receiver(tmp_path: Path) -> Iterator[Callable[..., Receiver]]:
    """Start receivers in this process; each is stopped (and its data committed) at teardown.

    Settings are ReceiverConfig fields; decode_workers defaults to 0 here (decode in the request thread)
    so tests start fast — tests of the worker-process path pass decode_workers explicitly. A new store is a copy
    of an empty one (``new_store``) unless ``first_open=True``.
    """
    started: list[Receiver] = []

    def start(**overrides: Any) -> Receiver:
        receiver = start_receiver(overrides.pop("db", tmp_path / f"store{len(started)}.duckdb"), **overrides)
        started.append(receiver)
        return receiver

    yield start
    for receiver in started:
        if receiver._started:
            receiver.stop()


@pytest.fixture
def receiver(make_receiver: Callable[..., Receiver]) -> Receiver:
    return make_receiver()


def write_tokens_file(path: Path, *tokens: dict[str, Any]) -> str:
    """Write a receiver tokens file (``{"tokens": [...]}``, docs/settings.md) holding ``tokens`` at ``path``;
    returns the path as the ``tokens_file`` setting takes it."""
    path.write_text(json.dumps({"tokens": list(tokens)}))
    return str(path)


def config_error(make_receiver: Callable[..., Receiver], path: Path, setting: str, content: str) -> str:
    """The message of the ``ConfigError`` a receiver refuses to start with: ``setting`` names the file ``path``,
    written with ``content`` (a malformed tokens file, redaction rules…). Fails if the receiver starts."""
    path.write_text(content)
    with pytest.raises(ConfigError) as refused:
        make_receiver(**{setting: str(path)})
    return str(refused.value)


def settled(receiver: Receiver | Any, timeout_s: float = 60.0) -> None:
    """Wait until a running receiver's maintained derived state (store/maintained.py) has folded in every stored
    row, so that what a test reads next is what the query-time SQL says of everything acknowledged so far (the
    state lags the raw rows by a step: docs/schema.md). No-op for anything else; fails after ``timeout_s`` (a
    hang, not a speed bound)."""
    derived = getattr(receiver, "derived", None)
    if derived is None or not derived._thread.is_alive():
        return
    with store_cursor(receiver.con) as cur:
        sql = " UNION ALL ".join(f"SELECT max(ingest_seq) AS s FROM {t}" for t in ("spans", "span_events", "logs"))
        stored = int(cur.execute(f"SELECT coalesce(max(s), 0) FROM ({sql})").fetchall()[0][0])
    deadline = time.monotonic() + timeout_s
    while not (derived.stats.ready and derived.stats.seq >= stored and derived.stats.backlog_rows == 0):
        assert time.monotonic() < deadline, f"the maintained state did not catch up: {derived.report()}"
        time.sleep(0.02)


def rows(
    receiver: Receiver | Any, sql: str, params: list[Any] | None = None, *, settle: bool = True
) -> list[tuple[Any, ...]]:
    """Committed rows, read through a cursor of the receiver's own connection (as the query API does) once its
    maintained state has caught up (``settled``; ``settle=False``: at once, for raw rows that another thread may
    change meanwhile); any object holding a store connection as ``con`` will do."""
    if settle:
        settled(receiver)
    with store_cursor(receiver.con) as cur:
        return cur.execute(sql, params or []).fetchall()


def dict_rows(receiver: Receiver | Any, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    """``rows`` as dicts keyed by column name."""
    settled(receiver)
    with store_cursor(receiver.con) as cur:
        return as_dicts(cur.execute(sql, params or []))


def as_dicts(executed: Any) -> list[dict[str, Any]]:
    """The rows of an executed DuckDB statement (a connection or cursor after ``execute``) as dicts keyed by
    column name."""
    names = [d[0] for d in executed.description]
    return [dict(zip(names, row, strict=True)) for row in executed.fetchall()]


@contextmanager
def serve_ui(*args: str) -> Iterator[str]:
    """``otel-agent ui ARGS --port 0`` as a real process: yields its base URL (``http://127.0.0.1:PORT``, read
    from the first line it prints); at exit SIGTERM, which must end it with exit code 0."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "otel_agent", "ui", *args, "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
        assert found, line + (proc.stdout.read() if proc.poll() is not None else "")
        yield found.group(1)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
