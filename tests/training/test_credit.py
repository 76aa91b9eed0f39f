"""Turn-level credit (training/credit.py): per-turn advantages (StepPO-style step-level credit) and the
information-gain turn reward (InfoPO), checked on hand-built episodes, the tiny model's token streams, and a
short GRPO run through the episode runner."""
from __future__ import annotations

import math
from contextlib import nullcontext
from pathlib import Path

import pytest

from mua.training.credit import (
    WITHHELD_REPLY,
    TurnRecord,
    batch_token_advantages,
    discounted_returns,
    information_gain,
    normalized,
    token_advantages,
    turn_advantages,
)

BOOKINGS = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"


def test_discounted_returns_sum_later_turn_rewards():
    assert discounted_returns([1.0, 0.0, 2.0], 0.5) == [1.0 + 0.25 * 2.0, 1.0, 2.0]
    assert discounted_returns([], 0.9) == []


def test_each_turn_gets_the_discounted_outcome_advantage_plus_its_normalized_turn_return():
    # a group of two episodes: 3 turns (turn rewards 0, 1, 0) and 2 turns (no turn reward)
    gamma, weight = 0.5, 2.0
    got = turn_advantages([1.0, -1.0], [[0.0, 1.0, 0.0], [0.0, 0.0]], gamma, weight)
    returns = [0.5, 1.0, 0.0, 0.0, 0.0]  # G_k of the first episode, then of the second
    mean = sum(returns) / 5  # 0.3
    std = math.sqrt(sum((g - mean) ** 2 for g in returns) / 5)  # 0.4
    z = [(g - mean) / (std + 1e-4) for g in returns]
    expected = [[0.25 * 1.0 + weight * z[0], 0.5 * 1.0 + weight * z[1], 1.0 + weight * z[2]],
                [0.5 * -1.0 + weight * z[3], -1.0 + weight * z[4]]]
    assert [len(g) for g in got] == [3, 2]
    assert [v for g in got for v in g] == pytest.approx([v for g in expected for v in g], abs=1e-12)
    assert got[0][0] < got[0][1]  # the turn before the rewarded one gets less of it than the rewarded turn


def test_without_turn_rewards_and_discount_every_turn_carries_grpos_episode_advantage_exactly():
    got = turn_advantages([0.7, -0.7, 0.0], [[0.0, 0.0], [0.0], [0.0, 0.0, 0.0]], 1.0, 3.0)
    assert got == [[0.7, 0.7], [-0.7], [0.0, 0.0, 0.0]]


def test_an_episode_without_a_score_gets_no_advantage_and_stays_out_of_the_normalization():
    with_failed = turn_advantages([1.0, 0.0, -1.0], [[1.0], None, [0.0]], 1.0, 1.0)
    without = turn_advantages([1.0, -1.0], [[1.0], [0.0]], 1.0, 1.0)
    assert with_failed == [without[0], [], without[1]]
    assert normalized([[2.0, 2.0], [2.0]]) == [[0.0, 0.0], [0.0]]  # no spread: no shaping


def test_per_token_advantages_sit_on_each_turns_generated_tokens_only():
    # completion: turn 0 (3 ids), a tool result (2), turn 1 (2 ids), a user reply (2), turn 2 (1 id); padded to 12
    turns = [TurnRecord(0, 3), TurnRecord(5, 7), TurnRecord(9, 10)]
    env_mask = [1, 1, 1, 0, 0, 1, 1, 0, 0, 1]
    row = token_advantages(turns, [0.1, 0.2, 0.3], 12)
    assert row == [0.1, 0.1, 0.1, 0.0, 0.0, 0.2, 0.2, 0.0, 0.0, 0.3, 0.0, 0.0]
    trained = [i for i, v in enumerate(row) if v]
    assert trained == [i for i, m in enumerate(env_mask) if m]  # exactly the tokens the policy generated
    batch = batch_token_advantages([1.0, -1.0, 0.5, 0.5], [turns, [TurnRecord(0, 2)], [TurnRecord(0, 1)],
                                                            [TurnRecord(1, 2)]],
                                   [[0.0] * 3, [0.0], [0.0], [0.0]], 2, 1.0, 1.0, 4)
    assert batch == [[1.0, 1.0, 1.0, 0.0], [-1.0, -1.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0], [0.0, 0.5, 0.0, 0.0]]


def _copying_scorer(context: list[int], target: list[int]) -> list[float]:
    """A hand-made policy that copies: a target id already in the context is likely (log-prob 0), others not."""
    return [0.0 if t in context else -5.0 for t in target]


def test_information_gain_is_positive_when_the_reply_holds_the_id_the_next_turn_copies():
    prompt = [1, 2]
    # turn 0 asks (10, 11); the user's reply is 20 42 21 (42: the id); turn 1 copies 42, then stops (30)
    completion = [10, 11, 20, 42, 21, 42, 30]
    withheld = (len(prompt) + 2, [20, 99, 21])  # the same context with the reply's text replaced
    turn = TurnRecord(5, 7, withheld)
    gain = information_gain(_copying_scorer, prompt, completion, turn)
    assert gain == ((0.0 - 5.0) - (-5.0 - 5.0)) / 2 == 2.5
    # nothing to copy in the reply (the turn writes an id the user never said): no gain
    other = [10, 11, 20, 43, 21, 42, 30]
    assert information_gain(_copying_scorer, prompt, other, turn) == 0.0
    # no user reply before the turn (first turn, or after a tool result): no gain, nothing scored
    assert information_gain(lambda c, t: 1 / 0, prompt, completion, TurnRecord(0, 2)) == 0.0


def _policy(tokenizer, withheld: str | None):
    from mua.training.sft import teacher_policy

    policy = teacher_policy(tokenizer, {tokenizer.eos_token_id})
    policy.withheld_reply = withheld
    return policy


def _play(policy, reply: str) -> None:
    """Teacher-forces: the user asks, the agent asks for the booking id, the user replies, the agent copies."""
    from mua.harness.types import Message, ToolCall

    convo = [Message(role="system", content="You book tables."), Message(role="user", content="Change my booking")]
    ask = policy.force(convo, None, Message(role="assistant", content="Which booking id?"))
    convo += [ask, Message(role="user", content=reply)]
    policy.force(convo, None, Message(role="assistant", content=None,
                                      tool_calls=[ToolCall(id="c1", name="find", arguments='{"id": "B4711"}')]))


def test_the_counterfactual_context_is_the_stream_with_the_users_reply_replaced(tiny_tokenizer):
    policy = _policy(tiny_tokenizer, WITHHELD_REPLY)
    _play(policy, "It is B4711")
    first, second = policy.turn_records
    assert first.withheld is None and second.withheld is not None  # only a turn after a user reply has one
    stream = policy.live_stream
    kept, suffix = second.withheld
    actual = tiny_tokenizer.decode(stream.ids[:len(stream.prompt_ids) + second.start])
    masked = tiny_tokenizer.decode(stream.ids[:kept] + suffix)
    assert "It is B4711" in actual and "B4711" not in masked
    assert masked == actual.replace("It is B4711", WITHHELD_REPLY)
    assert stream.env_mask[first.start:first.end] == [1] * (first.end - first.start)
    assert stream.env_mask[second.start:second.end] == [1] * (second.end - second.start)
    assert sum(stream.env_mask) == (first.end - first.start) + (second.end - second.start)
    assert _policy(tiny_tokenizer, None).turn_records == []  # nothing built when the reward is off
    off = _policy(tiny_tokenizer, None)
    _play(off, "It is B4711")
    assert [t.withheld for t in off.turn_records] == [None, None]


def test_with_the_tiny_model_the_gain_is_exactly_zero_when_the_reply_is_withheld_in_both_contexts_or_empty(
        tiny_checkpoint, tiny_tokenizer):
    from transformers import AutoModelForCausalLM

    from mua.training.backends import TransformersBackend

    model = AutoModelForCausalLM.from_pretrained(tiny_checkpoint)
    backend = TransformersBackend(lambda: nullcontext(model), {tiny_tokenizer.eos_token_id}, 0, "cpu")
    with backend.session():
        gains = {}
        for reply in (WITHHELD_REPLY, "", "It is B4711"):
            policy = _policy(tiny_tokenizer, WITHHELD_REPLY)
            _play(policy, reply)
            s = policy.live_stream
            gains[reply] = [information_gain(backend.score, s.prompt_ids, s.completion_ids, t)
                            for t in policy.turn_records]
        # the scorer is the model's own log-probs: the copied turn's log-prob given its real context
        s, turn = policy.live_stream, policy.turn_records[1]
        logps = backend.score(s.ids[:len(s.prompt_ids) + turn.start], s.completion_ids[turn.start:turn.end])
        assert len(logps) == turn.end - turn.start and all(v <= 0 for v in logps)
    assert gains[WITHHELD_REPLY] == [0.0, 0.0]  # the reply already is the placeholder: both contexts equal
    assert gains[""] == [0.0, 0.0]  # an empty reply: no counterfactual
    assert gains["It is B4711"][0] == 0.0 and gains["It is B4711"][1] != 0.0  # a real reply moves the turn


@pytest.mark.parametrize("settings,message", [
    ({"turn_discount": 0.0}, "turn_discount must be in (0, 1]"),
    ({"turn_discount": 1.5}, "turn_discount must be in (0, 1]"),
    ({"info_gain_weight": -1.0, "turn_credit": True}, "info_gain_weight must be >= 0"),
    ({"info_gain_weight": 0.5}, "info_gain_weight needs turn_credit: true"),
    ({"info_gain_weight": 0.5, "turn_credit": True, "generation": "vllm_colocate"},
     "info_gain_weight scores each turn with the trainer's own model: it needs generation: transformers"),
])
def test_bad_credit_settings_are_refused_naming_the_key(settings, message):
    from mua.harness.errors import ConfigError
    from mua.training.config import TrainConfig

    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("]", r"\]")):
        TrainConfig(**settings)


class ScriptedScoring:
    """Replies with fixed texts in turn (tests/training/training_fakes.py); scores turns with a live model."""

    def __init__(self, tokenizer, texts: list[str], stop_id: int, model):
        from training_fakes import ScriptedBackend

        from mua.training.backends import TransformersBackend

        self.replies = ScriptedBackend(tokenizer, texts, stop_id)
        self.scorer = TransformersBackend(lambda: nullcontext(model), {stop_id}, 0, "cpu")
        self.generate, self.score, self.session = self.replies.generate, self.scorer.score, self.scorer.session


def _recording_trainer():
    from trl import GRPOTrainer

    class Recording(GRPOTrainer):
        """Keeps TRL's own episode advantages (before turn credit) and every batch at the loss."""
        episode_advantages: list = []
        batches: list = []

        def _generate_and_score_completions(self, inputs):
            out = super()._generate_and_score_completions(inputs)
            self.episode_advantages.append((out["advantages"].tolist(), list(self._rollout.last)))
            return out

        def _compute_loss(self, model, inputs):
            self.batches.append({k: v.clone() for k, v in inputs.items() if hasattr(v, "clone")})
            return super()._compute_loss(model, inputs)

    return Recording


@pytest.mark.slow
def test_a_grpo_step_with_turn_credit_and_information_gain_trains_per_turn_advantages(tiny_checkpoint, tmp_path):
    """One GRPO step on the bookings pack with its scripted user; the policy's replies are scripted (the untrained
    tiny model's would end every episode at once) and scored by the trainer's tiny model. What reaches the loss
    is a (batch, completion length) advantage, equal on every row to the per-turn advantages computed from TRL's
    episode advantage and the episode's information gains, and zero off the generated ids."""
    import torch

    from mua.benchmarks.pack import PackBenchmark
    from mua.training.config import TrainConfig
    from mua.training.grpo import build_trainer

    torch.set_num_threads(1)
    bench = PackBenchmark(BOOKINGS)
    cfg = TrainConfig(policy=str(tiny_checkpoint), output_dir=str(tmp_path / "out"), benchmark="pack",
                      num_generations=2, batch_size=4, max_steps=1, max_turn_tokens=24, max_completion_tokens=200,
                      max_turns=3, save_steps=10, concurrency=1, progress=False, turn_credit=True, turn_discount=0.9,
                      info_gain_weight=0.5, tree_rollouts=1).validate()
    trainer, rollout = build_trainer(cfg, bench, bench.load_tasks("tasks", "train")[:2],
                                     trainer_cls=_recording_trainer())
    tok = trainer.processing_class
    rollout.backend_for = lambda tr: ScriptedScoring(tok, ["What is your name?", "A table for Nora then?"],
                                                     tok.eos_token_id, tr.model)
    trainer._rollout = rollout
    assert rollout.tree_rollouts == 1  # composes with tree rollouts (no group has mixed outcomes here)
    trainer.train()
    (episode_adv, episodes), = trainer.episode_advantages
    (batch,) = trainer.batches
    width = batch["completion_ids"].size(1)
    assert batch["advantages"].shape == batch["completion_ids"].shape  # one advantage per token
    gains = [g for e in episodes for g, t in zip(e.turn_rewards, e.turn_records) if t.withheld is not None]
    assert gains and any(g != 0.0 for g in gains)  # turns after a user reply were scored
    assert all(g == 0.0 for e in episodes for g, t in zip(e.turn_rewards, e.turn_records) if t.withheld is None)
    expected = batch_token_advantages(episode_adv, [e.turn_records for e in episodes],
                                      [e.turn_rewards if e.reward is not None else None for e in episodes],
                                      2, 0.9, 0.5, width)
    for ep, want in zip(episodes, expected):
        n = len(ep.completion_ids)
        row = next(r for r in range(batch["completion_ids"].size(0))
                   if batch["completion_ids"][r, :n].tolist() == ep.completion_ids
                   and not batch["completion_mask"][r, n:].any())
        assert batch["advantages"][row].tolist() == pytest.approx(want, abs=1e-6)
        off = [i for i in range(width) if i >= n or not ep.env_mask[i]]
        assert all(batch["advantages"][row, i].item() == 0.0 for i in off)
    assert any(len(set(a for a in row if a)) > 1 for row in expected)  # turns of one episode differ
    # every episode scored 0 (no spread, so GRPO's advantages are all 0), yet the turn rewards give a gradient
    assert episode_adv == [0.0] * 4 and trainer.state.log_history[0]["grad_norm"] > 0
