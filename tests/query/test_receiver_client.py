"""The one HTTP client of the receiver's API (issue 12, item 6) and the addresses it accepts (issue 11, item 13):
``--receiver 127.0.0.1:4318`` (no scheme) and ``localhost:4318`` work for every command that talks to a receiver
(sql, review, trust); anything unusable is one clear line, not ``No connection adapters were found``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from otel_agent.query.api_client import ReceiverAddressError, receiver_url
from tests.conftest import rows

ROOT = Path(__file__).resolve().parents[2]


def otel_agent(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "otel_agent", *args], capture_output=True, text=True, cwd=ROOT, timeout=60
    )


@pytest.mark.parametrize(
    ("given", "url"),
    [
        ("127.0.0.1:4318", "http://127.0.0.1:4318"),
        ("localhost:4318", "http://localhost:4318"),
        ("  localhost:4318 ", "http://localhost:4318"),
        ("[::1]:4318", "http://[::1]:4318"),
        ("http://127.0.0.1:4318/", "http://127.0.0.1:4318"),
        ("https://otel.example.com", "https://otel.example.com"),
        ("HTTP://host:80/prefix", "HTTP://host:80/prefix"),
    ],
)
def test_addresses_accepted(given, url):
    assert receiver_url(given) == url


@pytest.mark.parametrize(
    ("given", "why"),
    [
        ("", "is empty"),
        ("localhost", "no port"),
        ("4318", "no port"),
        ("127.0.0.1:99999", "Port out of range"),
        ("127.0.0.1:http", "Port could not be cast"),
        ("ftp://127.0.0.1:4318", "unsupported scheme 'ftp'"),
        ("http://", "no host"),
        ("127.0.0.1:4318?x=1", "a query or fragment"),
    ],
)
def test_addresses_refused(given, why):
    with pytest.raises(ReceiverAddressError) as info:
        receiver_url(given)
    assert why in str(info.value)
    assert "give HOST:PORT (e.g. 127.0.0.1:4318) or http://HOST:PORT" in str(info.value)


def test_every_command_accepts_host_port(receiver):
    port = receiver.http_port
    for address in (f"127.0.0.1:{port}", f"localhost:{port}", f"http://127.0.0.1:{port}/"):
        done = otel_agent("sql", "SELECT 1 AS one, [1, 2] AS l", "--receiver", address, "--format", "json")
        assert done.returncode == 0, (address, done.stderr)
        assert json.loads(done.stdout) == [{"one": 1, "l": [1, 2]}]

    granted = otel_agent("trust", "agent-a", "svc-a", "--by", "alice", "--receiver", f"localhost:{port}")
    assert granted.returncode == 0, granted.stderr
    assert re.fullmatch(r"trust_[0-9a-f]+: granted agent-a -> svc-a by alice at \S+Z\n", granted.stdout)
    assert rows(receiver, "SELECT principal, service_name, trusted FROM trusted_writers") == [
        ("agent-a", "svc-a", True)
    ]

    missing = otel_agent("review", "approve", "claim", "nope", "--reviewer", "bob", "--receiver", f"127.0.0.1:{port}")
    assert missing.returncode == 2  # one line + exit code 2, as every command answers an error
    assert missing.stderr == "Error: receiver answered 404: no claim with id 'nope': nothing was written\n"
    assert rows(receiver, "SELECT count(*) FROM reviews") == [(0,)]


@pytest.mark.parametrize("address", ["ftp://127.0.0.1:4318", "localhost", "127.0.0.1:99999", "http://"])
def test_unusable_address_is_one_line(address):
    done = otel_agent("sql", "SELECT 1", "--receiver", address)
    assert done.returncode != 0
    assert done.stdout == ""
    assert done.stderr.startswith(f"Error: --receiver {address!r}: "), done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "No connection adapters" not in done.stderr


def test_one_http_client():
    """No module but the client builds HTTP requests to the receiver's API."""
    client = ROOT / "otel_agent" / "query" / "api_client.py"
    offenders = []
    for path in sorted((ROOT / "otel_agent").rglob("*.py")):
        if path == client or "api/v1" in path.as_posix():
            continue
        if path.relative_to(ROOT).as_posix() == "otel_agent/alerts/webhook.py":
            continue  # notifications to the operator's own endpoint, not requests to the receiver's API
        text = path.read_text()
        if re.search(r"^\s*(import requests|from requests )", text, re.M) or re.search(
            r"""["'](/v1/(query|review|writer_trust))["']""", text
        ):
            offenders.append(path.relative_to(ROOT).as_posix())
    # The server side declares the paths once, in its method table.
    assert offenders == ["otel_agent/server/api.py"]
