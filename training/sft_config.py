"""The settings of one ``mua sft`` run: TRL's own :class:`SFTConfig` extended with mua's fields and LoRA, read by
TRL's parser exactly as ``mua train`` reads its settings (see :mod:`.settings`): a YAML ``--config`` whose keys
are any field, overridden by flags. Device, precision and launch are TRL's and accelerate's."""
from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from trl import SFTConfig

from mua.harness.errors import ConfigError
from mua.harness.quiet import silence_unactionable

from .settings import (
    LoraSettings,
    coerce_fields,
    mua_field,
    parse_settings,
    setting,
    settle_device_and_precision,
    trl_field,
)

SFT_CONFIG = "sft_config.json"  # the settings of the run in an output directory (what a resume must match)


def _trl(name: str, default: Any) -> Any:
    return trl_field(SFTConfig, name, default)


@dataclass
class SftRunConfig(SFTConfig, LoraSettings):
    policy: str = mua_field("checkpoint directory to start from (weights, tokenizer with a chat template)", "")
    dataset: str = mua_field("`mua export` output: a saved datasets folder or a .jsonl file", "")
    min_reward: Optional[float] = mua_field("train only on rows with at least this reward")
    chat_template: Optional[str] = mua_field("hermes, llama3_json or a Jinja template file replacing the policy's "
                                             "own chat template (one that drops tool use is refused at load); the "
                                             "output keeps it")
    batch_size: Optional[int] = mua_field("episodes per device per step (= per_device_train_batch_size)")
    resample_values: int = mua_field("train on K copies of every episode, each with the names and ids the agent "
                                     "copies replaced by new values of the same shape, drawn from --seed, so that "
                                     "only copying fits, not recalling train values (training/resample.py); 0: the "
                                     "episodes as they are", 0)
    resume: bool = mua_field("continue from the newest checkpoint in output_dir (--no-resume: start a new run; "
                             "refused when output_dir is not empty)", True)
    progress: bool = mua_field("progress bar (--no-progress: none)", True)

    # TRL's fields with mua's defaults
    output_dir: Optional[str] = _trl("output_dir", "runs/sft")
    seed: int = _trl("seed", 0)
    logging_steps: float = _trl("logging_steps", 1)
    completion_only_loss: Optional[bool] = _trl("completion_only_loss", True)  # the agent's own tokens only
    max_length: Optional[int] = _trl("max_length", None)  # an episode is never cut

    def __post_init__(self):
        coerce_fields(self, SFTConfig)
        if self.batch_size is not None:
            self.per_device_train_batch_size = self.batch_size
        if not self.progress:
            self.disable_tqdm = True
        if self.per_device_train_batch_size < 1:
            raise ConfigError(f"{setting('batch_size')} (per_device_train_batch_size) must be at least 1")
        if self.resample_values < 0:
            raise ConfigError(f"{setting('resample_values')} must be 0 (off) or at least 1, got {self.resample_values}")
        if self.learning_rate <= 0:
            raise ConfigError(f"{setting('learning_rate')} must be > 0")
        if not self.num_train_epochs > 0:  # also NaN
            raise ConfigError(f"{setting('num_train_epochs')} must be > 0, got {self.num_train_epochs}")
        if self.max_steps != -1 and self.max_steps < 1:
            raise ConfigError(f"{setting('max_steps')} must be -1 (as many as the epochs make) or at least 1, got "
                              f"{self.max_steps}")
        settle_device_and_precision(self)
        try:
            with warnings.catch_warnings():  # transformers' notices about its own defaults (harness/quiet.py)
                silence_unactionable()
                super().__post_init__()
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"TRL refused the SFT settings: {exc}") from None
        self.batch_size = self.per_device_train_batch_size

    @property
    def out(self) -> Path:
        return Path(self.output_dir or "runs/sft")

    def settings(self) -> dict:
        """Every setting as JSON values (what sft_config.json records)."""
        return json.loads(json.dumps(self.to_dict(), default=str))


DESCRIPTION = (
    "Fine-tunes POLICY on episodes written by `mua export` with TRL's SFTTrainer: each episode is tokenised "
    "exactly as `mua train` streams it, and only the agent's own replies carry loss. Settings come from --config "
    "(YAML; keys: mua's below and every TRL SFTConfig field) and the flags below, which override it. Device and "
    "precision are TRL's (a GPU when there is one, bf16 there by TRL's default; --bf16 false turns it off). "
    "Checkpoints are saved every save_steps; re-running the same command resumes from the newest complete one in "
    "--output-dir; Ctrl-C (or SIGTERM) stops at the end of the step, saves it and exits. Score the result with "
    "`mua eval --agent-model OUTPUT_DIR`.")


def parse_sft_config(argv: list[str]) -> SftRunConfig:
    """``mua sft``'s arguments as a :class:`SftRunConfig` (ConfigError naming a bad key, flag or value)."""
    return parse_settings(SftRunConfig, SFTConfig, argv, "mua sft", DESCRIPTION)
