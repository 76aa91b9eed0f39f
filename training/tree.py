"""Tree rollouts from turn prefixes, after TRACE (Zou et al., 2026, "TRACE: A Unified Rollout Budget Allocation
Framework for Efficient Agentic Reinforcement Learning").

A group whose episodes all scored the same adds no gradient. Where a group's outcomes are mixed, the turns of
its episodes decide between passing and failing, so its episodes' prefixes are where more contrast is likely.
After a rollout's first round, each group without a reward spread is replaced by a *branch group*: the
episode runner plays the same task ``group`` times again, with the same user seed, replaying the first ``k``
agent turns of an episode of a mixed group (k = half its turns) and sampling the rest. A branch whose replay
did not reach exactly the same context (a user or tool that answered otherwise) is not part of the tree: its
group is dropped. Replayed turns enter a branch's stream as context, so the shared prefix is trained once, in
the episode it came from; a branch group without a spread is dropped as well (the original group stays).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Protocol, Sequence

from .credit import TurnRecord


class Episode(Protocol):
    """What branching reads of an episode (rollout.py's EpisodeOutcome)."""

    key: str
    reward: Optional[float]
    prompt_ids: list[int]
    completion_ids: list[int]
    env_mask: list[int]
    turn_records: list[TurnRecord]


@dataclass(frozen=True)
class Prefix:
    """The first ``turns`` agent turns of episode ``episode`` (an index into the rollout's episodes)."""

    episode: int
    turns: int


def zero_spread(outcomes: Sequence[Episode]) -> bool:
    """Whether a group's episodes carry no reward spread (every reward the same, failed ones left out): GRPO's
    advantages are then all zero and the group adds no gradient."""
    rewards = {o.reward for o in outcomes if o.reward is not None}
    return len(rewards) <= 1


def branch_prefixes(outcomes: Sequence[Episode], group: int) -> list[Prefix]:
    """Where to branch: from every group of ``group`` episodes of one task whose rewards are mixed, each
    scored episode with at least two agent turns of its own, at half its turns; interleaved across groups
    (first episode of every mixed group, then the second, ...) so that the groups share the budget."""
    per_group = []
    for at in range(0, len(outcomes) - group + 1, group):
        members = outcomes[at:at + group]
        if len({o.key for o in members}) != 1 or zero_spread(members):
            continue
        per_group.append([Prefix(at + i, len(o.turn_records) // 2) for i, o in enumerate(members)
                          if o.reward is not None and len(o.turn_records) >= 2])
    return [p for rank in range(group) for g in per_group if rank < len(g) for p in g[rank:rank + 1]]


def replayed_ids(origin: Episode, prefix: Prefix) -> list[list[int]]:
    """The generated ids of the prefix's turns, as the branch replays them."""
    return [origin.completion_ids[t.start:t.end] for t in origin.turn_records[:prefix.turns]]


def shares_prefix(branch: Episode, origin: Episode, prefix: Prefix) -> bool:
    """Whether ``branch`` reached exactly the context in which ``origin`` sampled its turn after the prefix
    (the prefix turns and every tool result and user reply between them) and sampled a turn of its own."""
    cut = origin.turn_records[prefix.turns].start
    return (branch.prompt_ids == origin.prompt_ids and branch.completion_ids[:cut] == origin.completion_ids[:cut]
            and len(branch.completion_ids) > cut and not any(branch.env_mask[:cut]))
