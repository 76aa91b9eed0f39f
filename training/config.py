"""The settings of one ``mua train`` run: read from a YAML file, overridden by command-line flags.

Every key is a field of :class:`TrainConfig` (unknown keys are an error, so a typo never silently falls
back to a default). See ``training/configs/example.yaml``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Optional

from mua.harness.errors import ConfigError

GENERATION_BACKENDS = ("transformers", "vllm_colocate", "vllm_server")
SCRIPTED = "scripted"  # the benchmark's scripted (gold) user instead of a user model


@dataclass
class TrainConfig:
    policy: str = ""  # checkpoint directory of the policy to train
    output_dir: str = "runs/train"
    benchmark: str = ""
    subsets: list[str] = field(default_factory=list)  # empty: all subsets of the benchmark
    split: Optional[str] = "train"
    allow_test_split: bool = False  # training on the split you report is contamination; off unless forced
    task_ids: list[str] = field(default_factory=list)
    limit: Optional[int] = None  # at most this many tasks per subset
    data_dir: Optional[str] = None

    user_model: str = SCRIPTED  # "scripted", an endpoint model name, or a local checkpoint directory
    user_base_url: Optional[str] = None
    user_params: dict = field(default_factory=lambda: {"temperature": 0.0})
    judge_model: Optional[str] = None  # LLM judge for tau2 NL assertions (without one they are skipped)
    judge_base_url: Optional[str] = None
    judge_params: dict = field(default_factory=lambda: {"temperature": 0.0})
    incomplete_scores: str = "drop"  # "drop": no reward when the score skipped components; "keep": partial

    num_generations: int = 4  # G: episodes per task in one GRPO group
    batch_size: int = 8  # episodes per device per optimizer step (a multiple of G)
    gradient_accumulation_steps: int = 1
    max_steps: int = 100
    learning_rate: float = 1e-6
    beta: float = 0.0  # KL coefficient (0: no reference model)
    loss_type: str = "dapo"
    temperature: float = 1.0
    top_p: float = 1.0
    max_turn_tokens: int = 256  # generated tokens per reply
    max_completion_tokens: int = 2048  # tokens after the first prompt (replies, tool results, user turns)
    truncated_reward: float = 0.0
    mask_truncated: bool = False  # no loss on episodes stopped by the budget or ending in a cut reply

    generation: str = "transformers"
    vllm_server_url: Optional[str] = None
    concurrency: int = 16  # episodes in flight per rank
    seed: int = 0
    bf16: bool = False
    save_steps: int = 50
    save_total_limit: Optional[int] = 3
    logging_steps: int = 1
    samples_per_step: int = 4  # trajectories written to OUTPUT/samples/ per step
    resume: bool = True  # continue from the newest checkpoint in output_dir when there is one
    progress: bool = True

    def to_dict(self) -> dict:
        return asdict(self)

    def validate(self, test_splits: tuple[Optional[str], ...] = ("test",)) -> "TrainConfig":
        """Checks that do not need the benchmark; ``test_splits`` are the splits reported as results."""
        if not self.policy or not Path(self.policy).is_dir():
            raise ConfigError(f"policy must be a checkpoint directory, got {self.policy!r}")
        if not self.benchmark:
            raise ConfigError("name a benchmark (benchmark: tau2)")
        if self.split in test_splits and not self.allow_test_split:
            what = "all splits" if self.split is None else f"the {self.split!r} split"
            raise ConfigError(f"refusing to train on {what}: those tasks are the ones evaluation reports, so "
                              "training on them makes the reported score meaningless. Use the train split, or "
                              "pass --allow-test-split if you really mean it")
        if self.num_generations < 2:
            raise ConfigError("num_generations must be at least 2 (GRPO compares episodes within a group)")
        if self.batch_size < 1 or self.batch_size % self.num_generations:
            raise ConfigError(f"batch_size ({self.batch_size}) must be a positive multiple of num_generations "
                              f"({self.num_generations})")
        if min(self.max_turn_tokens, self.max_completion_tokens, self.max_steps, self.concurrency) < 1:
            raise ConfigError("max_turn_tokens, max_completion_tokens, max_steps and concurrency must be >= 1")
        if self.generation not in GENERATION_BACKENDS:
            raise ConfigError(f"generation must be one of {', '.join(GENERATION_BACKENDS)}")
        if self.generation == "vllm_server" and not self.vllm_server_url:
            raise ConfigError("generation: vllm_server needs vllm_server_url (e.g. http://gpu-host:8000)")
        if self.incomplete_scores not in ("drop", "keep"):
            raise ConfigError("incomplete_scores must be 'drop' or 'keep'")
        if self.temperature <= 0:
            raise ConfigError("temperature must be > 0: GRPO needs sampled episodes")
        return self


def _coerce(name: str, value: Any) -> Any:
    kinds = {f.name: f.type for f in fields(TrainConfig)}
    if name not in kinds:
        raise ConfigError(f"unknown training setting {name!r}; known: {', '.join(sorted(kinds))}")
    if "list" in str(kinds[name]) and isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return value


def load_config(path: Optional[str], overrides: dict[str, Any]) -> TrainConfig:
    """The YAML file at ``path`` (if any) with ``overrides`` (None values ignored) applied on top."""
    values: dict[str, Any] = {}
    if path:
        import yaml

        try:
            loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot read training config {path}: {exc}") from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: the training config must be a mapping of settings")
        values.update(loaded)
    values.update({k: v for k, v in overrides.items() if v is not None})
    return TrainConfig(**{k: _coerce(k, v) for k, v in values.items()})
