"""Hostile and damaged input never ends in a traceback, never loses data, and never turns into a score."""
import json
import math

import pytest

from mua.harness.cli import main
from mua.harness.results.episodes import EpisodeRecord
from mua.harness.results.runs import read_run
from mua.harness.run.progress import Tally as _Tally

GOOD = {"benchmark": "tau2", "subset": "retail", "task_id": "0",
        "messages": [{"role": "assistant", "content": "Hi! How can I help you today?"},
                     {"role": "user", "content": "###STOP###"}]}


def _no_traceback(capsys) -> str:
    out = capsys.readouterr()
    text = out.out + out.err
    assert "Traceback" not in text
    return text


def _gold_run(path, data_dir, *extra) -> int:
    return main(["eval", "--benchmark", "tau2", "--subset", "retail", "--agent", "gold", "--limit", "3",
                 "--no-progress", "--data-dir", str(data_dir), "--out", str(path), *extra])


def test_score_bad_lines_become_error_rows_in_place(tmp_path, data_dir, capsys):
    lines = [json.dumps(GOOD).encode(),
             b'{"benchmark":"tau2","subset":"retail","task_id":"0","messages":[],"x":' + b"9" * 5000 + b"}",
             b'{"benchmark":"tau2","subset":"retail","task_id":"0","messages":' + b"[" * 10000 + b"]" * 10000
             + b"}",
             b'{"benchmark":"tau2","subset":"retail","task_id":"0","messages":[],"variant":NaN}',
             b'{"benchmark":"tau2","subset":"retail","task_id":"\xff\xfe","messages":[]}',
             b'{"benchmark":"tau2","subset":"retail","task_id":"0","messages":[],"variant":{"a":1}}',
             json.dumps(GOOD).encode()]
    src = tmp_path / "in.jsonl"
    src.write_bytes(b"\n".join(lines) + b"\n")
    out = tmp_path / "out.jsonl"
    assert main(["score", "--trajectories", str(src), "--out", str(out), "--data-dir", str(data_dir)]) == 1
    text = _no_traceback(capsys)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == len(lines)
    assert rows[0]["error"] is None and rows[-1]["error"] is None and rows[0]["reward"] == rows[-1]["reward"]
    reasons = [r["error"] for r in rows[1:-1]]
    assert all(r and r.startswith(f"line {i}:") for i, r in zip(range(2, 7), reasons)), reasons
    assert "digits" in reasons[0] and "nested too deeply" in reasons[1] and "NaN" in reasons[2]
    assert "UTF-8" in reasons[3] and "must be text" in reasons[4]
    assert "5 errors" in text


def test_torn_multibyte_tail_and_garbage_are_set_aside_not_fatal(tmp_path, data_dir, capsys, caplog):
    run = tmp_path / "run"
    assert _gold_run(run, data_dir) == 0
    episodes = run / "episodes.jsonl"
    complete = episodes.read_bytes()
    garbage = b'{"subset":"retail","task_id":"\xff","trial":0}'
    torn = '{"subset":"retail","task_id":"0","trial":0,"messages":"caf\u00e9'.encode()[:-1]  # cut inside é
    episodes.write_bytes(complete + garbage + b"\n" + torn)
    capsys.readouterr()
    for argv in (["leaderboard", str(run)], ["gate", "--baseline", str(run), "--candidate", str(run)]):
        assert main(argv) == 0, argv
        assert "unreadable lines" in _no_traceback(capsys)
    assert read_run(run).torn_lines == 2
    caplog.clear()
    assert _gold_run(run, data_dir) == 0  # resume: nothing to re-run, torn and garbled lines kept aside
    _no_traceback(capsys)
    assert any("set aside" in r.getMessage() for r in caplog.records)
    side = (run / "episodes.jsonl.setaside").read_bytes()
    assert torn in side and garbage in side
    assert episodes.read_bytes() == complete


def test_foreign_results_folder_is_refused_and_left_alone(tmp_path, data_dir, capsys):
    out = tmp_path / "someone-elses"
    out.mkdir()
    (out / "episodes.jsonl").write_text("not json\n")
    assert _gold_run(out, data_dir) == 2
    assert "no config.json" in _no_traceback(capsys)
    assert (out / "episodes.jsonl").read_text() == "not json\n" and not (out / "config.json").exists()


def test_unwritable_outputs_fail_up_front(tmp_path, data_dir, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(GOOD) + "\n")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    run = tmp_path / "run"
    assert _gold_run(run, data_dir) == 0
    capsys.readouterr()
    cases = [["score", "--trajectories", str(src), "--out", str(tmp_path / "missing" / "o.jsonl"),
              "--data-dir", str(data_dir)],
             ["score", "--trajectories", str(src), "--out", str(tmp_path), "--data-dir", str(data_dir)],
             ["leaderboard", str(run), "--plot", str(tmp_path / "missing" / "p.png")],
             ["leaderboard", str(run), "--out", str(blocker / "t.txt")],
             ["gate", "--baseline", str(run), "--candidate", str(run), "--json", str(tmp_path / "no" / "v.json")]]
    for argv in cases:
        assert main(argv) == 2, argv
        text = _no_traceback(capsys)
        assert text.count("\n") == 1 and "error:" in text, text
    assert _gold_run(blocker / "run", data_dir) == 2
    assert "cannot create" in _no_traceback(capsys)


@pytest.mark.parametrize("margin", ["2", "-0.1", "1", "nan"])
def test_gate_margin_must_be_a_fraction(tmp_path, data_dir, capsys, margin):
    run = tmp_path / "run"
    assert _gold_run(run, data_dir) == 0
    capsys.readouterr()
    assert main(["gate", "--baseline", str(run), "--candidate", str(run), "--margin", margin]) == 2
    text = _no_traceback(capsys)
    assert "--margin is a fraction" in text and ("--margin 0.02" in text if margin == "2" else True)


@pytest.mark.parametrize("bad", ['"abc"', "NaN", "true", "Infinity"])
def test_gate_refuses_non_numeric_rewards(tmp_path, data_dir, capsys, bad):
    run, damaged = tmp_path / "run", tmp_path / "damaged"
    assert _gold_run(run, data_dir) == 0
    assert _gold_run(damaged, data_dir) == 0
    lines = (damaged / "episodes.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["reward"] = "PLACEHOLDER"
    lines[0] = json.dumps(first).replace('"PLACEHOLDER"', bad)
    (damaged / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    for a, b in ((run, damaged), (damaged, run)):
        assert main(["gate", "--baseline", str(a), "--candidate", str(b)]) == 2
        assert "not a number" in _no_traceback(capsys)


def test_unknown_rewards_are_counted_flagged_and_never_scored(tmp_path, data_dir, capsys, caplog):
    run = tmp_path / "run"
    assert _gold_run(run, data_dir) == 0  # retail task 2 has real NL assertions: no judge, reward unknown
    assert "unknown reward" in _no_traceback(capsys)
    said = [r.getMessage() for r in caplog.records if "NL assertions" in r.getMessage()]
    assert len(said) == 1 and "NL assertions of 1 of 3 tasks will be skipped" in said[0]
    rows = [json.loads(x) for x in (run / "episodes.jsonl").read_text().splitlines()]
    assert [r["reward"] for r in rows] == [1.0, 1.0, None]
    summary = json.loads((run / "summary.json").read_text())["subsets"]["retail"]
    assert summary["unknown_rewards"] == 1 and summary["tasks"] == 2 and summary["pass^1"] == 1.0
    loaded = read_run(run)
    assert loaded.unknown == 1 and any("unknown reward" in p for p in loaded.problems())
    assert main(["leaderboard", str(run)]) == 0
    assert "n=2 st" in _no_traceback(capsys)
    assert main(["gate", "--baseline", str(run), "--candidate", str(run)]) == 0
    assert "unknown reward" in _no_traceback(capsys)


def test_progress_shows_a_fraction_of_scored_episodes():
    tally = _Tally()
    assert tally.text() == "pass -"
    for record in ({"reward": 1.0, "error": None}, {"reward": 0.0, "error": None}, {"reward": None, "error": None},
                   {"reward": None, "error": "model error: boom"}, {"reward": 1.0, "error": None}):
        tally.add(EpisodeRecord.from_json({"subset": "s", "task_id": "t", "trial": 0, **record}, "test"))
    assert tally.text() == "pass 2/3 = 0.667, unknown 1, errors 1"
    assert not math.isnan(tally.passed / tally.scored)
