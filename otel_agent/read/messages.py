"""Captured messages as a chat: the GenAI conventions' ``gen_ai.system_instructions`` /
``gen_ai.input.messages`` / ``gen_ai.output.messages`` (and their older forms: ``gen_ai.prompt`` /
``gen_ai.completion`` as JSON, flattened ``gen_ai.prompt.N.*``, the ``gen_ai.content.prompt`` /
``gen_ai.content.completion`` and ``gen_ai.{system,user,assistant,tool}.message`` / ``gen_ai.choice`` events),
OpenInference's ``llm.input_messages.N.message.*`` / ``llm.output_messages.*``, and the Vercel AI SDK's
``ai.prompt.messages`` / ``ai.prompt`` / ``ai.response.text`` / ``ai.response.toolCalls``.

Every shape becomes ``Message`` (role, parts) with parts of four kinds: text, tool_call (name, id, arguments),
tool_result (id, content) and other (anything else, kept as JSON). Telemetry is hostile: anything unreadable is
left out here (the raw attributes stay one click away on the page), sizes are bounded, nothing is escaped here
(each face escapes its own way).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

MAX_MESSAGES = 200
MAX_TEXT = 20_000


@dataclass
class Part:
    kind: str  # text | tool_call | tool_result | other
    text: str = ""
    name: str | None = None
    id: str | None = None


@dataclass
class Message:
    role: str
    parts: list[Part] = field(default_factory=list)
    name: str | None = None
    finish_reason: str | None = None


@dataclass
class Chat:
    """A call's conversation: ``system`` instructions, ``input`` and ``output`` messages, and where each came
    from (``sources``: the attribute or event names read)."""

    system: list[Message] = field(default_factory=list)
    input: list[Message] = field(default_factory=list)
    output: list[Message] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.system or self.input or self.output)


def _load(value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in "[{":
            try:
                return json.loads(text)
            except ValueError:
                return value
    return value


def _text(value: Any) -> str:
    if value is None:
        return ""
    s = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return s if len(s) <= MAX_TEXT else s[:MAX_TEXT] + f"… ({len(s) - MAX_TEXT:,} more characters)"


def _args(value: Any) -> str:
    """Tool arguments: JSON text pretty-printed, anything else as given."""
    loaded = _load(value)
    return _text(loaded if not isinstance(loaded, str) else value)


def _part(p: Any) -> list[Part]:
    """One content part of any of the shapes above."""
    if isinstance(p, str):
        return [Part("text", _text(p))]
    if not isinstance(p, dict):
        return [Part("other", _text(p))]
    kind = str(p.get("type") or "")
    if kind in ("text", "input_text", "output_text", "reasoning", "thinking") or (
        not kind and "content" in p and isinstance(p["content"], str)
    ):
        return [Part("text", _text(p.get("content") if p.get("content") is not None else p.get("text")),
                     name="reasoning" if kind in ("reasoning", "thinking") else None)]  # fmt: skip
    if kind in ("tool_call", "tool-call", "function_call", "tool_use"):
        args = next((p[k] for k in ("arguments", "args", "input") if k in p), None)
        return [Part("tool_call", _args(args), name=str(p.get("name") or p.get("toolName") or "") or None,
                     id=str(p.get("id") or p.get("toolCallId") or "") or None)]  # fmt: skip
    if kind in ("tool_call_response", "tool-result", "tool_result", "function_call_output"):
        result = next((p[k] for k in ("response", "result", "output", "content") if k in p), None)
        return [Part("tool_result", _args(result), name=str(p.get("toolName") or p.get("name") or "") or None,
                     id=str(p.get("id") or p.get("toolCallId") or p.get("tool_use_id") or "") or None)]  # fmt: skip
    return [Part("other", _text(p), name=kind or None)]


def _tool_calls(calls: Any) -> list[Part]:
    """OpenAI-style ``tool_calls`` ({id, function: {name, arguments}}) and Vercel's ``ai.response.toolCalls``."""
    out = []
    for c in calls if isinstance(calls, list) else []:
        if not isinstance(c, dict):
            continue
        fn = c.get("function") if isinstance(c.get("function"), dict) else {}
        name = fn.get("name") or c.get("name") or c.get("toolName")
        args = (
            fn.get("arguments")
            if "arguments" in fn
            else next((c[k] for k in ("arguments", "args", "input") if k in c), None)
        )
        out.append(Part("tool_call", _args(args), name=str(name) if name else None,
                        id=str(c.get("id") or c.get("toolCallId") or "") or None))  # fmt: skip
    return out


def message(m: Any, default_role: str = "user") -> Message | None:
    """One message of any shape: {role, parts} (the conventions), {role, content: text | parts, tool_calls,
    tool_call_id} (OpenAI, Vercel, older GenAI), or bare text."""
    if isinstance(m, str):
        return Message(default_role, [Part("text", _text(m))])
    if not isinstance(m, dict):
        return None
    role = str(m.get("role") or default_role)
    parts: list[Part] = []
    if isinstance(m.get("parts"), list):
        for p in m["parts"]:
            parts += _part(p)
    content = m.get("content")
    if isinstance(content, list):
        for p in content:
            parts += _part(p)
    elif content is not None and not isinstance(m.get("parts"), list):
        loaded = _load(content) if role != "tool" else content
        if isinstance(loaded, list) and loaded and all(isinstance(x, dict) for x in loaded):
            for p in loaded:
                parts += _part(p)
        elif role == "tool" or m.get("tool_call_id"):
            parts.append(
                Part("tool_result", _args(content), id=str(m.get("tool_call_id") or m.get("id") or "") or None)
            )
        else:
            parts.append(Part("text", _text(content)))
    parts += _tool_calls(m.get("tool_calls"))
    if not parts and isinstance(m.get("message"), dict):  # gen_ai.choice: {index, finish_reason, message}
        inner = message(m["message"], "assistant")
        if inner:
            inner.finish_reason = m.get("finish_reason") or inner.finish_reason
        return inner
    finish = m.get("finish_reason")
    return Message(role, parts, name=str(m["name"]) if m.get("name") else None,
                   finish_reason=str(finish) if finish else None)  # fmt: skip


def messages(value: Any, default_role: str = "user") -> list[Message]:
    """A list of messages (JSON text or a parsed list; one message alone counts as a list)."""
    loaded = _load(value)
    if isinstance(loaded, dict):
        loaded = loaded.get("messages", [loaded]) if "messages" in loaded else [loaded]
    if isinstance(loaded, str):
        loaded = [loaded]
    out = []
    for m in loaded[:MAX_MESSAGES] if isinstance(loaded, list) else []:
        found = message(m, default_role)
        if found is not None and (found.parts or found.role):
            out.append(found)
    return out


_FLAT = re.compile(
    r"^(?P<prefix>llm\.input_messages|llm\.output_messages|gen_ai\.prompt|gen_ai\.completion)\.(?P<i>\d+)\.(?P<rest>.+)$"
)


def _unflatten(attrs: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """``prefix.N.key.path`` attributes as nested lists and dicts by prefix (OpenInference, OpenLLMetry)."""
    found: dict[str, dict[int, dict[str, Any]]] = {}
    for key, value in attrs.items():
        m = _FLAT.match(key)
        if not m:
            continue
        node = found.setdefault(m["prefix"], {}).setdefault(int(m["i"]), {})
        path = m["rest"].split(".")
        for step in path[:-1]:
            nxt = node.get(step)
            if not isinstance(nxt, dict):
                nxt = node[step] = {}
            node = nxt
        node[path[-1]] = value
    out: dict[str, list[dict[str, Any]]] = {}
    for prefix, items in found.items():
        out[prefix] = [items[i] for i in sorted(items)[:MAX_MESSAGES]]
    return out


def _listed(d: Any) -> list[Any]:
    """``{"0": a, "1": b}`` (an unflattened list) as ``[a, b]``."""
    if isinstance(d, list):
        return d
    if isinstance(d, dict) and all(k.isdigit() for k in d):
        return [d[k] for k in sorted(d, key=int)]
    return []


def _openinference(m: dict[str, Any]) -> dict[str, Any]:
    """An OpenInference message (``message.role``, ``message.content``, ``message.contents.N.message_content.*``,
    ``message.tool_calls.N.tool_call.function.*``, ``message.tool_call_id``) in the OpenAI shape."""
    msg = m.get("message") if isinstance(m.get("message"), dict) else m
    out: dict[str, Any] = {"role": msg.get("role"), "name": msg.get("name")}
    if msg.get("content") is not None:
        out["content"] = msg["content"]
    contents = [c.get("message_content", c) for c in _listed(msg.get("contents")) if isinstance(c, dict)]
    if contents:
        out["content"] = [{"type": c.get("type") or "text", "text": c.get("text")} for c in contents]
    calls = [c.get("tool_call", c) for c in _listed(msg.get("tool_calls")) if isinstance(c, dict)]
    if calls:
        out["tool_calls"] = calls
    if msg.get("tool_call_id"):
        out["tool_call_id"] = msg["tool_call_id"]
    return out


EVENT_ROLES = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
               "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}  # fmt: skip


def chat(attrs: dict[str, Any], events: list[dict[str, Any]] | None = None) -> Chat:
    """The chat a span's attributes and events carry (empty when they carry none)."""
    c = Chat()

    def take(key: str, target: list[Message], role: str) -> None:
        if key in attrs and attrs[key] not in (None, ""):
            found = messages(attrs[key], role)
            if found:
                target += found
                c.sources.append(key)

    # the conventions (v1.37+), then their older forms
    if "gen_ai.system_instructions" in attrs:
        loaded = _load(attrs["gen_ai.system_instructions"])
        parts = [p for x in (loaded if isinstance(loaded, list) else [loaded]) for p in _part(x)]
        if parts:
            c.system.append(Message("system", parts))
            c.sources.append("gen_ai.system_instructions")
    take("gen_ai.input.messages", c.input, "user")
    take("gen_ai.output.messages", c.output, "assistant")
    if not c.input:
        take("gen_ai.prompt", c.input, "user")
    if not c.output:
        take("gen_ai.completion", c.output, "assistant")
    flat = _unflatten(attrs)
    if not c.input and flat.get("gen_ai.prompt"):
        c.input += [m for m in (message(x) for x in flat["gen_ai.prompt"]) if m]
        c.sources.append("gen_ai.prompt.N.*")
    if not c.output and flat.get("gen_ai.completion"):
        c.output += [m for m in (message(x, "assistant") for x in flat["gen_ai.completion"]) if m]
        c.sources.append("gen_ai.completion.N.*")
    # OpenInference
    if not c.input and flat.get("llm.input_messages"):
        c.input += [m for m in (message(_openinference(x)) for x in flat["llm.input_messages"]) if m]
        c.sources.append("llm.input_messages")
    if not c.output and flat.get("llm.output_messages"):
        c.output += [m for m in (message(_openinference(x), "assistant") for x in flat["llm.output_messages"]) if m]
        c.sources.append("llm.output_messages")
    # Vercel AI SDK
    if not c.input:
        take("ai.prompt.messages", c.input, "user")
    if not c.input and "ai.prompt" in attrs:
        prompt = _load(attrs["ai.prompt"])
        if isinstance(prompt, dict):
            if prompt.get("system"):
                c.system.append(Message("system", [Part("text", _text(prompt["system"]))]))
            if prompt.get("messages"):
                c.input += messages(prompt["messages"])
            elif prompt.get("prompt"):
                c.input += messages(prompt["prompt"])
            c.sources.append("ai.prompt")
    if not c.output and ("ai.response.text" in attrs or "ai.response.toolCalls" in attrs):
        parts = [Part("text", _text(attrs["ai.response.text"]))] if attrs.get("ai.response.text") else []
        parts += _tool_calls(_load(attrs.get("ai.response.toolCalls")))
        if parts:
            c.output.append(Message("assistant", parts))
            c.sources.append("ai.response")
    # events (older GenAI conventions)
    for e in events or []:
        name = e.get("name")
        ea = _load(e.get("attributes"))
        ea = ea if isinstance(ea, dict) else {}
        if name == "gen_ai.content.prompt" and not c.input:
            c.input += messages(ea.get("gen_ai.prompt"))
            c.sources.append("event gen_ai.content.prompt")
        elif name == "gen_ai.content.completion" and not c.output:
            c.output += messages(ea.get("gen_ai.completion"), "assistant")
            c.sources.append("event gen_ai.content.completion")
        elif name in EVENT_ROLES and "gen_ai.input.messages" not in attrs:
            m = message({"role": ea.get("role") or EVENT_ROLES[name], **ea}, EVENT_ROLES[name])
            if m:
                (c.system if m.role == "system" else c.input).append(m)
                c.sources.append(f"event {name}")
        elif name == "gen_ai.choice" and "gen_ai.output.messages" not in attrs:
            m = message(ea, "assistant")
            if m:
                c.output.append(m)
                c.sources.append("event gen_ai.choice")
    c.sources = list(dict.fromkeys(c.sources))
    return c
