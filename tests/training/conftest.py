"""Fixtures for the training tests: the tiny offline checkpoint (built once) and its tokenizer."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# training_fakes.py beside this file is imported by the tests (import mode is importlib)
sys.path.insert(0, str(Path(__file__).resolve().parent))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

pytest.importorskip("torch", reason="training needs torch")
pytest.importorskip("transformers", reason="training needs transformers")


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory):
    from mua.harness.models.tiny import build_tiny_checkpoint

    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny") / "ckpt", seed=0)


@pytest.fixture(scope="session")
def tiny_tokenizer(tiny_checkpoint):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_checkpoint)


@pytest.fixture(scope="session")
def stop_ids(tiny_tokenizer):
    return {tiny_tokenizer.eos_token_id}
