"""Only `--agent gold` is the gold agent; `--agent-model gold` is a model that happens to be named "gold"."""
import json
from pathlib import Path

from mock_openai import MockOpenAI, text_reply

from mua.harness.cli import main

PACK = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"
COMMON = ["eval", "--benchmark", "pack", "--data-dir", str(PACK), "--split", "test", "--limit", "1", "--trials", "1",
          "--no-progress"]


def test_a_model_named_gold_is_asked_not_replaced_by_the_gold_agent(tmp_path):
    asked: list[str] = []

    def respond(body):
        asked.append(body["model"])
        return text_reply("Which time would you like?")
    with MockOpenAI(respond) as url:
        assert main([*COMMON, "--agent-model", "gold", "--agent-base-url", url, "--out", str(tmp_path / "m")]) in (0, 1)
    assert asked and set(asked) == {"gold"}
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    assert config["agent"]["name"] == "gold" and config["protocol"]["roles"]["agent"]["model"] == "gold"

    assert main([*COMMON, "--agent", "gold", "--out", str(tmp_path / "g")]) == 0
    gold = json.loads((tmp_path / "g" / "config.json").read_text())
    assert gold["protocol"]["roles"]["agent"] is None  # no model played it
    assert json.loads((tmp_path / "g" / "episodes.jsonl").read_text().splitlines()[0])["reward"] == 1.0
