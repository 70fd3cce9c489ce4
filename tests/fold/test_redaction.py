"""Redaction before storage: the default rules drop credential-like keys everywhere attributes live (span,
resource, scope, event, link and log attributes) and keep everything else; custom rules drop, hash (with
an exact, reproducible digest) or keep; ``no_default_redaction`` turns the defaults off."""

from __future__ import annotations

import hashlib
import json

import pytest
import requests
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Link

from otel_agent.fold.redact import Redactor
from tests.conftest import config_error, rows
from tests.otlp_builders import post_traces, span_request

# Credential-like keys the defaults must drop, with values that must never reach the file.
CREDENTIALS = {
    "api_key": "sk-live-0001",
    "authorization": "Bearer tok-0002",
    "http.request.header.authorization": ["Bearer tok-0003"],
    "password": "hunter2-0004",
    "db.password": "pg-pass-0005",
    "Authorization": "Basic dXNlcjpwYXNz-0006",
    "x-api-key": "key-0007",
    "openai.api_key": "sk-proj-0008",
    "oauth.client_secret": "cs-0009",
    "auth.refresh_token": "rt-0010",
    "http.request.header.cookie": ["session=0011"],
    "password_policy.min_length": 12,  # a key naming a credential is dropped even when it is none: a keep rule
}
SECRET_VALUES = [
    "sk-live-0001",
    "tok-0002",
    "tok-0003",
    "hunter2-0004",
    "pg-pass-0005",
    "dXNlcjpwYXNz-0006",
    "key-0007",
    "sk-proj-0008",
    "cs-0009",
    "rt-0010",
    "session=0011",
]

# Ordinary keys, several of them near misses of the credential words, that must survive with their types.
ORDINARY = {
    "gen_ai.usage.input_tokens": 1234,
    "gen_ai.usage.output_tokens": 56,
    "gen_ai.request.max_tokens": 4096,
    "gen_ai.request.model": "gpt-4o",
    "gen_ai.request.temperature": 0.25,
    "http.request.method": "POST",
    "http.request.header.content-type": ["application/json"],
    "otel_agent.token_count": 7,
    "tokenizer": "cl100k_base",
    "llm.token_count.prompt": 9,
    "gen_ai.token.type": "input",
    "user.id": "u-42",
    "cache.hit": False,
}

TABLES = ("spans", "span_events", "span_links", "logs")


def attrs(extra: dict | None = None) -> dict:
    return {**CREDENTIALS, **ORDINARY, **(extra or {})}


def send(receiver, extra: dict | None = None) -> None:
    """One span (with resource, scope, event and link attributes) and one log record, through the real
    SDK exporters over gRPC, every attribute set carrying the same keys."""
    everything = attrs(extra)
    resource = Resource({"service.name": "redaction-tests", **everything})

    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=receiver.grpc_address, insecure=True)))
    tracer = provider.get_tracer("redaction.tests", "1.0", attributes=everything)
    with tracer.start_as_current_span("linked") as linked:
        linked_ctx = linked.get_span_context()
    with tracer.start_as_current_span(
        "chat gpt-4o", attributes=everything, links=[Link(linked_ctx, everything)]
    ) as span:
        span.add_event("gen_ai.choice", everything)
    provider.shutdown()

    logs = LoggerProvider(resource=resource)
    logs.add_log_record_processor(
        SimpleLogRecordProcessor(OTLPLogExporter(endpoint=receiver.grpc_address, insecure=True))
    )
    logs.get_logger("redaction.tests", attributes=everything).emit(body="model call", attributes=everything)
    logs.shutdown()


def stored_attribute_sets(receiver) -> dict[str, dict]:
    """Every attribute column the send() above filled, parsed from the stored JSON."""
    (span,) = rows(
        receiver,
        "SELECT attributes, resource_attributes, scope_attributes FROM spans WHERE name = 'chat gpt-4o'",
    )
    (event,) = rows(receiver, "SELECT attributes FROM span_events")
    (link,) = rows(receiver, "SELECT attributes FROM span_links")
    (log,) = rows(receiver, "SELECT attributes, resource_attributes, scope_attributes FROM logs")
    found = {
        "span": span[0],
        "span resource": span[1],
        "span scope": span[2],
        "event": event[0],
        "link": link[0],
        "log": log[0],
        "log resource": log[1],
        "log scope": log[2],
    }
    parsed = {where: json.loads(text) for where, text in found.items()}
    for where in ("span resource", "log resource"):
        assert parsed[where].pop("service.name") == "redaction-tests", where
    return parsed


def all_stored_text(receiver) -> str:
    """Every row of every table, as text, to prove a secret is nowhere in the file."""
    return "\n".join(str(rows(receiver, f"SELECT * FROM {table}")) for table in TABLES)


def sha256_of_json(value) -> str:
    return "sha256:" + hashlib.sha256(json.dumps(value).encode()).hexdigest()


def test_defaults_drop_credentials_everywhere_and_keep_the_rest(receiver):
    send(receiver)
    for where, stored in stored_attribute_sets(receiver).items():
        assert stored == ORDINARY, where
    text = all_stored_text(receiver)
    for secret in SECRET_VALUES:
        assert secret not in text
    # The token counts stay queryable as integers.
    assert rows(
        receiver,
        "SELECT (attributes->>'gen_ai.usage.input_tokens')::BIGINT, "
        "json_type(attributes, '$.\"gen_ai.usage.output_tokens\"') FROM spans WHERE name = 'chat gpt-4o'",
    ) == [(1234, "UBIGINT")]


def test_defaults_on_otlp_json(receiver):
    """The OTLP/JSON path folds through the same redactor."""
    body = {
        "resourceLogs": [
            {
                "resource": {"attributes": [{"key": "api_key", "value": {"stringValue": "sk-json-1"}}]},
                "scopeLogs": [
                    {
                        "logRecords": [
                            {
                                "timeUnixNano": "1764000000000000000",
                                "body": {"stringValue": "hello"},
                                "attributes": [
                                    {"key": "password", "value": {"stringValue": "pw-json-2"}},
                                    {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "99"}},
                                ],
                            }
                        ]
                    }
                ],
            }
        ]
    }
    resp = requests.post(receiver.http_address + "/v1/logs", json=body, timeout=10)
    assert resp.status_code == 200
    assert rows(receiver, "SELECT attributes, resource_attributes FROM logs") == [
        ('{"gen_ai.usage.input_tokens":99}', "{}")
    ]


@pytest.fixture
def rules_file(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text(
        json.dumps(
            [
                {"match": r"^user\.email$", "action": "hash"},
                {"match": r"^enduser\.id$", "action": "hash"},
                {"match": r"^internal\.", "action": "drop"},
                # Exempts a key the defaults would drop ("secret" is a credential word)...
                {"match": r"^k8s\.secret$", "action": "keep"},
                # ...and hashes one they would drop: file rules come first.
                {"match": r"^db\.password$", "action": "hash"},
            ]
        )
    )
    return str(path)


CUSTOM = {
    "user.email": "alice@example.com",
    "USER.EMAIL": "bob@example.com",  # patterns match case-insensitively
    "enduser.id": 42,
    "internal.debug_blob": "x" * 40,
    "internal.note": "drop me",
    "k8s.secret": "db-credentials",
}


def expected_with_custom_rules() -> dict:
    return {
        **ORDINARY,
        "user.email": "sha256:" + hashlib.sha256(b'"alice@example.com"').hexdigest(),
        "USER.EMAIL": "sha256:" + hashlib.sha256(b'"bob@example.com"').hexdigest(),
        "enduser.id": "sha256:" + hashlib.sha256(b"42").hexdigest(),
        "k8s.secret": "db-credentials",
        "db.password": "sha256:" + hashlib.sha256(b'"pg-pass-0005"').hexdigest(),
    }


@pytest.mark.parametrize("decode_workers", [0, 1], ids=["inline", "worker-process"])
def test_custom_rules_hash_drop_keep(make_receiver, rules_file, decode_workers):
    receiver = make_receiver(redaction_rules=rules_file, decode_workers=decode_workers)
    send(receiver, CUSTOM)
    expected = expected_with_custom_rules()
    # The digest is sha256 of the JSON text of the value, so it can be recomputed to join on it.
    assert expected["user.email"] == sha256_of_json("alice@example.com")
    assert expected["enduser.id"] == sha256_of_json(42)
    for where, stored in stored_attribute_sets(receiver).items():
        assert stored == expected, where
    text = all_stored_text(receiver)
    for plain in ("alice@example.com", "bob@example.com", "drop me", "xxxxxxxxxx", "pg-pass-0005"):
        assert plain not in text
    for secret in set(SECRET_VALUES) - {"pg-pass-0005"}:
        assert secret not in text
    # Equal inputs hash equally: the digest joins across tables.
    assert rows(
        receiver,
        "SELECT count(*) FROM spans s JOIN logs l ON s.attributes->>'user.email' = l.attributes->>'user.email'",
    ) == [(1,)]


def test_a_key_decided_once_is_redacted_in_every_later_request(make_receiver, rules_file):
    """The redactor remembers each key's decision and passes an attribute set whose keys are all known to be kept
    without looking at it again. A dropped or hashed key must never count as kept: else, once the first request
    filled the memory, a later span whose attributes are only such keys would be stored as it came (a mutant of
    ``Redactor.decide`` that mutmut found no test for, issue 37)."""
    receiver = make_receiver(redaction_rules=rules_file)
    for i in range(3):
        request = span_request(
            [
                {"name": f"drop {i}", "attributes": {"api_key": f"sk-{i}"}},
                {"name": f"hash {i}", "attributes": {"user.email": f"u{i}@example.com"}},
            ]
        )
        assert post_traces(receiver.http_address, request).status_code == 200
    stored = {name: json.loads(a) for name, a in rows(receiver, "SELECT name, attributes FROM spans")}
    assert stored == {
        **{f"drop {i}": {} for i in range(3)},
        **{f"hash {i}": {"user.email": sha256_of_json(f"u{i}@example.com")} for i in range(3)},
    }
    assert "example.com" not in all_stored_text(receiver)


def test_a_hashed_map_hashes_the_same_whatever_the_order_of_its_keys(make_receiver, rules_file):
    """A hashed value that is a map (an OTLP kvlist) is hashed as its JSON text with the keys sorted
    (docs/settings.md): two senders that write the same map in another order store the same digest, so the
    digest still joins (``sort_keys`` dropped from ``Redactor.apply`` survived every other test, issue 37)."""
    receiver = make_receiver(redaction_rules=rules_file)
    value = {"name": "alice", "aliases": ["al", "ali"], "domain": "example.com"}
    reordered = dict(reversed(value.items()))
    assert list(value) != sorted(value)  # neither order is the sorted one
    assert list(reordered) != sorted(reordered)
    request = span_request(
        [
            {"name": "first", "attributes": {"user.email": value}},
            {"name": "second", "attributes": {"user.email": reordered}},
        ]
    )
    assert post_traces(receiver.http_address, request).status_code == 200
    digests = rows(receiver, "SELECT attributes->>'user.email' FROM spans ORDER BY name")
    digest = "sha256:" + hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()
    assert digests == [(digest,), (digest,)]


def test_no_default_redaction_keeps_credentials(make_receiver):
    receiver = make_receiver(no_default_redaction=True)
    send(receiver)
    for where, stored in stored_attribute_sets(receiver).items():
        assert stored == attrs(), where


def test_no_default_redaction_with_custom_rules_applies_only_those(make_receiver, rules_file):
    receiver = make_receiver(no_default_redaction=True, redaction_rules=rules_file)
    send(receiver, CUSTOM)
    expected = {**attrs(), **expected_with_custom_rules()}
    for where, stored in stored_attribute_sets(receiver).items():
        assert stored == expected, where


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"match": "x", "action": "drop"}', "expected a JSON list"),
        ('[{"match": "(", "action": "drop"}]', "rule 0 is invalid"),
        ('[{"match": "x", "action": "drop"}, {"match": "y", "action": "encrypt"}]', "rule 1 is invalid"),
        ('[{"action": "drop"}]', "rule 0 is invalid"),
        ("[", "cannot read redaction rules"),
    ],
)
def test_bad_rules_file_is_a_config_error(make_receiver, tmp_path, content, fragment):
    assert fragment in config_error(make_receiver, tmp_path / "bad-rules.json", "redaction_rules", content)


def test_nested_credentials_and_redacted_service_name(make_receiver, tmp_path):
    """Keys inside key-value-list values are redacted too; a hashed service.name is hashed in the
    service_name column as well."""
    from tests.otlp_builders import kvs, post_traces, span_request

    path = tmp_path / "service_rules.json"
    path.write_text(json.dumps([{"match": r"^service\.name$", "action": "hash"}]))
    receiver = make_receiver(redaction_rules=str(path))
    req = span_request([{"attributes": {"http.request.headers": {"authorization": "Bearer x", "accept": "json"}}}])
    req.resource_spans[0].resource.ClearField("attributes")
    req.resource_spans[0].resource.attributes.extend(kvs({"service.name": "secret-svc"}))
    resp = post_traces(receiver.http_address, req)
    assert resp.status_code == 200
    ((attributes, service_name, resource),) = rows(
        receiver, "SELECT attributes, service_name, resource_attributes FROM spans"
    )
    assert json.loads(attributes) == {"http.request.headers": {"accept": "json"}}
    digest = "sha256:" + hashlib.sha256(json.dumps("secret-svc", sort_keys=True).encode()).hexdigest()
    assert service_name == digest
    assert json.loads(resource) == {"service.name": digest}


# Real-world credential key names (SDK and cloud conventions, HTTP headers, environment variables as attributes):
# every word of a key counts, split on ".", "_", "-" and camelCase, and two adjacent words may spell one.
DROPPED_KEYS = [
    "aws_secret_access_key",
    "AWS_SECRET_ACCESS_KEY",
    "aws.secretAccessKey",
    "secret_key",
    "stripe.secret_key",
    "clientSecret",
    "oauth2.client-secret",
    "accessToken",
    "access_token",
    "refresh_token",
    "id_token",
    "db.password.value",
    "openai.api_key.primary",
    "auth.token.value",
    "apiKey",
    "APIKEY",
    "X-Api-Key",
    "x_api_key",
    "anthropic-api-key",
    "http.request.header.authorization",
    "http.request.header.proxy-authorization",
    "http.response.header.set-cookie",
    "Cookie",
    "PGPASSWORD",
    "MYSQL_ROOT_PASSWORD",
    "db.connection_string",
    "azure.storage.sas_token",
    "GITHUB_TOKEN",
    "HF_TOKEN",
    "slack.bot.token",
    "x-auth-token",
    "session_token",
    "bearer",
    "jwt",
    "ssh.privateKey",
    "tls.private_key",
    "gpg.passphrase",
    "gcp.credentials",
    "k8s.secret",
    "user.passwd",
    "basic_auth",
]
KEPT_KEYS = [
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.reasoning.output_tokens",
    "gen_ai.usage.prompt_tokens",
    "gen_ai.usage.completion_tokens",
    "gen_ai.usage.total_tokens",
    "gen_ai.request.max_tokens",
    "gen_ai.token.type",
    "llm.token_count.prompt",
    "llm.token_count.completion",
    "llm.token_count.total",
    "llm.token_count.prompt_details.cache_read",
    "llm.usage.total_tokens",
    "otel_agent.token_count",
    "otel_agent.budget.token_limit",
    "tokenizer",
    "tokenizer.name",
    "author",
    "authority",
    "auth.method",
    "oauth.scope",
    "secretary.name",
    "keyboard.layout",
    "cache.key",
    "messaging.kafka.message.key",
    "otel_agent.idempotency_key",
    "user.id",
    "session.id",
    "http.request.method",
    "http.request.header.content-type",
    "db.system.name",
    "gen_ai.request.model",
]


@pytest.mark.parametrize("key", DROPPED_KEYS)
def test_credential_key_names_are_dropped(key):
    assert Redactor().apply({key: "value", "kept": 1}) == {"kept": 1}


@pytest.mark.parametrize("key", KEPT_KEYS)
def test_ordinary_key_names_are_kept(key):
    assert Redactor().apply({key: 5, "password": "x"}) == {key: 5}


def log_request(body: dict, attributes: dict) -> bytes:
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    from tests.otlp_builders import any_value, kvs

    request = ExportLogsServiceRequest()
    record = request.resource_logs.add().scope_logs.add().log_records.add(time_unix_nano=1_764_000_000_000_000_000)
    record.body.CopyFrom(any_value(body))
    record.attributes.extend(kvs(attributes))
    return request.SerializeToString()


def test_key_table_through_the_receiver_and_inside_log_bodies(receiver):
    """Both lists in span attributes, in a structured log body and nested inside it: only the kept keys reach
    the table (and nothing of the dropped values reaches the file)."""
    from tests.otlp_builders import span_request

    everything = {key: f"value-of-{key}" for key in DROPPED_KEYS + KEPT_KEYS}
    body = {
        **everything,
        "request": {"headers": {"authorization": "Bearer body-0001", "accept": "json"}, "password": "body-0002"},
        "request.headers.authorization": "Bearer body-0003",
        "items": [{"api_key": "body-0004", "n": 1}],
    }
    span = span_request([{"name": "table", "attributes": everything}]).SerializeToString()
    for path, data in (("/v1/traces", span), ("/v1/logs", log_request(body, everything))):
        resp = requests.post(
            receiver.http_address + path, data=data, headers={"Content-Type": "application/x-protobuf"}, timeout=10
        )
        assert resp.status_code == 200, resp.text
    kept = {key: f"value-of-{key}" for key in KEPT_KEYS}
    ((span_attributes,),) = rows(receiver, "SELECT attributes FROM spans")
    assert json.loads(span_attributes) == kept
    ((log_attributes, log_body),) = rows(receiver, "SELECT attributes, body FROM logs")
    assert json.loads(log_attributes) == kept
    assert json.loads(log_body) == {**kept, "request": {"headers": {"accept": "json"}}, "items": [{"n": 1}]}
    text = all_stored_text(receiver)
    for key in DROPPED_KEYS:
        assert f"value-of-{key}" not in text
    for secret in ("body-0001", "body-0002", "body-0003", "body-0004"):
        assert secret not in text
