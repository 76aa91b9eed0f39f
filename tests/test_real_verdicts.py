"""`mua score` on the real official results in ../shared/real (tau2 results JSON, BFCL result files): every
trajectory is replayed through run_episode and every verdict equals the official one."""
import json
import re

from mua.harness.cli import main


def real_files(real_dir):
    tau2 = sorted((real_dir / "tau2").glob("*.json")) + sorted((real_dir / "tau2" / "modified_policy").glob("*.json"))
    return tau2 + sorted((real_dir / "bfcl").glob("*_result.json"))


def test_every_official_verdict_is_reproduced(real_dir, data_dir, tmp_path, capsys):
    total = 0
    for path in real_files(real_dir):
        out = tmp_path / (path.stem + ".jsonl")
        assert main(["score", "--trajectories", str(path), "--out", str(out), "--data-dir", str(data_dir)]) == 0
        err = capsys.readouterr().err
        rows = [json.loads(x) for x in out.read_text().splitlines()]
        agree, n = map(int, re.search(r"agreement with the official verdicts: (\d+)/(\d+)", err).groups())
        assert agree == n == len(rows), (path.name, err)
        total += n
    assert total == 410 + 1200  # tau2: 384 retail/airline + 26 telecom; BFCL: 6 files x 200
