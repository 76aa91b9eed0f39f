"""The episode record and its one reader: old files read, newer formats refused, hostile fields isolated with a
reason naming file, line and field, config.json fields type-checked, and a finished run left untouched."""
import json
import os

import pytest

from mua.harness.cli import main
from mua.harness.errors import DataError
from mua.harness.results.episodes import INVALID, RECORD_VERSION, EpisodeRecord, episode_index, latest_episodes
from mua.harness.results.store import dumps, rewrite_in_order, set_aside_torn_tail


def _row(task="0", trial=0, **kw):
    return {"benchmark": "tau2", "subset": "retail", "task_id": task, "trial": trial, "seed": 1, "reward": 1.0,
            "components": {"db": 1.0}, "termination": "user_stop", "turns": 1, "messages": [], "usage": {},
            "info": {}, "error": None, **kw}


def _gold_run(path, data_dir) -> int:
    return main(["eval", "--benchmark", "tau2", "--subset", "retail", "--agent", "gold", "--limit", "2",
                 "--no-progress", "--data-dir", str(data_dir), "--out", str(path)])


def _one_line_error(capsys) -> str:
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0], out.err
    return lines[0]


def test_a_new_record_writes_the_line_mua_always_wrote():
    fields = {k: v for k, v in _row().items()}
    record = EpisodeRecord.new(**fields)
    assert dumps(record.row) == dumps(_row())  # same keys, same order: no version key on version-1 lines
    assert list(record.row) == list(_row()) and record.key == ("retail", "0", 0)


def test_old_lines_without_version_or_later_fields_still_read_and_rewrite_byte_identical(tmp_path):
    old = {"subset": "retail", "task_id": 7, "trial": 0, "reward": 0.0, "components": {}, "error": ""}
    path = tmp_path / "episodes.jsonl"
    path.write_text(dumps(old) + "\n" + dumps(_row("8")) + "\n")
    records, index = latest_episodes(path)
    first = records[("retail", "7", 0)]
    assert first.seed is None and first.messages == [] and first.error is None and first.reward == 0.0
    assert first.version == 1 and EpisodeRecord.from_json(_row(record_version=1), "x").version == 1
    assert not index.bad and not index.invalid
    before = path.read_bytes()
    rewrite_in_order(episode_index(path))
    assert path.read_bytes() == before


def test_a_newer_record_version_is_refused_with_one_line(tmp_path, data_dir, capsys):
    path = tmp_path / "episodes.jsonl"
    path.write_text(dumps(_row(record_version=RECORD_VERSION + 1)) + "\n")
    with pytest.raises(DataError, match=r"line 1: written by a newer mua \(record version 2"):
        latest_episodes(path)
    run = tmp_path / "run"
    assert _gold_run(run, data_dir) == 0
    config = json.loads((run / "config.json").read_text())
    (run / "config.json").write_text(json.dumps(config | {"record_version": RECORD_VERSION + 1}))
    capsys.readouterr()
    assert main(["leaderboard", str(run)]) == 2
    assert "newer mua" in _one_line_error(capsys)


@pytest.mark.parametrize("value,field", [('"abc"', "reward"), ("1e309", "1e309"), ("1e308", "reward"),
                                         ("true", "reward"), ('{"x": 1}', "reward"), ("NaN", "NaN")])
def test_hostile_fields_are_isolated_with_file_line_and_field(tmp_path, data_dir, capsys, value, field):
    path = tmp_path / "episodes.jsonl"
    bad = dumps(_row("1", reward="PLACEHOLDER")).replace('"PLACEHOLDER"', value)
    path.write_text(dumps(_row("0")) + "\n" + bad + "\n")
    records, index = latest_episodes(path)
    assert list(records) == [("retail", "0", 0)]  # the good line still reads
    reason = index.invalid[("retail", "1", 0)]  # the bad one keeps its key: finished, never scored
    assert f"{path} line 2" in reason and field in reason, reason
    # the gate refuses it with one line, the leaderboard flags it; neither a traceback
    run = tmp_path / "run"
    assert _gold_run(run, data_dir) == 0
    lines = (run / "episodes.jsonl").read_text().splitlines()
    lines[0] = json.dumps(json.loads(lines[0]) | {"reward": "PLACEHOLDER"}).replace('"PLACEHOLDER"', value)
    (run / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["gate", "--baseline", str(run), "--candidate", str(run)]) == 2
    assert "line 1" in _one_line_error(capsys)
    assert main(["leaderboard", str(run)]) == 0
    index = episode_index(run / "episodes.jsonl")
    assert list(index.invalid) == [("retail", "0", 0)] and index.extra[("retail", "0", 0)][1] == INVALID
    assert _gold_run(run, data_dir) == 0  # resume re-plays the invalid episode; its line is set aside
    assert not episode_index(run / "episodes.jsonl").invalid
    assert value in (run / "episodes.jsonl.setaside").read_text()


@pytest.mark.parametrize("change", [{"agent": "x"}, {"tasks": 5}, {"protocol": "x"}, {"trials": "2"},
                                    {"tasks": {"retail": [None]}}, {"prices": {"agent": 5}}, "huge", "deep"])
def test_hostile_config_fields_are_one_line_errors(tmp_path, data_dir, capsys, change):
    run = tmp_path / "run"
    assert _gold_run(run, data_dir) == 0
    config = json.loads((run / "config.json").read_text())
    if change == "huge":
        text = json.dumps(config).replace('"seed": 0', '"seed": ' + "9" * 5000)
    elif change == "deep":
        text = json.dumps(config)[:-1] + ', "x": ' + "[" * 10_000 + "]" * 10_000 + "}"
    else:
        text = json.dumps(config | change)
    (run / "config.json").write_text(text)
    capsys.readouterr()
    for argv in (["leaderboard", str(run)], ["gate", "--baseline", str(run), "--candidate", str(run)]):
        assert main(argv) == 2
        line = _one_line_error(capsys)
        assert "config.json" in line, line
        if isinstance(change, dict):
            assert next(iter(change)) in line, line
    assert _gold_run(run, data_dir) == 2  # resume: same refusal
    assert "config.json" in _one_line_error(capsys)


def test_a_finished_run_resumed_is_read_not_rewritten(tmp_path, data_dir):
    run = tmp_path / "run"
    assert _gold_run(run, data_dir) == 0
    before = {n: ((run / n).stat().st_ino, (run / n).read_bytes()) for n in ("episodes.jsonl", "timings.jsonl")}
    summary = (run / "summary.json").read_bytes()
    assert _gold_run(run, data_dir) == 0
    after = {n: ((run / n).stat().st_ino, (run / n).read_bytes()) for n in ("episodes.jsonl", "timings.jsonl")}
    assert after == before  # same inode: not replaced by a rewrite
    assert (run / "summary.json").read_bytes() == summary


def test_torn_tail_is_set_aside_from_the_end(tmp_path):
    path = tmp_path / "e.jsonl"
    body = (dumps(_row()) + "\n") * 3000  # longer than one block read from the end
    path.write_bytes(body.encode() + b'{"subset": "ret')
    set_aside_torn_tail(path)
    assert path.read_bytes() == body.encode()
    assert (tmp_path / "e.jsonl.setaside").read_bytes() == b'{"subset": "ret\n'
    long_tail = b"x" * 200_000  # a torn line longer than a block
    path.write_bytes(body.encode() + long_tail)
    set_aside_torn_tail(path)
    assert path.read_bytes() == body.encode()
    os.remove(tmp_path / "e.jsonl.setaside")


@pytest.mark.parametrize("text", ['{"sources": {"s": {"short": "S"}}, "entries": [{"source": "s", "model": "m", '
                                  '"metrics": {"x": "abc"}}]}',
                                  '{"sources": 5}', '{"entries": [' + "[" * 10_000 + "]" * 10_000 + "]}",
                                  '{"sources": {}, "entries": [7]}', '{"x": 1' + "0" * 5000 + "}"])
def test_hostile_published_rows_are_one_line_errors(tmp_path, data_dir, capsys, text):
    run = tmp_path / "run"
    assert _gold_run(run, data_dir) == 0
    (tmp_path / "published.json").write_text(text)
    capsys.readouterr()
    assert main(["leaderboard", str(run), "--published", "--published-file", str(tmp_path / "published.json")]) == 2
    assert "published.json" in _one_line_error(capsys)


def test_hostile_training_logs_do_not_stop_the_viewer(tmp_path):
    from mua.harness.view.page import load_source

    (tmp_path / "metrics.jsonl").write_bytes(b'{"step": 1, "loss": NaN}\n' + b"[" * 10_000 + b"]" * 10_000
                                             + b"\n" + b'{"step": 1' + b"0" * 5000 + b"}\n" + b'{"step": 2}\n')
    assert load_source(tmp_path).rows == []  # read, hostile lines skipped, no traceback


@pytest.mark.parametrize("line", [b"[" * 10_000 + b"]" * 10_000, b'{"subset": "retail", "task_id": "0", "trial": 1'
                                  + b"0" * 5000 + b"}", b"\xff\xfe", b'{"subset": 5, "task_id": "0", "trial": 0}'])
def test_unreadable_episode_lines_are_counted_with_a_reason(tmp_path, line):
    path = tmp_path / "episodes.jsonl"
    path.write_bytes(dumps(_row()).encode() + b"\n" + line + b"\n")
    records, index = latest_episodes(path)
    assert list(records) == [("retail", "0", 0)]
    assert len(index.bad) == 1 and index.bad[0].reason.startswith(f"{path} line 2: "), index.bad


@pytest.mark.parametrize("change,field", [({"trial": 1.0}, "trial"), ({"messages": [5]}, "messages[0]"),
                                          ({"components": {"db": "x"}}, "db"), ({"error": 3}, "error"),
                                          ({"task_id": None}, "task_id"), ({"record_version": "2"}, "record_version")])
def test_each_field_is_checked(tmp_path, change, field):
    path = tmp_path / "episodes.jsonl"
    path.write_text(dumps(_row() | change) + "\n")
    records, index = latest_episodes(path)
    reasons = list(index.invalid.values()) + [b.reason for b in index.bad]
    assert not records and len(reasons) == 1 and field in reasons[0] and f"{path} line 1" in reasons[0], reasons


def test_a_folder_or_unreadable_episodes_file_is_one_line(tmp_path, data_dir, capsys):
    run = tmp_path / "run"
    assert _gold_run(run, data_dir) == 0
    (run / "episodes.jsonl").unlink()
    (run / "episodes.jsonl").mkdir()
    capsys.readouterr()
    assert main(["leaderboard", str(run)]) == 2
    assert "is a folder" in _one_line_error(capsys)
