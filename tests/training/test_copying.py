"""Copy accuracy per argument, read from a run: exact copies count, a misspelt one does not, an episode that never
called the tool is counted apart."""
import json
from pathlib import Path

from mua.harness.cli import main
from mua.training.copying import copy_accuracy, copy_lines, is_copied_value
from mua.training.copying import main as copying_main

PACK = Path(__file__).resolve().parents[2] / "benchmarks" / "pack" / "examples" / "appointments"


def _gold_run(tmp_path: Path) -> Path:
    run = tmp_path / "gold"
    assert main(["eval", "--benchmark", "pack", "--data-dir", str(PACK), "--agent", "gold", "--split", "test",
                 "--limit", "4", "--out", str(run), "--no-progress"]) == 0
    return run


def _edit(run: Path, index: int, change) -> None:
    path = run / "episodes.jsonl"
    lines = path.read_text().splitlines()
    row = json.loads(lines[index])
    change(row["messages"])
    lines[index] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n")


def test_copy_accuracy_counts_exact_copies_per_argument_and_the_episodes_without_the_call(tmp_path, capsys):
    run = _gold_run(tmp_path)
    counts = copy_accuracy(run)
    assert [(k, c.copied, c.calls, c.missing) for k, c in counts.items()] == [
        ("find_appointments.surname", 4, 4, 0), ("move_appointment.appointment_id", 4, 4, 0)]

    def misspell(messages):  # the first lookup's surname, one letter off
        call = next(c for m in messages for c in m.get("tool_calls") or []
                    if c["function"]["name"] == "find_appointments")
        args = json.loads(call["function"]["arguments"])
        args["surname"] = args["surname"][:-1] + "z"
        call["function"]["arguments"] = json.dumps(args)

    def drop_move(messages):
        for m in messages:
            m["tool_calls"] = [c for c in m.get("tool_calls") or [] if c["function"]["name"] != "move_appointment"]

    _edit(run, 0, misspell)
    _edit(run, 1, drop_move)
    lines = copy_lines(copy_accuracy(run))
    assert lines == ["find_appointments.surname: copied exactly 3/4 (75.0%)",
                     "move_appointment.appointment_id: copied exactly 3/3 (100.0%); 1 episode(s) never called "
                     "move_appointment"]
    assert copying_main([str(run)]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == lines
    assert copying_main([str(tmp_path / "none")]) == 2
    assert "a run directory" in capsys.readouterr().err


def test_names_and_ids_are_copied_values_and_choices_are_not():
    assert all(map(is_copied_value, ["Fonseca", "A135", "Q4994", "TRK-55012"]))
    assert not any(map(is_copied_value, ["tuesday", "garden", "", 7, None]))
