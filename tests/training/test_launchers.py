"""`mua train` under torchrun and accelerate launch with 2 CPU processes (gloo): Ctrl-C in the middle of a
rollout that would run far past the launchers' 30 s grace saves the last finished step on every rank and
exits in time; the run then resumes from it under the launcher."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ENTRY = Path(__file__).resolve().parent / "launched_train.py"
GRACE_S = 30  # torchrun (and accelerate, which runs it) SIGKILLs workers this long after forwarding a signal
LAUNCHERS = {
    "torchrun": [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port"],
    "accelerate": [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
                   "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
                   "--main_process_port"],
}


def _launch(launcher: str) -> list[str]:
    """The launcher command on a free port (tests may run side by side)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return LAUNCHERS[launcher] + [str(port)]


def _args(tiny_checkpoint, out: Path, benchmark: str, steps: int) -> list[str]:
    return [str(ENTRY), "train", "--benchmark", benchmark, "--policy", str(tiny_checkpoint), "--output-dir",
            str(out), "--subsets", "easy", "--allow-scripted-user", "--num-generations", "2", "--batch-size", "2",
            "--max-turn-tokens", "8", "--max-completion-tokens", "24", "--max-steps", str(steps),
            "--save-steps", "100", "--no-progress", "--data-dir", str(out.parent),
            "--lr-scheduler-type", "constant"]


def _env(out: Path) -> dict:
    return {**os.environ, "MUA_TEST_SLOW_AFTER": str(out / "metrics.jsonl"), "OMP_NUM_THREADS": "1",
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TRL_EXPERIMENTAL_SILENCE": "1",
            "PYTHONUNBUFFERED": "1"}


def _wait_for(path: Path, proc: subprocess.Popen, timeout: float) -> None:
    end = time.monotonic() + timeout
    while not (path.is_file() and path.read_text().strip()):
        if proc.poll() is not None:
            raise AssertionError(f"the run ended (rc {proc.returncode}) before {path.name} was written")
        if time.monotonic() > end:
            raise AssertionError(f"{path.name} not written within {timeout} s")
        time.sleep(0.5)


@pytest.mark.slow
@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
def test_ctrl_c_under_a_launcher_saves_the_last_step_on_every_rank_in_time(launcher, tiny_checkpoint, tmp_path):
    out = tmp_path / "run"
    log = (tmp_path / "log.txt").open("w")
    cmd = _launch(launcher) + _args(tiny_checkpoint, out, "slow_counter", steps=50)
    proc = subprocess.Popen(cmd, env=_env(out), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_for(out / "metrics.jsonl", proc, timeout=240)  # step 1 done; step 2's users now stall
        time.sleep(3)
        start = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the launcher and its workers
        proc.wait(timeout=GRACE_S + 30)
        took = time.monotonic() - start
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
    text = (tmp_path / "log.txt").read_text()
    assert text.count("step in progress was discarded; checkpoint-1 (the last finished step)") == 1, text[-3000:]
    assert took < GRACE_S, f"took {took:.1f} s to stop"
    checkpoint = out / "checkpoint-1"
    assert json.loads((checkpoint / "trainer_state.json").read_text())["global_step"] == 1
    assert (checkpoint / "rng_state_0.pth").is_file() and (checkpoint / "rng_state_1.pth").is_file()  # every rank
    assert not (out / "checkpoint-2").exists() and not (out / ".saving").exists()

    # the same run resumes under the launcher (no stalling user this time) and finishes
    resumed = subprocess.run(_launch(launcher) + _args(tiny_checkpoint, out, "slow_counter", steps=2),
                             env={**_env(out), "MUA_TEST_SLOW_AFTER": ""}, capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "from checkpoint-1 (step 1 of 2)" in resumed.stderr
    assert [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()] == [1, 2]


@pytest.mark.slow
def test_a_step_without_policy_tokens_stops_every_rank_with_one_clear_error(tiny_checkpoint, tmp_path):
    out = tmp_path / "run"
    run = subprocess.run(_launch("torchrun") + _args(tiny_checkpoint, out, "silent_counter", steps=2),
                         env=_env(out), capture_output=True, text=True, timeout=300)
    assert run.returncode != 0
    assert run.stderr.count("error: no episode of training step 1 produced a policy token on any rank") == 2
    assert not (out / "metrics.jsonl").exists()  # nothing trained on filler rows (torchrun adds its own report)


@pytest.mark.slow
@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
def test_lora_sft_under_a_launcher_trains_on_every_rank_and_saves_one_merged_model(launcher, tiny_checkpoint,
                                                                                   exported, tmp_path):
    out = tmp_path / "sft"
    cmd = _launch(launcher) + [str(ENTRY), "sft", "--policy", str(tiny_checkpoint), "--dataset",
                               str(exported / "ds"), "--output-dir", str(out), "--max-steps", "2", "--batch-size",
                               "1", "--save-steps", "1", "--use-peft", "true", "--lora-r", "4", "--no-progress"]
    run = subprocess.run(cmd, env=_env(out), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.count("2 steps") == 1  # one rank reports
    state = json.loads((out / "checkpoint-2" / "trainer_state.json").read_text())
    assert state["global_step"] == 2 and (out / "checkpoint-2" / "rng_state_1.pth").is_file()  # both ranks
    assert (out / "model.safetensors").is_file() and not (out / "adapter_config.json").exists()
