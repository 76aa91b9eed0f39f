"""Builds and runs TRL's GRPOTrainer for a :class:`TrainConfig`: tasks as the prompt column, episodes played
by ``run_episode`` inside the rollout function, the benchmark's reward as the only reward function."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

from mua.harness.errors import ConfigError, MuaError
from mua.harness.interfaces import Benchmark, User
from mua.harness.models.local import stop_ids_for
from mua.harness.models.parsers import get_parser, parser_for_template
from mua.harness.types import Task

from .backends import TransformersBackend, VllmColocateBackend, VllmServerBackend
from .config import SCRIPTED, TrainConfig, check_checkpoint_dir, check_user_model
from .policy import Budget, Sampling, StreamPolicy
from .progress import StepLog
from .resume import checkpoint_step, checkpoint_to_resume, record_config, rewind_logs
from .rollout import EpisodePlayer, RolloutFunc, RolloutSettings, episode_reward, task_key
from .stopping import SaveOnInterrupt
from mua.harness.models.stream import TemplateSuffixer, stop_text_of


class TrainingInterrupted(MuaError):
    """Ctrl-C stopped the run after saving a checkpoint; the message says how to resume."""


def load_training_tasks(bench: Benchmark, cfg: TrainConfig, data_dir: Path) -> list[Task]:
    """The tasks of the chosen subsets and split, narrowed to ``task_ids`` (each must exist in one of the
    subsets) and to ``limit`` per subset."""
    subsets = cfg.subsets or list(bench.subsets)
    tasks: list[Task] = []
    found: set[str] = set()
    for subset in subsets:
        if subset not in bench.subsets:
            raise ConfigError(f"{bench.name} has no subset {subset!r}; choose from {', '.join(bench.subsets)}")
        chosen = bench.load_tasks(data_dir, subset, split=cfg.split)
        if cfg.task_ids:
            chosen = [t for t in chosen if t.id in set(cfg.task_ids)]
            found.update(t.id for t in chosen)
        tasks += chosen[:cfg.limit] if cfg.limit is not None else chosen
    unknown = [t for t in cfg.task_ids if t not in found]
    if unknown:
        raise ConfigError(f"task_ids not found in {bench.name} {'/'.join(subsets)} (split {cfg.split or 'all'}): "
                          f"{', '.join(unknown[:10])}")
    if not tasks:
        raise ConfigError(f"no {bench.name} tasks match the subsets/split/task ids given")
    return tasks


class UserFactory:
    """Each episode's user: the benchmark's simulator played by ``model`` where the subset needs a user
    model, else its scripted user. ``model`` is None where the scripted user was allowed everywhere."""

    def __init__(self, bench: Benchmark, model: Any = None):
        self.bench, self.model = bench, model

    def __call__(self, task: Task, seed: int) -> User:
        if self.model is None or not self.bench.needs_user_model(task.subset):
            return self.bench.gold_user(task)
        return self.bench.simulated_user(task, self.model, seed=seed)


def user_factory(bench: Benchmark, cfg: TrainConfig) -> UserFactory:
    check_user_model(cfg, bench)
    if cfg.user_model in (None, SCRIPTED):
        return UserFactory(bench)
    from mua.harness.models import make_chat_model

    return UserFactory(bench, make_chat_model(cfg.user_model, base_url=cfg.user_base_url, **dict(cfg.user_params)))


def judge_model(cfg: TrainConfig):
    if not cfg.judge_model:
        return None
    from mua.harness.models import make_chat_model

    return make_chat_model(cfg.judge_model, base_url=cfg.judge_base_url, **dict(cfg.judge_params))


def policy_factory(tokenizer, stop_ids: set[int], cfg: TrainConfig, backend_ref: Callable[[], Any],
                   max_context: Optional[int]) -> Callable[[int], StreamPolicy]:
    suffixer = TemplateSuffixer(tokenizer, stop_text_of(tokenizer, stop_ids))
    parse = get_parser(parser_for_template(tokenizer.chat_template))
    budget = Budget(cfg.max_turn_tokens, cfg.max_completion_tokens)
    sampling = Sampling(cfg.temperature, cfg.top_p)
    return lambda seed: StreamPolicy(backend_ref(), tokenizer, suffixer, stop_ids, parse, budget, sampling,
                                     seed, max_context=max_context)


def backend_factory(cfg: TrainConfig, stop_ids: set[int], pad_id: int) -> Callable[[Any], Any]:
    def build(trainer):
        if cfg.generation == "vllm_colocate":
            return VllmColocateBackend(trainer.vllm_generation.llm, stop_ids)
        if cfg.generation == "vllm_server":
            return VllmServerBackend(cfg.vllm_server_url, cfg.vllm_server_model, stop_ids)
        from trl.models import unwrap_model_for_generation

        def model_context():
            return unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator)

        return TransformersBackend(model_context, stop_ids, pad_id, trainer.accelerator.device,
                                   max_batch=cfg.concurrency)
    return build


def grpo_args(cfg: TrainConfig, **extra):
    import torch
    from trl import GRPOConfig

    vllm = {}
    if cfg.generation != "transformers" and not torch.cuda.is_available():
        raise ConfigError(f"generation: {cfg.generation} needs vLLM on a CUDA GPU; use generation: transformers")
    if cfg.generation != "transformers":
        vllm = {"use_vllm": True, "vllm_mode": "colocate" if cfg.generation == "vllm_colocate" else "server"}
        if cfg.generation == "vllm_server":
            vllm["vllm_server_base_url"] = cfg.vllm_server_url
    try:
        return GRPOConfig(
            output_dir=cfg.output_dir, num_generations=cfg.num_generations, per_device_train_batch_size=cfg.batch_size,
            gradient_accumulation_steps=cfg.gradient_accumulation_steps, max_steps=cfg.max_steps,
            learning_rate=cfg.learning_rate, beta=cfg.beta, loss_type=cfg.loss_type, temperature=cfg.temperature,
            top_p=cfg.top_p, max_completion_length=cfg.max_turn_tokens,
            seed=cfg.seed, bf16=cfg.bf16, use_cpu=not torch.cuda.is_available(), save_steps=cfg.save_steps,
            save_total_limit=cfg.save_total_limit, logging_steps=cfg.logging_steps, report_to="none",
            disable_tqdm=not cfg.progress, disable_dropout=True, **vllm, **extra)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"TRL refused the training settings: {exc}") from None


def build_trainer(cfg: TrainConfig, bench: Benchmark, tasks: list[Task], trainer_cls=None,
                  make_user: Optional[Callable[[Task, int], User]] = None, **grpo_extra):
    """The GRPOTrainer and its rollout function (exposed for tests and scripts); ``make_user`` replaces the
    user the config names."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOTrainer

    check_checkpoint_dir(cfg.policy)
    try:
        tokenizer = AutoTokenizer.from_pretrained(cfg.policy)
    except Exception as exc:  # transformers raises many kinds here (OSError, ValueError, KeyError, ...)
        raise ConfigError(f"policy {cfg.policy}: cannot load its tokenizer: {type(exc).__name__}: {exc}") from None
    if not getattr(tokenizer, "chat_template", None):
        raise ConfigError(f"{cfg.policy}: the tokenizer has no chat template")
    try:
        model = AutoModelForCausalLM.from_pretrained(cfg.policy, dtype="auto")
    except Exception as exc:
        raise ConfigError(f"policy {cfg.policy}: cannot load the model: {type(exc).__name__}: {exc}") from None
    stop_ids = stop_ids_for(tokenizer, model.generation_config)
    if not stop_ids:
        raise ConfigError(f"{cfg.policy}: neither the tokenizer nor generation_config names an EOS token")
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(stop_ids)
    rollout: Optional[RolloutFunc] = None
    make_policy = policy_factory(tokenizer, stop_ids, cfg, lambda: rollout.backend,
                                 getattr(model.config, "max_position_embeddings", None))
    settings = RolloutSettings(seed=cfg.seed, concurrency=cfg.concurrency, truncated_reward=cfg.truncated_reward,
                               mask_truncated=cfg.mask_truncated, incomplete_scores=cfg.incomplete_scores,
                               max_turns=cfg.max_turns)
    player = EpisodePlayer(bench, tasks, make_policy, make_user or user_factory(bench, cfg), settings,
                           filler_id=pad_id, judge=judge_model(cfg))
    rollout = RolloutFunc(player, backend_factory(cfg, stop_ids, pad_id), cfg.samples_per_step)
    dataset = Dataset.from_dict({"prompt": [task_key(t) for t in tasks]})
    trainer = (trainer_cls or GRPOTrainer)(
        model=model, processing_class=tokenizer, reward_funcs=[episode_reward], args=grpo_args(cfg, **grpo_extra),
        train_dataset=dataset, rollout_func=rollout, callbacks=[StepLog(Path(cfg.output_dir), cfg.progress)])
    return trainer, rollout


def train(cfg: TrainConfig, bench: Benchmark, data_dir: Path, trainer_cls=None) -> Path:
    """Run GRPO; returns the output directory, a normal checkpoint (weights, tokenizer, chat template).

    Nothing in ``output_dir`` changes until the settings, tasks, policy and trainer are all loaded. Resuming
    continues the run recorded there (see :mod:`.resume`); Ctrl-C saves a checkpoint at the end of the
    current step and raises :class:`TrainingInterrupted`."""
    cfg.validate_for(bench)
    out = Path(cfg.output_dir)
    resume = checkpoint_to_resume(cfg)
    tasks = load_training_tasks(bench, cfg, data_dir)
    stop = SaveOnInterrupt()
    trainer, rollout = build_trainer(cfg, bench, tasks, trainer_cls=trainer_cls)
    trainer.add_callback(stop)
    rewind_logs(out, checkpoint_step(resume))
    record_config(cfg)
    try:
        with stop:
            trainer.train(resume_from_checkpoint=resume)
    finally:
        rollout.close()
    if stop.stopped_at is not None and stop.stopped_at < trainer.state.max_steps:
        raise TrainingInterrupted(f"interrupted: checkpoint-{stop.stopped_at} saved in {out}; re-run the same "
                                  "command to resume from it")
    trainer.save_model(str(out))  # model, tokenizer and chat template: `mua eval --agent-model OUT` loads it
    return out
