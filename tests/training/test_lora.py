"""LoRA (`use_peft`, TRL's names) for `mua sft` and `mua train`: only the adapter trains, the saved output is a
plain merged checkpoint that `mua eval --agent-model` loads, and a LoRA policy plays exactly the token stream
(and log-probs) the full model plays."""
from __future__ import annotations

import json

import pytest
from helpers.counter_bench import CounterBenchmark
from training_fakes import BOOKINGS_PACK

from mua.harness.cli import main

torch = pytest.importorskip("torch")
pytest.importorskip("peft")
pytest.importorskip("trl")


def _base_name(name: str) -> str:
    """A PEFT model's parameter name as the base model calls it."""
    return name.removeprefix("base_model.model.").replace(".base_layer.", ".")


def _check_only_the_adapter_trained(model, checkpoint) -> None:
    from safetensors.torch import load_file

    original = load_file(str(checkpoint / "model.safetensors"))
    lora = {n: p for n, p in model.named_parameters() if "lora_" in n}
    assert lora and all(p.requires_grad for p in lora.values())
    assert any(n.endswith("lora_B.default.weight") and p.abs().sum() > 0 for n, p in lora.items())  # it trained
    base = {_base_name(n): p for n, p in model.named_parameters() if "lora_" not in n}
    assert not any(p.requires_grad for p in base.values())
    compared = [n for n in base if n in original]
    assert len(compared) >= len(original) - 1  # (a tied lm_head is saved once)
    for n in compared:
        assert torch.equal(base[n].detach(), original[n]), n  # byte-identical after the update


def test_lora_sft_trains_only_the_adapter_and_saves_a_merged_checkpoint_eval_loads(tiny_checkpoint, exported,
                                                                                  tmp_path):
    from mua.training.sft import build_sft_trainer, sft_train, training_rows
    from mua.training.sft_config import parse_sft_config

    out = tmp_path / "lora-sft"
    cfg = parse_sft_config(["--policy", str(tiny_checkpoint), "--dataset", str(exported / "ds"), "--output-dir",
                            str(out), "--max-steps", "2", "--batch-size", "2", "--no-progress", "--use-peft",
                            "true", "--lora-r", "4", "--lora-alpha", "8", "--learning-rate", "1e-2"])
    from dataclasses import replace

    probe = replace(cfg, output_dir=str(tmp_path / "probe"))
    trainer = build_sft_trainer(probe, training_rows(probe))
    trainer.train()
    _check_only_the_adapter_trained(trainer.model, tiny_checkpoint)

    done = sft_train(cfg)  # the command's path: a fresh run into out, saved merged
    assert done.steps == 2
    assert (out / "model.safetensors").is_file() and not (out / "adapter_config.json").exists()
    config = json.loads((out / "config.json").read_text())
    assert config["model_type"] == "qwen2"
    from safetensors.torch import load_file

    merged, original = load_file(str(out / "model.safetensors")), load_file(str(tiny_checkpoint /
                                                                                "model.safetensors"))
    assert merged.keys() == original.keys()
    assert any(not torch.equal(merged[k], original[k]) for k in merged)  # the adapter is folded in

    run = tmp_path / "eval"
    code = main(["eval", "--benchmark", "pack", "--data-dir", str(BOOKINGS_PACK), "--agent-model", str(out),
                 "--agent-params", '{"max_tokens": 8}', "--split", "test", "--limit", "1", "--trials", "1",
                 "--out", str(run), "--no-progress"])
    assert code in (0, 1)  # a tiny model may fail the task; what matters is that it loaded and played
    record = json.loads((run / "episodes.jsonl").read_text().splitlines()[0])
    assert record["error"] is None and record["turns"] >= 1


class ParityCounter(CounterBenchmark):
    """Reward 1 when the agent's last reply has an even length: mixed rewards within a group for any model."""

    async def score(self, task, messages, *, env=None, termination=None, judge=None):
        score = await super().score(task, messages, env=env, termination=termination, judge=judge)
        replies = [m for m in messages if m.role == "assistant"]
        score.reward = float(len(replies[-1].content or "") % 2 == 0) if replies else 0.0
        return score


def _capturing():
    from trl import GRPOTrainer

    class Capturing(GRPOTrainer):
        """Records each batch at the loss (ids, masks, sampling log-probs) and the trainer's own log-probs."""
        batches: list = []

        def _compute_loss(self, model, inputs):
            ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
            mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
            with torch.no_grad():
                logps, _, _ = self._get_per_token_logps_and_entropies(model, ids, mask,
                                                                     inputs["completion_ids"].size(1))
            type(self).batches.append({**{k: v.detach().clone() for k, v in inputs.items() if torch.is_tensor(v)},
                                       "recomputed": logps.clone()})
            return super()._compute_loss(model, inputs)

    return Capturing


def _one_grpo_step(checkpoint, out, lora: bool):
    from mua.training.config import TrainConfig
    from mua.training.grpo import build_trainer

    bench = ParityCounter(n_tasks=4)
    extra = {"use_peft": True, "lora_r": 4, "lora_alpha": 8} if lora else {}
    cfg = TrainConfig(policy=str(checkpoint), output_dir=str(out), benchmark="counter", num_generations=4,
                      batch_size=4, max_steps=1, learning_rate=5e-2, max_turn_tokens=12, max_completion_tokens=40,
                      save_steps=10, progress=False, allow_scripted_user=True, **extra).validate()
    torch.manual_seed(0)
    cls = _capturing()
    cls.batches = []
    trainer, rollout = build_trainer(cfg, bench, bench.load_tasks("easy")[:1], trainer_cls=cls)
    trainer.train()
    rollout.close()
    return trainer, cls.batches[0]


def test_lora_grpo_plays_the_full_models_stream_and_trains_only_the_adapter(tiny_checkpoint, tmp_path):
    full_trainer, full = _one_grpo_step(tiny_checkpoint, tmp_path / "full", lora=False)
    lora_trainer, lora = _one_grpo_step(tiny_checkpoint, tmp_path / "lora", lora=True)
    # the adapter starts as a no-op: the same sampled tokens, masks and log-probs as the full model's
    for key in ("prompt_ids", "completion_ids", "completion_mask"):
        assert torch.equal(full[key], lora[key]), (key, (full[key] - lora[key]).abs().max().item())
    assert full["completion_mask"].sum() > 0
    compared = [key for key in ("sampling_per_token_logps", "old_per_token_logps", "recomputed") if key in full]
    assert "sampling_per_token_logps" in compared and "recomputed" in compared
    for key in compared:  # the log-probs the backend sampled with, and the ones the trainer computes: equal up to
        # float rounding (the wrapped layers' kernels may sum in another order: 5e-7 apart on some CPUs)
        torch.testing.assert_close(full[key], lora[key], rtol=0, atol=1e-5, msg=key)
    assert not torch.equal(full["advantages"], torch.zeros_like(full["advantages"]))  # there was a signal
    _check_only_the_adapter_trained(lora_trainer.model, tiny_checkpoint)

    from transformers import AutoModelForCausalLM

    from mua.training.checkpoints import save_final_model

    save_final_model(lora_trainer, tmp_path / "merged")  # what `mua train` writes at the end
    assert not (tmp_path / "merged" / "adapter_config.json").exists()
    merged = AutoModelForCausalLM.from_pretrained(tmp_path / "merged")
    assert (tmp_path / "merged" / "tokenizer.json").is_file() and not hasattr(merged, "peft_config")
