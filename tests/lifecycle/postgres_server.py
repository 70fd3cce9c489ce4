"""A real PostgreSQL server of the tests' own on loopback (Debian's ``postgresql`` package, installed by .ci/run):
``initdb`` into a temporary directory, ``postgres`` listening on 127.0.0.1 only, trust authentication, stopped at
the end. PostgreSQL refuses to run as root, so under root the server (and ``initdb``) run as the package's
``postgres`` user (else ``nobody``), in a directory that user owns."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

USER = "otel"  # the cluster's superuser (initdb -U), authenticated by trust on loopback


def binaries() -> str | None:
    """The directory of ``initdb`` and ``postgres`` (the newest installed major version), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[-3]))
    return os.path.dirname(found[-1]) if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Postgres:
    port: int

    def url(self, database: str = "postgres") -> str:
        """The SQLAlchemy URL a user passes as ``--iceberg-catalog`` (SQLAlchemy 2.1: ``postgresql://`` = psycopg)."""
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new empty database; its URL."""
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=self.port, user=USER, dbname="postgres", autocommit=True) as con:
            con.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@contextmanager
def postgres_server(bindir: str) -> Iterator[Postgres]:
    run_as: dict = {}
    root = tempfile.mkdtemp(prefix="otel_agent_pg_")  # not under pytest's tmp dirs: those are 0700 root's
    if os.geteuid() == 0:
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            user = pwd.getpwnam("nobody")
        os.chown(root, user.pw_uid, user.pw_gid)
        run_as = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
    data = os.path.join(root, "data")
    env = {"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8", "HOME": root}
    subprocess.run(
        [f"{bindir}/initdb", "-D", data, "-U", USER, "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C"],
        check=True, capture_output=True, env=env, cwd=root, **run_as,
    )  # fmt: skip
    port, log_path = _free_port(), os.path.join(root, "server.log")
    with open(log_path, "wb") as log:
        server = subprocess.Popen(
            [f"{bindir}/postgres", "-D", data, "-p", str(port), "-k", root, "-c", "listen_addresses=127.0.0.1",
             "-c", "fsync=off", "-c", "max_connections=50"],
            stdout=subprocess.DEVNULL, stderr=log, env=env, cwd=root, **run_as,
        )  # fmt: skip
    try:
        import psycopg

        deadline = time.monotonic() + 30
        while True:
            try:
                psycopg.connect(host="127.0.0.1", port=port, user=USER, dbname="postgres", connect_timeout=2).close()
                break
            except psycopg.OperationalError:
                if server.poll() is not None or time.monotonic() > deadline:
                    with open(log_path) as f:
                        raise RuntimeError(f"postgres did not start (exit {server.poll()}):\n{f.read()}") from None
                time.sleep(0.1)
        yield Postgres(port)
    finally:
        server.send_signal(signal.SIGINT)  # "fast" shutdown: ends sessions, no waiting for clients
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(root, ignore_errors=True)
