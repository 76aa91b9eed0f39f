"""Supervised fine-tuning (``mua sft``) on episodes exported by ``mua export``, tokenised exactly as the policy's
own episodes are: each agent reply is teacher-forced through a :class:`StreamPolicy`, so the training tokens
are the token stream the policy later extends itself (same prompt rendering, same suffixes), and only the
agent's own tokens carry loss. The run is TRL's SFTTrainer under mua's checkpoints, resume and interrupt
handling (the same as ``mua train``'s)."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from mua.harness.errors import ConfigError, DataError, MuaError
from mua.harness.models.parsers import get_parser, parser_for_template
from mua.harness.models.stream import TemplateSuffixer, TokenStream, stop_text_of

from .checkpoints import atomic, clear_staging, save_final_model
from .config import check_checkpoint_dir
from .lm_head import score_labelled_positions_only
from .policy import Budget, Sampling, StreamPolicy
from .resample import resample_rows
from .resume import checkpoint_step, checkpoint_to_resume, played_differences, record_config
from .sft_config import SFT_CONFIG, SftRunConfig
from .stopping import SaveOnInterrupt
from .window import reach, trim, use_window_attention

SFT_FIX = "--chat-template hermes (llama3_json or a template FILE also work; config key chat_template)"


class SftInterrupted(MuaError):
    """Ctrl-C stopped the run after saving a checkpoint; the message says how to resume."""


def teacher_policy(tokenizer, stop_ids: set[int], budget: Optional[Budget] = None,
                   suffixer: Optional[TemplateSuffixer] = None) -> StreamPolicy:
    """A policy that only replays given messages; ``suffixer``: one shared by many rows (its memo then serves them
    all)."""
    suffixer = suffixer or TemplateSuffixer(tokenizer, stop_text_of(tokenizer, stop_ids))
    parse = get_parser(parser_for_template(tokenizer.chat_template))
    return StreamPolicy(None, tokenizer, suffixer, stop_ids, parse, budget or Budget(10**6, 10**9), Sampling(),
                        seed=0)


def row_stream(row: dict, tokenizer, stop_ids: set[int], suffixer: Optional[TemplateSuffixer] = None) -> TokenStream:
    """The token stream of one exported episode (``mua export`` row: the agent's view and its tools), built
    the way the policy builds its own: the first agent reply's prompt rendered by the chat template, each
    agent reply teacher-forced as the template's ids (trained on), everything between as template suffixes
    (masked). Assistant messages before the first user message (a benchmark's scripted greeting) are prompt."""
    from mua.harness.io.files import parse_json
    from mua.harness.types import Message, ToolSpec

    listed = parse_json(row.get("tools") or "[]", where="dataset row's tools")
    tools = [ToolSpec(t["function"]["name"], t["function"].get("description", ""),
                      t["function"].get("parameters") or {}) for t in listed]
    policy = teacher_policy(tokenizer, stop_ids, suffixer=suffixer)
    view: list[Message] = []
    for d in row["messages"]:
        m = Message.from_dict({k: v for k, v in d.items() if v is not None})
        if m.role == "assistant" and any(v.role == "user" for v in view):
            m = policy.force(view, tools or None, m)
        view.append(m)
    return policy.live_stream.trimmed()


def sft_dataset(rows, tokenizer, stop_ids: set[int], window_reach: Optional[int] = None):
    """A tokenised ``datasets.Dataset`` (input_ids, completion_mask = 1 on the agent's own tokens only).
    ``window_reach`` (training/window.py, for models whose every layer is windowed): the head of each episode that no
    loss term can see is left out."""
    import datasets

    out: dict[str, list[list[int]]] = {"input_ids": [], "completion_mask": []}
    suffixer = TemplateSuffixer(tokenizer, stop_text_of(tokenizer, stop_ids), memo=True)
    for row in rows:
        s = row_stream(row, tokenizer, stop_ids, suffixer)
        # Why: a windowed model's loss cannot see tokens more than `reach` before the first trained one, so
        # dropping them is exact and spares most of a long system prompt's forward and backward pass.
        ids, mask = trim(s.ids, [0] * len(s.prompt_ids) + s.env_mask, window_reach)
        out["input_ids"].append(ids)
        out["completion_mask"].append(mask)
    return datasets.Dataset.from_dict(out)


def read_rows(path: Path) -> list[dict]:
    """The rows of a `mua export` output: a saved datasets folder or a JSON-lines file."""
    from mua.harness.io.files import field, type_name
    from mua.harness.io.jsonl import BadLine, iter_raw_lines, loads_line

    if not path.exists():
        raise ConfigError(f"no dataset at {path} (write one with `mua export RUN --out {path}`)")
    if path.is_file():
        rows = []
        for lineno, raw, _ in iter_raw_lines(path):
            try:
                row = loads_line(raw)
            except BadLine as exc:
                raise DataError(f"{path}:{lineno}: {exc}") from None
            where = f"dataset {path}, line {lineno}"
            if not isinstance(row, dict):
                raise DataError(f"{where}: expected a JSON object, found {type_name(row)}")
            field(row, "messages", list, where=where)
            field(row, "tools", str, where=where, default=None)
            field(row, "reward", float, where=where, default=None, nullable=True)
            rows.append(row)
        return rows
    import datasets

    try:
        return list(datasets.load_from_disk(str(path)))
    except (FileNotFoundError, ValueError) as exc:
        raise ConfigError(f"{path}: not a saved dataset ({exc})") from None


def dataset_checksums(path: Path) -> dict:
    """sft_config.json's ``"data"``: the sha256 of every file of the dataset (a `mua export` folder or file),
    recorded as a run protocol records its data (protocol.data_record), so a resume on changed data is refused."""
    from mua.harness.protocol import data_record

    return data_record(path.parent, [path.name])


def training_rows(cfg: SftRunConfig) -> list[dict]:
    """The dataset's rows with at least ``min_reward``, checked to be `mua export` rows."""
    if not cfg.dataset:
        raise ConfigError("name the training data: --dataset PATH (a `mua export` output)")
    rows = read_rows(Path(cfg.dataset))
    if cfg.min_reward is not None:
        rows = [r for r in rows if isinstance(r.get("reward"), (int, float)) and r["reward"] >= cfg.min_reward]
    missing = [k for k in ("messages", "tools") if rows and k not in rows[0]]
    if not rows or missing:
        raise ConfigError(f"{cfg.dataset}: " + ("no rows to train on" if not rows else
                                                f"rows lack {', '.join(missing)} (write it with `mua export`)"))
    return rows


def load_policy(policy_dir: str, model_init_kwargs: Optional[dict] = None,
                chat_template: Optional[str] = None) -> tuple[Any, Any, set[int]]:
    """(model, tokenizer, stop ids) of a checkpoint, in the checkpoint's own dtype unless the config's
    ``model_init_kwargs`` say otherwise (as TRL loads a model named by path). ``chat_template`` replaces the
    tokenizer's template; one that drops tool use is refused before the weights load."""
    from transformers import AutoModelForCausalLM

    from mua.harness.models.local import stop_ids_for
    from mua.harness.models.templates import prepare_tokenizer
    from mua.harness.models.tokenizer import load_tokenizer

    check_checkpoint_dir(policy_dir)
    try:
        tokenizer = load_tokenizer(policy_dir)
    except Exception as exc:  # transformers raises many kinds here (OSError, ValueError, KeyError, ...)
        raise ConfigError(f"policy {policy_dir}: cannot load its tokenizer: {type(exc).__name__}: {exc}") from None
    # checked before the weights load; the saved checkpoint keeps the template it was trained with
    prepare_tokenizer(tokenizer, policy_dir, chat_template, fix=SFT_FIX)
    try:
        model = AutoModelForCausalLM.from_pretrained(policy_dir, **{"dtype": "auto", **(model_init_kwargs or {})})
    except Exception as exc:  # transformers raises many kinds here (OSError, ValueError, KeyError, ...)
        raise ConfigError(f"policy {policy_dir}: cannot load it: {type(exc).__name__}: {exc}") from None
    use_window_attention(model)  # a windowed model's training pass reads each window once, not every key
    score_labelled_positions_only()
    stop_ids = stop_ids_for(tokenizer, model.generation_config)
    if not stop_ids:
        raise ConfigError(f"{policy_dir}: neither the tokenizer nor generation_config names an EOS token")
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.convert_ids_to_tokens(min(stop_ids))
    return model, tokenizer, stop_ids


def build_sft_trainer(cfg: SftRunConfig, rows: list[dict], trainer_cls=None):
    """TRL's SFTTrainer for ``cfg`` on ``rows`` (with LoRA when ``use_peft``; each row ``resample_values`` times
    with new names and ids when that is set), saving atomic checkpoints."""
    from trl import SFTTrainer

    model, tokenizer, stop_ids = load_policy(cfg.policy, cfg.model_init_kwargs, cfg.chat_template)
    rows = resample_rows(rows, cfg.resample_values, cfg.seed)
    return atomic(trainer_cls or SFTTrainer)(model=model, args=cfg, processing_class=tokenizer,
                                             train_dataset=sft_dataset(rows, tokenizer, stop_ids,
                                                                       reach(getattr(model, "config", None))),
                                             peft_config=cfg.peft_config())


@dataclass
class SftOutcome:
    out: Path  # a plain checkpoint (a LoRA adapter is merged into it)
    episodes: int  # rows trained on
    steps: int  # optimizer steps of the whole run (a resumed one included)
    losses: list[float]  # logged by this process


def sft_train(cfg: SftRunConfig, trainer_cls=None) -> SftOutcome:
    """Run (or resume) ``mua sft``. Nothing in ``output_dir`` changes until the data and the policy are
    loaded. Ctrl-C or SIGTERM saves the step in progress at its end and raises :class:`SftInterrupted`."""
    out = cfg.out
    resume = cfg.resume_from_checkpoint or checkpoint_to_resume(cfg, SFT_CONFIG, "mua sft")
    rows = training_rows(cfg)
    played = {"data": dataset_checksums(Path(cfg.dataset))}
    if resume is not None and played_differences(cfg, played, SFT_CONFIG, "mua sft"):  # before the model loads
        raise ConfigError(f"output_dir {out} holds a run trained on other data than {cfg.dataset} holds now (its "
                          f"files' checksums differ from those {SFT_CONFIG} records); resuming would mix two runs. "
                          "Restore the data to continue it, or use another --output-dir for a new run")
    trainer = build_sft_trainer(cfg, rows, trainer_cls)
    stop = SaveOnInterrupt("mua sft")
    trainer.add_callback(stop)
    if trainer.accelerator.is_main_process:
        clear_staging(out)
        record_config(cfg, config_file=SFT_CONFIG, played=played)
        if resume is not None:
            print(f"mua sft: resuming the run in {out} from {Path(resume).name} (step {checkpoint_step(resume)})",
                  file=sys.stderr, flush=True)
    with stop:
        trainer.train(resume_from_checkpoint=resume)
    if stop.stopped_at is not None and stop.stopped_at < trainer.state.max_steps:
        raise SftInterrupted(f"interrupted: checkpoint-{stop.stopped_at} (the last finished step) is in {out}; "
                             "re-run the same command to resume from it")
    save_final_model(trainer, out)
    return SftOutcome(out, len(rows), trainer.state.global_step,
                      [h["loss"] for h in trainer.state.log_history if "loss" in h])
