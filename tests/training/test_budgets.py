"""Every gold conversation of the chosen split is checked against the token budgets before training, and the
tasks that would be cut are named in one line (training/budgets.py; `mua train` and the learning check)."""
from pathlib import Path

import pytest

pytest.importorskip("transformers")
from mua.benchmarks.pack import PackBenchmark  # noqa: E402
from mua.training.budgets import check_gold_budgets, reply_lengths  # noqa: E402
from mua.training.policy import Budget  # noqa: E402

BOOKINGS = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"


def test_reply_lengths_are_the_runs_of_generated_ids():
    assert reply_lengths([1, 1, 0, 0, 1, 0, 1, 1, 1]) == [2, 1, 3]
    assert reply_lengths([0, 0]) == []


def test_fits_and_misfits_are_named(tiny_tokenizer, stop_ids):
    bench = PackBenchmark(BOOKINGS)
    tasks = bench.load_tasks("tasks", "train")[:6]
    fit = check_gold_budgets(bench, tasks, tiny_tokenizer, stop_ids, Budget(64, 256))
    assert fit.fits and fit.checked == 6 and fit.gold.line() == "gold 6 of 6"
    assert fit.line("split train") == ("all 6 gold conversations of split train fit the token budgets "
                                       "(max_turn_tokens 64, max_completion_tokens 256)")
    short = check_gold_budgets(bench, tasks, tiny_tokenizer, stop_ids, Budget(8, 256))
    assert not short.fits and len(short.misfits) == 6
    line = short.line("split train")
    assert line.startswith(f"6 of 6 gold conversations of split train do not fit the token budgets "
                           f"(max_turn_tokens 8, max_completion_tokens 256): first {tasks[0].id}, a reply of ")
    assert "\n" not in line
    total = check_gold_budgets(bench, tasks, tiny_tokenizer, stop_ids, Budget(64, 20))
    assert "tokens after the prompt > max_completion_tokens 20" in total.misfits[0].why
    context = check_gold_budgets(bench, tasks, tiny_tokenizer, stop_ids, Budget(64, 256), max_context=50)
    assert "the model's context of 50" in context.misfits[0].why


@pytest.mark.slow
def test_mua_train_names_the_gold_conversations_that_do_not_fit(tiny_checkpoint, tmp_path, capsys):
    from mua.harness.cli import main

    code = main(["train", "--policy", str(tiny_checkpoint), "--benchmark", "pack", "--data_dir", str(BOOKINGS),
                 "--split", "train", "--limit", "2", "--output_dir", str(tmp_path / "out"), "--max_steps", "1",
                 "--num_generations", "2", "--batch_size", "2", "--max_turn_tokens", "8", "--bf16", "false",
                 "--no-progress"])
    err = capsys.readouterr().err
    assert code == 0, err[-2000:]
    assert ("mua train: warning: 2 of 2 gold conversations of split train do not fit the token budgets "
            "(max_turn_tokens 8, max_completion_tokens") in err
    assert "mua train: gold 2 of 2 of split train\n" in err  # the gold agent still passes with the current user


@pytest.mark.parametrize("pack,turn", [("bookings", 64), ("refills", 96), ("appointments", 96)])
def test_example_packs_fit_the_budgets_their_readme_lines_give(pack, turn, tiny_tokenizer, stop_ids):
    """The learning check's budgets (reply `turn`, episode 4 x turn) hold every gold conversation of each split."""
    bench = PackBenchmark(BOOKINGS.parent / pack)
    for split in ("train", "validation", "test"):
        fit = check_gold_budgets(bench, bench.load_tasks("tasks", split), tiny_tokenizer, stop_ids,
                                 Budget(turn, 4 * turn))
        assert fit.fits and not fit.unplayable, fit.line(f"{pack} {split}")


def test_a_task_without_a_playable_gold_conversation_is_named_not_hidden(tiny_tokenizer, stop_ids, monkeypatch):
    bench = PackBenchmark(BOOKINGS)
    tasks = bench.load_tasks("tasks", "train")[:3]
    real = bench.gold_agent

    def gold_agent(task):
        if task.id == tasks[1].id:
            raise NotImplementedError("no reference actions")
        return real(task)

    monkeypatch.setattr(bench, "gold_agent", gold_agent)
    fit = check_gold_budgets(bench, tasks, tiny_tokenizer, stop_ids, Budget(64, 256))
    assert fit.checked == 2 and fit.line("split train").endswith(
        f"; 1 without a playable gold conversation (first {tasks[1].id}: NotImplementedError: no reference actions)")
    monkeypatch.setattr(bench, "gold_agent", lambda task: gold_agent(tasks[1]))
    none = check_gold_budgets(bench, tasks, tiny_tokenizer, stop_ids, Budget(64, 256))
    assert none.line("split train").startswith("no gold conversation of split train could be played")
