"""The registry is the contract: every emitted attribute is in it with the right type, every entry is emitted,
span names/kinds/events match, and docs/semconv.md is generated from it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from instrument_support import Spans, exercise_everything
from opentelemetry.sdk.trace import ReadableSpan

from otel_agent.instrument import attributes as A
from otel_agent.instrument import load_registry
from otel_agent.instrument.registry import ATTRIBUTE_TYPES, REQUIREMENT_LEVELS

ROOT = Path(__file__).resolve().parents[2]


def otel_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, tuple | list):
        kinds = {otel_type(v) for v in value}
        assert len(kinds) == 1, f"heterogeneous array {value!r}"
        return kinds.pop() + "[]"
    raise AssertionError(f"unexpected attribute value {value!r}")


def emitted(spans: list[ReadableSpan]) -> dict[str, set[str]]:
    """attribute name -> types seen, over span, event and link attributes."""
    seen: dict[str, set[str]] = {}
    for s in spans:
        maps = [s.attributes, *(e.attributes for e in s.events), *(link.attributes for link in s.links)]
        for attrs in maps:
            for key, value in (attrs or {}).items():
                seen.setdefault(key, set()).add(otel_type(value))
    return seen


@pytest.fixture
def everything(spans: Spans) -> list[ReadableSpan]:
    exercise_everything()
    return [*spans.all, *spans.pending]  # with the announcements of runs and steps (pending spans)


def test_every_emitted_attribute_is_registered_with_its_type(everything: list[ReadableSpan]) -> None:
    registered = {a["name"]: a["type"] for a in load_registry()["attributes"]}
    seen = emitted(everything)
    unknown = sorted(set(seen) - set(registered))
    assert unknown == []
    wrong = {k: (registered[k], sorted(v)) for k, v in seen.items() if v != {registered[k]}}
    assert wrong == {}


def test_every_registry_entry_is_emitted_by_some_helper(everything: list[ReadableSpan]) -> None:
    registered = {a["name"] for a in load_registry()["attributes"]}
    assert sorted(registered - set(emitted(everything))) == []


def test_every_record_kind_is_emitted_and_matches_its_registered_span(everything: list[ReadableSpan]) -> None:
    registry = load_registry()
    by_kind = {s["record_kind"]: s for s in registry["spans"]}
    assert set(by_kind) == set(A.RECORD_KINDS)
    emitted_kinds = {s.attributes[A.RECORD_KIND] for s in everything}
    assert emitted_kinds == set(A.RECORD_KINDS)
    for span in everything:
        spec = by_kind[span.attributes[A.RECORD_KIND]]
        allowed = {a["name"] for a in spec["attributes"]}
        assert set(span.attributes) <= allowed, (span.name, sorted(set(span.attributes) - allowed))
        pattern = re.sub(r"\\\{[^}]*\\\}", ".+", re.escape(spec["name"]))
        assert re.fullmatch(pattern, span.name), (span.name, spec["name"])
        assert span.kind.name in spec["kind"], (span.name, span.kind.name, spec["kind"])
        assert {e.name for e in span.events} <= set(spec["events"]), span.name
        if span.attributes.get(A.PENDING_SPAN_TYPE) == A.PENDING_SPAN:
            continue  # an announcement carries what its span had when it started (usage comes at its end)
        required = {a["name"] for a in spec["attributes"] if a["requirement_level"] == "required"}
        missing = required - set(span.attributes)
        if A.MISUSE in span.attributes:  # a misused helper leaves invalid values out, and says which
            assert all(any(name.rsplit(".", 1)[-1] in m for m in span.attributes[A.MISUSE]) for name in missing)
            continue
        assert not missing, (span.name, sorted(missing))


def test_event_and_link_attributes_match_their_registration(everything: list[ReadableSpan]) -> None:
    registry = load_registry()
    events = {e["name"]: set(e["attributes"]) for e in registry["events"]}
    link_attrs = set(registry["links"][0]["attributes"])
    for span in everything:
        for event in span.events:
            assert set(event.attributes) <= events[event.name], event.name
        for link in span.links:
            assert set(link.attributes) == link_attrs


def test_registry_shape() -> None:
    registry = load_registry()
    names = [a["name"] for a in registry["attributes"]]
    assert len(names) == len(set(names))
    for a in registry["attributes"]:
        assert a["type"] in ATTRIBUTE_TYPES, a
        assert a["requirement_level"] in REQUIREMENT_LEVELS, a
        assert a["description"], a
        assert a["applies_to"], a
        assert otel_type(a["example"]) == a["type"], a["name"]
        if a["standard"]:
            assert not a["name"].startswith(A.PREFIX), a["name"]
        else:
            assert a["name"].startswith(A.PREFIX), a["name"]
            assert re.fullmatch(r"otel_agent(\.[a-z][a-z0-9_]*)+", a["name"]), a["name"]
        assert not a["name"].startswith("otel.")
    # OTel naming rule: no attribute name is also a namespace of another one.
    for n in names:
        assert not any(other.startswith(n + ".") for other in names), n
    for span in registry["spans"]:
        for entry in span["attributes"]:
            assert entry["name"] in names
            assert entry["requirement_level"] in REQUIREMENT_LEVELS
    event_names = {e["name"] for e in registry["events"]}
    for span in registry["spans"]:
        assert set(span["events"]) <= event_names


def test_constants_module_matches_registry() -> None:
    registered = {a["name"] for a in load_registry()["attributes"]}
    event_names = {e["name"] for e in load_registry()["events"]}
    constants = {
        value
        for key, value in vars(A).items()
        if key.isupper() and isinstance(value, str) and "." in value and not key.startswith(("EVENT_", "PREFIX"))
    }
    assert constants - registered == set()
    events = {value for key, value in vars(A).items() if key.startswith("EVENT_")}
    assert events <= event_names


def test_registry_json_is_shipped_as_package_data() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert '"*.json"' in text  # setuptools package-data picks registry.json up
    assert json.loads((ROOT / "otel_agent/instrument/registry.json").read_text())["schema_version"] == 1


def test_semconv_doc_is_fresh() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_semconv_doc.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


def test_doc_mentions_every_attribute_and_record_kind() -> None:
    doc = (ROOT / "docs" / "semconv.md").read_text()
    for a in load_registry()["attributes"]:
        assert f"`{a['name']}`" in doc
    for kind in A.RECORD_KINDS:
        assert f"`{kind}`" in doc


def test_doc_usage_example_runs(spans: Spans) -> None:
    import queue

    doc = (ROOT / "docs" / "semconv.md").read_text()
    code = re.search(r"```python\n(.*?)```", doc, re.S).group(1)  # type: ignore[union-attr]
    code = code.replace("    ...\n", "").replace("# in the worker process\n", "carrier = queue.get()\n")
    exec(compile(code, "semconv.md", "exec"), {"queue": queue.Queue()})
    kinds = [s.attributes[A.RECORD_KIND] for s in spans.all]
    assert {"flow_run", "provider_call", "evidence_item", "artifact_version", "handoff_work"} <= set(kinds)
    assert [t.attributes[A.RECEIPT_TRANSITION] for t in spans.kind("receipt_transition")] == [
        "delegated",
        "accepted",
        "waiting",
        "completed",
    ]


def test_doc_sdk_setup_records_into_the_store(tmp_path: Path) -> None:
    """The five-line set-up of docs/semconv.md, run as written in a fresh process, records a helper's span."""
    doc = (ROOT / "docs" / "semconv.md").read_text()
    setup = doc[doc.index("## Setting up the SDK") :]
    code = re.search(r"```python\n(.*?)```", setup, re.S).group(1)  # type: ignore[union-attr]
    code += "import otel_agent.instrument as oi\noi.claim('set up', confidence='high', claim_id='c1')\n"
    code += "provider.shutdown()\n"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, "")  # no "no SDK" warning either
    con = duckdb.connect(str(tmp_path / "otel_agent.duckdb"), read_only=True)
    assert con.execute("SELECT record_kind, record_id FROM spans").fetchall() == [("claim", "c1")]
    con.close()
