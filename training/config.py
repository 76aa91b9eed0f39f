"""The settings of one ``mua train`` run: read from a YAML file, overridden by command-line flags.

Every key is a field of :class:`TrainConfig` (unknown keys are an error, so a typo never silently falls
back to a default). See ``training/configs/example.yaml``.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Optional, Union, get_args, get_origin, get_type_hints

from mua.harness.errors import ConfigError
from mua.harness.selection import read_split_file

GENERATION_BACKENDS = ("transformers", "vllm_colocate", "vllm_server")
SCRIPTED = "scripted"  # the benchmark's scripted (gold) user instead of a user model


@dataclass
class TrainConfig:
    policy: str = ""  # checkpoint directory of the policy to train
    output_dir: str = "runs/train"
    benchmark: str = ""
    subsets: list[str] = field(default_factory=list)  # empty: all subsets of the benchmark
    split: Optional[str] = "train"  # must be one of the benchmark's train splits (see split_protocol)
    # BFCL and ACEBench have no train split: name your own division (a JSON/YAML file of "train" and
    # "held_out" task ids; only train ids are played, report only held-out ones) ...
    split_file: Optional[str] = None
    allow_test_split: bool = False  # ... or force training on reported tasks (recorded in train_config.json)
    task_ids: list[str] = field(default_factory=list)
    limit: Optional[int] = None  # at most this many tasks per subset
    data_dir: Optional[str] = None

    # The user simulator's model (an endpoint model name or a local checkpoint directory): required for
    # subsets the benchmark plays with an LLM user (tau2). "scripted" there needs allow_scripted_user.
    user_model: Optional[str] = None
    allow_scripted_user: bool = False  # tests and smoke runs only: the scripted user's rewards are meaningless
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
    max_turns: Optional[int] = None  # user turns per episode (the runner ends the episode: max_turns)
    truncated_reward: float = 0.0
    mask_truncated: bool = False  # no loss on episodes stopped by the budget or ending in a cut reply

    generation: str = "transformers"
    vllm_server_url: Optional[str] = None
    vllm_server_model: Optional[str] = None  # the served model name; None: the server's only model
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

    def validate(self) -> "TrainConfig":
        """Checks that do not need the benchmark."""
        for f in fields(self):  # settings built in code get the same type checks as a config file's
            setattr(self, f.name, _coerce(f.name, getattr(self, f.name)))
        check_checkpoint_dir(self.policy)
        if not self.benchmark:
            raise ConfigError("name a benchmark (benchmark: tau2)")
        if self.num_generations < 2:
            raise ConfigError("num_generations must be at least 2 (GRPO compares episodes within a group)")
        if self.batch_size < 1 or self.batch_size % self.num_generations:
            raise ConfigError(f"batch_size ({self.batch_size}) must be a positive multiple of num_generations "
                              f"({self.num_generations})")
        at_least_one = ("max_turn_tokens", "max_completion_tokens", "max_steps", "concurrency", "limit", "max_turns",
                        "gradient_accumulation_steps", "save_steps", "logging_steps", "save_total_limit")
        for name in at_least_one:
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.samples_per_step < 0:
            raise ConfigError("samples_per_step must be >= 0")
        if self.generation not in GENERATION_BACKENDS:
            raise ConfigError(f"generation must be one of {', '.join(GENERATION_BACKENDS)}")
        if self.generation == "vllm_server" and not self.vllm_server_url:
            raise ConfigError("generation: vllm_server needs vllm_server_url (e.g. http://gpu-host:8000)")
        if self.incomplete_scores not in ("drop", "keep"):
            raise ConfigError("incomplete_scores must be 'drop' or 'keep'")
        if self.temperature <= 0:
            raise ConfigError("temperature must be > 0: GRPO needs sampled episodes")
        if not 0 < self.top_p <= 1:
            raise ConfigError("top_p must be in (0, 1]")
        if self.learning_rate <= 0 or self.beta < 0:
            raise ConfigError("learning_rate must be > 0 and beta >= 0")
        return self

    def validate_for(self, bench: Any) -> "TrainConfig":
        """:meth:`validate` plus the checks that need the benchmark (split protocol, subsets, user model)."""
        self.validate()
        check_split(self, bench)
        for subset in self.subsets:
            if subset not in bench.subsets:
                raise ConfigError(f"{bench.name} has no subset {subset!r}; choose from {', '.join(bench.subsets)}")
        check_user_model(self, bench)
        return self


def check_split(cfg: TrainConfig, bench: Any) -> None:
    """The split protocol: only the benchmark's own train splits pass. Any other split (including all tasks,
    the default release, or a name the benchmark reads as one) holds the tasks evaluation reports, so it needs
    a split file (the run trains on its "train" ids; report only its "held_out" ids) or allow_test_split."""
    if cfg.split_file:
        read_split_file(cfg.split_file)  # fails now, naming the file, rather than after the model loads
        return
    if cfg.split in bench.train_splits or cfg.allow_test_split:
        return
    what = "all tasks" if cfg.split in (None, "") else f"split {cfg.split!r}"
    own = (f"its train split{'s' if len(bench.train_splits) > 1 else ''}: {', '.join(bench.train_splits)}"
           if bench.train_splits else "it has no train split")
    raise ConfigError(f"refusing to train on {bench.name} {what}: only a train split passes ({own}); other tasks "
                      "are the ones evaluation reports, so training on them makes the reported score "
                      "meaningless. Name your own division with split_file (--split-file: JSON/YAML with 'train' "
                      "and 'held_out' task ids; report only the held-out ones), or pass --allow-test-split "
                      "(recorded in train_config.json) if you really mean it")


def check_user_model(cfg: TrainConfig, bench: Any) -> None:
    """Subsets the benchmark plays with an LLM user simulator need ``user_model``: their scripted (gold) user
    replays the reference conversation whatever the policy says, so its rewards carry no training signal
    (on tau2 telecom it even performs the fixes itself, so an untrained policy passes; on retail it stops
    after its opening message, so every reward is 0)."""
    needing = [s for s in cfg.subsets or list(bench.subsets) if bench.needs_user_model(s)]
    if not needing or (cfg.user_model not in (None, SCRIPTED)) or cfg.allow_scripted_user:
        return
    where = f"{bench.name} {'/'.join(needing)}"
    why = (f"{where} is played with an LLM user simulator; the scripted user replays the reference "
           "conversation whatever the policy does (tau2 telecom: it performs the fixes itself, so an untrained "
           "policy passes; retail/airline: it stops after its opening, so every reward is 0), so its rewards "
           "carry no training signal")
    if cfg.user_model is None:
        raise ConfigError(f"{where} needs a user model: set user_model (an endpoint model name with "
                          f"user_base_url, or a local checkpoint directory). {why}")
    raise ConfigError(f"user_model: scripted refused: {why}. For tests and smoke runs only, set "
                      "allow_scripted_user: true (--allow-scripted-user)")


TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json")


def check_checkpoint_dir(policy: str) -> None:
    """``policy`` must be a checkpoint directory: a model config and tokenizer files."""
    path = Path(policy) if policy else None
    if path is None or not path.is_dir():
        raise ConfigError(f"policy must be a checkpoint directory, got {policy!r}")
    if not (path / "config.json").is_file():
        raise ConfigError(f"policy {policy} is not a model checkpoint: no config.json in it")
    if not any((path / name).is_file() for name in TOKENIZER_FILES):
        raise ConfigError(f"policy {policy} has no tokenizer files (one of {', '.join(TOKENIZER_FILES)}); save "
                          "the tokenizer beside the weights (tokenizer.save_pretrained)")


def _hints() -> dict[str, Any]:
    return get_type_hints(TrainConfig)


def _kind_name(kind: Any) -> str:
    if get_origin(kind) is list:
        return "a list of strings (or one comma-separated string)"
    return {bool: "true or false", int: "an integer", float: "a number", str: "a string",
            dict: "a mapping"}.get(kind, str(kind))


def _coerce(name: str, value: Any) -> Any:
    """``value`` checked against the type of setting ``name`` (ConfigError naming the key otherwise). Numeric
    strings are accepted for numbers given as floats (PyYAML reads ``1e-6`` as a string), integer task ids as
    their text; lists may be given as one comma-separated string (as flags give them)."""
    hints = _hints()
    if name not in hints:
        raise ConfigError(f"unknown training setting {name!r}; known: {', '.join(sorted(hints))}")
    kind, optional = hints[name], False
    if get_origin(kind) is Union:
        optional, kind = True, next(a for a in get_args(kind) if a is not type(None))
    if value is None:
        if optional:
            return None
        raise ConfigError(f"{name} must be {_kind_name(kind)}, not null")
    bad = ConfigError(f"{name} must be {_kind_name(kind)}{', or null' if optional else ''}; got {value!r}")
    if kind is float and isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise bad from None
    if kind is bool:
        ok = isinstance(value, bool)
    elif kind in (int, float):
        ok = isinstance(value, (int, float) if kind is float else int) and not isinstance(value, bool)
        if ok and kind is float:
            value = float(value)
            if not math.isfinite(value):
                raise bad
    elif kind is str:
        ok = isinstance(value, str)
    elif get_origin(kind) is list:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if name == "task_ids" and isinstance(value, list):  # ids written as YAML integers: 105 means "105"
            value = [str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value]
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
    else:  # dict: model parameters
        ok = isinstance(value, dict) and all(isinstance(k, str) for k in value)
    if not ok:
        raise bad
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
