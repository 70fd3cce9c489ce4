"""Every setting of the receiver, in one table: command-line flag > ``OTEL_AGENT_*`` environment variable >
default. The CLI builds its options from this table, and ``scripts/gen_settings_doc.py`` writes the
settings tables of docs/settings.md from it (``--check`` and a test keep them equal), so help and docs cannot drift.

``ENV_ONLY`` lists the settings read only from the environment (no flag), by the module that owns each."""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass
from typing import Any

from otel_agent.errors import ConfigError

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str) -> float:
    """``7d``, ``12h``, ``30m``, ``90s``, ``1w`` or a number of seconds → seconds (the ``retention`` setting)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", text or "")
    if not match:
        raise ConfigError(f"retention {text!r}: expected a duration such as 7d, 12h, 30m or 90s")
    return float(match[1]) * _UNITS[match[2] or "s"]


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    type: type
    help: str
    is_flag: bool = False
    choices: tuple[str, ...] | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def env(self) -> str:
        return "OTEL_AGENT_" + self.name.upper()


MiB = 1024 * 1024

DEFAULT_DB = "./otel_agent.duckdb"
LOG_LEVELS = ("debug", "info", "warning", "error")

SETTINGS: tuple[Setting, ...] = (
    Setting("db", DEFAULT_DB, str, "DuckDB file to write (created if missing)."),
    Setting("grpc_endpoint", "127.0.0.1:4317", str, "host:port for OTLP/gRPC and the gRPC API (port 0: any free one)."),
    Setting(
        "http_endpoint",
        "127.0.0.1:4318",
        str,
        "host:port for OTLP/HTTP, the HTTP API and /healthz (port 0: any free one).",
    ),
    Setting("max_message_bytes", 16 * MiB, int, "Largest request accepted, on the wire and after gzip."),
    Setting(
        "queue_max_bytes",
        64 * MiB,
        int,
        "Bound on in-flight request bytes (decoding, queued, committing); beyond it: 429 / RESOURCE_EXHAUSTED.",
    ),
    Setting("batch_max_items", 50_000, int, "Most spans/records/points one group commit takes."),
    Setting("batch_timeout_ms", 0, int, "How long the writer waits to grow a group commit (0: commit at once)."),
    Setting("decode_workers", 2, int, "Worker processes that decode OTLP (0: decode in the request threads)."),
    Setting(
        "decode_timeout_s",
        30.0,
        float,
        "Longest wait for a free decode worker, and for one decode; past it the worker is replaced and the "
        "request gets 503 / UNAVAILABLE.",
    ),
    Setting("tokens_file", None, str, "JSON file of bearer tokens → principal and roles; enables auth."),
    Setting("insecure", False, bool, "Allow binding a non-loopback address without a tokens file.", True),
    Setting("redaction_rules", None, str, "JSON file of redaction rules (regex → drop | hash | keep)."),
    Setting(
        "no_default_redaction",
        False,
        bool,
        "Do not apply the default rules that drop credential-like keys.",
        True,
    ),
    Setting("query_max_rows", 10_000, int, "Row cap of the read-only query API."),
    Setting("query_max_bytes", 8 * MiB, int, "Byte cap (Arrow size) of a query API result; fetching stops there."),
    Setting("query_timeout_s", 10.0, float, "Time limit in seconds of the read-only query API, from admission."),
    Setting("query_workers", 2, int, "Queries run at once (4x as many may wait; beyond: 429 / RESOURCE_EXHAUSTED)."),
    # the default of store.database.DEFAULT_CHECKPOINT_THRESHOLD (why 32MB: see there)
    Setting("checkpoint_threshold", "32MB", str, "DuckDB checkpoint_threshold (WAL size that triggers one)."),
    Setting("memory_limit", "1GB", str, "DuckDB memory_limit for the receiver's database."),
    Setting(
        "block_cache_share",
        0.25,
        float,
        "Share of --memory-limit that DuckDB's cache of the store's blocks may fill before the writer re-attaches "
        "the store to empty it (0: never; docs/scale.md).",
    ),
    Setting(
        "run_silence_s",
        600.0,
        float,
        "Seconds a running run may go without a span starting or ending before runs shows it as abandoned "
        "(docs/views-runs.md, Runs in progress).",
    ),
    Setting("log_level", "info", str, "How much the receiver logs.", choices=LOG_LEVELS),
    Setting(
        "retention",
        None,
        str,
        "Keep this much history in the live store (7d, 12h, 30m, 0: none); older hourly windows are deleted "
        "(after archiving, with --archive). Unset: keep everything.",
    ),
    Setting(
        "max_db_bytes",
        None,
        int,
        "Bound on the store's used bytes: past it, the oldest hourly window is deleted (after archiving).",
    ),
    Setting(
        "archive",
        None,
        str,
        "Local directory (a relative one from the working directory) or s3:// URI of the Parquet archive: closed "
        "windows are written there before retention deletes them, and registered as Iceberg tables; a local one is "
        "also read by the query API and console (live ∪ archive; docs/scale.md; Spark, Trino: docs/archive.md).",
    ),
    Setting(
        "iceberg_catalog",
        None,
        str,
        "SQLAlchemy URL of the Iceberg SQL catalog the archive is registered in (sqlite:///FILE or "
        "postgresql://…); default: a SQLite file in a local archive.",
    ),
    Setting(
        "alert_rules",
        None,
        str,
        "TOML or YAML file of alert rules and the webhook that is told (docs/alerts.md); checked at start: a bad "
        "rule is one line and exit code 2. Unset: no alerts (/metrics is served anyway).",
    ),
    Setting("alert_interval_s", 15.0, float, "Seconds between two evaluations of the alert rules."),
    Setting(
        "alert_eval_timeout_s",
        5.0,
        float,
        "Longest time one evaluation of every rule may take (a read-only cursor beside the writer); past it the "
        "rules not evaluated keep their alerts as they were.",
    ),
)


@dataclass(frozen=True)
class EnvSetting:
    """A setting read only from the environment, by the module named in ``read_by``."""

    env: str
    default: str
    help: str
    read_by: str


ENV_ONLY: tuple[EnvSetting, ...] = (
    EnvSetting(
        "OTEL_AGENT_PRICES",
        "(none)",
        "CSV file of model prices added to the shipped table (user rows win); read when a store is opened for writing.",
        "otel_agent.store.prices",
    ),
    EnvSetting(
        "OTEL_AGENT_CAPTURE_CONTENT",
        "off",
        "Instrumentation: record message and tool content on spans (true/1/yes/on).",
        "otel_agent.instrument.config",
    ),
    EnvSetting(
        "OTEL_AGENT_STRICT",
        "off",
        "Instrumentation: a misused helper raises instead of logging once and marking its span (true/1/yes/on; "
        "for tests and CI).",
        "otel_agent.instrument._misuse",
    ),
    EnvSetting(
        "OTEL_AGENT_NATIVE_FOLD",
        "on",
        "Receiver: fold traces with the Rust extension when it was built (off/0/false: the Python fold only; "
        "docs/scale.md).",
        "otel_agent.fold.native",
    ),
    EnvSetting(
        "OTEL_AGENT_RECEIVER",
        "(none)",
        "Reading commands: HTTP address of the receiver to query (same as --receiver).",
        "otel_agent.options",
    ),
    EnvSetting(
        "OTEL_AGENT_TOKEN",
        "(none)",
        "Reading and review commands: bearer token for the receiver (same as --token).",
        "otel_agent.options",
    ),
    EnvSetting(
        "OTEL_AGENT_REVIEWER",
        "(none)",
        "review / trust: who decides (same as --reviewer / --by).",
        "otel_agent.cli.evidence_cmds",
    ),
)

BY_NAME = {s.name: s for s in SETTINGS}


@dataclass
class ReceiverConfig:
    db: str = BY_NAME["db"].default
    grpc_endpoint: str = BY_NAME["grpc_endpoint"].default
    http_endpoint: str = BY_NAME["http_endpoint"].default
    max_message_bytes: int = BY_NAME["max_message_bytes"].default
    queue_max_bytes: int = BY_NAME["queue_max_bytes"].default
    batch_max_items: int = BY_NAME["batch_max_items"].default
    batch_timeout_ms: int = BY_NAME["batch_timeout_ms"].default
    decode_workers: int = BY_NAME["decode_workers"].default
    decode_timeout_s: float = BY_NAME["decode_timeout_s"].default
    tokens_file: str | None = None
    insecure: bool = False
    redaction_rules: str | None = None
    no_default_redaction: bool = False
    query_max_rows: int = BY_NAME["query_max_rows"].default
    query_max_bytes: int = BY_NAME["query_max_bytes"].default
    query_timeout_s: float = BY_NAME["query_timeout_s"].default
    query_workers: int = BY_NAME["query_workers"].default
    checkpoint_threshold: str = BY_NAME["checkpoint_threshold"].default
    memory_limit: str = BY_NAME["memory_limit"].default
    block_cache_share: float = BY_NAME["block_cache_share"].default
    run_silence_s: float = BY_NAME["run_silence_s"].default
    log_level: str = BY_NAME["log_level"].default
    retention: str | None = None
    max_db_bytes: int | None = None
    archive: str | None = None
    iceberg_catalog: str | None = None
    alert_rules: str | None = None
    alert_interval_s: float = BY_NAME["alert_interval_s"].default
    alert_eval_timeout_s: float = BY_NAME["alert_eval_timeout_s"].default

    @classmethod
    def resolve(cls, **given: Any) -> ReceiverConfig:
        """Argument (when not None) > ``OTEL_AGENT_*`` env var > default."""
        values: dict[str, Any] = {}
        for s in SETTINGS:
            value = given.get(s.name)
            if value is None:
                raw = os.environ.get(s.env)
                value = _parse(s, raw) if raw not in (None, "") else s.default
            values[s.name] = value
        config = cls(**values)
        config.validate()
        return config

    def validate(self) -> None:
        if self.log_level not in LOG_LEVELS:
            raise ConfigError(f"log_level {self.log_level!r} is not one of {', '.join(LOG_LEVELS)}")
        for name in ("grpc_endpoint", "http_endpoint"):
            parse_endpoint(name, getattr(self, name))
        for name in ("max_message_bytes", "queue_max_bytes", "batch_max_items", "query_max_bytes", "query_workers"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive")
        if self.decode_timeout_s <= 0:
            raise ConfigError("decode_timeout_s must be positive")
        if not 0 <= self.block_cache_share < 1:
            raise ConfigError("block_cache_share must be at least 0 and below 1")
        if self.run_silence_s <= 0:
            raise ConfigError("run_silence_s must be positive")
        if self.retention is not None:
            parse_duration(self.retention)
        if self.max_db_bytes is not None and self.max_db_bytes <= 0:
            raise ConfigError("max_db_bytes must be positive")
        if self.alert_interval_s <= 0 or self.alert_eval_timeout_s <= 0:
            raise ConfigError("alert_interval_s and alert_eval_timeout_s must be positive")
        if self.decode_workers < 0:
            raise ConfigError("decode_workers must be 0 or more")
        if not self.tokens_file and not self.insecure:
            for name in ("grpc_endpoint", "http_endpoint"):
                host = host_of(getattr(self, name))
                if not is_loopback(host):
                    raise ConfigError(
                        f"{name} {getattr(self, name)} is not a loopback address: "
                        "give --tokens-file to require authentication, or --insecure to serve it open"
                    )


def _parse(s: Setting, raw: str) -> Any:
    if s.type is bool:
        return raw.strip().lower() in ("1", "true", "yes", "on")
    if s.choices is not None and raw not in s.choices:
        raise ConfigError(f"{s.env}={raw!r}: expected one of {', '.join(s.choices)}")
    try:
        return s.type(raw)
    except ValueError as exc:
        raise ConfigError(f"{s.env}={raw!r}: expected {s.type.__name__}") from exc


# RFC 1123 host names: dot-separated labels of letters, digits and inner hyphens.
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*$")


def parse_endpoint(name: str, endpoint: str) -> tuple[str, int]:
    """``host:port`` → (host, port), or a ConfigError naming the setting. The host is an IPv4 address, an
    IPv6 address in brackets (``[::1]:4317``) or a host name; the port is 1–65535, or 0 for any free port
    (what the tests and the demo use)."""
    where = f"--{name.replace('_', '-')} {endpoint!r}"
    host, sep, port_text = endpoint.strip().rpartition(":")
    if not sep or not host or not port_text:
        raise ConfigError(f"{where} has no port: expected host:port, e.g. 127.0.0.1:4317")
    if host.startswith("["):
        if not host.endswith("]"):
            raise ConfigError(f"{where}: unbalanced brackets around the IPv6 address")
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise ConfigError(f"{where}: {host[1:-1]!r} is not an IPv6 address") from None
        host = host[1:-1]
    elif ":" in host:
        raise ConfigError(f"{where}: an IPv6 address needs brackets, e.g. [::1]:4317")
    elif not _HOSTNAME.match(host) or (host.replace(".", "").isdigit() and not _is_ipv4(host)):
        raise ConfigError(f"{where}: {host!r} is not a host name or IP address")
    if not port_text.isdigit():
        raise ConfigError(f"{where}: port {port_text!r} is not a number")
    port = int(port_text)
    if port > 65535:
        raise ConfigError(f"{where}: port {port} is outside 1-65535")
    return host, port


def _is_ipv4(host: str) -> bool:
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        return False
    return True


def host_of(endpoint: str) -> str:
    host, _, _ = endpoint.rpartition(":")
    return host.strip("[]")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
