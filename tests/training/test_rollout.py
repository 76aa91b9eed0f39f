"""The rollout function's contract with TRL, with a scripted backend (no model)."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from helpers.counter_bench import CounterBenchmark
from training_fakes import ScriptedBackend

from mua.harness.errors import ModelError
from mua.harness.users.simulator import ScriptedUser
from mua.training.config import TrainConfig
from mua.training.grpo import policy_factory
from mua.training.rollout import BUDGET_EXHAUSTED, EpisodePlayer, RolloutFunc, RolloutSettings, episode_reward

CALL = '<tool_call>\n{"name": "add", "arguments": {"n": 1}}\n</tool_call>'


class RecordingUser(ScriptedUser):
    seeds: list = []


class PartlyJudgedCounter(CounterBenchmark):
    """Scores like the counter but reports a skipped component, as tau2 does for NL assertions without a judge."""

    async def score(self, task, messages, *, env=None, termination=None, judge=None):
        score = await super().score(task, messages, env=env, termination=termination, judge=judge)
        if judge is None:  # as tau2: a passing score with a skipped check is unknown (reward None)
            score.components["nl_assertion"] = None
            if score.reward:
                score.partial_reward, score.reward = score.reward, None
        return score


def _rollout(tokenizer, stop_ids, texts, budget=2048, user=None, tmp_path=None, mask_truncated=False,
             incomplete="drop", max_turns=None, truncated_reward=0.0, progress=False):
    bench = PartlyJudgedCounter(n_tasks=3)
    tasks = bench.load_tasks("easy")
    backend = ScriptedBackend(tokenizer, texts, tokenizer.eos_token_id)
    cfg = TrainConfig(max_turn_tokens=64, max_completion_tokens=budget)
    make_policy = policy_factory(tokenizer, stop_ids, cfg, lambda: backend, None)
    seeds = []

    def make_user(task, seed):
        seeds.append((task.id, seed))
        return user(task) if user else bench.gold_user(task)

    settings = RolloutSettings(seed=7, mask_truncated=mask_truncated, incomplete_scores=incomplete,
                               max_turns=max_turns, truncated_reward=truncated_reward)
    player = EpisodePlayer(bench, tasks, make_policy, make_user, settings, tokenizer.pad_token_id,
                           judge=None if incomplete == "drop" else object())
    func = RolloutFunc(player, lambda trainer: backend, samples_per_step=2, progress=progress)
    trainer = SimpleNamespace(state=SimpleNamespace(global_step=3),
                              args=SimpleNamespace(output_dir=str(tmp_path)),
                              accelerator=SimpleNamespace(process_index=0, is_main_process=True))
    return func, trainer, seeds, backend


def test_one_row_per_prompt_in_order_with_trl_keys(tiny_tokenizer, stop_ids, tmp_path):
    # with a judge (a stand-in object: the counter only checks that one is given) the score is complete
    func, trainer, seeds, backend = _rollout(tiny_tokenizer, stop_ids, [CALL, "Done."], tmp_path=tmp_path,
                                             incomplete="keep")
    prompts = ["easy/0"] * 3 + ["easy/2"] * 3
    out = func(prompts, trainer)
    assert {"prompt_ids", "completion_ids", "logprobs", "env_mask"} <= set(out)
    assert all(len(v) == len(prompts) for v in out.values())
    for ids, mask, lps in zip(out["completion_ids"], out["env_mask"], out["logprobs"]):
        assert len(ids) == len(mask) == len(lps) and mask[0] == 1 and mask[-1] == 1
    # the scripted agent adds 1: task 0 (target 1) passes, task 2 (target 3) does not
    assert out["episode_reward"] == [1.0] * 3 + [0.0] * 3
    # one user seed per task and round (shared by the group); distinct policy seeds per episode
    assert len({s for t, s in seeds if t == "0"}) == 1 and len({s for _, s in seeds}) == 2
    assert len({r.seed for r in backend.requests}) == len(backend.requests)
    rows = [json.loads(line) for line in (tmp_path / "samples" / "step-4.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and {(r["step"], r["round"]) for r in rows} == {(4, 0)}  # the rollout of step 4


def test_incomplete_scores_are_dropped_by_default(tiny_tokenizer, stop_ids, tmp_path):
    func, trainer, _, _ = _rollout(tiny_tokenizer, stop_ids, [CALL, "Done."], tmp_path=tmp_path)
    out = func(["easy/0", "easy/0"], trainer)
    assert out["episode_reward"] == [None, None] and out["episode_stats"][0]["incomplete"]
    assert out["episode_stats"][0]["error"] is None


def test_budget_exhausted_episode_is_marked_truncated(tiny_tokenizer, stop_ids, tmp_path):
    func, trainer, _, _ = _rollout(tiny_tokenizer, stop_ids, [CALL], budget=60, tmp_path=tmp_path)
    out = func(["easy/0", "easy/0"], trainer)
    assert out["episode_reward"] == [0.0, 0.0]  # truncated_reward, even though the counter reached 1
    stats = out["episode_stats"][0]
    assert stats["truncated"] and stats["termination"] == BUDGET_EXHAUSTED and stats["error"] is None
    assert stats["turns"] == 1  # the user's request was made before the budget ran out
    assert len(out["completion_ids"][0]) <= 60 and out["env_mask"][0][-1] == 1


def test_mask_truncated_takes_budget_stopped_episodes_out_of_the_loss(tiny_tokenizer, stop_ids, tmp_path):
    func, trainer, _, _ = _rollout(tiny_tokenizer, stop_ids, [CALL], budget=60, tmp_path=tmp_path,
                                   mask_truncated=True)
    out = func(["easy/0"], trainer)
    assert out["episode_stats"][0]["truncated"] and set(out["env_mask"][0]) == {0}
    func, trainer, _, _ = _rollout(tiny_tokenizer, stop_ids, [CALL, "Done."], tmp_path=tmp_path,
                                   mask_truncated=True)
    assert 1 in func(["easy/0"], trainer)["env_mask"][0]  # finished episodes keep their weights


def test_failed_episode_has_no_reward_but_keeps_its_row(tiny_tokenizer, stop_ids, tmp_path):
    made = []

    class Broken(ScriptedUser):
        async def respond(self, messages, tools):
            if len(messages) > 1 and self is made[0]:  # only the first episode's user fails
                raise ConnectionError("user endpoint down")
            return await super().respond(messages, tools)

    def user(task):
        made.append(Broken(["hi", "###STOP###"], stop_markers=["###STOP###"]))
        return made[-1]

    func, trainer, _, _ = _rollout(tiny_tokenizer, stop_ids, [CALL, "Done."], tmp_path=tmp_path, user=user,
                                   incomplete="keep")
    out = func(["easy/1"] * 2, trainer)
    assert out["episode_reward"][0] is None and out["episode_reward"][1] == 0.0
    assert len(out["completion_ids"]) == 2 and "user endpoint down" in out["episode_stats"][0]["error"]
    made.clear()
    with pytest.raises(ModelError, match="every episode of training step 4 failed .*user endpoint down.*resume"):
        func(["easy/1"], trainer)


def test_reward_function_returns_rewards_and_logs_episode_metrics():
    logged = {}
    stats = [{"turns": 2, "agent_turns": 2, "clipped_turns": 1, "generated_tokens": 10, "truncated": False,
              "error": None, "passed": True, "policy_tokens": 10},
             {"turns": 1, "agent_turns": 1, "clipped_turns": 0, "generated_tokens": 4, "truncated": True,
              "error": None, "passed": False, "policy_tokens": 4}]
    rewards = episode_reward(["a", "a"], ["", ""], episode_reward=[1.0, 0.0], episode_stats=stats,
                             log_metric=lambda k, v: logged.__setitem__(k, v))
    assert rewards == [1.0, 0.0]
    assert logged["episode/pass_rate"] == 0.5 and logged["episode/clip_ratio"] == 1 / 3
    assert logged["episode/truncated"] == 0.5 and logged["episode/generated_tokens"] == 7


def test_turn_budget_ends_episodes_as_truncated(tiny_tokenizer, stop_ids, tmp_path):
    chatty = lambda task: ScriptedUser(["add one", "and again", "more", "###STOP###"],  # noqa: E731
                                       stop_markers=["###STOP###"])
    func, trainer, _, _ = _rollout(tiny_tokenizer, stop_ids, ["Sure."], user=chatty, tmp_path=tmp_path,
                                   incomplete="keep", max_turns=2, mask_truncated=True)
    out = func(["easy/0", "easy/0"], trainer)
    stats = out["episode_stats"][0]
    assert stats["termination"] == "max_turns" and stats["truncated"] and stats["turns"] == 2
    assert stats["agent_turns"] == 2 and set(out["env_mask"][0]) == {0}  # mask_truncated covers runner limits
    assert out["episode_reward"] == [0.0, 0.0]  # the benchmark still scores the trajectory
    func, trainer, _, _ = _rollout(tiny_tokenizer, stop_ids, ["Sure."], user=chatty, tmp_path=tmp_path,
                                   incomplete="keep")
    assert func(["easy/0"], trainer)["episode_stats"][0]["termination"] == "user_stop"  # no budget: the user's


def test_unreachable_user_endpoint_raises_model_error_and_closes_its_session(tiny_tokenizer, stop_ids, tmp_path):
    import gc
    import socket
    import warnings

    from mua.training.grpo import user_factory

    with socket.socket() as free:  # a port nobody listens on
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    bench = CounterBenchmark(n_tasks=2)
    cfg = TrainConfig(user_model="sim", user_base_url=f"http://127.0.0.1:{port}/v1",
                      user_params={"retry": {"max_attempts": 1}})
    make_user = user_factory(bench, cfg)
    backend = ScriptedBackend(tiny_tokenizer, ["ok"], tiny_tokenizer.eos_token_id)
    player = EpisodePlayer(bench, bench.load_tasks("easy"), policy_factory(
        tiny_tokenizer, stop_ids, cfg, lambda: backend, None), make_user, RolloutSettings(), 0)
    func = RolloutFunc(player, lambda trainer: backend, samples_per_step=0)
    trainer = SimpleNamespace(state=SimpleNamespace(global_step=0), args=SimpleNamespace(output_dir=str(tmp_path)),
                              accelerator=SimpleNamespace(process_index=0, is_main_process=True))
    sessions = []
    for _ in range(2):
        with pytest.raises(ModelError, match="every episode of training step 1 failed.*re-run the same command"):
            func(["easy/0", "easy/0"], trainer)
        sessions.append(make_user.model._session)
    assert sessions[0] is sessions[1] and not sessions[0].closed  # one loop and one HTTP session per run
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        func.close()
        gc.collect()
    assert sessions[0].closed and not [w for w in caught if "Unclosed" in str(w.message)]


def test_truncated_episodes_never_count_as_passes(tiny_tokenizer, stop_ids, tmp_path):
    """truncated_reward: 1 rewards a budget-stopped episode, but the pass rate uses the benchmark's verdict."""
    func, trainer, _, _ = _rollout(tiny_tokenizer, stop_ids, [CALL], budget=60, tmp_path=tmp_path,
                                   truncated_reward=1.0)
    out = func(["easy/0", "easy/0"], trainer)
    assert out["episode_reward"] == [1.0, 1.0] and [s["passed"] for s in out["episode_stats"]] == [False, False]
    logged = {}
    episode_reward(["a", "a"], ["", ""], episode_reward=out["episode_reward"], episode_stats=out["episode_stats"],
                   log_metric=lambda k, v: logged.__setitem__(k, v))
    assert logged["episode/pass_rate"] == 0.0
    func, trainer, _, _ = _rollout(tiny_tokenizer, stop_ids, [CALL, "Done."], tmp_path=tmp_path, incomplete="keep")
    assert [s["passed"] for s in func(["easy/0", "easy/2"], trainer)["episode_stats"]] == [True, False]


def test_a_step_in_which_the_policy_generated_nothing_stops_the_run_clearly(tiny_tokenizer, stop_ids, tmp_path):
    from mua.training.rollout import NoPolicyTokens

    silent = lambda task: ScriptedUser([])  # noqa: E731  (ends every episode before the agent speaks)
    func, trainer, _, _ = _rollout(tiny_tokenizer, stop_ids, ["Hi."], user=silent, tmp_path=tmp_path)
    with pytest.raises(NoPolicyTokens, match="no episode of training step 4 produced a policy token .*user_stop"):
        func(["easy/0", "easy/1"], trainer)
    assert (tmp_path / "samples" / "step-4.jsonl").is_file()  # the episodes are kept to look at


def test_rollout_shows_progress(tiny_tokenizer, stop_ids, tmp_path, capsys):
    func, trainer, _, _ = _rollout(tiny_tokenizer, stop_ids, [CALL, "Done."], tmp_path=tmp_path, progress=True)
    func(["easy/0", "easy/1"], trainer)
    assert "rollout step 4" in capsys.readouterr().err


def test_a_stop_request_abandons_the_rollout(tiny_tokenizer, stop_ids, tmp_path):
    import asyncio
    import time

    from mua.training.stopping import RolloutInterrupted

    class Stalling(ScriptedUser):
        async def respond(self, messages, tools):
            await asyncio.sleep(60)

    func, trainer, _, _ = _rollout(tiny_tokenizer, stop_ids, ["Hi."], user=lambda t: Stalling([]), tmp_path=tmp_path)
    func.interrupt = SimpleNamespace(requested=True)
    start = time.monotonic()
    with pytest.raises(RolloutInterrupted, match="step 4"):
        func(["easy/0", "easy/1"], trainer)
    assert time.monotonic() - start < 5


def test_bfcl_miss_func_episodes_are_trainable(tiny_tokenizer, stop_ids, data_dir):
    """Tools added at a later turn (BFCL multi_turn_miss_func) enter the stream; the episode is scored and
    trained instead of failing with a stream error."""
    from mua.harness.registry import open_benchmark
    from mua.harness.run.selection import select_tasks

    bench = open_benchmark("bfcl_v3", data_dir)
    tasks = select_tasks(bench, ["multi_turn_miss_func"], limit=2)["multi_turn_miss_func"]
    backend = ScriptedBackend(tiny_tokenizer, ["Done."], tiny_tokenizer.eos_token_id)
    cfg = TrainConfig(max_turn_tokens=16, max_completion_tokens=100_000)
    make_policy = policy_factory(tiny_tokenizer, stop_ids, cfg, lambda: backend, None)
    player = EpisodePlayer(bench, tasks, make_policy, lambda task, seed: bench.gold_user(task), RolloutSettings(),
                           tiny_tokenizer.pad_token_id)
    func = RolloutFunc(player, lambda trainer: backend, samples_per_step=0, progress=False)
    trainer = SimpleNamespace(state=SimpleNamespace(global_step=0), args=SimpleNamespace(output_dir="."),
                              accelerator=SimpleNamespace(process_index=0, is_main_process=True))
    out = func([f"multi_turn_miss_func/{t.id}" for t in tasks], trainer)
    for stats, reward in zip(out["episode_stats"], out["episode_reward"]):
        assert stats["error"] is None and reward is not None and stats["policy_tokens"] > 0
        assert stats["agent_turns"] > 1
    added = [o for o in func.last if tiny_tokenizer.decode(o.completion_ids).count("<|im_start|>system") == 1]
    assert len(added) == len(tasks)  # each episode's stream shows its grown tool list once, mid-episode


def _outcome(key: str, reward):
    from mua.training.rollout import EpisodeOutcome

    return EpisodeOutcome(key, [1], [2], [1], [0.0], reward, "user_stop")


def _groups(keys_rewards):
    return [_outcome(k, r) for k, rewards in keys_rewards for r in rewards]


def test_dynamic_sampling_replaces_groups_without_a_reward_spread_and_keeps_the_batch_shape():
    """Groups of 2: a (1, 1) and c (None, 0) carry no spread (GRPO's advantages all zero); b (0, 1) does. Refill
    round 1 plays d for a (still no spread) and e for c (spread: replaces c); round 2 plays f for a."""
    from mua.training.rollout import refill_groups, zero_spread

    by_key = {"d": (0.0, 0.0), "e": (1.0, 0.0), "f": (0.0, 1.0), "g": (1.0, 0.0)}
    calls = []

    def play(keys, r):
        calls.append((keys, r))
        return _groups([(k, by_key[k]) for k in keys])

    batch = _groups([("a", (1.0, 1.0)), ("b", (0.0, 1.0)), ("c", (None, 0.0))])
    out, replaced = refill_groups(batch, 2, ["d", "e", "f", "g"], 3, play)
    assert [o.key for o in out] == ["f", "f", "b", "b", "e", "e"] and replaced == 2
    assert calls == [(["d", "e"], 0), (["f"], 1)]  # stops once every group has a spread
    assert not any(zero_spread(out[i:i + 2]) for i in range(0, 6, 2))
    assert out[2:4] == batch[2:4]  # a group with a spread is kept as it was
    # one round only: a stays; no spare task left: nothing is played
    calls.clear()
    assert [o.key for o in refill_groups(batch, 2, ["d", "e"], 1, play)[0]] == ["a", "a", "b", "b", "e", "e"]
    assert refill_groups(batch, 2, [], 3, play) == (batch, 0) and calls == [(["d", "e"], 0)]
    # zero rounds: off
    assert refill_groups(batch, 2, ["e"], 0, play) == (batch, 0)


def test_the_episodes_a_rollout_played_are_logged_refills_included(tiny_tokenizer, stop_ids, tmp_path):
    """The scripted agent passes task 0 only, so every group is flat: two refill rounds play a group of 2 each from
    the spare tasks 1 and 2, and the step logs 6 episodes played for the 2 it trains on."""
    def played(dynamic_sampling):
        func, trainer, _, _ = _rollout(tiny_tokenizer, stop_ids, [CALL, "Done."], tmp_path=tmp_path,
                                       incomplete="keep")
        func.dynamic_sampling, func.group = dynamic_sampling, 2
        out = func(["easy/0", "easy/0"], trainer)
        func.close()
        logged = {}
        episode_reward(["a", "a"], ["", ""], episode_reward=out["episode_reward"], episode_stats=out["episode_stats"],
                       log_metric=lambda k, v: logged.__setitem__(k, v))
        return len(out["episode_reward"]), logged["episode/played"]

    assert played(0) == (2, 2)
    assert played(2) == (2, 6)


def test_the_rollout_refills_from_train_tasks_outside_the_batch_with_a_group_of_episodes_each():
    from mua.training.rollout import RolloutFunc

    async def aclose():
        pass

    player = SimpleNamespace(tasks={k: None for k in "abcdefgh"}, settings=SimpleNamespace(seed=7), aclose=aclose)
    func = RolloutFunc(player, lambda trainer: None, samples_per_step=0, progress=False, dynamic_sampling=2,
                       group=2)
    played_jobs = []

    async def fake_play(jobs, label, show):
        played_jobs.append(jobs)
        return [_outcome(key, float(i % 2)) for i, (key, _, _) in enumerate(jobs)]  # every new group: 0, 1

    func._play = fake_play
    batch = _groups([("a", (1.0, 1.0)), ("b", (0.0, 1.0))])
    out = func._refill(batch, ["a", "a", "b", "b"], "3.0", 0, "step 4", False)
    func.close()
    assert len(played_jobs) == 1 and len(played_jobs[0]) == 2  # one group of 2 episodes for the one flat group
    new_key = played_jobs[0][0][0]
    assert new_key not in ("a", "b") and {j[0] for j in played_jobs[0]} == {new_key}
    assert played_jobs[0][0][1] != played_jobs[0][1][1]  # each episode its own policy seed
    assert [o.key for o in out] == [new_key, new_key, "b", "b"] and func.refilled == 1
    again = RolloutFunc(player, lambda trainer: None, 0, False, 2, 2)
    again._play = fake_play
    assert [o.key for o in again._refill(batch, ["a", "a", "b", "b"], "3.0", 0, "x", False)] == [o.key for o in out]
    again.close()
