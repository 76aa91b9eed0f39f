"""TRL's fused LM head scores only labelled positions on the CPU (training/lm_head.py): same loss, log-probs,
entropy and top-1 as scoring every position."""
from __future__ import annotations

import pytest
import torch

trl_utils = pytest.importorskip("trl.trainer.utils")


def test_labelled_positions_only_gives_the_same_outputs(tiny_checkpoint, monkeypatch):
    from transformers import AutoModelForCausalLM
    from trl.kernels.chunked_logprob import _use_triton as trls_own

    from mua.training.lm_head import score_labelled_positions_only

    monkeypatch.setattr(trl_utils, "_use_triton", trls_own)  # unpatched here (an earlier SFT may have), restored after
    assert not trl_utils._use_triton(torch.device("cpu"))  # TRL's own choice: every position on the CPU
    model = AutoModelForCausalLM.from_pretrained(tiny_checkpoint)
    trl_utils.add_fused_lm_head(model, outputs=("log_probs", "entropy", "is_top1"))
    ids = torch.randint(5, 200, (2, 30))
    labels = ids.clone()
    labels[:, :17] = -100  # only the tail carries loss, as an agent's reply does
    labels[1, 25:] = -100

    def run():
        model.zero_grad()
        out = model(input_ids=ids, labels=labels, fused_lm_head=True)
        out.loss.backward()
        return out, [p.grad.clone() for p in model.parameters() if p.grad is not None]

    every, every_grads = run()
    assert score_labelled_positions_only() and score_labelled_positions_only()  # twice: patched once
    assert trl_utils._use_triton(torch.device("cpu"))
    labelled, labelled_grads = run()
    for name in ("loss", "log_probs", "entropy", "is_top1"):
        assert torch.allclose(getattr(every, name).float(), getattr(labelled, name).float(), atol=1e-6), name
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(every_grads, labelled_grads))
