"""The settings of one ``mua train`` run: TRL's own :class:`GRPOConfig` extended with mua's fields.

:func:`parse_config` reads them with TRL's parser (``TrlParser``): a YAML file (``--config``) whose keys are
any field of :class:`TrainConfig`, overridden by command-line flags (``--max_steps 10`` or ``--max-steps 10``).
Every TRL option therefore works as a key or a flag (learning-rate scheduler, warm-up, weight decay, loggers
through ``report_to: [tensorboard]``...). Unknown keys are an error, so a typo never silently falls back to a
default. See ``training/configs/example.yaml``.

A few mua names stand for TRL fields (they are kept in step): ``batch_size`` is ``per_device_train_batch_size``,
``max_turn_tokens`` is ``max_completion_length`` (tokens per agent reply), ``generation`` sets ``use_vllm`` and
``vllm_mode``, ``vllm_server_url`` is ``vllm_server_base_url``, ``progress: false`` sets ``disable_tqdm``.
"""
from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

from trl import GRPOConfig

from mua.harness.errors import ConfigError
from mua.harness.io.urls import redact_url
from mua.harness.protocol import RunProtocol
from mua.harness.quiet import silence_unactionable
from mua.harness.run.build import ModelSpec
from mua.harness.run.plan import default_user_model, departures, roles_under_protocol, run_protocol, user_spec
from mua.harness.run.selection import read_split_file

from .settings import LoraSettings, coerce_fields, mua_field, parse_settings, settle_device_and_precision, trl_field

GENERATION_BACKENDS = ("transformers", "vllm_colocate", "vllm_server")
SCRIPTED = "scripted"  # the benchmark's scripted (gold) user instead of a user model
CONSTANT_SCHEDULES = ("constant", "constant_with_warmup")
# TRL's GRPO loss formulations (GRPOConfig.loss_type; its default, "dapo", is mua's): checked here, since TRL itself
# refuses another value only when it first computes a loss, after a step's rollouts
LOSS_TYPES = ("grpo", "dr_grpo", "dapo", "bnpo", "cispo", "sapo", "luspo", "vespo")


def _trl(name: str, default: Any) -> Any:
    return trl_field(GRPOConfig, name, default)


_help = mua_field


@dataclass
class TrainConfig(GRPOConfig, LoraSettings):
    policy: str = _help("checkpoint directory of the policy (weights, tokenizer with a chat template)", "")
    benchmark: str = _help("benchmark name (e.g. tau2)", "")
    subsets: list[str] = _help("subsets (default: all); a comma-separated string is accepted", factory=list)
    split: Optional[str] = _help("task split; only the benchmark's train split passes without split_file or "
                                 "allow_test_split (BFCL and ACEBench have none)", "train")
    split_file: Optional[str] = _help("JSON/YAML file of your own 'train' and 'held_out' task ids; training plays "
                                      "only the train ids (report the held-out ones)")
    allow_test_split: bool = _help("train on tasks evaluation reports anyway (recorded in train_config.json)",
                                   False)
    task_ids: list[str] = _help("task ids (default: all of the split)", factory=list)
    limit: Optional[int] = _help("at most this many tasks per subset")
    data_dir: Optional[str] = _help("benchmark data directory (default: $MUA_DATA_DIR, ../shared/data, ...)")

    chat_template: Optional[str] = _help("hermes, llama3_json or a Jinja template file replacing the policy's own "
                                         "chat template (one that drops tool use is refused at load)")
    user_model: Optional[str] = _help("the user simulator: an endpoint model name or a checkpoint dir (required "
                                      "where the benchmark plays an LLM user, e.g. tau2, unless it names its own: "
                                      "a pack's pack.json user_model)")
    allow_scripted_user: bool = _help("tests and smoke runs only: the scripted user where a user model is needed "
                                      "(its rewards carry no training signal)", False)
    user_base_url: Optional[str] = _help("OpenAI-compatible base URL of the user model")
    user_params: Union[dict, str, None] = _help("user model request parameters on top of the benchmark's run "
                                                "protocol, as `mua eval --user-params` (a mapping, or JSON); a "
                                                "departure from the protocol needs allow_protocol_departure",
                                                factory=dict)
    judge_model: Optional[str] = _help("LLM judge for tau2 NL assertions (without one they are skipped)")
    judge_base_url: Optional[str] = _help("OpenAI-compatible base URL of the judge model")
    judge_params: Union[dict, str, None] = _help("judge model request parameters on top of the benchmark's run "
                                                 "protocol (a mapping, or JSON)", factory=dict)
    allow_protocol_departure: bool = _help("train against a user or judge decoding other than the benchmark's run "
                                           "protocol, which `mua eval` scores with (recorded in train_config.json)",
                                           False)
    incomplete_scores: str = _help("'drop': no reward when the score skipped components; 'keep': partial", "drop")

    batch_size: Optional[int] = _help("episodes per device per step (= per_device_train_batch_size; a multiple "
                                      "of num_generations)")
    max_turn_tokens: Optional[int] = _help("generated tokens per agent reply (= max_completion_length)")
    max_completion_tokens: int = _help("episode tokens after the first prompt (replies, tool results, user "
                                       "turns); an episode that runs out is truncated", 2048)
    max_turns: Optional[int] = _help("user turns per episode (default: the benchmark's limits); reaching it "
                                     "truncates the episode")
    truncated_reward: float = _help("reward of a truncated episode", 0.0)
    mask_truncated: bool = _help("no loss on episodes stopped by a budget or ending in a cut reply", False)

    generation: str = _help("transformers, vllm_colocate or vllm_server", "transformers")
    vllm_server_url: Optional[str] = _help("vLLM server base URL (= vllm_server_base_url)")
    vllm_server_model: Optional[str] = _help("model name the vLLM server serves the policy under (default: its "
                                             "only model)")
    concurrency: int = _help("episodes in flight per rank", 16)
    samples_per_step: int = _help("trajectories written to OUTPUT_DIR/samples per step", 4)
    dynamic_sampling: int = _help("DAPO's dynamic sampling: a group whose episodes all scored the same (no gradient) "
                                  "is replaced by a group of a train task not in the batch that has a reward spread, "
                                  "trying up to this many rounds per step (each plays one group per group still "
                                  "without a spread); 0: off", 0)
    tree_rollouts: int = _help("tree rollouts (TRACE): a group whose episodes all scored the same is replaced by a "
                               "group that replays the first half of an episode of a group with mixed outcomes and "
                               "samples the rest (the shared prefix trained once), trying up to this many rounds per "
                               "step; 0: off", 0)
    turn_credit: bool = _help("step-level credit (StepPO): each agent turn's tokens get their own advantage, the "
                              "outcome's group advantage discounted back from the last turn by turn_discount plus "
                              "info_gain_weight times the group-normalized return of the turn rewards", False)
    turn_discount: float = _help("turn_credit's discount per agent turn, in (0, 1]; 1 with info_gain_weight 0 is "
                                 "GRPO's advantage on every turn", 1.0)
    info_gain_weight: float = _help("InfoPO's information-gain turn reward, fused with the outcome at this weight "
                                    "(needs turn_credit): how much the user's reply raises the log-prob of the "
                                    "policy's next turn against the same context with the reply withheld; 0: off",
                                    0.0)
    eval_steps: Optional[float] = _help("every N steps, score the policy on the held-out tasks through `mua "
                                        "eval`'s runner (OUTPUT_DIR/evals/step-N; eval/* rows in metrics.jsonl, "
                                        "plotted in the curves); TRL's eval_strategy 'steps' (default: never)")
    eval_split: Optional[str] = _help("the split eval_steps scores (default: 'validation' where the benchmark has "
                                      "one, else the held-out tasks the printed `mua eval` command scores)")
    eval_limit: Optional[int] = _help("at most this many tasks per subset in each eval_steps evaluation")
    resume: bool = _help("continue from the newest checkpoint in output_dir (--no-resume: start a new run; "
                         "refused when output_dir is not empty)", True)
    progress: bool = _help("progress bar (--no-progress: none)", True)
    stop_after_flat_steps: int = _help("stop (checkpoint and final model saved) after this many steps in a row "
                                       "where every group scored the same: no reward spread, nothing learned; "
                                       "0: never", 10)

    # TRL's fields with mua's defaults
    output_dir: Optional[str] = _trl("output_dir", "runs/train")
    num_generations: Optional[int] = _trl("num_generations", 4)
    per_device_train_batch_size: int = _trl("per_device_train_batch_size", 8)
    max_completion_length: Optional[int] = _trl("max_completion_length", 256)
    max_steps: int = _trl("max_steps", 100)
    seed: int = _trl("seed", 0)
    bf16: Optional[bool] = _trl("bf16", None)  # TRL's default on a GPU; off on the CPU (settle_device_and_precision)
    save_steps: float = _trl("save_steps", 50)
    save_total_limit: Optional[int] = _trl("save_total_limit", 3)
    logging_steps: float = _trl("logging_steps", 1)
    disable_dropout: bool = _trl("disable_dropout", True)

    def __post_init__(self):
        coerce_fields(self, GRPOConfig)
        if self.split == "":  # how a flag names no split: all tasks (--split "")
            self.split = None
        if self.batch_size is not None:
            self.per_device_train_batch_size = self.batch_size
        if self.max_turn_tokens is not None:
            self.max_completion_length = self.max_turn_tokens
        self._check_values()
        if self.generation != "transformers":
            self.use_vllm = True
            self.vllm_mode = "colocate" if self.generation == "vllm_colocate" else "server"
        if self.vllm_server_url:
            self.vllm_server_base_url = self.vllm_server_url
        if not self.progress:
            self.disable_tqdm = True
        settle_device_and_precision(self)
        try:
            with warnings.catch_warnings():  # transformers' notices about its own defaults (harness/quiet.py)
                silence_unactionable()
                super().__post_init__()
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"TRL refused the training settings: {exc}") from None
        self.batch_size, self.max_turn_tokens = self.per_device_train_batch_size, self.max_completion_length

    def _check_values(self) -> None:
        self._check_batch()
        self._check_counts()
        if self.generation not in GENERATION_BACKENDS:
            raise ConfigError(f"generation must be one of {', '.join(GENERATION_BACKENDS)}")
        if self.generation == "vllm_server" and not self.vllm_server_url:
            raise ConfigError("generation: vllm_server needs vllm_server_url (e.g. http://gpu-host:8000)")
        if self.incomplete_scores not in ("drop", "keep"):
            raise ConfigError("incomplete_scores must be 'drop' or 'keep'")
        self._check_credit()
        if self.loss_type not in LOSS_TYPES:
            raise ConfigError(f"loss_type must be one of {', '.join(LOSS_TYPES)}; got {self.loss_type!r}")
        self._check_sampling()

    def _check_batch(self) -> None:
        if self.max_completion_length is None:
            raise ConfigError("max_turn_tokens (max_completion_length) must be set")
        if self.num_generations is None or self.num_generations < 2:
            raise ConfigError("num_generations must be at least 2 (GRPO compares episodes within a group)")
        batch = self.per_device_train_batch_size
        if batch < 1 or batch % self.num_generations:
            raise ConfigError(f"batch_size ({batch}) must be a positive multiple of num_generations "
                              f"({self.num_generations})")

    def _check_counts(self) -> None:
        at_least_one = ("max_turn_tokens", "max_completion_tokens", "max_steps", "concurrency", "limit", "max_turns",
                        "eval_steps", "eval_limit",
                        "gradient_accumulation_steps", "save_steps", "logging_steps", "save_total_limit",
                        "max_completion_length")
        for name in at_least_one:
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("samples_per_step", "stop_after_flat_steps", "dynamic_sampling", "tree_rollouts"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.eval_steps is not None and self.eval_steps != int(self.eval_steps):
            raise ConfigError(f"eval_steps must be a whole number of steps, got {self.eval_steps}")
        if str(self.eval_strategy) not in ("no", "IntervalStrategy.NO"):
            raise ConfigError("eval_strategy: mua evaluates with eval_steps (the held-out tasks through `mua eval`'s "
                              "runner); set eval_steps: N and leave eval_strategy unset")

    def _check_credit(self) -> None:
        if not 0 < self.turn_discount <= 1:
            raise ConfigError(f"turn_discount must be in (0, 1], got {self.turn_discount}")
        if self.info_gain_weight < 0:
            raise ConfigError(f"info_gain_weight must be >= 0, got {self.info_gain_weight}")
        if self.info_gain_weight and not self.turn_credit:
            raise ConfigError("info_gain_weight needs turn_credit: true (--turn_credit true): the information gain "
                              "is a per-turn reward")
        if self.info_gain_weight and self.generation != "transformers":
            raise ConfigError("info_gain_weight scores each turn with the trainer's own model: it needs "
                              "generation: transformers")

    def _check_sampling(self) -> None:
        if self.temperature <= 0:
            raise ConfigError("temperature must be > 0: GRPO needs sampled episodes")
        if not 0 < self.top_p <= 1:
            raise ConfigError("top_p must be in (0, 1]")
        if self.learning_rate <= 0 or self.beta < 0:
            raise ConfigError("learning_rate must be > 0 and beta >= 0")

    @property
    def out(self) -> Path:
        """``output_dir`` as a path (it always has a value: mua's default is runs/train)."""
        return Path(self.output_dir or "runs/train")

    @property
    def turn_tokens(self) -> int:
        """Generated tokens per agent reply (``max_turn_tokens``, TRL's ``max_completion_length``)."""
        return int(self.max_completion_length or 0)

    def settings(self) -> dict:
        """Every setting as JSON values (what train_config.json records)."""
        settings = json.loads(json.dumps(self.to_dict(), default=str))
        for key in ("user_base_url", "judge_base_url", "vllm_server_url", "vllm_server_base_url"):
            if isinstance(settings.get(key), str):
                settings[key] = redact_url(settings[key])  # a password in a URL is not recorded
        return settings

    def validate(self) -> "TrainConfig":
        """Checks that need the file system or the machine (the values were checked when the config was made)."""
        check_checkpoint_dir(self.policy)
        if not self.benchmark:
            raise ConfigError("name a benchmark (benchmark: tau2)")
        from mua.harness.models.tokenizer import keeps_own_pipeline

        if self.generation != "transformers" and keeps_own_pipeline(self.policy):  # vLLM loads it its own way
            raise ConfigError(f"policy {self.policy}: its tokenizer (the tiny model's digit-place tokens) loads only "
                              "as written, so it trains with generation: transformers only")
        from .backends import check_generation_available

        check_generation_available(self.generation)
        return self

    def validate_for(self, bench: Any) -> "TrainConfig":
        """:meth:`validate` plus the checks that need the benchmark (split protocol, subsets, user model)."""
        self.validate()
        check_split(self, bench)
        for subset in self.subsets:
            if subset not in bench.subsets:
                raise ConfigError(f"{bench.name} has no subset {subset!r}; choose from {', '.join(bench.subsets)}")
        check_user_model(self, bench)
        protocol_specs(self, bench)
        return self



def model_params(value: Union[dict, str, None]) -> dict:
    """A user or judge model's parameters (checked to be a mapping when the config was made)."""
    return dict(value) if isinstance(value, dict) else {}


def parse_config(argv: list[str]) -> TrainConfig:
    """``mua train``'s arguments (``--config FILE`` and flags) as a :class:`TrainConfig`; bad keys, flags and
    values are a ConfigError naming them."""
    return parse_settings(TrainConfig, GRPOConfig, argv, "mua train", DESCRIPTION)


DESCRIPTION = (
    "Trains POLICY with GRPO (TRL) on the train split: each task is played num_generations times by run_episode "
    "with the user simulator in the loop, and the benchmark's reward drives the update. Settings come from "
    "--config (YAML; keys as in training/configs/example.yaml: mua's and every TRL GRPOConfig field) and the "
    "flags below, which override it. Re-running the same command resumes from the newest complete checkpoint "
    "in --output-dir (with the same settings); Ctrl-C (or SIGTERM) stops at the next episode boundary, saves "
    "the last finished step and exits. Score the result with `mua eval --agent-model OUTPUT_DIR`.")


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
    if cfg.user_model is None and default_user_model(bench, needing):
        return  # the benchmark's own user model (plan.user_spec)
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


PLAYED_SETTINGS = ("subsets", "user_model", "user_base_url", "user_params", "judge_model", "judge_base_url",
                   "judge_params", "allow_protocol_departure")  # what protocol_specs resolves from


def protocol_specs(cfg: TrainConfig, bench: Any) -> tuple[Optional[ModelSpec], Optional[ModelSpec], list[str]]:
    """The user and judge models as `mua eval` runs them (the run plan of harness/run/plan.py: the user model named,
    else the benchmark's own; the benchmark's protocol under the given params) and the overrides. A departure
    from the protocol's request params is refused unless ``allow_protocol_departure``: a policy must be trained
    against the simulator it is scored with. Another user model than the benchmark's own is recorded, not
    refused: the printed eval command names it (hint.py), as it names any user model.

    Resolved once per run: validation, the endpoint check, the rollout's user and judge, train_config.json and
    every periodic evaluation read the plan kept on ``cfg`` (resolved again only if the benchmark or one of
    ``PLAYED_SETTINGS`` changed since)."""
    user, judge, overrides = _kept_plan(cfg, bench)[1]
    return user, judge, list(overrides)


def declared_protocol(cfg: TrainConfig, bench: Any) -> RunProtocol:
    """The benchmark's declared protocol as this run resolved it with its user and judge (:func:`protocol_specs`):
    train_config.json's record reads it rather than declaring it again."""
    return _kept_plan(cfg, bench)[2]


def _kept_plan(cfg: TrainConfig, bench: Any) -> tuple[str, tuple[Optional[ModelSpec], Optional[ModelSpec], list[str]],
                                                      RunProtocol]:
    key = json.dumps([bench.name, str(bench.data_dir), *(getattr(cfg, k) for k in PLAYED_SETTINGS)], default=str)
    kept = cfg.__dict__.get("_played")
    if kept is None or kept[0] != key:
        declared = bench.declared_protocol()
        kept = (key, _resolve_specs(cfg, bench, declared), declared)
        cfg.__dict__["_played"] = kept  # not a dataclass field: never in settings() or train_config.json
    return kept


def _resolve_specs(cfg: TrainConfig, bench: Any, declared: RunProtocol
                   ) -> tuple[Optional[ModelSpec], Optional[ModelSpec], list[str]]:
    subsets = cfg.subsets or list(bench.subsets)
    official = run_protocol(bench, subsets, declared)
    named = None if cfg.user_model in (None, SCRIPTED) else ModelSpec(cfg.user_model, cfg.user_base_url,
                                                                      model_params(cfg.user_params))
    user, chosen = (None, []) if cfg.user_model == SCRIPTED else user_spec(bench, subsets, named)
    judge = ModelSpec(cfg.judge_model, cfg.judge_base_url, model_params(cfg.judge_params)) if cfg.judge_model \
        else None
    specs, changed = roles_under_protocol(official, {"user": user, "judge": judge})  # as mua eval runs them
    user, judge = specs["user"], specs["judge"]
    overrides = chosen + changed
    departed = departures(changed)
    if departed and not cfg.allow_protocol_departure:
        said = "; ".join(f"{o} {_shown(o, user, judge)} (official {_official(o, official)})" for o in departed)
        raise ConfigError(f"{said}: this departs from {bench.name}'s run protocol, which `mua eval` scores with, so "
                          "the policy would train against another simulator than the one that scores it. Drop "
                          "the setting, or set allow_protocol_departure: true (--allow-protocol-departure; recorded "
                          "in train_config.json)")
    return user, judge, overrides


def _shown(override: str, user: Optional[ModelSpec], judge: Optional[ModelSpec]) -> str:
    role, key = override.split(".", 1)
    spec = user if role == "user" else judge
    return json.dumps(spec.params.get(key) if spec else None)


def _official(override: str, official: Any) -> str:
    role, key = override.split(".", 1)
    params = official.role(role).params
    return json.dumps(params[key]) if key in params else "unset"


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
