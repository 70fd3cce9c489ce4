"""An agent traced by Logfire's SDK (tests/derived_runs/test_logfire_pending.py): Logfire pointed at a receiver as
its backend (``AdvancedOptions(base_url=)``, any token: the receiver has no auth here), which makes it send a
pending span for each span as it starts. An agent span holds a chat call; once the call has ended and been
exported, the agent prints ``STARTED`` and waits for a line on stdin before its agent span ends.

    python logfire_agent.py http://127.0.0.1:PORT
"""

import sys

import logfire

logfire.configure(
    send_to_logfire=True,
    token="pylf_v1_us_local",
    console=False,
    service_name="logfire-agent",
    inspect_arguments=False,
    metrics=False,
    advanced=logfire.AdvancedOptions(base_url=sys.argv[1]),
)
agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}
chat = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": "gpt-4o",
    "gen_ai.usage.input_tokens": 10,
    "gen_ai.usage.output_tokens": 3,
}
with logfire.span("invoke_agent support", **agent):
    with logfire.span("chat gpt-4o", **chat):
        pass
    logfire.force_flush()
    print("STARTED", flush=True)
    sys.stdin.readline()
logfire.force_flush()
