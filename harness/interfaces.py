"""The one interface that every benchmark adapter implements and every consumer (eval, score, train) uses.

A benchmark adapter is a package under ``benchmarks/`` exposing a :class:`Benchmark` subclass, registered
under the ``mua.benchmarks`` entry-point group. The harness only ever talks to it through this module.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable, Optional, Protocol, runtime_checkable

from .metrics import MetricsDeclaration, generic
from .protocol import RunProtocol
from .protocol import generic as generic_protocol
from .types import Finding, Message, Score, Task, ToolCall, ToolSpec, Usage
from .user_facts import SuiteCase, UserFacts


@dataclass
class ToolOutcome:
    """What one tool call returned: the text the caller sees, and whether it counts as an execution error."""

    content: str
    error: bool = False


class Environment(ABC):
    """A fresh world for one episode. Starting one must be cheap (no deep copy or re-parse of a database)."""

    @abstractmethod
    def agent_tools(self, turn: int = 0) -> list[ToolSpec]:
        """Tools the agent may call during user turn ``turn`` (0-based; BFCL miss_func adds tools later)."""

    def user_tools(self) -> list[ToolSpec]:
        """Tools the simulated user may call (tau2 telecom); none by default."""
        return []

    @abstractmethod
    def execute(self, call: ToolCall, requestor: str = "assistant") -> ToolOutcome:
        """Run one call. Malformed arguments, unknown tools and bad types come back as an error outcome with
        the text the official benchmark would show; this never raises for bad model input."""

    async def execute_async(self, call: ToolCall, requestor: str = "assistant") -> ToolOutcome:
        """What the runner awaits. By default the call runs on the event loop (built-in tools are fast, pure
        Python); an environment running code it does not trust (a pack's tools) runs it elsewhere, with a
        time limit, so that other episodes go on meanwhile."""
        return self.execute(call, requestor)

    def state(self) -> Any:
        """The final state, as the scorer and tests see it."""
        return None


@dataclass
class Limits:
    """Budgets the runner enforces. ``None`` means unlimited."""

    max_messages: Optional[int] = None  # messages in the trajectory (tau2's max_steps)
    max_errors: Optional[int] = None  # tool execution errors (tau2's max_errors)
    max_agent_steps_per_turn: Optional[int] = None  # model calls within one user turn (BFCL's step limit)
    max_user_turns: Optional[int] = None  # user messages (ACEBench's dialogue limit)


@dataclass
class EpisodeSpec:
    """Everything the runner needs to play one task, built fresh by :meth:`Benchmark.start`."""

    env: Environment
    system_prompt: str
    opening: list[Message] = field(default_factory=list)  # e.g. tau2's "Hi! How can I help you today?"
    limits: Limits = field(default_factory=Limits)
    agent_stop_marker: Optional[str] = None  # text that ends the episode when the agent says it
    # tau2's protocol: a message that is empty, or has both text and tool calls, ends the episode with
    # agent_error / user_error (which then scores 0).
    single_kind_messages: bool = False


@dataclass(frozen=True)
class AgentPrompt:
    """What the agent is shown before the conversation: the system prompt (may be empty) and the tools it is
    offered during user turn ``turn`` (0-based, as ``Environment.agent_tools``)."""

    system_prompt: str
    tools_at: Callable[[int], list[ToolSpec]]


@runtime_checkable
class ChatModel(Protocol):
    """Anything that completes a chat: an OpenAI-compatible endpoint, a local checkpoint, a training policy."""

    async def chat(self, messages: list[Message], tools: Optional[list[ToolSpec]] = None,
                   seed: Optional[int] = None) -> tuple[Message, Usage]: ...


class Agent(ABC):
    usage: Usage

    @abstractmethod
    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> Optional[Message]:
        """Given the agent's view (system prompt first), return an assistant message (text and/or tool calls).
        None ends the agent's turn without a message (only a replayed transcript does that)."""


class User(ABC):
    usage: Usage

    @abstractmethod
    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> Optional[Message]:
        """Given the whole trajectory so far, return the user's next message (it may carry tool_calls where the
        user has tools), or None when the user has nothing more to say (e.g. a script is exhausted)."""

    def is_stop(self, message: Message) -> bool:
        """Whether this user message ends the conversation (tau2: ###STOP###, ###TRANSFER###...)."""
        return False


@dataclass
class ReplayItem:
    """One trajectory to re-score: from a ``mua score`` input line or an official results file."""

    task: Optional[Task]
    messages: list[Message]
    subset: str
    task_id: str
    variant: Optional[str] = None
    termination: Optional[str] = None
    official: Optional[dict] = None  # the official verdict recorded in the file, when there is one
    error: Optional[str] = None  # set when the item could not be read; it is reported, not scored


@dataclass
class TaskDescription:
    """What ``mua tasks`` shows of one task beside the prompt and tools an episode starts with: the user's
    side (``scenario``), the reference actions, and what the scorer checks. Values are the benchmark's own
    records, JSON-serialisable; None where the benchmark has no such thing."""

    scenario: Any
    expected_actions: Any = None
    criteria: Any = None
    summary: Optional[str] = None  # one line naming what the task is about (default: the scenario, cut short)
    # the same ground truth as titled sections for people (``mua view``), in the order shown; None: derived
    sections: Optional[dict[str, Any]] = None

    def titled_sections(self) -> dict[str, Any]:
        """Titled sections, each a string or JSON-like value: the adapter's own, else scenario, expected
        actions and criteria as recorded (empty ones left out)."""
        if self.sections is not None:
            return self.sections
        parts = {"scenario": self.scenario, "expected actions": self.expected_actions, "evaluation": self.criteria}
        return {title: value for title, value in parts.items() if value not in (None, "", [], {})}


class Benchmark(ABC):
    """A benchmark adapter, bound to its data directory when created (``Benchmark(data_dir)``; the registry's
    ``open_benchmark`` does it). Subclasses set ``name`` and ``subsets`` and implement the methods below."""

    name: str = ""
    subsets: tuple[str, ...] = ()
    default_split: Optional[str] = None
    # What the benchmark reports (see metrics.py); None: mean reward per subset and over subsets.
    metrics: ClassVar[Optional[MetricsDeclaration]] = None
    # How the benchmark's own runner runs it (see protocol.py); None: mua's generic defaults.
    protocol: ClassVar[Optional[RunProtocol]] = None
    # Splits meant for training, never reported (tau2's "train"). Training refuses every other split unless
    # the run names its own train/held-out division (a split file) or forces it (allow_test_split).
    train_splits: tuple[str, ...] = ()
    # The split a policy trained on ``train_splits`` is reported on (disjoint from them); None: default_split.
    held_out_split: Optional[str] = None
    # Whether `mua tasks` lists "gold N of M" (its gold agent with its gold user over every task): for data
    # written against a scripted user's contract, which can change under it (task packs). Training says it
    # for every benchmark, from the gold conversations it plays anyway.
    gold_checked: ClassVar[bool] = False
    # Whether ``user_facts`` can say exactly what a task's user knows (a pack's replies; tau2's are found by
    # patterns): a run's summary carries the user audit only then, and other runs neither compute nor import it.
    exact_user_facts: ClassVar[bool] = False

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)

    @classmethod
    def declared_metrics(cls) -> MetricsDeclaration:
        """What the benchmark reports; ``mua eval`` records it in config.json."""
        return cls.metrics or generic(cls.name, cls.subsets, cls.default_split)

    @classmethod
    def declared_protocol(cls) -> RunProtocol:
        """The benchmark's official run protocol; ``mua eval`` runs it by default and records it."""
        return cls.protocol or generic_protocol()

    @classmethod
    def explain(cls, components: dict[str, Optional[float]], info: dict) -> list[Finding]:
        """Why an episode scored what it scored, one finding per reason (each names its score component), read
        from a stored episode row only (its ``components`` and the ``info`` the scorer wrote), so old runs
        explain themselves and no data is needed; ``mua view`` shows them. Adapters override this to spell out
        their findings (the missing action, the failed assertion, the differing state), reading ``info``
        through the same typed record their scorer writes it with; this default names the components that
        failed or were skipped."""
        findings = []
        for name, value in components.items():
            if value is None:
                findings.append(Finding(name, f"{name}: not computed (unknown)"))
            elif value < 1.0:
                findings.append(Finding(name, f"{name}: {value:g}"))
        return findings

    def end_state_diff(self, task: Task, messages: list[Message]) -> Optional[list[dict]]:
        """Where the end state of the episode ``messages`` (replayed in a fresh environment) differs from the end
        state the task's gold actions produce: ``[{"path", "episode", "gold"}]``, empty when they are equal.
        None for a benchmark without a database to compare (the default)."""
        return None

    @abstractmethod
    def load_tasks(self, subset: str, split: Optional[str] = None) -> list[Task]:
        """Tasks of one subset (and split); raises DataError naming the missing or bad file. Every data file
        that ``start`` and ``score`` will read is checked here, so bad data fails once, before any episode."""

    @abstractmethod
    def start(self, task: Task) -> EpisodeSpec:
        """A fresh environment and prompt for one episode of ``task``."""

    def agent_prompt(self, task: Task) -> "AgentPrompt":
        """The agent's system prompt and its tools at each user turn, read without starting an episode (``mua
        export`` reads them for every row). Adapters override this with a cheap form; the default starts an
        episode, whose environment then answers ``tools_at``."""
        spec = self.start(task)
        return AgentPrompt(spec.system_prompt, spec.env.agent_tools)

    def limits(self, task: Task) -> Limits:
        """The budgets of an episode of ``task``, read without starting one (``start(task).limits`` is the
        same). Adapters override this with a cheap form; the default starts an episode."""
        return self.start(task).limits

    @abstractmethod
    def gold_agent(self, task: Task) -> Agent:
        """An agent that replays the task's reference actions."""

    @abstractmethod
    def gold_user(self, task: Task) -> User:
        """The user that goes with the gold agent (or the benchmark's scripted user)."""

    def needs_user_model(self, subset: str) -> bool:
        """Whether a model-driven run of ``subset`` needs a user model (an LLM user simulator). By default:
        whenever the adapter provides its own ``simulated_user``."""
        return type(self).simulated_user is not Benchmark.simulated_user

    def default_user_model(self, subset: str) -> Optional[str]:
        """The model that plays the LLM user of ``subset`` when a run names none (a model name or a checkpoint
        path, as ``--user-model`` takes it); a run's own user model replaces it (recorded as an override). None
        (the default): the run must name one."""
        return None

    def simulated_user(self, task: Task, model: ChatModel, seed: Optional[int] = None) -> User:
        """The LLM user simulator played by ``model``. Benchmarks with a scripted user return that instead."""
        return self.gold_user(task)

    @abstractmethod
    async def score(self, task: Task, messages: list[Message], *, env: Optional[Environment] = None,
                    termination: Optional[str] = None, judge: Optional[ChatModel] = None) -> Score:
        """Score a trajectory (the one entry point: the runner, ``mua score`` and training all await it).
        ``env`` is the episode's final environment when scoring right after a run; when it is None the adapter
        replays ``messages`` in a fresh environment (tool results in the messages are never trusted).
        ``termination`` None means: derive it from the messages, as documented by the adapter. ``judge`` is
        the LLM judge for judged components (None: they are skipped, reported as None)."""

    def unjudged_checks(self, tasks: list[Task]) -> Optional[str]:
        """What a run of ``tasks`` without a judge model leaves unscored, as one sentence for the user (said
        once when the run starts); None when every check can be decided without a judge."""
        return None

    def user_suite(self, tasks: list[Task]) -> Optional[list[SuiteCase]]:
        """The adversarial agent messages every user of ``tasks`` is scored on (``harness/users/suite.py``), or
        None when the benchmark does not say what its users' facts are."""
        return None

    def user_facts(self, task: Task) -> Optional[UserFacts]:
        """What the user of ``task`` knows (``mua users audit``); None: the benchmark does not say."""
        return None

    def user_asked(self, task: Task, text: str) -> Optional[list[str]]:
        """The fact kinds an agent message asks for under the benchmark's scripted user's contract; None: it
        has no such contract (then answers to keyword-stuffed messages are not measured)."""
        return None

    def done_at(self, task: Task, messages: list[Message]) -> Optional[int]:
        """The index of the message after which ``task`` is done (every expected action made, everything to
        tell told); ``len(messages)`` when it never is; None when the benchmark cannot tell."""
        return None

    def read_official(self, path: Path) -> Optional[Iterable[ReplayItem]]:
        """Items from one of the benchmark's own results files, or None if ``path`` is not such a file."""
        return None

    def split_for_variant(self, variant: Optional[str]) -> Optional[str]:
        """Which task split a ``mua score`` line's ``variant`` selects (e.g. BFCL "v4" data); default: all
        tasks of the subset (None)."""
        return None

    def splits(self, subset: str) -> list[Optional[str]]:
        """The task splits of ``subset`` (None: all its tasks, for a benchmark without named splits), default
        first. By default the splits the metrics declaration sizes for ``subset``; adapters whose splits come
        from their data (packs) override it."""
        names = [s.split for s in self.declared_metrics().full_splits if subset in s.tasks]
        if self.default_split in names:
            names.remove(self.default_split)
            names.insert(0, self.default_split)
        return names or [self.default_split]

    def describe_task(self, task: Task) -> TaskDescription:
        """The task as ``mua tasks`` shows it. By default the scenario and the evaluation record as they are;
        adapters split out the expected actions."""
        return TaskDescription(scenario=task.scenario, criteria=task.evaluation)

    def find_task(self, subset: str, task_id: str) -> Task:
        """Look a task up by id across all splits of a subset; KeyError when absent."""
        for task in self.load_tasks(subset, split=None):
            if task.id == task_id:
                return task
        raise KeyError(f"{self.name}/{subset}: no task with id {task_id!r}")
