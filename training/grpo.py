"""Builds and runs TRL's GRPOTrainer for a :class:`TrainConfig`: tasks as the prompt column, episodes played
by ``run_episode`` inside the rollout function, the benchmark's reward as the only reward function."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, Optional

from mua.harness.errors import ConfigError, MuaError
from mua.harness.interfaces import Benchmark, ChatModel, User
from mua.harness.models.local import stop_ids_for
from mua.harness.models.parsers import get_parser, parser_for_template
from mua.harness.models.stream import TemplateSuffixer, stop_text_of
from mua.harness.models.templates import prepare_tokenizer
from mua.harness.models.tokenizer import load_tokenizer
from mua.harness.run.build import ModelSpec, make_user, open_model
from mua.harness.run.plan import protocol_record, role_record
from mua.harness.run.selection import read_split_file, select_tasks
from mua.harness.types import Task

from .backends import TransformersBackend, VllmColocateBackend, VllmServerBackend, reload_weights_on_cpu
from .budgets import check_gold_budgets
from .checkpoints import atomic, clear_staging, save_final_model
from .compat import save_checkpoint
from .config import TrainConfig, check_checkpoint_dir, check_user_model, declared_protocol, protocol_specs
from .credit import WITHHELD_REPLY, turn_credit_trainer
from .evaluation import EVALS_DIR, PeriodicEval, check_eval_plan
from .lm_head import score_labelled_positions_only
from .policy import Budget, Sampling, StreamPolicy
from .progress import StepLog
from .resume import check_same_episodes, checkpoint_step, checkpoint_to_resume, record_config, rewind_logs
from .rollout import EpisodePlayer, RolloutFunc, RolloutSettings, episode_reward, task_key
from .stopping import RolloutInterrupted, SaveOnInterrupt, rng_restore
from .window import use_window_attention


class TrainingInterrupted(MuaError):
    """Ctrl-C stopped the run after saving a checkpoint; the message says how to resume."""


class NoLearningSignal(MuaError):
    """The run stopped early: every group scored the same for ``stop_after_flat_steps`` steps in a row, so
    those steps learned nothing; its checkpoint and final model are saved, the message says what to change."""


TRAIN_FIX = "chat_template: hermes in the config or --chat_template hermes (llama3_json or a template FILE also work)"


def load_training_tasks(bench: Benchmark, cfg: TrainConfig) -> list[Task]:
    """The tasks of the chosen subsets and split (through the selection step `mua eval` uses), narrowed to the
    split file's train ids when there is one, then to ``task_ids`` and ``limit`` per subset."""
    task_ids = list(cfg.task_ids)
    if cfg.split_file:
        train_ids = read_split_file(cfg.split_file).train
        outside = [t for t in task_ids if t not in set(train_ids)]
        if outside:
            raise ConfigError(f"task_ids not among the train ids of {cfg.split_file}: {', '.join(outside[:10])}")
        task_ids = task_ids or list(train_ids)
    chosen = select_tasks(bench, list(cfg.subsets), cfg.split, task_ids, cfg.limit)
    return [t for ts in chosen.values() for t in ts]


class UserFactory:
    """Each episode's user (harness ``make_user``): the benchmark's simulator played by ``model`` where the
    subset needs a user model; the scripted user where ``model`` is None (allowed by check_user_model)."""

    def __init__(self, bench: Benchmark, model: Any = None):
        self.bench, self.model = bench, model

    def __call__(self, task: Task, seed: int) -> User:
        return make_user(self.bench, task, self.model, seed, scripted=self.model is None)


def user_factory(bench: Benchmark, cfg: TrainConfig) -> UserFactory:
    """The user of each episode, with the user model under the benchmark's protocol and opened as `mua eval`
    opens it (harness plan and open_model)."""
    check_user_model(cfg, bench)
    user, _, _ = protocol_specs(cfg, bench)
    return UserFactory(bench, open_model(user))


def endpoint_specs(cfg: TrainConfig, bench: Benchmark) -> list[Optional[ModelSpec]]:
    """The user and judge models as `mua train` opens them (checked once before the policy loads)."""
    user, judge, _ = protocol_specs(cfg, bench)  # no user model for the scripted user
    return [user, judge]


def judge_model(cfg: TrainConfig, bench: Benchmark) -> Optional[ChatModel]:
    """The judge model, under the benchmark's protocol and opened as `mua eval` opens it."""
    _, judge, _ = protocol_specs(cfg, bench)
    return open_model(judge)


def training_protocol(cfg: TrainConfig, bench: Benchmark, tasks: list[Task]) -> dict:
    """train_config.json's "protocol", recorded as config.json records an evaluation's: the user and judge as
    they were played, the policy's sampling, the budgets (with max_turns when set), the data checksums."""
    user, judge, overrides = protocol_specs(cfg, bench)
    subsets = sorted({t.subset for t in tasks})
    user_played = any(bench.needs_user_model(s) for s in subsets)
    policy = ModelSpec(cfg.policy, params={"temperature": cfg.temperature, "top_p": cfg.top_p})
    roles = {"agent": role_record(policy), "user": role_record(user) if user_played else None,
             "judge": role_record(judge)}
    limits = {"max_turns": cfg.max_turns} if cfg.max_turns is not None else {}
    return protocol_record(bench, roles, cfg.num_generations or 1, subsets, overrides, limits,
                           declared_protocol(cfg, bench))


def policy_factory(tokenizer, stop_ids: set[int], cfg: TrainConfig, backend_ref: Callable[[], Any],
                   max_context: Optional[int]) -> Callable[[int], StreamPolicy]:
    suffixer = TemplateSuffixer(tokenizer, stop_text_of(tokenizer, stop_ids))
    parse = get_parser(parser_for_template(tokenizer.chat_template))
    budget = Budget(cfg.turn_tokens, cfg.max_completion_tokens)
    sampling = Sampling(cfg.temperature, cfg.top_p)
    withheld = WITHHELD_REPLY if cfg.info_gain_weight > 0 else None
    return lambda seed: StreamPolicy(backend_ref(), tokenizer, suffixer, stop_ids, parse, budget, sampling,
                                     seed, max_context=max_context, withheld_reply=withheld)


def backend_factory(cfg: TrainConfig, stop_ids: set[int], pad_id: int) -> Callable[[Any], Any]:
    def build(trainer):
        if cfg.generation == "vllm_colocate":
            return VllmColocateBackend(trainer.vllm_generation.llm, stop_ids)
        if cfg.generation == "vllm_server":
            assert cfg.vllm_server_url  # TrainConfig refuses vllm_server without a URL
            return VllmServerBackend(cfg.vllm_server_url, cfg.vllm_server_model, stop_ids)
        from trl.models import unwrap_model_for_generation

        def model_context():
            return unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator)

        return TransformersBackend(model_context, stop_ids, pad_id, trainer.accelerator.device,
                                   max_batch=cfg.concurrency)
    return build


def build_trainer(cfg: TrainConfig, bench: Benchmark, tasks: list[Task], trainer_cls=None,
                  make_user: Optional[Callable[[Task, int], User]] = None):
    """The GRPOTrainer and its rollout function (exposed for tests and scripts); ``make_user`` replaces the
    user the config names."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM
    from trl import GRPOTrainer

    check_checkpoint_dir(cfg.policy)
    try:
        tokenizer = load_tokenizer(cfg.policy)
    except Exception as exc:  # transformers raises many kinds here (OSError, ValueError, KeyError, ...)
        raise ConfigError(f"policy {cfg.policy}: cannot load its tokenizer: {type(exc).__name__}: {exc}") from None
    prepare_tokenizer(tokenizer, cfg.policy, cfg.chat_template, fix=TRAIN_FIX)  # the saved policy keeps it
    try:
        model = AutoModelForCausalLM.from_pretrained(cfg.policy, dtype="auto")
    except Exception as exc:
        raise ConfigError(f"policy {cfg.policy}: cannot load the model: {type(exc).__name__}: {exc}") from None
    use_window_attention(model)  # a windowed model's training pass reads each window once, not every key
    score_labelled_positions_only()
    stop_ids = stop_ids_for(tokenizer, model.generation_config)
    if not stop_ids:
        raise ConfigError(f"{cfg.policy}: neither the tokenizer nor generation_config names an EOS token")
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(stop_ids)
    max_context = getattr(model.config, "max_position_embeddings", None)
    fit = check_gold_budgets(bench, tasks, tokenizer, stop_ids, Budget(cfg.turn_tokens, cfg.max_completion_tokens),
                             max_context)
    print(f"mua train: {'' if fit.fits else 'warning: '}{fit.line(f'split {cfg.split}')}", file=sys.stderr,
          flush=True)
    print(f"mua train: {'' if fit.gold.ok else 'warning: '}{fit.gold.line(f'of split {cfg.split}')}",
          file=sys.stderr, flush=True)
    rollout: Optional[RolloutFunc] = None
    make_policy = policy_factory(tokenizer, stop_ids, cfg, lambda: rollout.backend,  # type: ignore[union-attr]
                                 max_context)
    settings = RolloutSettings(seed=cfg.seed, concurrency=cfg.concurrency, truncated_reward=cfg.truncated_reward,
                               mask_truncated=cfg.mask_truncated, incomplete_scores=cfg.incomplete_scores,
                               max_turns=cfg.max_turns)
    player = EpisodePlayer(bench, tasks, make_policy, make_user or user_factory(bench, cfg), settings,
                           filler_id=pad_id, judge=judge_model(cfg, bench))
    rollout = RolloutFunc(player, backend_factory(cfg, stop_ids, pad_id), cfg.samples_per_step, cfg.progress,
                          cfg.dynamic_sampling, cfg.num_generations or 0, info_gain=cfg.info_gain_weight > 0,
                          tree_rollouts=cfg.tree_rollouts)
    dataset = Dataset.from_dict({"prompt": [task_key(t) for t in tasks]})
    cls = atomic(trainer_cls or GRPOTrainer)
    if cfg.turn_credit:
        cls = turn_credit_trainer(cls, cfg.turn_discount, cfg.info_gain_weight)
    trainer = cls(
        model=model, processing_class=tokenizer, reward_funcs=[episode_reward], args=cfg,
        train_dataset=dataset, rollout_func=rollout,
        callbacks=[StepLog(cfg.out, cfg.progress, cfg.stop_after_flat_steps)],
        peft_config=cfg.peft_config())
    if cfg.generation == "vllm_colocate" and not torch.cuda.is_available():
        reload_weights_on_cpu(trainer.vllm_generation)
    return trainer, rollout


def save_last_step(trainer, rng: Optional[dict]) -> int:
    """After a rollout was abandoned: save the last finished step as a checkpoint on every rank (unless it is
    saved already), with the random states of that step's end (``rng``), so the resumed run repeats exactly
    what an uninterrupted one does; returns that step."""
    step = trainer.state.global_step
    if step and not (Path(trainer.args.output_dir) / f"checkpoint-{step}").is_dir():
        if rng is not None:
            rng_restore(rng)
        save_checkpoint(trainer)
    return step


def train(cfg: TrainConfig, bench: Benchmark, trainer_cls=None) -> Path:
    """Run GRPO; returns the output directory, a normal checkpoint (weights, tokenizer, chat template).

    Nothing in ``output_dir`` changes until the settings, tasks, policy and trainer are all loaded. Resuming
    continues the run recorded there (see :mod:`.resume`); Ctrl-C or SIGTERM saves the last finished step
    (see :mod:`.stopping`) and raises :class:`TrainingInterrupted`."""
    cfg.validate_for(bench)
    out = cfg.out
    resume = checkpoint_to_resume(cfg)
    tasks = load_training_tasks(bench, cfg)
    keys, protocol = [task_key(t) for t in tasks], training_protocol(cfg, bench, tasks)
    if resume is not None:
        check_same_episodes(cfg, keys, protocol)  # before the model loads
    evaluated = check_eval_plan(cfg, bench) if cfg.eval_steps else 0  # before the model loads
    stop = SaveOnInterrupt()
    trainer, rollout = build_trainer(cfg, bench, tasks, trainer_cls=trainer_cls)
    if cfg.eval_steps:
        trainer.add_callback(PeriodicEval(trainer, cfg, bench))
        if trainer.accelerator.is_main_process:
            print(f"mua train: every {int(cfg.eval_steps)} steps, {evaluated} held-out tasks are scored through "
                  f"`mua eval`'s runner into {cfg.out / EVALS_DIR}", file=sys.stderr, flush=True)
    trainer.add_callback(stop)
    if trainer.accelerator.is_main_process:  # one writer: ranks share the folder (two renames of one .tmp race)
        clear_staging(out)
        rewind_logs(out, checkpoint_step(resume))
        record_config(cfg, keys, protocol)
    if resume is not None and trainer.accelerator.is_main_process:
        print(f"mua train: resuming the run in {out} from {Path(resume).name} (step {checkpoint_step(resume)} of "
              f"{cfg.max_steps})", file=sys.stderr, flush=True)
    rollout.interrupt = stop
    try:
        with stop:
            try:
                trainer.train(resume_from_checkpoint=resume)
            except RolloutInterrupted:
                stop.stopped_at = save_last_step(trainer, stop.rng)
    finally:
        rollout.close()
    if stop.stopped_at is not None and stop.stopped_at < trainer.state.max_steps:
        kept = (f"checkpoint-{stop.stopped_at} (the last finished step) is in {out}; re-run the same command to "
                "resume from it" if stop.stopped_at else "no step had finished, so nothing was saved")
        raise TrainingInterrupted(f"interrupted: the step in progress was discarded; {kept}")
    save_final_model(trainer, out)  # model, tokenizer and chat template: `mua eval --agent-model OUT` loads it
    log = next(c for c in trainer.callback_handler.callbacks if isinstance(c, StepLog))
    if log.stopped_flat is not None:
        raise NoLearningSignal(flat_advice(cfg, log.stopped_flat, trainer.state.max_steps))
    return out


def flat_advice(cfg: TrainConfig, step: int, max_steps: int) -> str:
    """The final line of a run stopped for lack of a reward spread: what happened, what is saved, what to try."""
    return (f"stopped at step {step} of {max_steps}: {cfg.stop_after_flat_steps} steps in a row had every group "
            f"score the same (no reward spread, so no gradient); checkpoint-{step} and the model are in {cfg.out}. "
            "Give the groups a spread: tasks the policy passes sometimes (another --split, --task_ids, or a "
            "warm-up with `mua sft`), more --num_generations, a higher --temperature; or "
            "--stop_after_flat_steps 0 to go on")
