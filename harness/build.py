"""Builds the objects of one episode from names: which agent, which user, with which models and seeds."""
from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

from .agents import ModelAgent
from .errors import ConfigError
from .interfaces import Agent, Benchmark, ChatModel, User
from .types import Task

GOLD = "gold"


@dataclass
class ModelSpec:
    """A model named on the command line: an endpoint model name or a local checkpoint path."""

    name: str
    base_url: Optional[str] = None
    params: dict = field(default_factory=dict)  # temperature, max_tokens, ...
    api_key_env: str = "OPENAI_API_KEY"  # the variable's name is recorded, never its value

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Models:
    """The live chat models of a run (None where not used). Created once, shared by all episodes."""

    agent: Optional[ChatModel] = None
    user: Optional[ChatModel] = None
    judge: Optional[ChatModel] = None

    async def aclose(self) -> None:
        for model in {id(m): m for m in (self.agent, self.user, self.judge) if m is not None}.values():
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()


def open_model(spec: Optional[ModelSpec]) -> Optional[ChatModel]:
    if spec is None or spec.name == GOLD:
        return None
    from .models import make_chat_model  # lazy: gold runs need no client at all

    return make_chat_model(spec.name, base_url=spec.base_url, api_key_env=spec.api_key_env, **spec.params)


def episode_seed(run_seed: int, subset: str, task_id: str, trial: int) -> int:
    """A stable per-episode seed (independent of hash randomisation and of scheduling order)."""
    digest = hashlib.sha256(f"{run_seed}\x00{subset}\x00{task_id}\x00{trial}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def make_agent(bench: Benchmark, task: Task, agent_spec: ModelSpec, models: Models, seed: int) -> Agent:
    if agent_spec.name == GOLD:
        return bench.gold_agent(task)
    assert models.agent is not None
    return ModelAgent(models.agent, seed=seed)


def make_user(bench: Benchmark, task: Task, agent_spec: ModelSpec, models: Models, seed: int) -> User:
    if agent_spec.name == GOLD or not bench.needs_user_model(task.subset):
        return bench.gold_user(task)
    if models.user is None:
        raise ConfigError(f"{bench.name}/{task.subset} needs a simulated user: pass --user-model")
    return bench.simulated_user(task, models.user, seed=seed)


def describe(spec: Optional[ModelSpec], model: Any) -> Optional[dict]:
    """What config.json records about a model: the spec plus what the client reports (never a key)."""
    if spec is None:
        return None
    info = spec.to_dict()
    if model is not None and hasattr(model, "describe"):
        info["client"] = model.describe()
    return info
