"""The tiny offline checkpoint, built once per test session (nothing is fetched from a hub). Tests that
do not use it (the endpoint client) need neither torch nor transformers."""
from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory):
    pytest.importorskip("torch", reason="local backends need torch (pip install 'mua[local]')")
    pytest.importorskip("transformers", reason="local backends need transformers (pip install 'mua[local]')")
    import torch

    from mua.harness.models.tiny import build_tiny_checkpoint

    torch.set_num_threads(1)  # the tiny model's ops are too small to split; xdist workers would contend

    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny") / "ckpt", seed=0)


@pytest.fixture(scope="session")
def tiny_tokenizer(tiny_checkpoint):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_checkpoint)
