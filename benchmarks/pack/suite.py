"""A pack's cases of the adversarial user suite (``harness/users/suite.py``), written from its scenarios.

A task's facts are its ``user_scenario.replies``: the kind is the reply's first ``when`` keyword, the value its
``say``. Stuffing, template, chatter and gold cases need nothing more. The natural questions (compound and
paraphrase families) come from the pack's optional ``user_suite.json``::

    {"facts": {"name": {"clauses": ["your name", ...],          # embedded in compound questions
                        "paraphrases": ["Who am I speaking with?", ...]}, ...}}

Paraphrases are questions the pack's gold conversations never ask (held out from any user trained on them);
without the file those two families have no cases (rate unknown)."""
from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from pathlib import Path
from typing import Iterable

from mua.harness.errors import DataError
from mua.harness.io.datafiles import load_json
from mua.harness.types import Task
from mua.harness.user_facts import SuiteCase, UserFact
from mua.harness.users.suite import CHATTER

from .users import asked, opening

SUITE_FILE = "user_suite.json"
COMPOUND_PAIRS = ("Could you tell me {0} and {1}?", "May I ask {0} and {1}, please?",
                  "Can you let me know {0}, and {1}?")
COMPOUND_TRIPLES = ("Could you tell me {0}, {1} and {2}?", "May I ask {0}, {1}, and {2}?",
                    "Can you let me know {0}, {1} and also {2}?")
TEMPLATE_WORDS = ("What", "Which", "Where")
TEMPLATE_ONE = ("What {}?", "Is {}?", "Which {}?", "How {}?", "When {}?")


def kind(reply: dict) -> str:
    return str(reply["when"][0])


def task_facts(task: Task, others: dict[str, tuple[str, ...]]) -> tuple[UserFact, ...]:
    """The facts of a pack task, one per reply (``others``: every value each kind takes in the pack)."""
    return tuple(UserFact(kind(r), str(r["say"]), tuple(r["when"]), others.get(kind(r), ()))
                 for r in task.scenario.get("replies") or [])


def values_by_kind(scenarios: Iterable[dict]) -> dict[str, tuple[str, ...]]:
    """Every value each fact kind takes in ``scenarios`` (a pack's ``user_scenario`` records)."""
    found: dict[str, dict[str, None]] = {}
    for scenario in scenarios:
        for reply in scenario.get("replies") or []:
            found.setdefault(kind(reply), {})[str(reply["say"])] = None
    return {k: tuple(v) for k, v in found.items()}


def _phrasings(folder: Path) -> dict[str, dict[str, tuple[str, ...]]]:
    """The pack's user_suite.json ({} without one), read once per version of the file."""
    path = folder / SUITE_FILE
    if not path.is_file():
        return {}
    info = path.stat()
    return _read_phrasings(folder, info.st_mtime_ns, info.st_size)


@lru_cache(maxsize=8)
def _read_phrasings(folder: Path, _mtime: int, _size: int) -> dict[str, dict[str, tuple[str, ...]]]:
    raw = load_json(folder, SUITE_FILE)
    facts = raw.get("facts") if isinstance(raw, dict) else None
    if not isinstance(facts, dict):
        raise DataError(f"{SUITE_FILE}: expected an object with field 'facts' ({{kind: {{clauses, paraphrases}}}})")
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for name, entry in facts.items():
        if not isinstance(entry, dict):
            raise DataError(f"{SUITE_FILE}, facts.{name}: expected an object with 'clauses' and 'paraphrases'")
        out[name] = {}
        for field in ("clauses", "paraphrases"):
            items = entry.get(field, [])
            if not isinstance(items, list) or not all(isinstance(x, str) and x.strip() for x in items):
                raise DataError(f"{SUITE_FILE}, facts.{name}.{field}: expected a list of non-empty strings")
            out[name][field] = tuple(items)
    return out


def _messages(keys: list[str], replies: list[dict], phrasings: dict, n: int) -> list[tuple[str, str, tuple]]:
    """(family, agent message, kinds asked) for one task whose facts have the kinds ``keys`` (``n``: the task's
    place, which rotates the compound clauses)."""
    out: list[tuple[str, str, tuple]] = [("stuffing", m, ()) for m in (
        " ".join(keys) + "?", " ".join(k.capitalize() + "?" for k in keys), ", ".join(keys),
        "What " + " ".join(keys) + "?", "What is your " + " ".join(keys) + "?", "Is " + " ".join(keys) + "?",
        "Tell me " + " ".join(keys) + ".", "Please give " + ", ".join(keys) + " now.")]
    out += [("template", " ".join(f"Is {k}?" for k in keys), ()),
            ("template", " ".join(f"{TEMPLATE_WORDS[i % 3]} {k}?" for i, k in enumerate(keys)), ())]
    out += [("template", form.format(k), ()) for k in keys for form in TEMPLATE_ONE]
    out += [("chatter", m, ()) for m in CHATTER]
    out += [("gold", r["ask"], tuple(keys[i] for i in asked(r["ask"], replies))) for r in replies if r.get("ask")]
    clauses = {k: phrasings.get(k, {}).get("clauses", ()) for k in keys}
    for size, forms in ((2, COMPOUND_PAIRS), (3, COMPOUND_TRIPLES)):
        for group in combinations([k for k in keys if clauses[k]], size):
            out += [("compound", form.format(*(clauses[k][(n + i) % len(clauses[k])] for k in group)), group)
                    for i, form in enumerate(forms)]
    out += [("paraphrase", m, (k,)) for k in keys for m in phrasings.get(k, {}).get("paraphrases", ())]
    return out


def pack_cases(folder: Path, tasks: list[Task], all_tasks: list[Task]) -> list[SuiteCase]:
    """Every family's cases for ``tasks`` (``all_tasks``: the whole pack, for the values of each kind)."""
    phrasings = _phrasings(Path(folder).resolve())
    others = values_by_kind(t.scenario for t in all_tasks)
    cases: list[SuiteCase] = []
    for n, task in enumerate(tasks):
        replies = list(task.scenario.get("replies") or [])
        if replies:
            facts, start = task_facts(task, others), opening(task.scenario)
            cases += [SuiteCase(family, task, start, message, wanted, facts)
                      for family, message, wanted in _messages([kind(r) for r in replies], replies, phrasings, n)]
    return cases
