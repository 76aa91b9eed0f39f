"""Builds the objects of one episode from names: which agent, which user, with which models and seeds."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from ..agents import ModelAgent
from ..errors import ConfigError, DataError
from ..interfaces import Agent, Benchmark, ChatModel, User
from ..io.files import read_json
from ..io.urls import redact_url
from ..types import Task, Usage

GOLD = "gold"


@dataclass
class ModelSpec:
    """A model named on the command line: an endpoint model name or a local checkpoint path."""

    name: str
    base_url: Optional[str] = None
    params: dict = field(default_factory=dict)  # temperature, max_tokens, ...
    api_key_env: str = "OPENAI_API_KEY"  # the variable's name is recorded, never its value
    seed: bool = True  # send the episode's seed with each request (some official runners send none)
    # the benchmark's gold agent (`--agent gold`), not a model: a model may well be named "gold"
    gold: bool = False  # the gold agent: ModelSpec(name=GOLD, gold=True)

    def to_dict(self) -> dict:
        """What config.json records (the gold agent as {"name": "gold", ...}, as it always has been; a password in
        the base URL masked)."""
        out = asdict(self)
        del out["gold"]
        if out["base_url"]:
            out["base_url"] = redact_url(out["base_url"])
        return out


def looks_like_path(name: str) -> bool:
    """A local path rather than a served model's name ("Qwen/Qwen3-8B" is a name; "./ckpt", "/x", "~/x" are
    paths)."""
    return name.startswith(("/", "./", "../", "~")) or name.endswith("/") or name in (".", "..")


@dataclass
class Models:
    """The live chat models of a run (None where not used). Created once, shared by all episodes."""

    agent: Optional[ChatModel] = None
    user: Optional[ChatModel] = None
    judge: Optional[ChatModel] = None
    # the player of the role a person plays at the terminal (`mua play`: RunPlan.person), as it is, every episode
    person: Optional[Union[Agent, User]] = None

    def distinct(self) -> list[ChatModel]:
        return list({id(m): m for m in (self.agent, self.user, self.judge) if m is not None}.values())

    async def aclose(self) -> None:
        for model in self.distinct():
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()

    async def check_alive(self) -> None:
        """Preflight before the first episode: every endpoint answers, or one clear error names its URL."""
        for model in self.distinct():
            check = getattr(model, "check_alive", None)
            if check is not None:
                await check()

    def silent_endpoint(self, limit_s: float) -> Optional[str]:
        """The first endpoint that has left requests unanswered for more than ``limit_s`` seconds, as text."""
        for model in self.distinct():
            silent = getattr(model, "silent_for", lambda: None)()
            if silent is not None and silent > limit_s:
                return redact_url(f"{getattr(model, 'base_url', model)} has not answered for {silent:.0f} s")
        return None


def open_model(spec: Optional[ModelSpec]) -> Optional[ChatModel]:
    if spec is None or spec.gold:
        return None
    from ..models import make_chat_model  # lazy: gold runs need no client at all

    model = make_chat_model(spec.name, base_url=spec.base_url, api_key_env=spec.api_key_env, **spec.params)
    return model if spec.seed else Unseeded(model)


class Unseeded:
    """A chat model whose requests carry no seed, whatever the caller passes (a benchmark protocol whose
    runner sends none). Everything else is the wrapped model's."""

    def __init__(self, model: ChatModel):
        self.model = model

    async def chat(self, messages, tools=None, seed=None):
        return await self.model.chat(messages, tools, seed=None)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)


class UsageCounter:
    """A chat model that counts the usage of the calls made through it (one episode's judge: the agent and
    the user count their own). Everything else is the wrapped model's."""

    def __init__(self, model: ChatModel):
        self.model = model
        self.usage = Usage()

    async def chat(self, messages, tools=None, seed=None):
        reply, usage = await self.model.chat(messages, tools, seed=seed)
        self.usage.add(usage)
        return reply, usage

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)


def make_agent(bench: Benchmark, task: Task, agent_spec: ModelSpec, models: Models, seed: int) -> Agent:
    if agent_spec.gold:
        return bench.gold_agent(task)
    assert models.agent is not None
    return ModelAgent(models.agent, seed=seed)


def make_user(bench: Benchmark, task: Task, user_model: Optional[ChatModel], seed: int,
              scripted: bool = False) -> User:
    """The user of one episode: the benchmark's simulator played by ``user_model`` where the subset needs a
    user model, else (or with ``scripted``: gold runs, smoke tests) the benchmark's scripted user."""
    if scripted or not bench.needs_user_model(task.subset):
        return bench.gold_user(task)
    if user_model is None:
        raise ConfigError(f"{bench.name}/{task.subset} needs a simulated user: pass --user-model")
    return bench.simulated_user(task, user_model, seed=seed)


TRAIN_CONFIG = "train_config.json"  # written by `mua train` beside the model it trains
TRAINED_TASKS = "trained_tasks"  # its "subset/task id" keys of the tasks trained on
TRAINED_ON = ("benchmark", "subsets", "split", "split_file", "allow_test_split", TRAINED_TASKS)


def trained_on(model_name: str) -> Optional[dict]:
    """For a checkpoint written by `mua train`: the tasks it was trained on, as its train_config.json says
    (so every score of the model can be traced to its training split)."""
    path = Path(model_name) / TRAIN_CONFIG
    try:
        saved = read_json(path, what="train config") if path.is_file() else None
    except DataError:
        return {"unreadable": str(path)}
    if not isinstance(saved, dict):
        return None
    return {k: saved.get(k) for k in TRAINED_ON}
