"""Local checkpoints as the agent of real tau2 retail episodes, through run_episode (the only loop)."""
import asyncio
import json

import pytest

pytest.importorskip("torch", reason="local backends need torch (pip install 'mua[local]')")

from helpers.data import DATA_DIR

from mua.benchmarks.tau2 import Tau2Benchmark  # noqa: E402
from mua.harness.agents import ModelAgent  # noqa: E402
from mua.harness.models.chat_template import render_prompt  # noqa: E402
from mua.harness.models.generation import GenerationResult  # noqa: E402
from mua.harness.models.trace import record_turns  # noqa: E402
from mua.harness.models.transformers_backend import TransformersChatModel  # noqa: E402
from mua.harness.runner import agent_view, run_episode  # noqa: E402
from mua.harness.users.simulator import ScriptedUser  # noqa: E402

BENCH = Tau2Benchmark(DATA_DIR)
USER_SAYS = ["Hi, I want to return an item.", "My name is Yusuf Rossi, zip 19122.", "###STOP###"]


@pytest.fixture(scope="module")
def retail_tasks(data_dir):
    return BENCH.load_tasks("retail", "test")[:2]


def play(model, tasks, seed=0):
    """Both tasks concurrently, each with its own turn recorder."""
    async def one(task):
        with record_turns() as turns:
            user = ScriptedUser(USER_SAYS, stop_markers=["###STOP###"])
            result = await run_episode(BENCH, task, ModelAgent(model, seed=seed), user)
        return result, turns

    async def main():
        return await asyncio.gather(*[one(t) for t in tasks])
    return asyncio.run(main())


def test_tiny_checkpoint_plays_and_is_scored_on_tau2_retail(tiny_checkpoint, tiny_tokenizer, retail_tasks):
    model = TransformersChatModel(tiny_checkpoint, max_new_tokens=6, device="cpu")
    outcomes = play(model, retail_tasks)
    for task, (result, turns) in zip(retail_tasks, outcomes):
        # random weights: often an empty reply, which tau2's protocol ends as agent_error (scored 0)
        assert result.termination in ("user_stop", "agent_error") and result.score is not None
        if result.termination == "agent_error":
            last = result.messages[-1]
            assert last.role == "assistant" and bool((last.content or "").strip()) == bool(last.tool_calls)
        assert 0.0 <= result.score.reward <= 1.0  # random weights: near zero, by design
        spec = BENCH.start(task)
        system = [{"role": "system", "content": spec.system_prompt}]
        # every generated turn's prompt ids decode to the conversation the agent saw at that point
        positions = [i for i, m in enumerate(result.messages) if m.role == "assistant"][1:]  # [0]: greeting
        assert len(turns) == len(positions) == result.agent_usage.requests
        for turn, pos in zip(turns, positions):
            view = [type(result.messages[0])(**d) for d in system] + agent_view(result.messages[:pos])
            rendered = render_prompt(tiny_tokenizer, view, spec.env.agent_tools(0))
            assert tiny_tokenizer.decode(turn.prompt_ids, skip_special_tokens=False) == rendered
            assert turn.message.content == result.messages[pos].content
    assert max(model.batcher.batch_sizes) == 2  # the two episodes' turns were generated together


class ScriptedCompletions(TransformersChatModel):
    """The tiny checkpoint's tokenizer and template, with fixed completion texts instead of sampling."""

    texts: list[str] = []

    def _generate_batch(self, requests):
        out = []
        for _ in requests:
            ids = self.tokenizer(self.texts.pop(0), add_special_tokens=False)["input_ids"] + [min(self.stop_ids)]
            out.append(GenerationResult(ids, [-1.0] * len(ids), "stop"))
        return out


def test_parsed_calls_reach_the_retail_environment_and_bad_ones_come_back_as_errors(tiny_checkpoint,
                                                                                   retail_tasks):
    find = {"name": "find_user_id_by_name_zip",
            "arguments": {"first_name": "Yusuf", "last_name": "Rossi", "zip": "19122"}}
    model = ScriptedCompletions(tiny_checkpoint)
    model.texts = [f"<tool_call>{json.dumps(find)}</tool_call>",
                   '<tool_call>{"name": "teleport_order", "arguments": {}}</tool_call>',
                   "Could you give me your order id?",
                   '<tool_call>{"name": "get_order_details", "arguments": {</tool_call>']
    [(result, turns)] = play(model, retail_tasks[:1])
    tool_msgs = [m for m in result.messages if m.role == "tool"]
    assert tool_msgs[0].name == "find_user_id_by_name_zip" and tool_msgs[0].content == "yusuf_rossi_9620"
    assert tool_msgs[1].name == "teleport_order" and "teleport_order" in tool_msgs[1].content
    assert len(tool_msgs) == 2
    last = [m for m in result.messages if m.role == "assistant"][-1]
    assert last.tool_calls is None and last.content.startswith("<tool_call>")  # broken JSON: a text turn
    assert [t.finish_reason for t in turns] == ["stop"] * 4
