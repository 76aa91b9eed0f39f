"""Malformed packs fail with one DataError naming the file, the record and the field."""
import json
import shutil
from pathlib import Path

import pytest

from mua.benchmarks.pack import PackBenchmark
from mua.harness.errors import ConfigError, DataError

EXAMPLE = Path(__file__).resolve().parents[3] / "benchmarks/pack/examples/bookings"


def pack_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "pack"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__", "generate.py"))
    return folder


def edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def load(folder: Path, split=None):
    return PackBenchmark(folder).load_tasks("tasks", split)


def test_example_loads(tmp_path):
    folder = pack_copy(tmp_path)
    assert len(load(folder, "train")) == 800 and len(load(folder, "test")) == 80
    spec = PackBenchmark(folder).start(load(folder, "test")[0]).env.agent_tools()[0]
    assert spec.name == "book_table" and spec.parameters["required"] == ["name", "seat", "hour"]
    assert spec.parameters["properties"]["hour"]["type"] == "integer"
    assert spec.parameters["properties"]["name"]["description"].startswith("the customer's name")


@pytest.mark.parametrize("change, message", [
    (lambda t: t[3].pop("id"), "tasks.json, record 3: field 'id'"),
    (lambda t: t[4].update(id=t[3]["id"]), "duplicate id"),
    (lambda t: t[2].pop("user_scenario"), "field 'user_scenario': expected a JSON object"),
    (lambda t: t[2]["user_scenario"]["instructions"].pop("reason_for_call"),
     "user_scenario.instructions: field 'reason_for_call'"),
    (lambda t: t[1]["user_scenario"]["replies"][0].update(when=[]), "user_scenario.replies[0]: field 'when'"),
    (lambda t: t[1]["user_scenario"].pop("replies"), "the user is scripted"),
    (lambda t: t[0]["evaluation_criteria"]["actions"][0].update(name="book"),
     "evaluation_criteria.actions[0]: field 'name': 'book' is not a tool"),
    (lambda t: t[0]["evaluation_criteria"].update(reward_basis=["DB", "ENV_ASSERTION"]), "field 'reward_basis'"),
])
def test_bad_task_names_record_and_field(tmp_path, change, message):
    folder = pack_copy(tmp_path)
    edit(folder / "tasks.json", change)
    with pytest.raises(DataError, match="^pack: .*" + message.replace("[", r"\[").replace("]", r"\]")
                       .replace("(", r"\(").replace(")", r"\)")):
        load(folder)


def test_bad_task_message_names_task_id(tmp_path):
    folder = pack_copy(tmp_path)
    edit(folder / "tasks.json", lambda t: t[5]["evaluation_criteria"]["actions"][0].update(arguments=[1]))
    with pytest.raises(DataError, match=r"tasks.json, task 'book-005', evaluation_criteria.actions\[0\]: "
                                        "field 'arguments'"):
        load(folder)


@pytest.mark.parametrize("name, text, message", [
    ("pack.json", '{"user": "scripted"}', "pack.json: field 'name'"),
    ("pack.json", '{"name": "x", "user": "robot"}', "pack.json: field 'user' must be one of"),
    ("pack.json", '{"name": "x", "max_errors": 0}', "pack.json: field 'max_errors'"),
    ("pack.json", '{"name": "x", "user_prompt": "all"}', "pack.json: field 'user_prompt' must be one of"),
    ("db.json", '{"bookings": []}', "db.json, table 'bookings'"),
    ("splits.json", '{"train": ["nope"]}', "splits.json, split 'train': unknown task id 'nope'"),
    ("tasks.json", '{"id": 1}', "tasks.json: expected a list"),
    ("tools.py", "def book(db, n):\n    '''Book.'''\n", "tools.py, tool book: parameter n needs a type annotation"),
    ("tools.py", "def book(db, n: int):\n    pass\n", "tools.py, tool book: needs a docstring"),
    ("tools.py", "def book(db, n: set):\n    '''Book.'''\n", "tools.py, tool book, parameter n: unsupported type"),
    ("tools.py", "import nosuchmodule_xyz\n", "importing tools.py failed: ModuleNotFoundError"),
    ("tools.py", "X = 1\n", "tools.py defines no tool functions"),
])
def test_bad_files(tmp_path, name, text, message):
    folder = pack_copy(tmp_path)
    (folder / name).write_text(text)
    with pytest.raises(DataError, match=message.replace("(", r"\(")):
        load(folder)


def test_missing_and_invalid_files(tmp_path):
    folder = pack_copy(tmp_path)
    (folder / "policy.md").unlink()
    with pytest.raises(DataError, match="policy.md: missing"):
        load(folder)
    folder = pack_copy(tmp_path / "b")
    (folder / "db.json").write_text("{nope")
    with pytest.raises(DataError, match="db.json: it is not valid JSON"):
        load(folder)
    with pytest.raises(DataError, match="is not a folder"):
        load(tmp_path / "absent")


def test_split_errors(tmp_path):
    folder = pack_copy(tmp_path)
    with pytest.raises(ConfigError, match="unknown split 'base'; valid: train, validation, test"):
        load(folder, "base")
    (folder / "splits.json").unlink()
    with pytest.raises(ConfigError, match="no splits.json.*--all-tasks"):
        load(folder, "test")
    assert len(load(folder)) == 920
    with pytest.raises(ConfigError, match="one subset, 'tasks'"):
        PackBenchmark(folder).load_tasks("retail")
