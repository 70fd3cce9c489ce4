"""The fake OpenAI-compatible server of tests/derived_runs/fake_openai.py, plus streamed answers: a request with
``"stream": true`` gets the same answer as server-sent events (role, a few content chunks or the tool call, the
finish reason, then the usage chunk when ``stream_options.include_usage`` asks for it), as OpenAI sends them.
``POST /v1/responses`` (the Responses API, which clients such as the AI SDK's default ``openai(model)`` call) gets
a text answer, not streamed, with the same usage rule."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.derived_runs.fake_openai import DATED_SUFFIX, usage_for
from tests.derived_runs.fake_openai import answer as scripted_answer
from tests.loopback_http import LoopbackServer, reply

ARGUMENTS = {"city": "Paris", "task": "Weather in Paris?", "query": "weather in Paris"}
"""Values for the tool arguments the model fills (by parameter name); others get 'x', or the first of an enum."""


def answer(body: dict[str, Any], counter: int) -> dict[str, Any]:
    """tests/derived_runs/fake_openai.py's scripted answer, with the tool call's arguments filled from the called
    tool's JSON schema (its required parameters), so that a framework's own tools (a team's delegation tool, say)
    validate: ``member_id``-like parameters take the first value their schema's enum or description offers."""
    doc = scripted_answer(body, counter)
    message = doc["choices"][0]["message"]
    for call in message.get("tool_calls") or []:
        schema = next(
            (
                (t.get("function") or {}).get("parameters") or {}
                for t in body.get("tools") or []
                if (t.get("function") or {}).get("name") == call["function"]["name"]
            ),
            {},
        )
        properties = schema.get("properties") or {}
        if not properties:
            continue
        arguments = {}
        for name in schema.get("required") or list(properties):
            spec = properties.get(name) or {}
            if spec.get("enum"):
                arguments[name] = spec["enum"][0]
            else:
                arguments[name] = ARGUMENTS.get(name, MEMBER_IDS.get(name, "x"))
        call["function"]["arguments"] = json.dumps(arguments)
    return doc


MEMBER_IDS: dict[str, str] = {}
"""Per-test values of further parameters (a team member's id), set by the test that needs them."""


def stream_events(doc: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    base = {k: doc[k] for k in ("id", "created", "model", "system_fingerprint")} | {"object": "chat.completion.chunk"}
    choice = doc["choices"][0]
    message = choice["message"]
    chunks: list[dict[str, Any]] = [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]
    if message.get("tool_calls"):
        call = message["tool_calls"][0]
        chunks.append({"index": 0, "delta": {"tool_calls": [{"index": 0, **call}]}, "finish_reason": None})
    else:
        for word in str(message["content"]).split(" "):
            chunks.append({"index": 0, "delta": {"content": word + " "}, "finish_reason": None})
    chunks.append({"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]})
    events = [base | {"choices": [c]} for c in chunks]
    if include_usage:
        events.append(base | {"choices": [], "usage": doc["usage"]})
    return events


def responses_answer(body: dict[str, Any], counter: int) -> dict[str, Any]:
    """A Responses API answer: one assistant message of text. Usage as the chat script's: input tokens 100 + 10 ×
    input items (a string input is one), 20 output tokens, 64 of the input cached and 5 of the output reasoning."""
    items = body.get("input")
    n_items = len(items) if isinstance(items, list) else 1
    usage = usage_for(n_items, tool_call=False)
    return {
        "id": f"resp_{counter:04d}",
        "object": "response",
        "created_at": 1_700_000_000 + counter,
        "status": "completed",
        "model": str(body.get("model", "gpt-4o")) + DATED_SUFFIX,
        "output": [
            {
                "type": "message",
                "id": f"msg_{counter:04d}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "It is sunny in Paris.", "annotations": []}],
            }
        ],
        "usage": {
            "input_tokens": usage["prompt_tokens"],
            "input_tokens_details": {"cached_tokens": usage["prompt_tokens_details"]["cached_tokens"]},
            "output_tokens": usage["completion_tokens"],
            "output_tokens_details": {"reasoning_tokens": usage["completion_tokens_details"]["reasoning_tokens"]},
            "total_tokens": usage["total_tokens"],
        },
    }


class FakeStreamingOpenAI(LoopbackServer):
    """``with FakeStreamingOpenAI() as server:`` — base_url, requests, as FakeOpenAI."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with outer._lock:
                    outer.requests.append({"path": self.path, "body": body})
                    counter = len(outer.requests)
                if self.path.rstrip("/").endswith("/responses") and not body.get("stream"):
                    self._send(200, responses_answer(body, counter))
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                    return
                doc = answer(body, counter)
                if not body.get("stream"):
                    self._send(200, doc)
                    return
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                data = (
                    b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in stream_events(doc, include_usage))
                    + b"data: [DONE]\n\n"
                )
                reply(self, 200, "text/event-stream", data)

            def _send(self, status: int, doc: dict[str, Any]) -> None:
                data = json.dumps(doc).encode()
                reply(self, status, "application/json", data)

        super().__init__(Handler)

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"
