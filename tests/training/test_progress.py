"""The per-step log: metrics.jsonl rows and curves.png redrawn at every logging step, resumed rows included."""
import json
from types import SimpleNamespace

from mua.training.progress import StepLog


def test_curves_are_redrawn_at_every_step_from_the_whole_file(tmp_path):
    (tmp_path / "metrics.jsonl").write_text(json.dumps({"step": 1, "reward": 0.1}) + "\n" + "not json\n")
    log = StepLog(tmp_path, echo=False)
    pictures = []
    for step, reward in ((2, 0.3), (3, 0.6)):
        state = SimpleNamespace(is_world_process_zero=True, global_step=step)
        log.on_log(None, state, None, logs={"reward": reward, "episode/pass_rate": reward, "kl": 0.01})
        pictures.append((tmp_path / "curves.png").read_bytes())
    assert all(p.startswith(b"\x89PNG") for p in pictures) and pictures[0] != pictures[1]
    assert [r["step"] for r in log._rows()] == [1, 2, 3]  # the bad line is skipped, the earlier run kept
