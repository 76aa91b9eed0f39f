"""Supervised warm-up on gold trajectories, tokenised exactly as the policy's own episodes are.

The gold agent of each task is played through ``run_episode`` with a teacher-forced :class:`StreamPolicy`,
so the training tokens are the token stream the policy will later extend itself (same prompt rendering, same
suffixes). Used to give a tiny random model enough tool-calling behaviour for GRPO to have a signal.
"""
from __future__ import annotations

import asyncio
import random
from typing import Optional

from mua.harness.interfaces import Benchmark
from mua.harness.models.parsers import get_parser, parser_for_template
from mua.harness.runner import run_episode
from mua.harness.types import Task

from .policy import Budget, Sampling, StreamPolicy, TeacherForcedAgent
from mua.harness.models.stream import TemplateSuffixer, TokenStream, stop_text_of


def teacher_policy(tokenizer, stop_ids: set[int], budget: Optional[Budget] = None) -> StreamPolicy:
    suffixer = TemplateSuffixer(tokenizer, stop_text_of(tokenizer, stop_ids))
    parse = get_parser(parser_for_template(tokenizer.chat_template))
    return StreamPolicy(None, tokenizer, suffixer, stop_ids, parse, budget or Budget(10**6, 10**9), Sampling(),
                        seed=0)


async def _gold_stream(bench: Benchmark, task: Task, tokenizer, stop_ids: set[int]) -> tuple[TokenStream, list]:
    policy = teacher_policy(tokenizer, stop_ids)
    result = await run_episode(bench, task, TeacherForcedAgent(bench.gold_agent(task), policy), bench.gold_user(task))
    return policy.live_stream.trimmed(), result.messages


def gold_streams(bench: Benchmark, tasks: list[Task], tokenizer, stop_ids: set[int]) -> list[TokenStream]:
    """One teacher-forced token stream per task (its gold agent with its gold user)."""
    async def all_streams():
        return await asyncio.gather(*(_gold_stream(bench, t, tokenizer, stop_ids) for t in tasks))
    return [stream for stream, _ in asyncio.run(all_streams())]


def sft_warmup(model, streams: list[TokenStream], steps: int, lr: float = 3e-3, batch_size: int = 8,
               seed: int = 0, pad_id: int = 0) -> list[float]:
    """Train ``model`` in place with cross-entropy on the streams' generated (mask 1) tokens; returns losses."""
    import torch

    rng = random.Random(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    losses = []
    for _ in range(steps):
        batch = rng.sample(streams, min(batch_size, len(streams)))
        width = max(len(s.ids) for s in batch)
        ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
        labels = torch.full((len(batch), width), -100, dtype=torch.long)
        attention = torch.zeros((len(batch), width), dtype=torch.long)
        for i, s in enumerate(batch):
            row = torch.tensor(s.ids)
            ids[i, :len(row)], attention[i, :len(row)] = row, 1
            keep = torch.tensor([0] * len(s.prompt_ids) + s.env_mask, dtype=torch.bool)
            labels[i, :len(row)] = torch.where(keep, row, torch.full_like(row, -100))
        loss = model(input_ids=ids, attention_mask=attention, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    return losses


def row_stream(row: dict, tokenizer, stop_ids: set[int]) -> TokenStream:
    """The token stream of one exported episode (``mua export`` row: the agent's view and its tools), built
    the way the policy builds its own: the first agent reply's prompt rendered by the chat template, each
    agent reply teacher-forced as the template's ids (trained on), everything between as template suffixes
    (masked). Assistant messages before the first user message (a benchmark's scripted greeting) are prompt."""
    from mua.harness.files import parse_json
    from mua.harness.types import Message, ToolSpec

    listed = parse_json(row.get("tools") or "[]", where="dataset row's tools")
    tools = [ToolSpec(t["function"]["name"], t["function"].get("description", ""),
                      t["function"].get("parameters") or {}) for t in listed]
    policy = teacher_policy(tokenizer, stop_ids)
    view: list[Message] = []
    for d in row["messages"]:
        m = Message.from_dict({k: v for k, v in d.items() if v is not None})
        if m.role == "assistant" and any(v.role == "user" for v in view):
            m = policy.force(view, tools or None, m)
        view.append(m)
    return policy.live_stream.trimmed()


def sft_dataset(rows, tokenizer, stop_ids: set[int]):
    """A tokenised ``datasets.Dataset`` (input_ids, completion_mask = 1 on the agent's own tokens only)."""
    import datasets

    out: dict[str, list[list[int]]] = {"input_ids": [], "completion_mask": []}
    for row in rows:
        s = row_stream(row, tokenizer, stop_ids)
        out["input_ids"].append(s.ids)
        out["completion_mask"].append([0] * len(s.prompt_ids) + s.env_mask)
    return datasets.Dataset.from_dict(out)


def sft_train(policy_dir: str, rows, output_dir: str, *, max_steps: int = -1, epochs: float = 1.0,
              learning_rate: float = 2e-5, batch_size: int = 8, seed: int = 0, progress: bool = True,
              **overrides) -> list[float]:
    """Fine-tune the checkpoint ``policy_dir`` on exported episodes with TRL's SFTTrainer (loss on the agent's
    own tokens only) and save it to ``output_dir``; returns the logged training losses."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from mua.harness.models.local import stop_ids_for

    tokenizer = AutoTokenizer.from_pretrained(policy_dir)
    model = AutoModelForCausalLM.from_pretrained(policy_dir)
    stop_ids = stop_ids_for(tokenizer, model.generation_config)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.convert_ids_to_tokens(min(stop_ids))
    args = SFTConfig(output_dir=output_dir, max_steps=max_steps, num_train_epochs=epochs,
                     learning_rate=learning_rate, per_device_train_batch_size=batch_size, seed=seed,
                     completion_only_loss=True, max_length=None, logging_steps=1, save_strategy="no",
                     report_to=[], disable_tqdm=not progress, use_cpu=True, bf16=False,
                     dataset_num_proc=None, **overrides)
    trainer = SFTTrainer(model=model, args=args, train_dataset=sft_dataset(rows, tokenizer, stop_ids),
                         processing_class=tokenizer)
    trainer.train()
    trainer.save_model(output_dir)
    tokenizer.save_pretrained(output_dir)
    return [h["loss"] for h in trainer.state.log_history if "loss" in h]
