"""Turn-level credit for multi-turn GRPO: an advantage per agent turn instead of one per episode.

GRPO gives every token of an episode the episode's group advantage. With ``turn_credit`` (step-level credit,
as in StepPO: the agent's turn is the unit of decision) each turn's generated tokens get their own advantage:

    A_k = gamma^(T-1-k) * A_episode + w * norm(G_k),   G_k = sum_{j>=k} gamma^(j-k) * r_j

for turn k of an episode with T turns: the outcome's group advantage (TRL's, unchanged) discounted back from
the last turn, plus the discounted return of per-turn rewards ``r_j``, normalized over all turns of the group
(zero mean, unit spread, so ``w`` weighs it against the outcome's advantage). With ``gamma`` 1 and no turn
rewards this is exactly GRPO's advantage on every turn.

The per-turn reward is the information gain of InfoPO (Kong et al., 2026): for a turn that answers a user
reply, how much that reply changes the policy's next action, as the mean per-token log-prob of the turn's
tokens given the context with the reply minus given the same context with the reply's text replaced by a
neutral placeholder. Turns that follow no user reply (the first turn, turns after tool results) get 0.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

WITHHELD_REPLY = "(no reply)"  # the user's reply as the counterfactual context shows it

# per-token log-probs of ``target`` after ``context`` (token ids) under the policy
Scorer = Callable[[list[int], list[int]], list[float]]


@dataclass
class TurnRecord:
    """One agent turn's place in its episode's stream: its generated ids are ``completion_ids[start:end]``.
    ``withheld`` is the counterfactual context of the turn when a user reply came just before it: the stream's
    ids ``[:kept]`` followed by ``suffix`` (the reply's text replaced by :data:`WITHHELD_REPLY`); else None."""

    start: int
    end: int
    withheld: Optional[tuple[int, list[int]]] = None


def information_gain(score: Scorer, prompt_ids: list[int], completion_ids: list[int], turn: TurnRecord) -> float:
    """The turn's information gain: mean per-token log-prob of its ids with the user's reply in the context
    minus with the reply withheld; 0.0 when no user reply came just before the turn."""
    if turn.withheld is None or turn.end <= turn.start:
        return 0.0
    ids = prompt_ids + completion_ids
    at = len(prompt_ids) + turn.start
    target = ids[at:len(prompt_ids) + turn.end]
    kept, suffix = turn.withheld
    with_reply = score(ids[:at], target)
    without = score(ids[:kept] + suffix, target)
    return (sum(with_reply) - sum(without)) / len(target)


def discounted_returns(rewards: Sequence[float], gamma: float) -> list[float]:
    """G_k = sum over j >= k of gamma^(j-k) * rewards[j]."""
    out, running = [0.0] * len(rewards), 0.0
    for k in range(len(rewards) - 1, -1, -1):
        running = rewards[k] + gamma * running
        out[k] = running
    return out


def normalized(groups: Sequence[Sequence[float]]) -> list[list[float]]:
    """Every value of ``groups`` (the turn returns of a group's episodes) minus their common mean, over their
    common standard deviation; all zero when they do not spread."""
    values = [v for g in groups for v in g]
    if not values:
        return [[] for _ in groups]
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    if std < 1e-8:
        return [[0.0] * len(g) for g in groups]
    return [[(v - mean) / (std + 1e-4) for v in g] for g in groups]


def turn_advantages(episode_advantages: Sequence[float], turn_rewards: Sequence[Optional[Sequence[float]]],
                    gamma: float, weight: float) -> list[list[float]]:
    """Each turn's advantage for one group (see the module's formula). ``turn_rewards[i]`` is None for an
    episode without a score: its turns get 0 and its rewards stay out of the normalization."""
    returns = [discounted_returns(r, gamma) if r is not None else [] for r in turn_rewards]
    scaled = normalized([g for g, r in zip(returns, turn_rewards) if r is not None])
    shaped = iter(scaled)
    out: list[list[float]] = []
    for adv, rewards in zip(episode_advantages, turn_rewards):
        if rewards is None:
            out.append([])
            continue
        turns, gains = len(rewards), next(shaped)
        out.append([gamma ** (turns - 1 - k) * adv + weight * gains[k] for k in range(turns)])
    return out


def token_advantages(turns: Sequence[TurnRecord], advantages: Sequence[float], width: int) -> list[float]:
    """One row of per-token advantages ``width`` long: turn k's advantage on its generated ids, 0 elsewhere
    (tool results and user turns, which the loss masks anyway)."""
    row = [0.0] * width
    for turn, adv in zip(turns, advantages):
        for i in range(turn.start, min(turn.end, width)):
            row[i] = adv
    return row


def batch_token_advantages(episode_advantages: Sequence[float], turns: Sequence[Sequence[TurnRecord]],
                           turn_rewards: Sequence[Optional[Sequence[float]]], group: int, gamma: float,
                           weight: float, width: int) -> list[list[float]]:
    """Per-token advantages of a batch of whole groups (``group`` consecutive rows per task)."""
    rows = []
    for at in range(0, len(episode_advantages), group):
        span = slice(at, at + group)
        per_turn = turn_advantages(episode_advantages[span], turn_rewards[span], gamma, weight)
        rows += [token_advantages(t, a, width) for t, a in zip(turns[span], per_turn)]
    return rows


def turn_credit_trainer(trainer_cls: type, gamma: float, weight: float) -> type:
    """``trainer_cls`` (TRL's GRPOTrainer or a subclass) whose advantages are per token, by turn: TRL's loss
    takes advantages of shape (batch, completion length) as they are."""

    class TurnCredit(trainer_cls):  # type: ignore[valid-type, misc]
        def _generate_and_score_completions(self, inputs):
            import torch

            out = super()._generate_and_score_completions(inputs)
            if not self.model.training:
                return out
            adv = out["advantages"]
            turns = [[TurnRecord(*t) for t in x["turn_spans"]] for x in inputs]
            rewards = [x["turn_rewards"] if x["episode_reward"] is not None else None for x in inputs]
            rows = batch_token_advantages(adv.tolist(), turns, rewards, self.num_generations, gamma, weight,
                                          out["completion_ids"].size(1))
            out["advantages"] = torch.tensor(rows, dtype=adv.dtype, device=adv.device)
            return out

    TurnCredit.__name__ = TurnCredit.__qualname__ = trainer_cls.__name__
    return TurnCredit
