"""Scorers' findings are typed: the record the scorer writes ``info`` with is the one ``explain`` reads back,
so no key list is kept twice; stored rows read back to the same bytes."""
import json
from pathlib import Path

import pytest

from mua.benchmarks.acebench.scoring import AceFindings
from mua.benchmarks.bfcl.scoring import Verdict
from mua.benchmarks.tau2 import Tau2Benchmark
from mua.benchmarks.tau2.findings import Tau2Findings
from mua.harness.results.store import dumps

BASELINES = Path(__file__).resolve().parents[3] / "results" / "baselines"


@pytest.mark.parametrize("domain", ["retail", "airline", "telecom"])
def test_every_stored_info_reads_back_byte_identical(domain):
    rows = [json.loads(line) for line in
            (BASELINES / f"tau2-{domain}-gold" / "episodes.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in rows:
        assert dumps(Tau2Findings.from_info(row["info"]).to_info()) == dumps(row["info"])


def test_findings_name_their_component():
    info = Tau2Findings(termination="user_stop", db_match=False, env_assertions_failed=["line active"],
                        communicate_missing=["$12"], actions_unmatched=["cancel_1"],
                        nl_assertions=[{"nl_assertion": "polite", "met": False, "justification": "rude"},
                                       {"nl_assertion": "brief", "met": True}]).to_info()
    assert list(info) == ["termination", "db_match", "env_assertions_failed", "communicate_missing",
                          "actions_unmatched", "nl_assertions"]  # the stored key order
    found = Tau2Benchmark.explain({"db": 0.0, "action": 0.0}, info)
    assert [(f.component, str(f)) for f in found] == [
        ("db", "database: the final state differs from the one the gold actions produce"),
        ("env_assertion", "environment assertion failed: line active"),
        ("communicate", "never told the user: '$12'"),
        ("action", "gold action not matched: cancel_1"),
        ("nl_assertion", "NL assertion not met: polite: rude")]


def test_early_termination_and_skipped_components():
    note = Tau2Benchmark.explain({}, {"termination": "max_steps", "note": "premature termination (max_steps)"})
    assert [(f.component, str(f)) for f in note] == [(None, "premature termination (max_steps)")]
    skipped = Tau2Benchmark.explain({"nl_assertion": None}, {"termination": "agent_stop", "db_match": True,
                                                            "skipped": ["nl_assertion"], "incomplete": True})
    assert [f.component for f in skipped] == ["nl_assertion"]
    # nothing found: the default names the failing components
    assert [str(f) for f in Tau2Benchmark.explain({"db": 0.0}, {"termination": "agent_stop"})] == ["db: 0"]


def test_bfcl_and_acebench_findings_read_back_what_the_scorer_stored():
    verdict = Verdict(False, "multi_turn:instance_state_mismatch", "state differs", 2,
                      {"differences": {"cwd": {"model": "/a", "ground_truth": "/b"}}})
    assert Verdict.from_info(verdict.to_score().info) == verdict
    assert [str(f) for f in verdict.findings()] == ["multi_turn:instance_state_mismatch at turn 2: state differs",
                                                    "state cwd: model '/a', ground truth '/b'"]
    assert Verdict.from_info(Verdict(True).to_score().info).findings() == []
    ace = AceFindings([["wrong balance"]], "value error", ["a()", "b()"])
    assert AceFindings.from_info(ace.to_info()) == ace
    assert [(f.component, str(f)) for f in ace.findings({"end_state": 0.0, "process": 0.5})] == [
        ("end_state", "end state wrong: value error"), ("end_state", "  wrong balance"),
        ("process", "process: 0.5 of the milestones reached by the calls made (2 calls)")]
