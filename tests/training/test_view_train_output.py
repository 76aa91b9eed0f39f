"""`mua view` on a real `mua train` output (the tiny model, the counter benchmark, two steps): the page shows
the run as a training run with its samples by step and its curves, in headless Chromium."""
from __future__ import annotations

import re

import pytest
from helpers.counter_bench import CounterBenchmark

from mua.harness.cli import main
from mua.harness.registry import register_benchmark
from tests.helpers.browser import dump_dom

pytest.importorskip("trl", reason="mua train needs trl")


def test_view_of_a_real_train_output_finds_samples_and_curves(tiny_checkpoint, tmp_path):
    pytest.importorskip("matplotlib", reason="curves.png needs the plot extra")
    register_benchmark(CounterBenchmark, n_tasks=2)
    out = tmp_path / "train-out"
    assert main(["train", "--benchmark", "counter", "--policy", str(tiny_checkpoint), "--output-dir", str(out),
                 "--subsets", "easy", "--allow-scripted-user", "--num-generations", "2", "--batch-size", "4",
                 "--max-turn-tokens", "8", "--max-completion-tokens", "24", "--no-progress", "--data-dir",
                 str(tmp_path), "--max-steps", "2", "--logging-steps", "1"]) == 0
    assert (out / "config.json").is_file() and (out / "curves.png").is_file()  # the model's config.json is there
    assert main(["view", str(out)]) == 0
    dom = dump_dom(out / "view.html", "ep=0")
    total = int(re.search(r'id="count" data-total="(\d+)">\d+ samples<', dom).group(1))
    written = sum(len(f.read_text().splitlines()) for f in (out / "samples").glob("step-*.jsonl"))
    assert total == written > 0
    body = dom[dom.index('id="tbody"'):]
    steps = re.findall(r'<tr class="ep[^"]*" data-row="\d+"[^>]*><td>(\d+)</td>', body)
    assert steps and steps == sorted(steps, key=int) and "-1" not in steps
    assert 'alt="training curves"' in dom and 'class="steps"' in dom
    assert 'data-role="assistant"' in dom[dom.index('id="detail"'):]  # the first sample's conversation
