"""`mua view` on a training output folder (the layout `mua train` writes): told from an eval run by what it
holds (metrics.jsonl, samples/), not by the saved model's config.json; samples by integer step and round
(samples/step-<step>.<round>.jsonl), the reward spread per step, and the curves, found in headless Chromium."""
from __future__ import annotations

import json
import re
from pathlib import Path

from mua.harness.cli import main
from mua.harness.view.page import load_source, sample_files, source_kind, write_view
from tests.helpers.browser import dump_dom

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 64  # curves.png as training wrote it (the viewer embeds it as is)


def _sample(key: str, reward, passed=None) -> dict:
    return {"agent_turns": 1, "clipped_turns": 0, "error": None, "generated_tokens": 5, "incomplete": False,
            "key": key, "passed": passed, "policy_tokens": 5, "reward": reward, "termination": "user_stop",
            "truncated": False, "turns": 2,
            "messages": [{"role": "assistant", "content": "Hi!"}, {"role": "user", "content": f"task {key}"},
                         {"role": "assistant", "content": f"answer for {key}"}]}


def write_training_output(root: Path) -> Path:
    """The files of a `mua train` output: the saved model (config.json!), train_config.json, metrics.jsonl,
    curves.png and samples of steps 2, 9 and 10 (two rollouts at step 10)."""
    out = Path(root) / "train-out"
    (out / "samples").mkdir(parents=True)
    (out / "config.json").write_text(json.dumps({"model_type": "llama", "architectures": ["LlamaForCausalLM"]}))
    (out / "train_config.json").write_text(json.dumps({"benchmark": "counter", "subsets": ["easy"]}))
    (out / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "reward": r, "reward_std": 0.5}) + "\n"
                                               for s, r in ((1, 0.25), (2, 0.5))))
    (out / "curves.png").write_bytes(PNG)
    files = {"step-2.0": [_sample("easy/0", 0.0, False), _sample("easy/1", 1.0, True)],
             "step-10.0": [_sample("easy/0", 1.0, True), _sample("easy/1", None)],
             "step-10.1": [_sample("easy/2", 0.5, False)],
             "step-9.0": [_sample("easy/3", 1.0, True)]}
    for name, rows in files.items():
        (out / "samples" / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (out / "samples" / "step-x.jsonl").write_text("{}\n")  # not a sample file name: ignored
    return out


def test_training_output_is_told_by_what_it_holds_and_samples_go_by_integer_step(tmp_path):
    out = write_training_output(tmp_path)
    assert source_kind(out) == "training"  # although the saved model's config.json is there
    assert [(s, r) for s, r, _ in sample_files(out)] == [(2, 0), (9, 0), (10, 0), (10, 1)]
    source = load_source(out)
    assert source.kind == "training" and source.curves_png == PNG
    assert [(r["subset"], r["task_id"], r["trial"]) for r in source.rows] == [
        (2, "easy/0", 0), (2, "easy/1", 1), (9, "easy/3", 0), (10, "easy/0", 0), (10, "easy/1", 1), (10, "easy/2", 2)]
    assert source.rows[-1]["info"]["round"] == 1
    spread = {s["step"]: s for s in source.steps}
    assert spread[2] == {"step": 2, "samples": 2, "unknown": 0, "mean": 0.5, "std": 0.5, "min": 0.0, "max": 1.0,
                         "passed": 1}
    assert spread[10]["samples"] == 3 and spread[10]["unknown"] == 1 and spread[10]["mean"] == 0.75  # null != 0


def test_training_page_shows_samples_by_step_spread_and_curves(tmp_path):
    out = write_training_output(tmp_path)
    page = write_view([out], tmp_path / "view.html")
    dom = dump_dom(page, "ep=5")
    assert re.search(r'id="count" data-total="6">6 samples<', dom)
    assert "<th>step</th>" in dom or ">step<" in dom
    body = dom[dom.index('id="tbody"'):]
    steps = re.findall(r'<tr class="ep[^"]*" data-row="\d+"[^>]*><td>(\d+)</td>', body)
    assert steps == ["2", "2", "9", "10", "10", "10"]  # integers, in step order (10 after 9)
    assert 'alt="training curves"' in dom and 'src="data:image/png;base64,' in dom
    spread = dom[dom.index('class="steps"'):]
    assert re.search(r"<td>10</td><td>3</td><td>0.75</td>", spread)
    assert "answer for easy/2" in dom[dom.index('id="detail"'):]  # a sample's conversation opens


def test_an_empty_folder_or_a_bare_model_is_not_a_run(tmp_path, capsys):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "llama"}))
    assert source_kind(model) is None
    assert main(["view", str(model), "--out", str(tmp_path / "x.html")]) == 2
    assert "neither a run directory" in capsys.readouterr().err
