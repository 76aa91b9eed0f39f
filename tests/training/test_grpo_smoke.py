"""CPU smoke test of GRPO through the episode runner: a tiny model warmed up on gold trajectories, the counter
benchmark with its scripted user, two optimizer steps. Checks the batch that reaches the loss."""
from __future__ import annotations

import json

import pytest
from helpers.counter_bench import CounterBenchmark

from mua.harness.models.chat_template import template_messages
from mua.harness.runner import agent_view
from mua.harness.types import Message
from mua.harness.users.simulator import ScriptedUser

torch = pytest.importorskip("torch")
pytest.importorskip("trl", reason="GRPO training needs trl")

G, BATCH, TURN, BUDGET = 4, 8, 40, 150


class LenientCounter(CounterBenchmark):
    """Any successful ``add`` passes, so the barely-warmed tiny model gets mixed rewards within a group."""

    async def score(self, task, messages, *, env=None, termination=None, judge=None):
        score = await super().score(task, messages, env=env, termination=termination, judge=judge)
        score.reward = float(score.info["value"] != 0)
        return score


@pytest.fixture(scope="module")
def warmed_policy(tiny_checkpoint, tmp_path_factory):
    """The tiny model after a short SFT on gold counter episodes, saved as a checkpoint directory."""
    from gold_warmup import gold_streams, sft_warmup
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)  # tiny matrices: extra threads only contend on a shared CI box
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(tiny_checkpoint)
    model = AutoModelForCausalLM.from_pretrained(tiny_checkpoint)
    bench = CounterBenchmark(n_tasks=8)
    streams = gold_streams(bench, bench.load_tasks("easy"), tokenizer, {tokenizer.eos_token_id})
    losses = sft_warmup(model, streams, steps=100, lr=5e-3, pad_id=tokenizer.pad_token_id)
    assert losses[-1] < losses[0] / 10
    out = tmp_path_factory.mktemp("warm") / "ckpt"
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def _capturing_trainer():
    from trl import GRPOTrainer

    class Capturing(GRPOTrainer):
        """Records every batch at the loss, with the log-probs the trainer's model assigns to it."""
        batches: list = []

        def _compute_loss(self, model, inputs):
            ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
            mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
            with torch.no_grad():
                logps, _, _ = self._get_per_token_logps_and_entropies(model, ids, mask,
                                                                     inputs["completion_ids"].size(1))
            self.batches.append({**{k: v for k, v in inputs.items() if torch.is_tensor(v)}, "recomputed": logps,
                                 "episodes": list(self._rollout.last)})
            return super()._compute_loss(model, inputs)

    return Capturing


def _match_rows(batch, episodes) -> list[int]:
    """The batch row of each episode: the one holding exactly its prompt and completion ids."""
    rows = []
    for ep in episodes:
        n, p = len(ep.completion_ids), len(ep.prompt_ids)
        found = [r for r in range(batch["completion_ids"].size(0)) if r not in rows
                 and batch["completion_ids"][r, :n].tolist() == ep.completion_ids
                 and not batch["completion_mask"][r, n:].any()
                 and batch["prompt_ids"][r, -p:].tolist() == ep.prompt_ids]
        assert found, f"no batch row holds the episode of {ep.key}"
        rows.append(found[0])
    return rows


def _runs(mask: list[int]) -> list[tuple[int, int, int]]:
    """(value, start, end) of each run of equal mask values."""
    runs, start = [], 0
    for i in range(1, len(mask) + 1):
        if i == len(mask) or mask[i] != mask[start]:
            runs.append((mask[start], start, i))
            start = i
    return runs


@pytest.mark.slow
def test_two_grpo_steps_through_the_runner(warmed_policy, tmp_path):
    from mua.training.config import TrainConfig
    from mua.training.grpo import build_trainer

    bench = LenientCounter(n_tasks=8)
    tasks = bench.load_tasks("easy")[:2]
    cfg = TrainConfig(policy=str(warmed_policy), output_dir=str(tmp_path / "out"), benchmark="counter",
                      num_generations=G, batch_size=BATCH, max_steps=2, learning_rate=1e-3,
                      max_turn_tokens=TURN, max_completion_tokens=BUDGET, save_steps=1, progress=False,
                      allow_scripted_user=True).validate()
    trainer, rollout = build_trainer(cfg, bench, tasks, trainer_cls=_capturing_trainer())
    trainer._rollout = rollout
    before = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}
    trainer.train()
    _check_batches(trainer, steps=2, group=G, batch_size=BATCH, turn=TURN, budget=BUDGET)
    assert max(rollout.backend.batcher.batch_sizes) > 1  # concurrent episodes shared forward passes

    after = trainer.model.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)  # the update moved the weights
    metrics = [json.loads(line) for line in (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [1, 2] and "episode/pass_rate" in metrics[0]
    assert list((tmp_path / "out" / "samples").glob("step-*.jsonl"))
    assert (tmp_path / "out" / "checkpoint-2" / "trainer_state.json").is_file()
    assert (tmp_path / "out" / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"  # drawn as it trains


def _check_batches(trainer, steps, group, batch_size, turn, budget) -> None:
    """What reached the loss: one row per prompt, masks, budgets, stream/conversation agreement, log-probs."""
    from mua.harness.models.stream import TemplateSuffixer

    tok = trainer.processing_class
    suffixer = TemplateSuffixer(tok, tok.eos_token)
    assert len(trainer.batches) == steps
    for batch in trainer.batches:
        episodes = batch["episodes"]
        assert batch["completion_ids"].size(0) == len(episodes) == batch_size  # one row per input prompt
        keys = [e.key for e in episodes]
        assert all(keys.count(k) % group == 0 for k in keys)  # each task appears G times (a GRPO group)
        loss_mask = (batch["completion_mask"] * batch["tool_mask"]).bool()
        assert loss_mask.any()
        rows = _match_rows(batch, episodes)  # the trainer shuffles rows after the rollout
        for row, ep in zip(rows, episodes):
            n = len(ep.completion_ids)
            assert batch["tool_mask"][row, :n].tolist() == ep.env_mask  # assistant weighted, tool/user not
            assert batch["completion_mask"][row, :n].all() and not batch["completion_mask"][row, n:].any()
            assert n <= budget and all(e - s <= turn for v, s, e in _runs(ep.env_mask) if v == 1)
            assert ep.truncated or ep.completion_ids[-1] == tok.eos_token_id or ep.clipped_turns
            _check_stream_matches_conversation(tok, suffixer, ep)
        # the trainer's own log-probs equal the sampler's on every trained token (fp32)
        sampled = batch["sampling_per_token_logps"][loss_mask]
        recomputed = batch["recomputed"][loss_mask]
        assert torch.allclose(recomputed, sampled, atol=1e-5, rtol=0), (recomputed - sampled).abs().max()


def _check_stream_matches_conversation(tok, suffixer, ep) -> None:
    """Generated runs decode to the assistant messages of the trajectory; context runs are exactly the
    template suffix of the messages between two assistant turns."""
    from mua.harness.models.parsers import parse_hermes

    view = agent_view([Message.from_dict(m) for m in ep.messages if m["role"] != "system"])
    first_user = next(i for i, m in enumerate(view) if m.role == "user")  # earlier text is the opening
    assistant_at = [i for i, m in enumerate(view) if m.role == "assistant" and i > first_user]
    runs = _runs(ep.env_mask)
    generated = [ep.completion_ids[s:e] for v, s, e in runs if v == 1]
    context = [ep.completion_ids[s:e] for v, s, e in runs if v == 0]
    assert len(generated) == ep.agent_turns and len(generated) <= len(assistant_at)
    for k, ids in enumerate(generated):
        stopped = ids[-1] == tok.eos_token_id
        text = tok.decode(ids[:-1] if stopped else ids, skip_special_tokens=False)
        parsed, message = parse_hermes(text), view[assistant_at[k]]
        assert parsed.content == message.content
        assert [(c.name, c.arguments) for c in parsed.tool_calls] == [
            (c.name, c.arguments) for c in message.tool_calls or []]
        if k + 1 < len(generated):
            between = view[assistant_at[k] + 1:assistant_at[k + 1]]
            assert tok.decode(context[k], skip_special_tokens=False) == suffixer.suffix_text(between, stopped)
    # Independently of the suffixer: the chat template itself, rendering the conversation with each reply as
    # the raw text the model wrote, gives the decoded completion (which ends at the last generated token).
    raw = [Message(role="assistant", content=tok.decode(ids[:-1] if ids[-1] == tok.eos_token_id else ids,
                                                         skip_special_tokens=False)) for ids in generated]
    convo = list(view[:assistant_at[len(generated) - 1] + 1])
    for k, message in enumerate(raw):
        convo[assistant_at[k]] = message
    before = tok.apply_chat_template(template_messages(convo[:assistant_at[0]]), tokenize=False,
                                     add_generation_prompt=True)
    full = tok.apply_chat_template(template_messages(convo), tokenize=False)
    assert full.startswith(before)
    tail = "\n" if generated[-1][-1] == tok.eos_token_id else "<|im_end|>\n"  # a cut reply is closed here
    assert full[len(before):] == tok.decode(ep.completion_ids, skip_special_tokens=False) + tail


@pytest.mark.slow
def test_one_grpo_step_on_tau2_retail_train_tasks(tiny_checkpoint, data_dir, tmp_path):
    """The real adapter: retail policy and tools in the prompt (~10k tokens), tau2 environment and scoring,
    its scripted user. The untrained model's replies are noise; the token bookkeeping must still hold."""
    from mua.harness.registry import open_benchmark
    from mua.training.config import TrainConfig
    from mua.training.grpo import build_trainer, load_training_tasks

    torch.set_num_threads(1)
    bench = open_benchmark("tau2", data_dir)
    cfg = TrainConfig(policy=str(tiny_checkpoint), output_dir=str(tmp_path / "out"), benchmark="tau2",
                      subsets=["retail"], split="train", task_ids=["105"], num_generations=2, batch_size=2,
                      max_steps=1, max_turn_tokens=12, max_completion_tokens=80, save_steps=10, progress=False,
                      user_model="scripted").validate()
    tasks = load_training_tasks(bench, cfg)
    assert [t.split for t in tasks] == ["train"]

    def user(task, seed):  # three user turns, so the stream carries user suffixes as well as any tool results
        return ScriptedUser(["I want to exchange an item.", "Are you sure? Please check again.", "###STOP###"],
                            stop_markers=["###STOP###"])

    trainer, rollout = build_trainer(cfg, bench, tasks, trainer_cls=_capturing_trainer(), make_user=user)
    trainer._rollout = rollout
    trainer.train()
    _check_batches(trainer, steps=1, group=2, batch_size=2, turn=12, budget=80)
    assert all(len(ep.prompt_ids) > 5000 for ep in trainer.batches[0]["episodes"])
    assert all(ep.agent_turns >= 2 and 0 in ep.env_mask for ep in trainer.batches[0]["episodes"])


def test_a_digit_place_policy_is_refused_for_vllm_generation_with_one_line(tmp_path):
    from mua.harness.errors import ConfigError
    from mua.harness.models.tiny import build_tiny_checkpoint
    from mua.training.config import TrainConfig

    policy = build_tiny_checkpoint(tmp_path / "tiny", digit_places=4)
    cfg = TrainConfig(policy=str(policy), output_dir=str(tmp_path / "out"), benchmark="counter",
                      num_generations=G, batch_size=BATCH, max_steps=1, max_turn_tokens=TURN,
                      max_completion_tokens=BUDGET, progress=False, allow_scripted_user=True,
                      generation="vllm_server", vllm_server_url="http://127.0.0.1:9")
    with pytest.raises(ConfigError, match="generation: transformers only"):
        cfg.validate()
