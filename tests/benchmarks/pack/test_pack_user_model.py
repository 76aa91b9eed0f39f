"""A pack may name its LLM user's model in pack.json ("user_model"): a checkpoint folder relative to the pack (or
absolute), or a model name. `mua eval`, `mua play` and `mua train` play it when no user model is named, through
the one run plan (harness/run/plan.py), record it, and record an explicit --user-model as the override user.model.
Bad values are one-line data errors."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from mock_openai import MockOpenAI, text_reply

from mua.benchmarks.pack import PackBenchmark
from mua.harness.cli import main
from mua.harness.errors import DataError
from mua.harness.protocol import differences

EXAMPLE = Path(__file__).resolve().parents[3] / "benchmarks/pack/examples/bookings"


def make_pack(tmp_path: Path, user_model=None, user: str = "llm", name: str = "pack") -> Path:
    """The bookings pack with one train and one test task, its user an LLM (named by ``user_model``)."""
    pack = tmp_path / name
    shutil.copytree(EXAMPLE, pack, ignore=shutil.ignore_patterns("__pycache__", "generate.py"))
    splits = json.loads((pack / "splits.json").read_text())
    (pack / "splits.json").write_text(json.dumps({"train": splits["train"][:2], "test": splits["test"][:1]}))
    meta = json.loads((pack / "pack.json").read_text())
    meta.update(user=user, max_messages=6)
    if user_model is not None:
        meta["user_model"] = user_model
    (pack / "pack.json").write_text(json.dumps(meta))
    return pack


SAID = "I am Bo."  # what the pack's user checkpoint says, whatever it is told


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """The tiny offline checkpoint (the policy, and a user model other than the pack's)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from mua.harness.models.tiny import build_tiny_checkpoint

    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny") / "ckpt", seed=0)


@pytest.fixture(scope="module")
def sayer(tiny, tmp_path_factory) -> Path:
    """The tiny checkpoint rewired to say SAID to anything (a random one greedily says only newlines, which the
    runner reads as no reply): attention and MLP outputs are zeroed, so the next token depends on the last one
    alone, and untied embedding and output rows chain SAID's tokens, then the end of the turn."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok, model = AutoTokenizer.from_pretrained(tiny), AutoModelForCausalLM.from_pretrained(tiny)
    chain = tok.encode(SAID, add_special_tokens=False) + [tok.eos_token_id]
    assert len(set(chain)) == len(chain), f"pick a sentence of distinct tokens: {tok.convert_ids_to_tokens(chain)}"
    model.config.tie_word_embeddings = False
    emb = model.get_input_embeddings().weight
    model.lm_head.weight = head = torch.nn.Parameter(torch.zeros_like(emb))
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        emb.zero_()
        emb[:, -1] = 1.0  # any other last token leads to SAID's first
        head[chain[0], -1] = 10.0
        for k, (token, following) in enumerate(zip(chain, chain[1:])):
            emb[token, -1], emb[token, k] = 0.0, 1.0
            head[following, k] = 10.0
    out = tmp_path_factory.mktemp("sayer") / "ckpt"
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


@pytest.fixture
def tiny_pack(tmp_path, sayer) -> Path:
    """A pack whose user is the sayer checkpoint, linked inside the pack and named relative to it."""
    pack = make_pack(tmp_path, "./user")
    (pack / "user").symlink_to(sayer, target_is_directory=True)
    return pack


def eval_argv(pack: Path, out: Path, agent: str, *extra: str) -> list[str]:
    return ["eval", "--benchmark", "pack", "--data-dir", str(pack), "--agent-model", agent, "--agent-params",
            '{"max_tokens": 8}', "--trials", "1", "--no-progress", "--out", str(out), *extra]


def rows(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]


# -- pack.json: what the field may say ------------------------------------------------------------------------
def test_a_name_is_passed_on_and_a_path_resolves_against_the_pack(tmp_path, tiny):
    assert PackBenchmark(make_pack(tmp_path, "Qwen/Qwen3-8B", name="a")).default_user_model("tasks") == \
        "Qwen/Qwen3-8B"
    assert PackBenchmark(make_pack(tmp_path, name="b")).default_user_model("tasks") is None
    assert PackBenchmark(make_pack(tmp_path, str(tiny), name="c")).default_user_model("tasks") == str(tiny)
    for named in ("./models/user", "models/user"):  # a bare name that is an entry of the pack is a path too
        pack = make_pack(tmp_path, named, name=f"d{len(named)}")
        shutil.copytree(tiny, pack / "models" / "user")
        assert PackBenchmark(pack).default_user_model("tasks") == str((pack / "models/user").resolve())
    moved = tmp_path / "moved"
    shutil.move(pack, moved)  # the pack is portable: the path follows the folder
    assert PackBenchmark(moved).default_user_model("tasks") == str((moved / "models/user").resolve())


@pytest.mark.parametrize("value,setup,message", [
    (7, None, "field 'user_model' must be a non-empty string"),
    ("", None, "field 'user_model' must be a non-empty string"),
    ("  ", None, "field 'user_model' must be a non-empty string"),
    ("./missing", None, "field 'user_model': ./missing: no such checkpoint folder"),
    ("../elsewhere/ckpt", None, "field 'user_model': ../elsewhere/ckpt: no such checkpoint folder"),
    ("policy.md", None, "field 'user_model': policy.md: no such checkpoint folder"),  # a file of the pack
    ("./empty", "empty", "field 'user_model': ./empty is not a model checkpoint (no config.json in"),
])
def test_bad_values_are_one_line_data_errors(tmp_path, capsys, value, setup, message):
    pack = make_pack(tmp_path, value)
    if setup:
        (pack / setup).mkdir()
    with pytest.raises(DataError, match=r"^pack: pack.json: "):
        PackBenchmark(pack).default_user_model("tasks")
    code = main(["eval", "--benchmark", "pack", "--data-dir", str(pack), "--agent-model", "m", "--out",
                 str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "pack: pack.json: " + message in err, err


def test_a_scripted_pack_cannot_name_a_user_model(tmp_path, capsys):
    pack = make_pack(tmp_path, "Qwen/Qwen3-8B", user="scripted")
    code = main(["eval", "--benchmark", "pack", "--data-dir", str(pack), "--agent", "gold", "--out",
                 str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "pack: pack.json: field 'user_model' names the LLM user's model, but 'user' is 'scripted'" in err


# -- mua eval ---------------------------------------------------------------------------------------------------
def test_eval_plays_the_packs_checkpoint_as_the_user_and_records_it(tiny_pack, tiny, tmp_path):
    run = tmp_path / "run"
    argv = eval_argv(tiny_pack, run, str(tiny))
    assert main(argv) == 0  # no --user-model
    user = str(tiny_pack / "user")
    config = json.loads((run / "config.json").read_text())
    assert config["user"]["name"] == user
    protocol = config["protocol"]
    assert protocol["roles"]["user"]["model"] == user and protocol["official"]["user"]["model"] == user
    assert "user.model" not in protocol["overrides"] and not [d for d in differences(protocol) if "user" in d]
    for row in rows(run):  # every user turn came from the pack's checkpoint, none from the scripted user
        said = [m["content"] for m in row["messages"] if m["role"] == "user"]
        assert said and set(said) == {SAID} and row["usage"]["user"]["requests"] == len(said)
    assert main(argv) == 0  # resumed: the same plan, so the same config.json
    assert json.loads((run / "config.json").read_text())["protocol"] == protocol


def test_an_explicit_user_model_overrides_the_packs_and_is_recorded(tiny_pack, tiny, tmp_path):
    run = tmp_path / "run"
    assert main(eval_argv(tiny_pack, run, str(tiny), "--user-model", str(tiny), "--user-params",
                          '{"max_tokens": 4}')) == 0
    config = json.loads((run / "config.json").read_text())
    assert config["user"]["name"] == str(tiny)
    assert all(r["usage"]["user"]["completion_tokens"] <= 4 * r["usage"]["user"]["requests"] for r in rows(run))
    assert "user.model" in config["protocol"]["overrides"]
    assert f"user model {tiny} (official default {tiny_pack / 'user'})" in differences(config["protocol"])


def test_a_named_served_user_model_plays_the_users_turns(tmp_path, monkeypatch):
    """A model name (not a path) goes to the endpoint as --user-model would; the user's turns are its replies."""
    pack = make_pack(tmp_path, "pack-user")
    said = iter(["My name is David.", "A bar table at 5 pm, please.", "###STOP###"])

    def respond(body):
        if body["model"] == "pack-user":
            return text_reply(next(said))
        return text_reply("What is your name? Where would you like to sit? At what time?")

    with MockOpenAI(respond) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url)  # where a name without a base URL is served
        assert main(eval_argv(pack, tmp_path / "run", "agent")) == 0
    row, = rows(tmp_path / "run")
    assert [m["content"] for m in row["messages"] if m["role"] == "user"] == [
        "My name is David.", "A bar table at 5 pm, please.", "###STOP###"]
    assert json.loads((tmp_path / "run" / "config.json").read_text())["user"]["name"] == "pack-user"


def test_the_shared_model_flag_leaves_the_packs_user_in_place(tmp_path, monkeypatch):
    """--model names one model for every role without its own; the pack's user model is the user's own."""
    pack = make_pack(tmp_path, "pack-user")
    asked: set[str] = set()

    def respond(body):
        asked.add(body["model"])
        return text_reply("###STOP###")

    with MockOpenAI(respond) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        assert main(["eval", "--benchmark", "pack", "--data-dir", str(pack), "--model", "everyone", "--trials", "1",
                     "--no-progress", "--out", str(tmp_path / "run")]) == 0
    assert asked == {"pack-user"}  # the user stopped at once: the agent never spoke
    assert json.loads((tmp_path / "run" / "config.json").read_text())["user"]["name"] == "pack-user"


# -- mua play ---------------------------------------------------------------------------------------------------
def test_play_as_the_agent_talks_to_the_packs_user_model(tmp_path, monkeypatch, capsys):
    pack = make_pack(tmp_path, "pack-user")
    task_id = json.loads((pack / "splits.json").read_text())["test"][0]
    monkeypatch.setattr("builtins.input", lambda prompt="": "What is your name?")

    def respond(body):
        return text_reply("###STOP###" if sum(m["role"] == "user" for m in body["messages"]) > 1 else "I am Vera.")

    with MockOpenAI(respond) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        assert main(["play", "pack", task_id, "--data-dir", str(pack), "--out", str(tmp_path / "p")]) == 0
    assert "[user] I am Vera." in capsys.readouterr().out
    config = json.loads((tmp_path / "p" / "config.json").read_text())
    assert config["user"]["name"] == "pack-user" and config["protocol"]["roles"]["user"]["model"] == "pack-user"


# -- mua train --------------------------------------------------------------------------------------------------
def test_train_rolls_out_against_the_packs_user_model(tiny_pack, tiny, tmp_path, capsys):
    pytest.importorskip("trl")
    out = tmp_path / "grpo"
    assert main(["train", "--policy", str(tiny), "--benchmark", "pack", "--data-dir", str(tiny_pack), "--split",
                 "train", "--output-dir", str(out), "--max-steps", "1", "--num-generations", "2", "--batch-size",
                 "2", "--max-turn-tokens", "8", "--max-completion-tokens", "24", "--save-steps", "10",
                 "--no-progress"]) == 0  # no user_model
    printed = capsys.readouterr().out.strip().splitlines()[-1].strip()
    assert printed.startswith("mua eval ") and "--user-model" not in printed  # eval plays the pack's user too
    protocol = json.loads((out / "train_config.json").read_text())["protocol"]
    assert protocol["roles"]["user"]["model"] == str(tiny_pack / "user") and protocol["overrides"] == []
    samples = [json.loads(line) for f in sorted((out / "samples").iterdir()) for line in f.read_text().splitlines()]
    assert samples and all({m["content"] for m in s["messages"] if m["role"] == "user"} == {SAID} for s in samples)


def test_train_takes_an_explicit_user_model_and_records_the_override(tiny_pack, tiny, sayer):
    pytest.importorskip("trl")
    from mua.training.config import TrainConfig, check_user_model, protocol_specs

    bench = PackBenchmark(tiny_pack)
    default = TrainConfig(benchmark="pack", data_dir=str(tiny_pack))
    check_user_model(default, bench)  # the pack names one: nothing to refuse
    user, _, overrides = protocol_specs(default, bench)
    assert user.name == str(tiny_pack / "user") and overrides == []
    user, _, overrides = protocol_specs(TrainConfig(benchmark="pack", data_dir=str(tiny_pack),
                                                    user_model=str(tiny)), bench)
    assert user.name == str(tiny) and overrides == ["user.model"]
    user, _, overrides = protocol_specs(TrainConfig(benchmark="pack", data_dir=str(tiny_pack),
                                                    user_model=str(sayer)), bench)
    assert user.name == str(tiny_pack / "user") and overrides == []  # the pack's own, named by its target
    from mua.training.hint import eval_command

    scripted = TrainConfig(benchmark="pack", data_dir=str(tiny_pack), user_model="scripted", allow_scripted_user=True)
    assert "--user-model" not in eval_command(scripted, bench, tiny_pack / "out")  # eval plays the pack's user
    plain = make_pack(tiny_pack.parent, name="plain")  # a pack without one: the command asks for one
    assert "USER_MODEL" in eval_command(TrainConfig(benchmark="pack", data_dir=str(plain)), PackBenchmark(plain),
                                        plain / "out")
