"""Trimming what a windowed model's loss cannot see (training/window.py): exact for SFT and for the log-probs TRL
re-reads in GRPO, and a model without a window is untouched."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from mua.training.window import OFF_ENV, reach, trim, trim_start

WINDOW = 32


@pytest.fixture(scope="module")
def windowed(tmp_path_factory):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from mua.harness.models.tiny import build_tiny_checkpoint

    path = build_tiny_checkpoint(tmp_path_factory.mktemp("win") / "ckpt", seed=3, sliding_window=WINDOW)
    return AutoModelForCausalLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)


@pytest.fixture(scope="module")
def rows(exported):
    import datasets

    return list(datasets.load_from_disk(str(exported / "ds")))[:3]


def test_reach_only_when_every_layer_is_windowed(monkeypatch):
    from transformers import LlamaConfig, Qwen2Config

    def qwen(**kw):
        return Qwen2Config(num_hidden_layers=3, **kw)

    assert reach(qwen(use_sliding_window=True, sliding_window=8, max_window_layers=0)) == 3 * 7
    assert reach(qwen()) is None  # full attention
    assert reach(qwen(use_sliding_window=True, sliding_window=8, max_window_layers=1)) is None  # one layer is full
    assert reach(qwen(use_sliding_window=True, sliding_window=8, max_window_layers=0,
                      rope_parameters={"rope_type": "dynamic", "factor": 2.0, "rope_theta": 1e4})) is None
    assert reach(LlamaConfig(num_hidden_layers=2)) is None  # an architecture not checked
    assert reach(None) is None
    monkeypatch.setenv(OFF_ENV, "0")
    assert reach(qwen(use_sliding_window=True, sliding_window=8, max_window_layers=0)) is None


def test_trim_keeps_reach_tokens_before_the_first_logits_read():
    ids, mask = list(range(20)), [0] * 12 + [1] * 3 + [0, 0, 1, 1, 1]
    # the loss on token 12 is read from the logits at 11, which see tokens 11 - 4 = 7 on
    assert trim(ids, mask, 4) == (ids[7:], mask[7:])
    assert trim(ids, mask, 100) == (ids, mask) and trim(ids, mask, None) == (ids, mask)
    assert trim(ids, [0] * 20, 4) == (ids, [0] * 20)  # nothing trained: untouched
    assert trim_start(-1, 4) == 0 and trim_start(11, 4) == 7 and trim_start(11, None) == 0


def _sft_loss(model, dataset) -> torch.Tensor:
    """The loss of one batch as SFTTrainer computes it: the completion mask folded into the labels (-100 outside
    it, as SFTTrainer prepares the dataset), then its collator (right padding)."""
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    examples = [{"input_ids": r["input_ids"], "labels": [t if m else -100 for t, m in zip(r["input_ids"],
                                                                                          r["completion_mask"])]}
                for r in dataset]
    batch = DataCollatorForLanguageModeling(pad_token_id=0)(examples)
    with torch.no_grad():
        return model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                     labels=batch["labels"]).loss


def test_sft_loss_is_unchanged_by_the_trim(windowed, rows):
    from mua.training.sft import sft_dataset

    model, tok = windowed
    window_reach = reach(model.config)
    assert window_reach == 2 * (WINDOW - 1)
    full = sft_dataset(rows, tok, {tok.eos_token_id})
    cut = sft_dataset(rows, tok, {tok.eos_token_id}, window_reach)
    saved = sum(len(a) for a in full["input_ids"]) - sum(len(a) for a in cut["input_ids"])
    assert saved > 300 * len(rows)  # the system prompt's head is gone ...
    assert [sum(m) for m in full["completion_mask"]] == [sum(m) for m in cut["completion_mask"]]  # ... not a label
    a, b = _sft_loss(model, full), _sft_loss(model, cut)
    assert torch.allclose(a, b, rtol=1e-5, atol=1e-6), (a, b)
    # the check can fail: a trim inside the reach changes the loss
    short = [trim(i, m, window_reach // 2) for i, m in zip(full["input_ids"], full["completion_mask"])]
    import datasets

    c = _sft_loss(model, datasets.Dataset.from_dict({"input_ids": [s[0] for s in short],
                                                     "completion_mask": [s[1] for s in short]}))
    assert not torch.allclose(a, c, rtol=1e-5, atol=1e-6)


def test_a_model_without_a_window_trains_on_whole_episodes(tiny_checkpoint, rows):
    from mua.training.sft import load_policy, sft_dataset

    model, tok, stop = load_policy(str(tiny_checkpoint))
    assert reach(model.config) is None
    plain = sft_dataset(rows, tok, stop)
    assert sft_dataset(rows, tok, stop, reach(model.config))["input_ids"] == plain["input_ids"]


def _completion_logps(model, prompt: list[int], completion: list[int]) -> torch.Tensor:
    """Per-token log-probs of ``completion`` after ``prompt``, as TRL reads them (logits at the position before)."""
    ids = torch.tensor([prompt + completion])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, len(prompt) - 1:-1]
    return torch.log_softmax(logits.float(), -1).gather(-1, torch.tensor(completion)[:, None])[:, 0]


def test_grpo_completion_logprobs_are_unchanged_by_the_trimmed_prompt(windowed, rows):
    from mua.training.rollout import EpisodeOutcome, to_trl
    from mua.training.sft import row_stream

    model, tok = windowed
    window_reach = reach(model.config)
    s = row_stream(rows[0], tok, {tok.eos_token_id})
    ep = EpisodeOutcome("t/0", list(s.prompt_ids), list(s.completion_ids), list(s.env_mask),
                        [0.0] * len(s.completion_ids), 1.0, None)
    out = to_trl([ep], window_reach)
    assert len(out["prompt_ids"][0]) == window_reach + 1 < len(ep.prompt_ids)
    assert out["prompt_ids"][0] == ep.prompt_ids[-(window_reach + 1):]
    assert out["completion_ids"][0] == ep.completion_ids and out["env_mask"][0] == ep.env_mask
    assert len(ep.prompt_ids) == len(s.prompt_ids)  # the episode itself keeps its whole prompt
    full = _completion_logps(model, ep.prompt_ids, ep.completion_ids)
    cut = _completion_logps(model, out["prompt_ids"][0], ep.completion_ids)
    assert torch.allclose(full, cut, rtol=1e-5, atol=1e-5), (full - cut).abs().max()
    shorter = _completion_logps(model, ep.prompt_ids[-(window_reach // 2):], ep.completion_ids)
    assert not torch.allclose(full, shorter, rtol=1e-5, atol=1e-5)  # a trim inside the reach is not exact
    assert to_trl([ep])["prompt_ids"][0] == ep.prompt_ids  # no reach: untouched


def test_rollout_trims_only_what_trl_reads(tiny_tokenizer, stop_ids, tmp_path):
    """The rollout plays the same episodes and writes the same samples; only the prompts handed to TRL are cut,
    and only for a windowed policy."""
    from test_rollout import CALL, _rollout
    from transformers import Qwen2Config

    windowed_cfg = Qwen2Config(num_hidden_layers=2, use_sliding_window=True, sliding_window=4, max_window_layers=0)
    runs = {}
    for name, config in (("plain", Qwen2Config(num_hidden_layers=2)), ("windowed", windowed_cfg)):
        func, trainer, _, backend = _rollout(tiny_tokenizer, stop_ids, [CALL, "Done."], tmp_path=tmp_path / name,
                                             incomplete="keep")
        trainer.model = SimpleNamespace(config=config)
        out = func(["easy/0", "easy/2"], trainer)
        samples = (tmp_path / name / "samples" / "step-4.jsonl").read_text()
        runs[name] = (out, func.last, [r.prompt_ids for r in backend.requests], samples)
    (plain, eps, requests, samples), (cut, cut_eps, cut_requests, cut_samples) = runs["plain"], runs["windowed"]
    assert requests == cut_requests and samples == cut_samples  # generation and samples unchanged
    assert [e.prompt_ids for e in eps] == [e.prompt_ids for e in cut_eps]
    assert plain["prompt_ids"] == [e.prompt_ids for e in eps]  # no window: the whole prompt
    assert cut["prompt_ids"] == [e.prompt_ids[-(2 * 3 + 1):] for e in eps]
    assert {k: v for k, v in plain.items() if k != "prompt_ids"} == {k: v for k, v in cut.items()
                                                                      if k != "prompt_ids"}


@pytest.mark.slow
def test_one_grpo_step_through_trl_reads_the_trimmed_prompt_exactly(tmp_path):
    """A real GRPO step with a windowed policy: the batch at the loss holds the trimmed prompts, and the log-probs
    TRL computes there equal those of the whole prompt + completion."""
    from helpers.counter_bench import CounterBenchmark
    from test_grpo_smoke import _capturing_trainer
    from transformers import AutoModelForCausalLM

    from mua.harness.models.tiny import build_tiny_checkpoint
    from mua.training.config import TrainConfig
    from mua.training.grpo import build_trainer

    policy = build_tiny_checkpoint(tmp_path / "tiny", seed=1, sliding_window=8)
    bench = CounterBenchmark(n_tasks=2)
    cfg = TrainConfig(policy=str(policy), output_dir=str(tmp_path / "out"), benchmark="counter", num_generations=2,
                      batch_size=2, max_steps=1, learning_rate=1e-3, max_turn_tokens=16, max_completion_tokens=48,
                      save_steps=1, progress=False, allow_scripted_user=True).validate()
    trainer, rollout = build_trainer(cfg, bench, bench.load_tasks("easy")[:1], trainer_cls=_capturing_trainer())
    trainer._rollout = rollout
    window_reach = reach(trainer.model.config)
    assert window_reach == 2 * 7
    trainer.train()
    batch = trainer.batches[0]
    reference = AutoModelForCausalLM.from_pretrained(policy).eval()  # the weights the first batch was read with
    episodes = batch["episodes"]
    assert len(episodes) == batch["completion_ids"].size(0) == 2
    for ep in episodes:
        n = len(ep.completion_ids)
        # the batch row of this episode (TRL may reorder): the one holding its completion
        r = next(r for r in range(len(episodes)) if batch["completion_ids"][r, :n].tolist() == ep.completion_ids
                 and not batch["completion_mask"][r, n:].any())
        assert len(ep.prompt_ids) > window_reach + 1  # the episode keeps its whole prompt ...
        kept = batch["prompt_ids"][r][batch["prompt_mask"][r].bool()].tolist()
        assert kept == ep.prompt_ids[-(window_reach + 1):]  # ... TRL reads its last reach + 1 tokens
        full = _completion_logps(reference, ep.prompt_ids, ep.completion_ids)
        assert torch.allclose(batch["recomputed"][r, :n], full, rtol=1e-4, atol=1e-4)
        assert torch.allclose(full, torch.tensor(ep.logprobs), atol=1e-4)  # as the whole episode was sampled


def test_blocked_window_attention_gives_sdpa_logits_and_gradients(tmp_path):
    """The training pass of a windowed model reads each block of W queries against its 2W - 1 keys: logits and
    gradients as SDPA's over every key, with left and right padding, on sequences several windows long."""
    from transformers import AutoModelForCausalLM

    from mua.harness.models.tiny import build_tiny_checkpoint
    from mua.training.window import WINDOW_ATTENTION, use_window_attention

    path = build_tiny_checkpoint(tmp_path / "w", seed=5, sliding_window=8)
    ids = torch.randint(5, 200, (3, 45))
    mask = torch.ones_like(ids)
    mask[0, :7] = 0  # left padding
    mask[1, 30:] = 0  # right padding

    def run(blocked: bool):
        model = AutoModelForCausalLM.from_pretrained(path, attn_implementation="sdpa")
        if blocked:
            assert use_window_attention(model)
        assert model.config._attn_implementation == (WINDOW_ATTENTION if blocked else "sdpa")
        logits = model(input_ids=ids, attention_mask=mask).logits
        (logits.float() * mask[..., None]).square().mean().backward()
        return logits.detach(), [p.grad for p in model.parameters()], model

    plain, plain_grads, _ = run(False)
    blocked, blocked_grads, model = run(True)
    real = mask.bool()
    assert (plain[real] - blocked[real]).abs().max() < 1e-5
    assert all((a - b).abs().max() < 1e-5 for a, b in zip(plain_grads, blocked_grads))
    model.save_pretrained(tmp_path / "saved")
    assert WINDOW_ATTENTION not in (tmp_path / "saved" / "config.json").read_text()  # never saved


def test_blocked_attention_only_for_a_windowed_sdpa_model(tiny_checkpoint, monkeypatch, tmp_path):
    from transformers import AutoModelForCausalLM

    from mua.training.window import use_window_attention

    assert not use_window_attention(AutoModelForCausalLM.from_pretrained(tiny_checkpoint))  # no window
    monkeypatch.setenv(OFF_ENV, "0")
    from mua.harness.models.tiny import build_tiny_checkpoint
    path = build_tiny_checkpoint(tmp_path / "w", sliding_window=8)
    assert not use_window_attention(AutoModelForCausalLM.from_pretrained(path))
