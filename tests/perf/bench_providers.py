"""CPU per request of mua's Anthropic adapter and, when installed, LiteLLM's, against the mock Anthropic server
(tests/mock_providers.py) running in a child process, so only the client's CPU is counted.

    python tests/perf/bench_providers.py [--requests 300]

The request is tau2-sized: a 6 KB system prompt, 12 tools and a 10-message conversation with tool calls.
LiteLLM is optional (pip install litellm, into its own venv with mua on PYTHONPATH); its price map is read
from the package (LITELLM_LOCAL_MODEL_COST_MAP=True), as nothing here may reach the internet.
"""
from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ (the mocks)

from mock_openai import tool_call_reply  # noqa: E402

from mua.harness.models.providers import AnthropicChatModel  # noqa: E402
from mua.harness.types import Message, ToolCall, ToolSpec  # noqa: E402

TOOLS = [ToolSpec(f"tool_{i}", "Does one thing. " * 20,
                  {"type": "object", "properties": {f"arg_{j}": {"type": "string", "description": "a value " * 5}
                                                    for j in range(4)}, "required": ["arg_0"]}) for i in range(12)]
CONVERSATION = [Message("system", "Policy line. " * 500), Message("assistant", "Hi! How can I help you today?")]
for turn in range(4):
    CONVERSATION += [Message("user", f"Please look up item {turn}."),
                     Message("assistant", None, tool_calls=[ToolCall(f"call_{turn}", "tool_1", '{"arg_0": "x"}')])]
CONVERSATION.append(Message("tool", '{"status": "ok", "items": [1, 2, 3]}', tool_call_id="call_3"))


def _serve(queue) -> None:
    from mock_providers import MockAnthropic

    async def main() -> None:
        server = MockAnthropic(lambda request: tool_call_reply([("tool_1", {"arg_0": "y"})]))
        queue.put(await server.start())
        await asyncio.Event().wait()
    asyncio.run(main())


async def _mua(url: str, n: int) -> float:
    model = AnthropicChatModel("claude-sonnet-4-5", url)
    for _ in range(5):
        await model.chat(CONVERSATION, TOOLS)
    start = time.process_time()
    for _ in range(n):
        await model.chat(CONVERSATION, TOOLS)
    cpu = time.process_time() - start
    await model.aclose()
    return cpu / n


async def _litellm(url: str, n: int) -> float:
    import litellm

    messages = [m.to_dict() for m in CONVERSATION]
    tools = [t.to_openai() for t in TOOLS]
    base = url.rsplit("/v1", 1)[0]

    async def one() -> None:
        await litellm.acompletion(model="anthropic/claude-sonnet-4-5", api_base=base, api_key="mock",
                                  messages=messages, tools=tools)
    for _ in range(5):
        await one()
    start = time.process_time()
    for _ in range(n):
        await one()
    return (time.process_time() - start) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=300)
    args = ap.parse_args()
    queue: mp.Queue = mp.Queue()
    server = mp.Process(target=_serve, args=(queue,), daemon=True)
    server.start()
    url = queue.get(timeout=30)
    try:
        print(f"mua AnthropicChatModel: {1000 * asyncio.run(_mua(url, args.requests)):.2f} ms CPU per request")
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        try:
            start = time.process_time()
            import litellm  # noqa: F401
            print(f"import litellm: {time.process_time() - start:.2f} s CPU")
        except ImportError:
            print("litellm not installed: skipped")
            return
        print(f"litellm.acompletion (anthropic/): {1000 * asyncio.run(_litellm(url, args.requests)):.2f} ms CPU "
              "per request")
    finally:
        server.terminate()


if __name__ == "__main__":
    main()
