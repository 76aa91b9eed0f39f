"""Test-only warm-up: gold trajectories as the policy's own token streams, and a plain cross-entropy loop that
gives the tiny random model enough tool-calling behaviour for GRPO tests to have a signal."""
from __future__ import annotations

import asyncio
import random

from mua.harness.interfaces import Benchmark
from mua.harness.models.stream import TokenStream
from mua.harness.runner import run_episode
from mua.harness.types import Task
from mua.training.policy import TeacherForcedAgent
from mua.training.sft import teacher_policy


async def _gold_stream(bench: Benchmark, task: Task, tokenizer, stop_ids: set[int]) -> TokenStream:
    policy = teacher_policy(tokenizer, stop_ids)
    await run_episode(bench, task, TeacherForcedAgent(bench.gold_agent(task), policy), bench.gold_user(task))
    return policy.live_stream.trimmed()


def gold_streams(bench: Benchmark, tasks: list[Task], tokenizer, stop_ids: set[int]) -> list[TokenStream]:
    """One teacher-forced token stream per task (its gold agent with its gold user)."""
    async def all_streams():
        return await asyncio.gather(*(_gold_stream(bench, t, tokenizer, stop_ids) for t in tasks))
    return list(asyncio.run(all_streams()))


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
