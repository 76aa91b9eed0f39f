"""Seeds: one derivation for eval and training; a simulated user gets a distinct seed on every request."""
from __future__ import annotations

import asyncio

from mua.benchmarks.acebench.user import AceSimulatedUser
from mua.harness.seeds import derive_seed, turn_seed
from mua.harness.types import Message, Usage
from mua.harness.users.simulator import SimulatedUser


class RecordingModel:
    def __init__(self):
        self.seeds = []

    async def chat(self, messages, tools=None, seed=None):
        self.seeds.append(seed)
        return Message(role="assistant", content=f"reply {len(self.seeds)}"), Usage()


def _three_turns(make_user):
    model = RecordingModel()
    user = make_user(model)
    history = [Message(role="assistant", content="Hi")]
    for _ in range(3):
        history.append(asyncio.run(user.respond(history, [])))
        history.append(Message(role="assistant", content="ok"))
    return model.seeds


def test_simulated_user_gets_a_distinct_deterministic_seed_per_turn():
    for make_user in (lambda m: SimulatedUser(m, "play a user", seed=7),
                      lambda m: AceSimulatedUser(m, "play a user", "greeting", seed=7)):
        seeds = _three_turns(make_user)
        assert len(set(seeds)) == 3 and seeds == [turn_seed(7, n) for n in range(3)]
        assert _three_turns(make_user) == seeds  # the same on a rerun
    assert _three_turns(lambda m: SimulatedUser(m, "play a user")) == [None] * 3  # no seed: none invented


def test_eval_and_training_seeds_are_one_derivation():
    assert 0 <= derive_seed("x") < 2 ** 31 and derive_seed("a", "b") != derive_seed("ab")
    # pinned: results written by earlier versions keep their seeds
    import hashlib
    digest = hashlib.sha256("3\x00retail\x005\x001".encode()).digest()
    assert derive_seed(3, "retail", "5", 1) == int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
