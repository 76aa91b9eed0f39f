"""The hostile corpus of issue 28, generated here, walked over every reader of a file mua reads that is not a run
file (run files: test_no_traceback.py and the records tests): pack files, benchmark data files, official
result and score files, an SFT dataset, a training folder's metrics, a split file. Each case runs the `mua`
command that reads the file in a fresh process and must end with the expected exit code, no traceback, one
error line for a data error (exit 2), within a bounded time. MUA_PYTHON=/path/to/other/python runs the cases
with another installation (how the cases were seen to fail before the readers were hardened)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Optional

import pytest

EXAMPLE_PACK = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"
CASE_SECONDS = 60  # each case is bounded: a hang fails the test instead of stalling it

# family -> (bytes for a JSON file, given the file's good bytes); None: the family does not apply
JSON_FAMILIES: dict[str, Callable[[bytes], bytes]] = {
    "syntax": lambda good: b'{"name": "x", ',
    "depth 10,000": lambda good: b"[" * 10_000 + b"]" * 10_000,
    "5,000-digit int": lambda good: b'{"name": ' + b"9" * 5000 + b"}",
    "1e309": lambda good: b'{"name": 1e309}',
    "NaN": lambda good: b'{"name": NaN}',
    "undecodable bytes": lambda good: b'{"name": "caf\xe9 \xff\xfe"}',
    "wrong top-level type": lambda good: b'"a string"',
    # one object with a wrong-typed value for every field some reader expects
    "wrong field types": lambda good: (b'{"name": 5, "user": [], "tasks": 5, "simulations": {"a": 1}, "info": 3, '
                                       b'"train": 5, "held_out": "x", "tool_timeout_s": "10"}'),
    "torn": lambda good: good[: len(good) // 2],
}
# one JSON value per line: each family is one bad line among good ones
LINE_FAMILIES: dict[str, bytes] = {
    "syntax": b'{"id": "x", ',
    "depth 10,000": b"[" * 10_000 + b"]" * 10_000,
    "5,000-digit int": b'{"id": ' + b"9" * 5000 + b"}",
    "1e309": b'{"id": "x", "step": 1e309}',
    "NaN": b'{"id": "x", "step": NaN}',
    "undecodable bytes": b'{"id": "caf\xe9 \xff\xfe"}',
    "wrong top-level type": b"[1, 2, 3]",
    "wrong field types": (b'{"id": [1], "result": {"a": 1}, "step": "abc", "loss": [], "messages": 5, "tools": 7, '
                          b'"reward": "x", "error": 5, "prompt": 3, "question": 4, "function": 5}'),
    "torn": b'{"id": "multi_turn_base_0", "resu',
}
TEXT_FAMILIES: dict[str, Callable[[bytes], bytes]] = {"undecodable bytes": lambda good: good[:40] + b"\xff\xfe\xfd"}
TOML_FAMILIES: dict[str, Callable[[bytes], bytes]] = {
    "syntax": lambda good: b"[[customers\nname = ",
    "depth 10,000": lambda good: b"x = " + b"[" * 10_000 + b"]" * 10_000 + b"\n",
    "5,000-digit int": lambda good: b"x = " + b"9" * 5000 + b"\n",
    "undecodable bytes": lambda good: good[:40] + b"\xff\xfe\xfd",
    "wrong field types": lambda good: b"customers = 5\nplans = \"x\"\n",
    "torn": lambda good: good[: len(good) // 3],
}


def run_mua(argv: list[str], cwd: Optional[Path] = None) -> tuple[int, str, str, float]:
    started = time.monotonic()
    python = os.environ.get("MUA_PYTHON", sys.executable)
    done = subprocess.run([python, "-c", "import sys; from mua.harness.cli import main; sys.exit(main(sys.argv[1:]))",
                           *argv], capture_output=True, text=True, timeout=CASE_SECONDS, cwd=cwd)
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def shadow(source: Path, root: Path, relpath: str) -> Path:
    """A copy of the data folder ``source`` made of symlinks, except the path to ``relpath``, whose folders
    are real: the file at ``relpath`` can then be replaced without touching the shared data."""
    here_src, here_dst = source, root
    root.mkdir(parents=True)
    parts = Path(relpath).parts
    for depth, part in enumerate(parts):
        for entry in here_src.iterdir():
            if entry.name != part:
                (here_dst / entry.name).symlink_to(entry)
        here_src, here_dst = here_src / part, here_dst / part
        if depth < len(parts) - 1:
            here_dst.mkdir()
    return root


# -- the readers and the commands that read them --------------------------------------------------------------
def pack_case(relpath: str):
    def make(tmp: Path, data: Path, hostile: Callable[[bytes], bytes]) -> list[str]:
        pack = tmp / "pack"
        shutil.copytree(EXAMPLE_PACK, pack, ignore=shutil.ignore_patterns("__pycache__", "generate.py"))
        (pack / relpath).write_bytes(hostile((pack / relpath).read_bytes()))
        return ["eval", "--benchmark", "pack", "--data-dir", str(pack), "--agent", "gold", "--limit", "1",
                "--no-progress", "--out", str(tmp / "run")]
    return make


def data_case(relpath: str, benchmark: str, subset: str):
    def make(tmp: Path, data: Path, hostile: Callable[[bytes], bytes]) -> list[str]:
        root = shadow(data, tmp / "data", relpath)
        (root / relpath).write_bytes(hostile((data / relpath).read_bytes()[:4000]))
        return ["eval", "--benchmark", benchmark, "--subset", subset, "--data-dir", str(root), "--agent", "gold",
                "--limit", "1", "--no-progress", "--out", str(tmp / "run")]
    return make


TAU2_WRONG_FIELDS = json.dumps({"info": {"environment_info": ["retail"]}, "tasks": [5, {"id": []}],
                                "simulations": [5, {"task_id": [1], "messages": "x", "reward_info": 7},
                                                {"task_id": "0", "messages": [5, {"role": []}]}]}).encode()


def data_lines_case(relpath: str, benchmark: str, subset: str):
    """A JSON-lines data file whose first line is the hostile one."""
    def make(tmp: Path, data: Path, line: bytes) -> list[str]:
        return data_case(relpath, benchmark, subset)(tmp, data, lambda good: line + b"\n")
    return make


def tau2_results_case(tmp: Path, data: Path, hostile: Callable[[bytes], bytes]) -> list[str]:
    good = json.dumps({"info": {"environment_info": {"domain_name": "retail"}}, "tasks": [],
                       "simulations": []}).encode()
    path = tmp / "results.json"
    path.write_bytes(hostile(good))
    return ["score", "--trajectories", str(path), "--out", str(tmp / "scored.jsonl"), "--data-dir", str(data)]


def bfcl_result_case(tmp: Path, data: Path, line: bytes) -> list[str]:
    path = tmp / "BFCL_v3_multi_turn_base_result.json"
    path.write_bytes(b'{"id": "multi_turn_base_0", "result": []}\n' + line + b"\n")
    return ["score", "--trajectories", str(path), "--out", str(tmp / "scored.jsonl"), "--data-dir", str(data)]


def bfcl_score_case(tmp: Path, data: Path, line: bytes) -> list[str]:
    path = tmp / "BFCL_v3_multi_turn_base_result.json"
    path.write_bytes(b'{"id": "multi_turn_base_0", "result": []}\n')
    (tmp / "BFCL_v3_multi_turn_base_score.json").write_bytes(b'{"accuracy": 0.0}\n' + line + b"\n")
    return ["score", "--trajectories", str(path), "--out", str(tmp / "scored.jsonl"), "--data-dir", str(data)]


def sft_dataset_case(tmp: Path, data: Path, line: bytes) -> list[str]:
    policy = tmp / "policy"
    policy.mkdir()
    (policy / "config.json").write_text("{}")
    dataset = tmp / "episodes.jsonl"
    dataset.write_bytes(b'{"messages": [], "tools": "[]", "reward": 1.0}\n' + line + b"\n")
    return ["sft", "--policy", str(policy), "--dataset", str(dataset), "--output-dir", str(tmp / "out")]


def metrics_case(tmp: Path, data: Path, line: bytes) -> list[str]:
    folder = tmp / "train-out"
    folder.mkdir()
    (folder / "metrics.jsonl").write_bytes(b'{"step": 1, "loss": 0.5}\n' + line + b"\n")
    return ["view", str(folder), "--out", str(tmp / "view.html")]


def split_file_case(tmp: Path, data: Path, hostile: Callable[[bytes], bytes]) -> list[str]:
    path = tmp / "split.json"
    path.write_bytes(hostile(b'{"train": ["0", "1"], "held_out": ["2"]}'))
    policy = tmp / "policy"  # looks like a checkpoint: the split file is checked before any model loads
    policy.mkdir()
    (policy / "config.json").write_text("{}")
    (policy / "tokenizer.json").write_text("{}")
    return ["train", "--benchmark", "tau2", "--subsets", "retail", "--policy", str(policy),
            "--split-file", str(path), "--data-dir", str(data), "--output-dir", str(tmp / "out")]


# what a data error's line must name, per reader (the file)
NAMED = {"pack pack.json": "pack.json", "pack tasks.json": "tasks.json", "pack db.json": "db.json",
         "pack splits.json": "splits.json", "pack policy.md": "policy.md", "tau2 data tasks.json": "tasks.json",
         "tau2 data db.json": "db.json", "tau2 data policy.md": "policy.md", "tau2 official results": "results.json",
         "tau2 official results, typed": "results.json",
         "split file (mua train)": "split", "bfcl data lines": "BFCL_v3_multi_turn_base.json",
         "sft dataset lines": "episodes.jsonl", "tau2 telecom db.toml": "db.toml",
         "acebench protocol constants": "protocol_constants.json", "acebench data lines": "data_agent_multi_turn.json"}

# reader -> (how to build the case, families, expected exit code)
WHOLE_FILES = {
    "pack pack.json": (pack_case("pack.json"), JSON_FAMILIES, 2),
    "pack tasks.json": (pack_case("tasks.json"), JSON_FAMILIES, 2),
    "pack db.json": (pack_case("db.json"), JSON_FAMILIES, 2),
    "pack splits.json": (pack_case("splits.json"), JSON_FAMILIES, 2),
    "pack policy.md": (pack_case("policy.md"), TEXT_FAMILIES, 2),
    "tau2 data tasks.json": (data_case("tau2/domains/retail/tasks.json", "tau2", "retail"), JSON_FAMILIES, 2),
    "tau2 data db.json": (data_case("tau2/domains/retail/db.json", "tau2", "retail"), JSON_FAMILIES, 2),
    "tau2 data policy.md": (data_case("tau2/domains/retail/policy.md", "tau2", "retail"), TEXT_FAMILIES, 2),
    "tau2 official results": (tau2_results_case, JSON_FAMILIES, 2),  # not a results file: one line, exit 2
    # a results file whose simulations and tasks have wrong types: each simulation an error row (exit 1)
    "tau2 official results, typed": (tau2_results_case, {"wrong field types": lambda good: TAU2_WRONG_FIELDS}, 1),
    "split file (mua train)": (split_file_case, JSON_FAMILIES, 2),
    "tau2 telecom db.toml": (data_case("tau2/domains/telecom/db.toml", "tau2", "telecom"), TOML_FAMILIES, 2),
    "acebench protocol constants": (data_case("acebench/protocol_constants.json", "acebench", "agent_multi_turn_en"),
                                    JSON_FAMILIES, 2),
}
LINE_FILES = {
    "bfcl data lines": (data_lines_case("bfcl_v3/BFCL_v3_multi_turn_base.json", "bfcl_v3", "multi_turn_base"), 2),
    "acebench data lines": (data_lines_case("acebench/en/data_agent_multi_turn.json", "acebench",
                                            "agent_multi_turn_en"), 2),
    "bfcl official result lines": (bfcl_result_case, 1),  # the bad line is an error row; the good one is scored
    "bfcl official score lines": (bfcl_score_case, None),  # an unreadable verdict line is no verdict
    "sft dataset lines": (sft_dataset_case, 2),
    "training metrics.jsonl (mua view)": (metrics_case, 0),  # bad lines are left out of the curves
}
CASES = ([(reader, family) for reader, (_, families, _) in WHOLE_FILES.items() for family in families]
         + [(reader, family) for reader in LINE_FILES for family in LINE_FAMILIES])


@pytest.mark.parametrize("reader,family", CASES, ids=[f"{r} / {f}" for r, f in CASES])
def test_hostile_file(tmp_path, data_dir, reader, family):
    if reader in WHOLE_FILES:
        make, families, code = WHOLE_FILES[reader]
        argv = make(tmp_path, data_dir, families[family])
    else:
        make_line, code = LINE_FILES[reader]
        argv = make_line(tmp_path, data_dir, LINE_FAMILIES[family])
    rc, out, err, seconds = run_mua(argv)
    text = out + err
    assert "Traceback" not in text, text[-3000:]
    assert seconds < CASE_SECONDS
    if code is None:
        assert rc in (0, 1), text[-2000:]
    else:
        assert rc == code, text[-2000:]
    if rc == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "error:" in lines[0], err
        assert NAMED[reader] in lines[0], lines[0]
    else:
        assert err.strip() or out.strip(), "a silent exit"
