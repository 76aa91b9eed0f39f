"""The contract between the shared tau2 machinery and one tau2 domain (retail, airline, telecom).

The shared code (``environment.py``, ``gold.py``, ``scoring.py``, ``findings.py``, ``toolkit.py``) never looks
inside a domain's database; a domain package (``benchmarks/tau2/<domain>/``, laid out like upstream: data
model / tools / environment) provides everything below through one :class:`Tau2Domain` object. A task pack
(``benchmarks/pack/``) is one more such domain, read from data.

How the pieces fit:

* ``Tau2Domain.load(data_dir)`` parses the domain's database files ONCE per process (callers cache it through
  :func:`benchmarks.tau2.registry.get_domain`); the parsed base is shared read-only by every episode.
* ``new_state()`` returns a cheap per-episode state. Domains use copy-on-write (see ``overlay.py``): the
  state holds only the records a tool changed, each copied just before its first write. Starting an episode
  must not copy or re-parse the database.
* ``agent_tools`` / ``user_tools`` map a tool name to a :class:`ToolDef` (built by ``toolkit.py`` from the
  tool's implementation and upstream's description text): the exact OpenAI schema tau2 shows the model,
  whether it mutates state (only mutating calls are re-executed when scoring, as upstream), and the
  implementation ``func(state, **arguments)``. Argument binding, exception-to-"Error: ..." conversion and
  result serialisation are done once for all domains in ``environment.py``; a tool just returns a value or
  raises (``ValueError`` etc.) with upstream's message.
* Return values are serialised as tau2 does (``Environment.to_json_str``): a :class:`Record` (a pydantic
  model dump, keys in model-field order) is written verbatim with ``json.dumps``; plain ``str`` results are
  passed through; containers and scalars follow tau2's rules (see ``environment.serialise``).
* ``initialise(state, initial_state)`` applies a task's ``initial_state.initialization_data`` and
  ``initialization_actions`` (the message history part is replayed by the shared environment code).
* ``run_env_function(state, env_type, func_name, arguments)`` runs a non-tool toolkit function by name
  (initialisation actions and ``env_assertions``; telecom). ``env_type`` is "assistant" or "user".
* ``fingerprint(state)`` returns a value that is equal for two states exactly when tau2's DB hashes (agent DB
  and user DB) would be equal. It is what the DB check compares.
* The gold replay of ``evaluation_criteria.actions`` goes through ``execute`` with each action's
  ``requestor`` ("assistant" when missing); errors there are swallowed as upstream does.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping, Optional

from mua.harness.types import ToolSpec


class Record(dict):
    """A pydantic model dump: its key order and value types are final, so it is serialised verbatim."""


def copy_tree(value: Any) -> Any:
    """A deep copy of JSON-like data that keeps :class:`Record` (several times faster than ``copy.deepcopy``,
    which rebuilds a dict subclass through its pickling protocol). Tuples and scalars are shared: no database
    read from JSON holds a mutable object inside either."""
    if isinstance(value, dict):
        return type(value)((k, copy_tree(v)) for k, v in value.items())
    if isinstance(value, list):
        return [copy_tree(v) for v in value]
    return value


@dataclass(frozen=True)
class Param:
    """One parameter of a tool function, in signature order (used to bind arguments like Python does)."""

    name: str
    required: bool = True


@dataclass(frozen=True)
class ToolDef:
    """One tool of a domain.

    ``owner`` is the upstream toolkit class name (e.g. ``RetailTools``): Python's own binding errors name the
    bound method, e.g. "RetailTools.get_order_details() missing 1 required positional argument: 'order_id'",
    and tau2 shows that text to the agent.
    """

    spec: ToolSpec
    func: Callable[..., Any]
    params: tuple[Param, ...]
    owner: str
    mutates: bool = False
    kind: str = "read"  # tau2 ToolType: read / write / think / generic


@dataclass
class Tau2Domain(ABC):
    """A loaded domain: policy text, tools and the shared base database."""

    name: ClassVar[str]
    policy: str
    agent_tools: Mapping[str, ToolDef]
    user_tools: Mapping[str, ToolDef] = field(default_factory=dict)

    @classmethod
    @abstractmethod
    def load(cls, data_dir: Path) -> "Tau2Domain":
        """Parse the domain's files under ``data_dir/tau2/domains/<name>/`` (raises DataError)."""

    @abstractmethod
    def new_state(self) -> Any:
        """A fresh per-episode state over the shared base (cheap: no copy of the database)."""

    def initialise(self, state: Any, initial_state: Optional[dict]) -> None:
        """Apply a task's initialization_data / initialization_actions. Retail and airline have none."""
        if initial_state and (initial_state.get("initialization_data") or
                              initial_state.get("initialization_actions")):
            raise NotImplementedError(f"tau2 {self.name}: initial_state is not supported by this domain")

    def run_env_function(self, state: Any, env_type: str, func_name: str, arguments: dict) -> Any:
        """Run a toolkit function by name (initialisation actions, env assertions)."""
        raise NotImplementedError(f"tau2 {self.name}: no environment functions")

    @abstractmethod
    def fingerprint(self, state: Any) -> Any:
        """Comparable final database state: equal exactly when tau2's DB hashes would be equal."""

    def tools_for(self, requestor: str) -> Mapping[str, ToolDef]:
        return self.user_tools if requestor == "user" else self.agent_tools
