"""Nothing a user owns is overwritten: every command that writes a file or folder refuses one that holds
something else (a checkpoint, a run, its own input) unless --overwrite, naming what is there (one helper,
harness/io/outputs.py, called by every command). The commands run in fresh processes, as a user runs them."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mua.harness.cli import main
from mua.harness.errors import ConfigError
from mua.harness.io.outputs import check_output, describe

PACK = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"
GOOD = {"benchmark": "tau2", "subset": "retail", "task_id": "0",
        "messages": [{"role": "assistant", "content": "Hi! How can I help you today?"},
                     {"role": "user", "content": "###STOP###"}]}


def mua(*argv) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-c", "import sys; from mua.harness.cli import main; "
                           "sys.exit(main(sys.argv[1:]))", *map(str, argv)], capture_output=True, text=True,
                          timeout=120)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    return done.returncode, done.stderr


@pytest.fixture(scope="module")
def world(tmp_path_factory, data_dir):
    root = tmp_path_factory.mktemp("outputs")
    assert main(["eval", "--benchmark", "pack", "--data-dir", str(PACK), "--agent", "gold", "--limit", "2",
                 "--no-progress", "--out", str(root / "run")]) == 0
    ckpt = root / "ckpt"
    ckpt.mkdir()
    (ckpt / "config.json").write_text("{}")
    (ckpt / "tokenizer.json").write_text("{}")
    (ckpt / "model.safetensors").write_bytes(b"weights")
    (root / "traj.jsonl").write_text(json.dumps(GOOD) + "\n")
    (root / "notes.txt").write_text("my notes\n")
    return root


def test_describe_names_what_is_there(world):
    assert describe(world / "run") == "a mua run (episodes.jsonl)"
    assert describe(world / "ckpt") == "a model checkpoint (config.json and weights)"
    assert describe(world / "notes.txt") == "a file of 9 bytes"


def test_check_output(world, tmp_path):
    check_output(tmp_path / "new", flag="--out", overwrite=False)  # missing: fine
    (tmp_path / "empty").mkdir()
    check_output(tmp_path / "empty", flag="--out", overwrite=False)  # empty folder: fine
    with pytest.raises(ConfigError, match="--out .*ckpt already holds a model checkpoint.*--overwrite"):
        check_output(world / "ckpt", flag="--out", overwrite=False)
    check_output(world / "ckpt", flag="--out", overwrite=True)
    with pytest.raises(ConfigError, match="own input"):
        check_output(world / "traj.jsonl", flag="--out", overwrite=False, inputs=[world / "traj.jsonl"])
    with pytest.raises(ConfigError, match="own input"):  # a folder holding the input
        check_output(world, flag="--out", overwrite=False, inputs=[world / "traj.jsonl"])
    with pytest.raises(ConfigError) as e:  # a command without --overwrite does not suggest it
        check_output(world / "ckpt", flag="--out", overwrite=None)
    assert "--overwrite" not in str(e.value)


def test_score_refuses_its_input_and_other_files(world, data_dir):
    before = (world / "traj.jsonl").read_bytes()
    rc, err = mua("score", "--trajectories", world / "traj.jsonl", "--out", world / "traj.jsonl",
                  "--data-dir", data_dir)
    assert rc == 2 and "own input" in err and len(err.strip().splitlines()) == 1, err
    assert (world / "traj.jsonl").read_bytes() == before
    rc, err = mua("score", "--trajectories", world / "traj.jsonl", "--out", world / "notes.txt",
                  "--data-dir", data_dir)
    assert rc == 2 and "already holds a file of 9 bytes" in err
    assert (world / "notes.txt").read_text() == "my notes\n"
    out = world / "scored.jsonl"
    assert mua("score", "--trajectories", world / "traj.jsonl", "--out", out, "--data-dir", data_dir)[0] == 0
    assert mua("score", "--trajectories", world / "traj.jsonl", "--out", out, "--data-dir", data_dir)[0] == 2
    assert mua("score", "--trajectories", world / "traj.jsonl", "--out", out, "--data-dir", data_dir,
               "--overwrite")[0] == 0


def test_export_refuses_a_run_and_a_checkpoint(world):
    rc, err = mua("export", world / "run", "--out", world / "run", "--format", "jsonl", "--data-dir", PACK)
    assert rc == 2 and "own input" in err
    rc, err = mua("export", world / "run", "--out", world / "ckpt", "--data-dir", PACK)
    assert rc == 2 and "already holds a model checkpoint" in err
    assert sorted(p.name for p in (world / "ckpt").iterdir()) == ["config.json", "model.safetensors",
                                                                  "tokenizer.json"]


def test_sft_refuses_to_write_over_its_starting_checkpoint(world):
    rc, err = mua("sft", "--policy", world / "ckpt", "--dataset", world / "traj.jsonl", "--output-dir", world / "ckpt")
    assert rc == 2 and "--output-dir" in err and "own input" in err and "model checkpoint" in err, err
    rc, err = mua("sft", "--policy", world / "ckpt", "--dataset", world / "traj.jsonl", "--output-dir", world / "run")
    assert rc == 2 and "already holds a mua run" in err, err


def test_model_tiny_refuses_a_run_folder(world):
    rc, err = mua("model", "tiny", world / "run")
    assert rc == 2 and "already holds a mua run" in err and "mua model tiny" in err, err
    assert (world / "run" / "episodes.jsonl").is_file()


def test_eval_refuses_a_checkpoint_folder(world):
    rc, err = mua("eval", "--benchmark", "pack", "--data-dir", PACK, "--agent", "gold", "--limit", "1",
                  "--no-progress", "--out", world / "ckpt")
    assert rc == 2 and "already holds a model checkpoint" in err, err
    assert not (world / "ckpt" / "episodes.jsonl").exists()


def test_train_names_what_a_foreign_output_dir_holds(world, tmp_path):
    rc, err = mua("train", "--benchmark", "pack", "--data-dir", PACK, "--policy", world / "ckpt", "--output-dir",
                  world / "run", "--split", "train", "--user-model", "scripted", "--allow-scripted-user")
    assert rc == 2 and "a mua run (episodes.jsonl)" in err, err
