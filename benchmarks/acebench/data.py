"""Reading the ACEBench agent data: records joined with their possible answers, prompts, default states, tools.

Layout under ``data_dir/acebench``: ``{en,zh}/data_agent_{multi_turn,multi_step}.json`` (JSON Lines), the same
names under ``possible_answer/``, ``default_states.json`` and ``protocol_constants.json`` (see the data README).
Everything a task needs at episode start (default states, prompts, tools) is resolved here once, so
``Benchmark.start`` stays cheap.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from mua.harness.errors import DataError
from mua.harness.io.datafiles import load_json, load_jsonl
from mua.harness.types import Task, ToolSpec

from ..records import check_items, check_kind, check_object, fail, record_label
from .apis import SCENARIO_CLASSES

BENCHMARK = "acebench"
SUBSETS: dict[str, tuple[str, str]] = {
    "agent_multi_turn_en": ("en", "multi_turn"),
    "agent_multi_step_en": ("en", "multi_step"),
    "agent_multi_turn_zh": ("zh", "multi_turn"),
    "agent_multi_step_zh": ("zh", "multi_step"),
}
FINISH = "finish conversation"  # protocol_constants limits.finish_sentinel


@dataclass(frozen=True)
class World:
    """What an episode of one record needs, shared read-only between episodes (environments copy lazily)."""

    lang: str
    category: str  # "multi_turn" | "multi_step"
    involved_classes: tuple[str, ...]
    initial_config: dict
    defaults: dict  # class name -> constructor attributes (vars() order), decoded; never mutated
    saved_attributes: dict  # class name -> attributes the checker compares (SAVED_CLASS)
    tools: tuple[ToolSpec, ...]


def decode_tagged(value: Any) -> Any:
    """Undo the data files' tagged-object encoding (dicts with non-str keys, sets, tuples, datetimes)."""
    if isinstance(value, list):
        return [decode_tagged(v) for v in value]
    if not isinstance(value, dict):
        return value
    kind = value.get("__type__")
    if kind == "dict":
        return {decode_tagged(k): decode_tagged(v) for k, v in value["items"]}
    if kind == "set":
        return set(decode_tagged(v) for v in value["items"])
    if kind == "tuple":
        return tuple(decode_tagged(v) for v in value["items"])
    if kind == "datetime":
        return _dt.datetime.fromisoformat(value["value"])
    return {k: decode_tagged(v) for k, v in value.items()}


PROTOCOL_FILE = "acebench/protocol_constants.json"
STATES_FILE = "acebench/default_states.json"


def _used_constants() -> dict[str, type]:
    """The protocol constants the adapter reads (see ``_prompts``), with their kinds."""
    used: dict[str, type] = {"SAVED_CLASS": dict}
    for lang in ("en", "zh"):
        up = lang.upper()
        for key in (f"multi_step.APIModel_agent.MULTI_TURN_AGENT_PROMPT_SYSTEM_{up}",
                    f"multi_turn.APIModel_agent.MULTI_TURN_AGENT_PROMPT_SYSTEM_{up}",
                    f"prompt_{lang}.TRAVEL_PROMPT_{up}", f"prompt_{lang}.BASE_PROMPT_{up}",
                    f"multi_turn.APIModel_user.SYSTEM_PROMPT_BASE_{up}",
                    f"multi_turn.APIModel_user.SYSTEM_PROMPT_TRAVEL_{up}",
                    f"multi_turn.APIModel_user.first_user_message_{lang}"):
            used[key] = str
    return used


USED_CONSTANTS = _used_constants()


@lru_cache(maxsize=8)
def protocol(data_dir: str) -> dict[str, Any]:
    """``protocol_constants.json`` as {key: value}; every constant the adapter uses is checked here."""
    raw = load_json(Path(data_dir), PROTOCOL_FILE)
    constants = check_object(raw, PROTOCOL_FILE, {"constants": dict})["constants"]
    values = {key: check_object(entry, f"{PROTOCOL_FILE}, constants/{key}", {"value": object})["value"]
              for key, entry in constants.items()}
    check_object(values, f"{PROTOCOL_FILE}, constants/*/value", USED_CONSTANTS)
    return values


@lru_cache(maxsize=8)
def default_states(data_dir: str) -> dict[str, dict[str, dict]]:
    """{lang: {class: constructor attributes}} (the multi_turn entries; multi_step ones are identical)."""
    raw = load_json(Path(data_dir), STATES_FILE)
    states = check_object(raw, STATES_FILE, {"states": dict})["states"]
    check_object(states, f"{STATES_FILE}, states", {"en": dict, "zh": dict})
    out = {}
    for lang in ("en", "zh"):
        where = f"{STATES_FILE}, states/{lang}"
        classes = check_object(states[lang], where, {"multi_turn": dict})["multi_turn"]
        out[lang] = {name: _decoded_state(entry, f"{where}/multi_turn/{name}") for name, entry in classes.items()}
    return out


def _decoded_state(entry: Any, where: str) -> dict:
    after_init = check_object(entry, where, {"after_init": dict})["after_init"]
    try:
        return decode_tagged(after_init)
    except (KeyError, TypeError, ValueError) as e:
        raise fail(where, f"after_init holds a malformed tagged value ({type(e).__name__}: {e})") from None


def tool_specs(functions: list[dict]) -> tuple[ToolSpec, ...]:
    """OpenAI function schemas from a record's ``function`` list (upstream writes type names like dict/list)."""
    return tuple(ToolSpec(name=f["name"], description=f.get("description", ""),
                          parameters=_json_schema(f.get("parameters") or {"type": "dict", "properties": {}}))
                 for f in functions)


_TYPE_NAMES = {"dict": "object", "list": "array", "tuple": "array", "float": "number", "int": "integer",
               "str": "string", "bool": "boolean", "any": None}


def _json_schema(node: Any) -> Any:
    if isinstance(node, list):
        return [_json_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, str):
            mapped = _TYPE_NAMES.get(value, value)
            if mapped is not None:
                out["type"] = mapped
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: _json_schema(sub) for name, sub in value.items()}
        else:
            out[key] = _json_schema(value)
    if out.get("type") == "object":
        out.setdefault("properties", {})
    return out


RECORD_KEYS: dict[str, Any] = {"id": str, "question": str, "function": list, "involved_classes": list}
RECORD_OPTIONAL = {"initial_config": dict}
FUNCTION_KEYS, FUNCTION_OPTIONAL = {"name": str}, {"description": str, "parameters": dict}
ANSWER_KEYS: dict[str, Any] = {"id": str, "ground_truth": list, "mile_stone": list}


def _check_record(rec: Any, where: str) -> dict:
    check_object(rec, where, RECORD_KEYS, RECORD_OPTIONAL)
    check_items(rec["involved_classes"], str, where, "involved_classes")
    for i, function in enumerate(rec["function"]):
        check_object(function, f"{where}, function[{i}]", FUNCTION_KEYS, FUNCTION_OPTIONAL)
    return rec


def _check_answer(answer: Any, where: str) -> dict:
    check_object(answer, where, ANSWER_KEYS)
    check_items(answer["ground_truth"], dict, where, "ground_truth")
    for i, milestone in enumerate(answer["mile_stone"]):  # a list of calls, or a list of such lists
        check_kind(milestone, (str, list), where, f"mile_stone[{i}]")
        if isinstance(milestone, list):
            check_items(milestone, str, where, f"mile_stone[{i}]")
    return answer


def load_tasks(data_dir: Path, subset: str) -> list[Task]:
    if subset not in SUBSETS:
        raise DataError(f"acebench has no subset {subset!r}; known: {', '.join(SUBSETS)}")
    lang, category = SUBSETS[subset]
    record_file = f"acebench/{lang}/data_agent_{category}.json"
    answer_file = f"acebench/{lang}/possible_answer/data_agent_{category}.json"
    records = [_check_record(r, record_label(record_file, n, r))
               for n, r in enumerate(load_jsonl(data_dir, record_file), 1)]
    answers = {a["id"]: a for a in (_check_answer(a, record_label(answer_file, n, a))
                                    for n, a in enumerate(load_jsonl(data_dir, answer_file), 1))}
    consts = protocol(str(data_dir))
    defaults = default_states(str(data_dir))[lang]
    saved = consts["SAVED_CLASS"]
    tasks = []
    for rec in records:
        answer = answers.get(rec["id"])
        if answer is None:
            raise DataError(f"{answer_file} has no answer for {rec['id']!r}")
        unknown = [c for c in rec["involved_classes"] if c not in SCENARIO_CLASSES or c not in defaults]
        if unknown:
            raise DataError(f"acebench record {rec['id']} involves unknown classes {unknown}")
        world = World(lang=lang, category=category, involved_classes=tuple(rec["involved_classes"]),
                      initial_config=rec.get("initial_config") or {},
                      defaults={c: defaults[c] for c in rec["involved_classes"]},
                      saved_attributes={c: tuple(saved.get(c, ())) for c in rec["involved_classes"]},
                      tools=tool_specs(rec["function"]))
        tasks.append(Task(id=rec["id"], benchmark=BENCHMARK, subset=subset, scenario=rec["question"],
                          initial_state=world.initial_config,
                          evaluation={"ground_truth": answer["ground_truth"], "mile_stone": answer["mile_stone"]},
                          raw=rec, context=AceContext(world, _prompts(consts, lang, category, rec))))
    return tasks


@dataclass(frozen=True)
class AceContext:
    """What an ACEBench episode needs beyond the Task fields: the world to build and the prompts."""

    world: World
    prompts: dict[str, str]  # "system", and for multi_turn the user simulator's "user_system", "user_greeting"


def _prompts(consts: dict, lang: str, category: str, rec: dict) -> dict[str, str]:
    """The agent system prompt and (multi_turn) the user-simulator prompt and greeting for one record.

    multi_turn: the official agent system prompt plus the travel and/or phone domain prompts, appended as upstream
    does. multi_step: the official multi-step system prompt of the record's own language. (Upstream's API-model
    path sends the zh prompts even for en data because of a defaulted constructor argument; its local-model path
    uses the record's language. mua uses the record's language; the verdict does not depend on it.)
    The upstream user-message template (tool list + transcript) is not used: mua gives the tools as function
    schemas and the dialogue as chat messages.
    """
    up = lang.upper()
    classes = rec["involved_classes"]
    if category == "multi_step":
        return {"system": consts[f"multi_step.APIModel_agent.MULTI_TURN_AGENT_PROMPT_SYSTEM_{up}"]}
    system = consts[f"multi_turn.APIModel_agent.MULTI_TURN_AGENT_PROMPT_SYSTEM_{up}"]
    if "Travel" in classes:
        system += consts[f"prompt_{lang}.TRAVEL_PROMPT_{up}"]
    if "BaseApi" in classes:
        system += consts[f"prompt_{lang}.BASE_PROMPT_{up}"]
    kind = "BASE" if "BaseApi" in classes else "TRAVEL"  # upstream checks BaseApi first
    user = consts[f"multi_turn.APIModel_user.SYSTEM_PROMPT_{kind}_{up}"].format(instruction=rec["question"])
    return {"system": system, "user_system": user,
            "user_greeting": consts[f"multi_turn.APIModel_user.first_user_message_{lang}"]}
