"""The v4 data release (split "v4", and official BFCL_v4 result files): tasks, API behaviour and verdicts as
official v4 runs have them. Fixture: results of the official v4 executor (bfcl-eval 2025.11.19, whose API code
is that of 2025.11.7 to 2026.3.23) on calls aimed at what v4 changed; the recorded verdicts are the score files
beside the real result files."""
import asyncio
import json
from pathlib import Path

import pytest

from mua.benchmarks.bfcl import BfclBenchmark
from mua.harness.errors import ConfigError
from mua.harness.runner import run_episode
from mua.harness.types import ToolCall

FIXTURES = Path(__file__).parent / "fixtures"
CODES = {"multi_turn:instance_state_mismatch": "state", "multi_turn:execution_response_mismatch": "response",
         "multi_turn:empty_turn_model_response": "empty", "multi_turn:force_terminated": "force",
         "multi_turn:inference_error": "inference"}
# Per real file: (entries, agreeing with the recorded verdict, agreeing also in the error type). The v3 release
# agrees on 161-170 of 200 (test_scoring.py); these are the same trajectories scored as v4.
RECORDED_AGREEMENT_V4 = {
    "openai_gpt-oss-120b__BFCL_v4_multi_turn_base_result.json": (200, 200, 200),
    "openai_gpt-oss-120b__BFCL_v4_multi_turn_miss_func_result.json": (200, 200, 200),
    "openai_gpt-oss-120b__BFCL_v4_multi_turn_miss_param_result.json": (200, 200, 200),
    "openai_gpt-oss-20b__BFCL_v4_multi_turn_base_result.json": (200, 200, 200),
    "openai_gpt-oss-20b__BFCL_v4_multi_turn_miss_func_result.json": (200, 200, 200),
    "openai_gpt-oss-20b__BFCL_v4_multi_turn_miss_param_result.json": (200, 200, 200),
}


def _task(bench, data_dir, task_id, split="v4"):
    subset = task_id.rsplit("_", 1)[0]
    return next(t for t in bench.load_tasks(subset, split) if t.id == task_id)


def test_real_results_match_recorded_v4_verdicts(data_dir, real_dir):
    bench = BfclBenchmark(data_dir)
    got = {}
    for name in RECORDED_AGREEMENT_V4:
        items = list(bench.read_official(real_dir / "bfcl" / name))
        assert {it.variant for it in items} == {"v4"} and all(it.task.split == "v4" for it in items)
        agree = same_code = 0
        for it in items:
            score = asyncio.run(bench.score(it.task, it.messages, termination=it.termination))
            mine = "pass" if score.reward == 1.0 else CODES[score.info["error_type"]]
            recorded = "pass" if it.official["valid"] else CODES[it.official["error_type"]]
            agree += (mine == "pass") == (recorded == "pass")
            same_code += mine == recorded
        got[name] = (len(items), agree, same_code)
    assert got == RECORDED_AGREEMENT_V4


def test_bad_calls_match_official_v4_texts(data_dir):
    fixture = json.loads((FIXTURES / "bad_calls_official_v4.json").read_text())
    bench = BfclBenchmark(data_dir)
    mismatches = []
    for case in fixture["cases"]:
        env = bench.start(_task(bench, data_dir, case["task_id"])).env
        for (name, args), expected in zip(fixture["calls"], case["results"]):
            got = env.execute(ToolCall(id="x", name=name, arguments=json.dumps(args))).content[:160]
            if got != expected:
                mismatches.append((case["task_id"], name, args, got[:120], expected[:120]))
    assert len(fixture["cases"]) * len(fixture["calls"]) > 1000 and not mismatches, mismatches[:5]


@pytest.mark.parametrize("subset", BfclBenchmark.subsets)
def test_v4_gold_passes_like_official(data_dir, subset):
    """The official v4 checker passes its own ground truth on all 800 v4 tasks (v3's base_154 was fixed)."""
    bench = BfclBenchmark(data_dir)
    tasks = bench.load_tasks(subset, "v4")
    assert len(tasks) == 200
    failures = {}
    for task in tasks:
        result = asyncio.run(run_episode(bench, task, bench.gold_agent(task), bench.gold_user(task)))
        if result.score.reward != 1.0:
            failures[task.id] = result.score.info["error_type"]
    assert failures == {}


def test_release_choice_and_v4_tools(data_dir):
    bench = BfclBenchmark(data_dir)
    v3, v4 = _task(bench, data_dir, "multi_turn_base_100", None), _task(bench, data_dir, "multi_turn_base_100")
    assert v3.split is None and v4.split == "v4"
    tools3 = {t.name for t in bench.start(v3).env.agent_tools()}
    tools4 = {t.name for t in bench.start(v4).env.agent_tools()}
    assert {"make_transaction", "update_stock_price"} <= tools3 - tools4 and "withdraw_funds" in tools4 - tools3
    env3, env4 = bench.start(v3).env, bench.start(v4).env  # both releases live side by side
    assert env4.execute(ToolCall(id="a", name="make_transaction", arguments="{}")).error
    assert "missing" in env3.execute(ToolCall(id="a", name="make_transaction", arguments="{}")).content
    with pytest.raises(ConfigError):
        bench.load_tasks("multi_turn_base", "v5")


def test_excluded_function_is_still_offered_as_upstream(data_dir):
    """No official version reads ``excluded_function``: the function stays in the tools (and gpt-oss called
    them in the real runs)."""
    bench = BfclBenchmark(data_dir)
    task = next(t for t in bench.load_tasks("multi_turn_base", "v4") if t.raw.get("excluded_function"))
    assert set(task.raw["excluded_function"]) <= {t.name for t in bench.start(task).env.agent_tools()}


def _write_run(tmp_path, name, rows, failures):
    (tmp_path / f"{name}_result.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if failures is not None:
        header = {"accuracy": 0.0, "correct_count": 0, "total_count": len(rows)}
        (tmp_path / f"{name}_score.json").write_text(
            "".join(json.dumps(r) + "\n" for r in [header] + failures))
    return tmp_path / f"{name}_result.json"


def test_release_follows_recorded_prompts(data_dir, tmp_path):
    """A BFCL_v4 file whose score file shows v3 prompts (bfcl-eval 2025.8.25 wrote such files) is read as v3;
    without a score file the name decides."""
    bench = BfclBenchmark(data_dir)
    v3 = next(t for t in bench.load_tasks("multi_turn_base")
              if t.raw["question"] != _task(bench, data_dir, t.id).raw["question"])
    row = {"id": v3.id, "result": [[] for _ in v3.evaluation]}
    failure = {"id": v3.id, "valid": False, "error": {"error_type": "multi_turn:empty_turn_model_response"},
               "prompt": {k: v3.raw[k] for k in ("id", "question", "initial_config", "involved_classes")}}
    old = _write_run(tmp_path, "m__BFCL_v4_multi_turn_base", [row], [failure])
    assert [it.variant for it in bench.read_official(old)] == ["v3"]
    (tmp_path / "bare").mkdir()
    bare = _write_run(tmp_path / "bare", "m__BFCL_v4_multi_turn_base", [row], None)
    assert [it.variant for it in bench.read_official(bare)] == ["v4"]
    named_v3 = _write_run(tmp_path, "m__BFCL_v3_multi_turn_base", [row], None)
    assert [it.variant for it in bench.read_official(named_v3)] == ["v3"]



def test_score_line_with_variant_v4_uses_v4_data(tmp_path, data_dir):
    from mua.harness.cli import main

    # multi_turn_base_6's ground truth changed in v4: each gold trajectory passes only on its own data.
    bench = BfclBenchmark(data_dir)
    lines = []
    for split in (None, "v4"):
        task = next(t for t in bench.load_tasks("multi_turn_base", split) if t.id == "multi_turn_base_6")
        result = asyncio.run(run_episode(bench, task, bench.gold_agent(task), bench.gold_user(task), score=False))
        messages = [m.to_dict() for m in result.messages]
        for variant in ("v3", "v4"):
            lines.append(json.dumps({"benchmark": "bfcl_v3", "subset": "multi_turn_base",
                                     "task_id": "multi_turn_base_6", "variant": variant, "messages": messages}))
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n")
    assert main(["score", "--trajectories", str(src), "--out", str(tmp_path / "out.jsonl"),
                 "--data-dir", str(data_dir)]) == 0
    rewards = [json.loads(x)["reward"] for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert rewards == [1.0, 0.0, 0.0, 1.0]  # (v3 gold, v4 gold) x (scored as v3, as v4)
