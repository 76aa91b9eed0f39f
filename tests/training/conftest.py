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



@pytest.fixture(scope="session")
def exported(tmp_path_factory):
    """Six passing gold episodes of the bookings pack's train split, exported (``ds``: a saved dataset)."""
    from training_fakes import BOOKINGS_PACK as PACK

    from mua.harness.cli import main

    tmp = tmp_path_factory.mktemp("export")
    assert main(["eval", "--benchmark", "pack", "--data-dir", str(PACK), "--agent", "gold", "--split", "train",
                 "--limit", "6", "--out", str(tmp / "run"), "--no-progress"]) == 0
    assert main(["export", str(tmp / "run"), "--out", str(tmp / "ds"), "--min-reward", "1",
                 "--data-dir", str(PACK)]) == 0
    return tmp
