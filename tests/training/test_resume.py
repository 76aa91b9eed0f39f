"""One output directory, one run: --no-resume, resuming with other settings, logs past the checkpoint, and
Ctrl-C saving a checkpoint that the next run resumes from."""
from __future__ import annotations

import json
import os
import signal

import pytest
from helpers.counter_bench import CounterBenchmark

from mua.harness.errors import ConfigError
from mua.training.config import TrainConfig
from mua.training.resume import checkpoint_to_resume, record_config, rewind_logs
from mua.training.stopping import SaveOnInterrupt, any_rank


def _settings(tmp_path, **settings) -> dict:
    return dict(policy=str(tmp_path / "policy"), output_dir=str(tmp_path / "run"), benchmark="counter",
                subsets=["easy"]) | settings


def replace(cfg, **changes):
    """The config the same run's settings plus ``changes`` give (as a rerun with other flags would)."""
    return TrainConfig(**(cfg._given | changes))


def _run_dir(tmp_path, step=2, **settings):
    cfg = TrainConfig(**_settings(tmp_path, **settings))
    cfg._given = _settings(tmp_path, **settings)
    record_config(cfg)
    (tmp_path / "run" / f"checkpoint-{step}").mkdir()
    (tmp_path / "run" / f"checkpoint-{step}" / "trainer_state.json").write_text(json.dumps({"global_step": step}))
    return cfg


def test_no_resume_refuses_a_non_empty_output_dir(tmp_path):
    cfg = _run_dir(tmp_path)
    cfg.resume = False
    with pytest.raises(ConfigError, match="--no-resume does not delete it.*delete that directory or choose another"):
        checkpoint_to_resume(cfg)
    cfg.output_dir = str(tmp_path / "fresh")
    assert checkpoint_to_resume(cfg) is None
    (tmp_path / "fresh").mkdir()
    assert checkpoint_to_resume(cfg) is None  # an empty directory is a new run


def test_resume_refuses_other_settings_but_allows_how_it_runs(tmp_path, monkeypatch):
    cfg = _run_dir(tmp_path, learning_rate=1e-6)
    assert checkpoint_to_resume(cfg) == str(tmp_path / "run" / "checkpoint-2")
    changed = replace(cfg, concurrency=2, save_steps=7, report_to=["tensorboard"], logging_steps=5)
    assert checkpoint_to_resume(changed) == str(tmp_path / "run" / "checkpoint-2")
    for key, value in [("policy", str(tmp_path / "other")), ("benchmark", "tau2"), ("subsets", ["hard"]),
                       ("split", "dev"), ("num_generations", 8), ("learning_rate", 1e-5), ("user_model", "m"),
                       ("weight_decay", 0.1), ("bf16", True)]:
        with pytest.raises(ConfigError, match=f"other settings \\({key}: .* -> .*resuming would mix two runs"):
            checkpoint_to_resume(replace(cfg, **{key: value}))
    monkeypatch.chdir(tmp_path)  # the same policy named by a relative path is the same policy
    assert checkpoint_to_resume(replace(cfg, policy="policy"))


def test_max_steps_may_change_on_resume_only_with_a_constant_schedule(tmp_path):
    cfg = _run_dir(tmp_path, max_steps=2)  # TRL's default schedule: linear decay over max_steps
    with pytest.raises(ConfigError, match="max_steps: 2 -> 5 would change the learning-rate schedule"):
        checkpoint_to_resume(replace(cfg, max_steps=5))
    (tmp_path / "run" / "train_config.json").unlink()
    cfg = _run_dir(tmp_path, step=1, max_steps=2, lr_scheduler_type="constant")
    assert checkpoint_to_resume(replace(cfg, max_steps=5)) == str(tmp_path / "run" / "checkpoint-2")


def test_a_directory_that_is_no_run_is_not_resumed(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="already holds 1 entry .notes.txt. and no train_config.json"):
        checkpoint_to_resume(TrainConfig(output_dir=str(tmp_path)))


def test_rewind_drops_metrics_and_samples_past_the_checkpoint(tmp_path):
    rows = [{"step": 1}, {"step": 2}, {"step": 3}, {"step": 3}]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"step": 4, "lo')
    (tmp_path / "samples").mkdir()
    for name in ("step-1.0.jsonl", "step-2.0.jsonl", "step-3.1.jsonl", "step-2.jsonl", "step-3.jsonl"):
        (tmp_path / "samples" / name).write_text("{}\n")
    rewind_logs(tmp_path, 2)
    assert [json.loads(r)["step"] for r in (tmp_path / "metrics.jsonl").read_text().splitlines()] == [1, 2]
    # step-2.jsonl fed step 2 (kept); the older names counted the step before: step-2.0 made step 3
    assert sorted(p.name for p in (tmp_path / "samples").iterdir()) == ["step-1.0.jsonl", "step-2.jsonl"]


def test_second_ctrl_c_stops_at_once_but_a_forwarded_one_or_sigterm_does_not(monkeypatch):
    from mua.training import stopping

    now = [100.0]
    monkeypatch.setattr(stopping.time, "monotonic", lambda: now[0])
    stop = SaveOnInterrupt()
    stop._on_signal(signal.SIGINT, None)
    assert stop.requested
    now[0] += 0.5
    stop._on_signal(signal.SIGINT, None)  # torchrun forwarding the terminal's Ctrl-C to its workers
    now[0] += 10
    stop._on_signal(signal.SIGTERM, None)  # a launcher's SIGTERM never escalates
    with pytest.raises(KeyboardInterrupt):
        stop._on_signal(signal.SIGINT, None)
    assert any_rank(True) and not any_rank(False)  # outside distributed training: the flag itself


def _agree(rank: int, path: str, results) -> None:
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{path}", rank=rank, world_size=2)
    results.put((rank, any_rank(rank == 1), any_rank(False)))
    dist.destroy_process_group()


@pytest.mark.slow
def test_ranks_agree_on_a_flag_one_of_them_raised(tmp_path):
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    procs = [ctx.Process(target=_agree, args=(r, str(tmp_path / "rdzv"), results)) for r in range(2)]
    for p in procs:
        p.start()
    got = sorted(results.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(timeout=30)
    assert got == [(0, True, False), (1, True, False)]


class ParityCounter(CounterBenchmark):
    """Rewards that differ within a group (by the parity of what the agent said), so steps move the weights."""

    async def score(self, task, messages, *, env=None, termination=None, judge=None):
        from mua.harness.types import Score

        said = sum(len(m.content or "") + len(m.tool_calls or []) for m in messages if m.role == "assistant")
        return Score(reward=float(said % 2), components={})


@pytest.mark.slow
def test_ctrl_c_saves_a_checkpoint_and_the_next_run_resumes_from_it(tiny_checkpoint, tmp_path, capsys):
    from trl import GRPOTrainer

    from mua.training.grpo import TrainingInterrupted, train

    class CtrlCDuringStep2(GRPOTrainer):
        def training_step(self, *args, **kwargs):
            if self.state.global_step == 1:  # before step 2's rollout: it is abandoned, step 1 is saved
                os.kill(os.getpid(), signal.SIGINT)
            return super().training_step(*args, **kwargs)

    bench = ParityCounter(n_tasks=1)
    cfg = TrainConfig(policy=str(tiny_checkpoint), output_dir=str(tmp_path / "run"), benchmark="counter",
                      subsets=["easy"], allow_scripted_user=True, num_generations=4, batch_size=4, max_steps=3,
                      max_turn_tokens=8, max_completion_tokens=24, save_steps=50, progress=False,
                      learning_rate=1e-2).validate()
    previous = signal.getsignal(signal.SIGINT)
    with pytest.raises(TrainingInterrupted, match="step in progress was discarded; checkpoint-1 .* re-run the same"):
        train(cfg, bench, trainer_cls=CtrlCDuringStep2)
    assert signal.getsignal(signal.SIGINT) is previous
    out = tmp_path / "run"
    assert (out / "checkpoint-1" / "trainer_state.json").is_file() and not (out / "checkpoint-2").exists()
    assert not (out / "model.safetensors").exists()
    capsys.readouterr()
    train(cfg, bench)
    assert "from checkpoint-1 (step 1 of 3)" in capsys.readouterr().err  # a resumed run says so
    assert (out / "model.safetensors").is_file()
    steps = [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert steps == [1, 2, 3]
    # nothing was lost: the interrupted and resumed run ends with the weights of an uninterrupted one
    from safetensors.torch import load_file

    cfg.output_dir = str(tmp_path / "straight")
    train(cfg, bench)
    straight, resumed = load_file(tmp_path / "straight" / "model.safetensors"), load_file(out / "model.safetensors")
    assert straight.keys() == resumed.keys() and all(straight[k].equal(resumed[k]) for k in straight)
    initial = load_file(tiny_checkpoint / "model.safetensors")
    assert any(not initial[k].equal(straight[k]) for k in straight)  # the steps did move the weights


def test_resume_picks_the_newest_complete_checkpoint(tmp_path):
    cfg = _run_dir(tmp_path, step=2)
    half = tmp_path / "run" / "checkpoint-3"  # written by something else and cut short: no trainer state
    half.mkdir()
    (half / "config.json").write_text("{}")
    (tmp_path / "run" / "checkpoint-4").mkdir()
    (tmp_path / "run" / "checkpoint-4" / "trainer_state.json").write_text('{"global_st')
    assert checkpoint_to_resume(cfg) == str(tmp_path / "run" / "checkpoint-2")


@pytest.mark.slow
def test_a_save_cut_short_leaves_no_checkpoint_and_the_rerun_resumes_from_the_previous(tiny_checkpoint, tmp_path):
    from trl import GRPOTrainer

    from mua.training.checkpoints import STAGING
    from mua.training.grpo import train

    class CrashWhileSavingStep2(GRPOTrainer):
        def _save_rng_state(self, output_dir):
            if self.state.global_step == 2:
                raise OSError("disk full")  # the model and optimizer are written, the rest is not
            return super()._save_rng_state(output_dir)

    bench = CounterBenchmark(n_tasks=1)
    cfg = TrainConfig(policy=str(tiny_checkpoint), output_dir=str(tmp_path / "run"), benchmark="counter",
                      subsets=["easy"], allow_scripted_user=True, num_generations=2, batch_size=2, max_steps=2,
                      max_turn_tokens=8, max_completion_tokens=24, save_steps=1, progress=False).validate()
    with pytest.raises(OSError, match="disk full"):
        train(cfg, bench, trainer_cls=CrashWhileSavingStep2)
    out = tmp_path / "run"
    assert (out / "checkpoint-1" / "trainer_state.json").is_file() and not (out / "checkpoint-2").exists()
    assert (out / STAGING / "checkpoint-2" / "model.safetensors").is_file()  # the partial save, under its temp name
    assert checkpoint_to_resume(cfg) == str(out / "checkpoint-1")
    train(cfg, bench)
    assert json.loads((out / "checkpoint-2" / "trainer_state.json").read_text())["global_step"] == 2
    assert (out / "checkpoint-2" / "rng_state.pth").is_file() and not (out / STAGING).exists()
    assert [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()] == [1, 2]


def test_a_resume_that_would_play_other_tasks_or_another_protocol_is_refused(tmp_path):
    """`mua eval`'s "same run?" rule (plan.run_differences) on what train_config.json says the run played."""
    from mua.training.resume import check_same_episodes

    cfg = TrainConfig(**_settings(tmp_path))
    protocol = {"roles": {"agent": {"model": "ckpt"}, "user": None}, "data": {"files": {"tasks.json": "ab"}}}
    record_config(cfg, ["easy/0", "easy/1"], protocol)
    # the policy is a setting (compared with its path resolved): its role in the record is not compared again
    check_same_episodes(cfg, ["easy/0", "easy/1"], {**protocol, "roles": {"agent": {"model": "./ckpt"}, "user": None}})
    with pytest.raises(ConfigError, match="other tasks than"):
        check_same_episodes(cfg, ["easy/0"], protocol)
    with pytest.raises(ConfigError, match=r"other run protocol \(user, judge, budgets, data\)"):
        check_same_episodes(cfg, ["easy/0", "easy/1"], {**protocol, "data": {"files": {"tasks.json": "cd"}}})
    record_config(cfg)  # a record without them (an older mua): nothing to compare
    check_same_episodes(cfg, ["easy/9"], protocol)
