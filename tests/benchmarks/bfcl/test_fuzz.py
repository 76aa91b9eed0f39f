"""Thousands of malformed or hostile tool calls: each gives an in-episode text, never an exception, and never
changes anything outside the episode's own world (shared constants, task records, the host file system)."""
import copy
import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mua.benchmarks.bfcl import BfclBenchmark
from mua.benchmarks.bfcl import data as bfcl_data
from mua.harness.types import ToolCall

TASK_IDS = ["multi_turn_base_0", "multi_turn_base_100", "multi_turn_base_160", "multi_turn_base_50",
            "multi_turn_long_context_0", "multi_turn_long_context_120", "multi_turn_base_199"]
HOSTILE = st.sampled_from(["..", "../..", "/", "/etc/passwd", "a/../../b", "\\..\\x", "\x00", "~", "*", "." * 300,
                           "a" * 100_000, "", " ", "document", "temp", "USR002", "AAPL", "SFO", "driver"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.floats(allow_nan=True),
                    st.text(max_size=30), HOSTILE)
VALUES = st.recursive(SCALARS, lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                      st.dictionaries(st.text(max_size=8), kids, max_size=4)),
                      max_leaves=12)


def _names(bench, data_dir):
    names = set()
    for tid in TASK_IDS:
        task = bench.find_task(tid.rsplit("_", 1)[0], tid)
        names |= {t.name for t in bench.start(task).env.agent_tools(99)}
    return sorted(names) + ["eval", "exec", "__import__", "kill", "run", "_setup", "_state", "a.b", "class", ""]


def test_fuzzed_calls_stay_in_episode(data_dir, tmp_path):
    bench = BfclBenchmark(data_dir)
    names = _names(bench, data_dir)
    tasks = [bench.find_task(t.rsplit("_", 1)[0], t) for t in TASK_IDS]
    snapshot = {t.id: copy.deepcopy(t.initial_state) for t in tasks}
    ext = bfcl_data.extensions(data_dir)
    ext_before = json.dumps(ext._constants, default=repr, sort_keys=True)
    cwd_before = sorted(os.listdir("."))
    arg_json = st.one_of(
        st.dictionaries(st.sampled_from(["folder", "file_name", "dir_name", "content", "a", "b", "numbers",
                                         "symbol", "access_token", "door", "x", "self", "lines"]),
                        VALUES, max_size=4).map(lambda d: json.dumps(d, allow_nan=True)),
        st.text(max_size=40), VALUES.map(json.dumps), st.just("{"), st.just("[1,2]"), st.just("nul"))
    calls = st.lists(st.tuples(st.sampled_from(names) | st.text(max_size=12), arg_json), min_size=1, max_size=12)

    @settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(tasks), calls)
    def run(task, seq):
        env = bench.start(task).env
        for name, args in seq:
            out = env.execute(ToolCall(id="f", name=name, arguments=args))
            assert isinstance(out.content, str)
        env.state()

    run()
    assert {t.id: t.initial_state for t in tasks} == snapshot
    assert json.dumps(ext._constants, default=repr, sort_keys=True) == ext_before
    assert sorted(os.listdir(".")) == cwd_before
