"""tests/perf/learning_check.py, now the study training/studies/learning-check.yaml run by `mua study` plus the
pack-only figures (behaviour table, teacher-forced copy): its flags land in a copy of the study file, the
behaviour table counts what it claims, and (slow) its smoke runs two example packs end to end on the tiny model,
and one on the real SmolLM2 checkpoint (--policy). The study's own verdict, resume and runner tests are in
test_study.py."""
import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("trl")
SCRIPT = Path(__file__).resolve().parents[1] / "perf" / "learning_check.py"


def load_script():
    spec = importlib.util.spec_from_file_location("learning_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


SMOKE_LINES = ("before SFT", " seed 0:", "SFT", "GRPO, user in the loop", "GRPO, static user",
               "RFT (rejection sampling)", "GRPO, user in the loop - SFT (paired, greedy)",
               "GRPO, user in the loop - SFT (paired, sampled)", "GRPO, static user - SFT (paired, greedy)",
               "RFT (rejection sampling) - SFT (paired, greedy)", "teacher-forced copy, seed 0, SFT: ",
               "learns: ", "beats baselines: ", "overall verdict: ", "wall time of this command: ")


def assert_smoke(done, out: Path, packs: list[str]) -> None:
    assert done.returncode in (0, 1), (done.stdout[-3000:], done.stderr[-3000:])
    for line in SMOKE_LINES:
        assert line in done.stdout, (line, done.stdout[-3000:])
    for pack in packs:
        assert f"pass^1 (pack {pack}, validation split)" in done.stdout
        assert f"verdict for pack {pack}: " in done.stdout and f"\npack {pack}:\n" in done.stdout
        assert (out / pack / "study.png").stat().st_size > 0
        for arm in ("grpo", "grpo-static"):
            assert len((out / pack / "seed-0" / arm / "out" / "metrics.jsonl").read_text().splitlines()) == 2
    report = (out / "report.md").read_text()
    assert report.splitlines()[3].startswith("mua study ") and "**overall verdict: " in report
    assert "## pack " in (out / "behaviour.md").read_text()


VERDICT_ARMS = "grpo,grpo-static,rft"
# the study's other arms and their labels: run on one pack (each is a `mua train` setting, the same on every pack)
OTHER_ARMS = {"grpo-turn-credit": "GRPO, turn-level credit", "grpo-info-gain": "GRPO, information-gain turn reward",
              "grpo-tree": "GRPO, tree rollouts", "grpo-dr": "Dr. GRPO loss"}


@pytest.mark.slow
def test_smoke_runs_two_packs_end_to_end(tmp_path):
    """Two packs with the verdict's arms (bookings: a time to ask for; appointments: a name and an id to copy),
    then the other arms on one pack in the same folder (its finished jobs reused). Every pack is the same code
    path; the other two packs' gold runs and exports are tested in tests/benchmarks/pack."""
    started = time.monotonic()
    smoke = [sys.executable, str(SCRIPT), "--out", str(tmp_path), "--smoke", "--packs", "bookings,appointments"]
    done = subprocess.run([*smoke, "--arms", VERDICT_ARMS], capture_output=True, text=True, timeout=2400)
    assert_smoke(done, tmp_path, ["bookings", "appointments"])
    assert "book_table.hour" in done.stdout and "asked 'time'" in done.stdout  # from the bookings pack's data
    print(f"smoke, 2 packs x 1 seed: {time.monotonic() - started:.0f} s")
    again = subprocess.run([*smoke, "--arms", VERDICT_ARMS], capture_output=True, text=True,
                           timeout=900)  # every job finished: reused, none rerun
    assert ", 0 to run" in again.stdout and ": started" not in again.stdout
    assert again.returncode == done.returncode
    every_arm = subprocess.run([*smoke[:-2], "--packs", "bookings"], capture_output=True, text=True, timeout=1800)
    assert every_arm.returncode in (0, 1), (every_arm.stdout[-3000:], every_arm.stderr[-3000:])
    started_jobs = {line.split(": started")[0] for line in every_arm.stdout.splitlines() if ": started" in line}
    assert started_jobs and all(any(arm in job for arm in OTHER_ARMS) for job in started_jobs), started_jobs
    for arm, label in OTHER_ARMS.items():
        assert label in every_arm.stdout, (label, every_arm.stdout[-3000:])
        assert len((tmp_path / "bookings" / "seed-0" / arm / "out" / "metrics.jsonl").read_text().splitlines()) == 2


@pytest.mark.slow
def test_smoke_on_the_real_model(smollm2_checkpoint, tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path), "--smoke", "--packs", "bookings",
                           "--jobs", "1", "--policy", str(smollm2_checkpoint), "--chat-template", "hermes",
                           "--arms", "grpo,grpo-static,rft"],
                          capture_output=True, text=True, timeout=1800)
    assert_smoke(done, tmp_path, ["bookings"])
    assert not (tmp_path / "bookings" / "seed-0" / "model").exists()  # started from the checkpoint
    assert "policy" in (tmp_path / "study.yaml").read_text()


def test_flags_land_in_a_copy_of_the_study_file(tmp_path):
    from mua.training.study import load_study

    check = load_script()
    plain = check.parse_args(["--out", str(tmp_path)])
    assert check.study_file(plain) == check.STUDY  # no flag: the repository's file, as it is
    args = check.parse_args(["--out", str(tmp_path), "--grpo-steps", "3", "--rft-lr", "0.01", "--sft-steps", "7",
                             "--sampled-trials", "0"])
    study = load_study(check.study_file(args))
    assert study.sft["max_steps"] == 7 and study.eval.sampled_trials == 0
    assert all(study.arms[a].train["max_steps"] == 3 for a in ("grpo", "grpo-static"))
    assert study.arms["rft"].episodes == 3 * 32 and study.arms["rft"].rft["learning_rate"] == 0.01
    assert list(study.packs) == ["bookings", "refills", "appointments", "salon"]


def test_behaviour_table_is_per_expected_action_and_fact():
    check = load_script()
    task = {"id": "t0", "user_scenario": {"replies": [{"when": ["name"], "say": "Vera."},
                                                      {"when": ["time"], "say": "At 8 pm."}]},
            "evaluation_criteria": {"actions": [{"name": "book", "arguments": {"name": "Vera", "hour": 8}}]}}
    call = {"function": {"name": "book", "arguments": json.dumps({"name": "Vera", "hour": 7})}}
    right = {"function": {"name": "book", "arguments": json.dumps({"name": "Vera", "hour": 8})}}

    def episode(text, made):
        return SimpleNamespace(task_id="t0", messages=[{"role": "assistant", "content": text},
                                                       {"role": "assistant", "content": None, "tool_calls": [made]}])

    greedy = check.episode_counts([episode("What is your name?", call)], {"t0": task})
    assert {k: check.share(c) for k, c in greedy.items()} == {
        "book": "0%", "book.name": "100%", "book.hour": "0%", "asked 'name'": "100%", "asked 'time'": "0%"}
    sampled = check.episode_counts([episode("What is your name? What time would you like?", c)
                                    for c in (call, right, right, right)], {"t0": task})
    assert check.share(sampled["book"]) == "75%" and check.share(sampled["asked 'time'"]) == "100%"
