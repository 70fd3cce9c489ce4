"""A small OpenAI-compatible HTTP server on loopback, for driving real instrumentation libraries offline.

``POST /v1/chat/completions`` (non-streaming) answers from a fixed script decided by the request:

- a request offering a ``transfer_to_*`` tool, whose conversation has no answered tool call yet, gets a
  call of that tool (the OpenAI Agents SDK's handoff);
- a request offering another tool that has not been called and answered yet gets a call of the first one;
- anything else gets a text answer.

Usage is deterministic: prompt tokens = 100 + 10 × messages, completion tokens 20 (text) or 12 (tool call),
with cached and reasoning details. The response model is the request model with ``-2024-08-06`` appended, as
OpenAI reports dated snapshots. Every request is kept in ``requests`` for assertions.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.loopback_http import LoopbackServer, reply

DATED_SUFFIX = "-2024-08-06"


def usage_for(n_messages: int, tool_call: bool) -> dict[str, Any]:
    prompt = 100 + 10 * n_messages
    completion = 12 if tool_call else 20
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 64, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 5, "audio_tokens": 0},
    }


def answer(body: dict[str, Any], counter: int) -> dict[str, Any]:
    messages = body.get("messages") or []
    tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
    answered = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
    called = {
        c.get("function", {}).get("name")
        for m in messages
        if m.get("role") == "assistant"
        for c in m.get("tool_calls") or []
        if c.get("id") in answered
    }
    handoffs = [t for t in tools if t and t.startswith("transfer_to_")]
    plain = [t for t in tools if t and not t.startswith("transfer_to_")]
    call = None
    if handoffs and not called:
        call = handoffs[0]
    elif plain and not called & set(plain):
        call = plain[0]
    if call is not None:
        arguments = "{}" if call.startswith("transfer_to_") else json.dumps({"city": "Paris"})
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{counter:04d}",
                    "type": "function",
                    "function": {"name": call, "arguments": arguments},
                }
            ],
        }
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": "It is sunny in Paris."}
        finish = "stop"
    return {
        "id": f"chatcmpl-{counter:04d}",
        "object": "chat.completion",
        "created": 1_700_000_000 + counter,
        "model": str(body.get("model", "gpt-4o")) + DATED_SUFFIX,
        "system_fingerprint": "fp_test",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": usage_for(len(messages), call is not None),
    }


class FakeOpenAI(LoopbackServer):
    """``with FakeOpenAI() as server: OpenAI(base_url=server.base_url, api_key="test")``."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with outer._lock:
                    outer.requests.append({"path": self.path, "body": body})
                    counter = len(outer.requests)
                if self.path.rstrip("/").endswith("/chat/completions"):
                    status, doc = 200, answer(body, counter)
                else:
                    status, doc = 404, {"error": {"message": f"no route {self.path}", "type": "not_found"}}
                data = json.dumps(doc).encode()
                reply(self, status, "application/json", data)

        super().__init__(Handler)

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"
