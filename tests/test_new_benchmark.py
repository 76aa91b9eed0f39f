"""Adding a benchmark touches no harness code: a throwaway fourth benchmark, written as its own package and
registered through the ``mua.benchmarks`` entry-point group as a third-party adapter would be, runs through
`mua eval`, `mua leaderboard` and `mua gate`; the results still read once the adapter is gone."""
import json
import sys
import textwrap

import pytest

from mua.harness import registry
from mua.harness.cli import main
from mua.harness.errors import ConfigError

PACKAGE = '''
"""Dice: roll the die until it shows the target (a toy benchmark)."""
import json

from mua.harness.agents import ScriptedAgent
from mua.harness.interfaces import Benchmark, EpisodeSpec, Environment, ToolOutcome
from mua.harness.metrics import SUCCESS, Metric, MetricsDeclaration, SplitSize
from mua.harness.types import Message, Score, Task, ToolCall, ToolSpec
from mua.harness.users.simulator import ScriptedUser

SET = ToolSpec("set_die", "Put the die on a face.", {"type": "object", "properties": {"face": {"type": "integer"}},
                                                      "required": ["face"]})


class DiceEnv(Environment):
    def __init__(self):
        self.face = 1

    def agent_tools(self, turn=0):
        return [SET]

    def execute(self, call, requestor="assistant"):
        try:
            face = call.parsed_arguments().get("face")
        except ValueError as e:
            return ToolOutcome(f"Error: {e}", error=True)
        if call.name != "set_die" or not isinstance(face, int):
            return ToolOutcome("Error: bad call", error=True)
        self.face = face
        return ToolOutcome(str(face))

    def state(self):
        return self.face


class DiceBenchmark(Benchmark):
    name = "dice"
    subsets = ("d6", "d20")
    metrics = MetricsDeclaration(
        benchmark="dice", subsets=subsets,
        metrics=(Metric(SUCCESS, "dice/{subset}", overall="dice overall", combine="pooled", summary="accuracy"),),
        full_splits=(SplitSize(None, {"d6": 3, "d20": 3}),), headline=("dice overall",))

    def load_tasks(self, subset, split=None):
        sides = int(subset[1:])
        return [Task(id=str(i), benchmark=self.name, subset=subset, scenario=f"show {sides - i}",
                     evaluation={"face": sides - i}) for i in range(3)]

    def start(self, task):
        return EpisodeSpec(env=DiceEnv(), system_prompt="You handle a die.")

    def gold_agent(self, task):
        # the gold agent of task "2" errs, so the run is not a trivial 100%
        face = task.evaluation["face"] + (1 if task.id == "2" else 0)
        call = ToolCall(id="c0", name="set_die", arguments=json.dumps({"face": face}))
        return ScriptedAgent([[Message(role="assistant", tool_calls=[call]), Message(role="assistant", content="ok")]])

    def gold_user(self, task):
        return ScriptedUser([task.scenario])

    async def score(self, task, messages, *, env=None, termination=None, judge=None):
        if env is None:
            env = DiceEnv()
            for m in messages:
                for c in (m.tool_calls or []) if m.role == "assistant" else []:
                    env.execute(c)
        ok = float(env.state() == task.evaluation["face"])
        return Score(reward=ok, components={"face": ok})
'''


@pytest.fixture
def dice_installed(tmp_path, monkeypatch):
    """The package plus a dist-info with its entry point, on sys.path: what `pip install` of it would leave."""
    site = tmp_path / "site"
    (site / "dicebench").mkdir(parents=True)
    (site / "dicebench" / "__init__.py").write_text(textwrap.dedent(PACKAGE))
    info = site / "dicebench-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dicebench\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[mua.benchmarks]\ndice = dicebench:DiceBenchmark\n")
    monkeypatch.syspath_prepend(str(site))
    registry._entry_points.cache_clear()
    yield
    _uninstall(tmp_path, monkeypatch)


def _uninstall(tmp_path, monkeypatch):
    """What `pip uninstall dicebench` leaves: no package, no entry point, nothing loaded."""
    monkeypatch.setattr(sys, "path", [p for p in sys.path if not p.startswith(str(tmp_path))])
    registry._entry_points.cache_clear()
    registry._classes.pop("dice", None)
    for key in [k for k in registry._instances if k[0] == "dice"]:
        del registry._instances[key]
    sys.modules.pop("dicebench", None)


def test_a_fourth_benchmark_runs_through_eval_leaderboard_and_gate(tmp_path, dice_installed, monkeypatch, capsys):
    out = tmp_path / "dice-gold"
    args = ["eval", "--benchmark", "dice", "--agent", "gold", "--no-progress", "--data-dir", str(tmp_path)]
    assert main([*args, "--out", str(out)]) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["metrics"]["benchmark"] == "dice" and config["metrics"]["headline"] == ["dice overall"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["overall"]["accuracy"] == pytest.approx(4 / 6)  # task "2" fails in both subsets
    assert summary["overall"]["by_subset"]["d6"] == {"accuracy": pytest.approx(2 / 3)}
    assert main([*args, "--out", str(tmp_path / "dice-one"), "--task-ids", "0"]) == 0
    capsys.readouterr()

    _uninstall(tmp_path, monkeypatch)  # results are read from what config.json recorded
    with pytest.raises(ConfigError, match="unknown benchmark 'dice'"):
        registry.benchmark_class("dice")
    assert main(["leaderboard", str(out), str(tmp_path / "dice-one"), "--detail"]) == 0
    table = capsys.readouterr().out
    assert table.index("dice overall") < table.index("dice/d20") < table.index("dice/d6")  # headline, then sorted
    assert "66.7 [" in table and "n=6" in table and "n=2 t" in table  # the selection is flagged against 3
    assert main(["gate", "--baseline", str(out), "--candidate", str(out)]) == 0
    assert "PASS" in capsys.readouterr().out
    assert main(["gate", "--baseline", str(out), "--candidate", str(tmp_path / "dice-one")]) == 1
    assert "candidate lacks 4 of the baseline's 6 tasks" in capsys.readouterr().out
