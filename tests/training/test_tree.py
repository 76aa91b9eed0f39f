"""Tree rollouts from turn prefixes (training/tree.py, after TRACE): branching only at groups with mixed outcomes,
branches replayed through the episode runner, and a shared prefix trained once."""
from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import pytest

from mua.benchmarks.pack import PackBenchmark
from mua.harness.models.generation import GenerationResult
from mua.training.credit import TurnRecord
from mua.training.rollout import EpisodeOutcome
from mua.training.tree import Prefix, branch_prefixes, replayed_ids, shares_prefix

BOOKINGS = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"
TEXTS = ["What is your name?", "A table for Nora then?", "Booking it now."]


def _episode(key: str, reward, turns: int) -> EpisodeOutcome:
    """``turns`` agent turns of 2 ids each, a context id between them."""
    ids, mask, records = [], [], []
    for k in range(turns):
        records.append(TurnRecord(len(ids), len(ids) + 2))
        ids += [10 + k, 11 + k, 99]
        mask += [1, 1, 0]
    return EpisodeOutcome(key, [1], ids[:-1], mask[:-1], [0.0] * (len(ids) - 1), reward, "user_stop",
                          turn_records=records)


def test_branches_start_only_in_groups_with_mixed_outcomes_at_half_an_episodes_turns():
    batch = [_episode("a", 1.0, 4), _episode("a", 1.0, 2),  # no spread: no branch
             _episode("b", 0.0, 4), _episode("b", 1.0, 3),  # mixed: both episodes
             _episode("c", 1.0, 1), _episode("c", 0.0, 2),  # mixed, but one episode has a single turn
             _episode("d", None, 2), _episode("d", 1.0, 2)]  # one failed episode: no spread among the scored
    assert branch_prefixes(batch, 2) == [Prefix(2, 2), Prefix(5, 1), Prefix(3, 1)]  # interleaved across groups
    assert replayed_ids(batch[2], Prefix(2, 2)) == [[10, 11], [11, 12]]


def test_a_branch_shares_the_prefix_only_when_it_reached_the_same_context_with_the_prefix_untrained():
    origin = _episode("b", 0.0, 3)
    cut = origin.turn_records[1].start  # the context of the turn after a one-turn prefix
    branch = EpisodeOutcome("b", [1], origin.completion_ids[:cut] + [50, 51], [0] * cut + [1, 1],
                            [0.0] * (cut + 2), 1.0, "user_stop")
    assert shares_prefix(branch, origin, Prefix(0, 1))
    trained = EpisodeOutcome("b", [1], branch.completion_ids, [1] * (cut + 2), branch.logprobs, 1.0, "user_stop")
    assert not shares_prefix(trained, origin, Prefix(0, 1))  # the prefix would be trained twice
    other = EpisodeOutcome("b", [1], [10, 11, 98, 50, 51], [1, 1, 0, 1, 1], [0.0] * 5, 1.0, "user_stop")
    assert not shares_prefix(other, origin, Prefix(0, 1))  # the user answered otherwise: not in the tree
    assert not shares_prefix(EpisodeOutcome("b", [1], origin.completion_ids[:cut], [0] * cut, [0.0] * cut, 1.0,
                                            None), origin, Prefix(0, 1))  # no turn of its own


class SeededBackend:
    """Replies with one of TEXTS, chosen by the request's seed (so each episode and turn differs)."""

    def __init__(self, tokenizer):
        self.tokenizer, self.calls = tokenizer, 0

    async def generate(self, request):
        self.calls += 1
        text = TEXTS[request.seed % len(TEXTS)]
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"] + [self.tokenizer.eos_token_id]
        return GenerationResult(ids, [-0.1] * len(ids), "stop")

    def session(self):
        return nullcontext()


class NamedBookings(PackBenchmark):
    """Passes when the agent said the name "Nora": a reward the scripted replies can earn or miss."""

    async def score(self, task, messages, **kwargs):
        score = await super().score(task, messages, **kwargs)
        score.reward = float(any("Nora" in (m.content or "") for m in messages if m.role == "assistant"))
        return score


def _first_round(tiny_tokenizer, seed: int):
    from mua.harness.seeds import derive_seed
    from mua.training.config import TrainConfig
    from mua.training.grpo import UserFactory, policy_factory
    from mua.training.rollout import EpisodePlayer, RolloutFunc, RolloutSettings

    bench = NamedBookings(BOOKINGS)
    cfg = TrainConfig(policy="unused", benchmark="pack", num_generations=2, batch_size=4, max_turn_tokens=24,
                      max_completion_tokens=300)
    backend = SeededBackend(tiny_tokenizer)
    make_policy = policy_factory(tiny_tokenizer, {tiny_tokenizer.eos_token_id}, cfg, lambda: backend, None)
    player = EpisodePlayer(bench, bench.load_tasks("tasks", "train")[:2], make_policy, UserFactory(bench, None),
                           RolloutSettings(seed=seed, max_turns=4), filler_id=0)
    func = RolloutFunc(player, lambda trainer: backend, samples_per_step=0, progress=False, group=2,
                       tree_rollouts=2)
    func.backend = backend
    keys = [k for k in player.tasks for _ in range(2)]
    jobs = [(k, derive_seed(seed, "policy", k, "0.0", 0, i), derive_seed(seed, "user", k, "0.0"))
            for i, k in enumerate(keys)]
    return func, backend, func._run(func._play(jobs, "step 1", False))


def test_a_flat_group_is_replaced_by_branches_of_a_mixed_groups_prefix_that_is_trained_once(tiny_tokenizer):
    func, backend, first = _first_round(tiny_tokenizer, seed=0)
    try:
        # book-000: one episode asked the name, heard "Nora." and asked again (0), one said "Nora" at once (1);
        # book-001: both scored 0
        assert [o.reward for o in first] == [0.0, 1.0, 0.0, 0.0]
        assert [len(o.turn_records) for o in first] == [2, 1, 2, 2]
        out = func._branch(first, "0.0", 0, "step 1", False)
    finally:
        func.close()
    assert func.branched == 1 and out[:2] == first[:2]
    origin, prefix = first[0], Prefix(0, 1)  # the only two-turn episode of the mixed group, at its first turn
    branches = out[2:]
    assert [b.key for b in branches] == [origin.key] * 2 and sorted(b.reward for b in branches) == [0.0, 1.0]
    assert all(shares_prefix(b, origin, prefix) and b.user_seed == origin.user_seed for b in branches)
    start, end = origin.turn_records[0].start, origin.turn_records[0].end
    copies = [o for o in out if o.completion_ids[start:end] == origin.completion_ids[start:end]]
    assert len(copies) == 3  # the origin and both branches hold the prefix ...
    assert [sum(o.env_mask[start:end]) for o in copies] == [end - start, 0, 0]  # ... trained in the origin only
    # the same conversation up to the branch (opening, request, the replayed question, "Nora."), then its own turn
    assert all(b.messages[:4] == origin.messages[:4] for b in branches)
    passed = next(b for b in branches if b.reward == 1.0)
    assert passed.messages[4]["content"] == "A table for Nora then?" != origin.messages[4]["content"]
    assert all(len(b.turn_records) == 1 and b.turn_records[0].start >= end for b in branches)  # own turns only


def test_no_branch_without_a_group_of_mixed_outcomes(tiny_tokenizer):
    func, backend, first = _first_round(tiny_tokenizer, seed=1)
    calls = backend.calls
    try:
        assert {o.reward for o in first} == {0.0}
        out = func._branch(first, "0.0", 0, "step 1", False)
    finally:
        func.close()
    assert out == first and func.branched == 0 and backend.calls == calls  # nothing was played


@pytest.mark.parametrize("value", [-1])
def test_a_negative_tree_rollouts_is_refused(value):
    from mua.harness.errors import ConfigError
    from mua.training.config import TrainConfig

    with pytest.raises(ConfigError, match="tree_rollouts must be >= 0"):
        TrainConfig(tree_rollouts=value)
