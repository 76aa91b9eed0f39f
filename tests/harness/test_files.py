"""harness.io.files: whole JSON files that are damaged or hostile give one DataError line naming the file."""
import pytest

from mua.harness.errors import DataError
from mua.harness.io.files import field, read_json, read_text

HOSTILE = {
    "syntax": b'{"a": ',
    "deep": b"[" * 10_000 + b"]" * 10_000,
    "huge_int": b'{"a": ' + b"9" * 5000 + b"}",
    "overflow": b'{"reward": 1e309}',
    "nan": b'{"reward": NaN}',
    "undecodable": b'{"a": "\xff\xfe"}',
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_json_is_one_line_naming_the_file(tmp_path, name):
    path = tmp_path / "config.json"
    path.write_bytes(HOSTILE[name])
    with pytest.raises(DataError) as e:
        read_json(path, what="run config")
    message = str(e.value)
    assert str(path) in message and "\n" not in message


def test_missing_folder_and_wrong_top_level(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        read_json(tmp_path / "nope.json")
    with pytest.raises(DataError, match="is a folder"):
        read_json(tmp_path)
    (tmp_path / "a.json").write_text("[1]")
    with pytest.raises(DataError, match="expected an object at the top, found a list"):
        read_json(tmp_path / "a.json", expect=dict)
    (tmp_path / "t.md").write_bytes(b"\xff")
    with pytest.raises(DataError, match="not valid UTF-8"):
        read_text(tmp_path / "t.md")


def test_field_types():
    rec = {"agent": "x", "tasks": 5, "flag": True, "n": None}
    assert field(rec, "tasks", int, where="w") == 5
    assert field(rec, "tasks", float, where="w") == 5
    assert field(rec, "missing", str, where="w", default="d") == "d"
    assert field(rec, "n", int, where="w", nullable=True) is None
    with pytest.raises(DataError, match="field 'agent' should be an object, found a string"):
        field(rec, "agent", dict, where="w")
    with pytest.raises(DataError, match="field 'flag' should be an integer, found true or false"):
        field(rec, "flag", int, where="w")
    with pytest.raises(DataError, match="field 'missing' is missing"):
        field(rec, "missing", int, where="w")


def test_untrusted_json_is_held_to_depth_finite_numbers_and_valid_unicode():
    from mua.harness.io.jsonl import MAX_DEPTH, BadLine, check_untrusted, loads_untrusted, unsafe_json

    assert loads_untrusted(b'{"a": [1, 2.5, "caf\\u00e9 \\ud83d\\ude00"]}') == {"a": [1, 2.5, "café 😀"]}
    assert loads_untrusted("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None  # the limit itself is fine
    for raw, reason in [("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), f"deeper than {MAX_DEPTH}"),
                        (HOSTILE["deep"], "nested too deeply"), ('{"a": "\\ud800"}', "lone surrogate"),
                        ('{"\\udc00": 1}', "lone surrogate"), ('["\ud800"]', "lone surrogate"),  # the char itself
                        (b'{"a": "\\uDBFF"}', "lone surrogate"), (HOSTILE["overflow"], "too large"),
                        (HOSTILE["nan"], "NaN"), (HOSTILE["huge_int"], "digits"),
                        (HOSTILE["undecodable"], "not valid UTF-8")]:
        with pytest.raises(BadLine, match=reason):
            loads_untrusted(raw)
    # the bracket count that lets a shallow reply skip the walk: mixed containers at the limit, and past it
    mixed = '{"a": ' * 50 + "[" * 51 + "]" * 51 + "}" * 50
    with pytest.raises(BadLine, match=f"deeper than {MAX_DEPTH}"):
        loads_untrusted(mixed)
    assert loads_untrusted('{"a": ' * 50 + "[" * 50 + "]" * 50 + "}" * 50, max_depth=100) is not None
    assert loads_untrusted('{"a": "[[[[[[", "b": [1]}', max_depth=2) == {"a": "[[[[[[", "b": [1]}
    with pytest.raises(BadLine, match="deeper than 1"):
        loads_untrusted('{"a": [1]}', max_depth=1)
    deep: list = []
    for _ in range(10_000):  # built in Python (LiteLLM's decoded replies): walked without recursion
        deep = [deep]
    for value in (deep, {"a": float("inf")}, {"a": [float("nan")]}, ["ok", "\ud800"]):
        with pytest.raises(BadLine):
            check_untrusted(value)
    # model-written JSON: text that is no JSON at all is the environment's to answer; hostile JSON is not
    assert unsafe_json('{"n": 1,') is None and unsafe_json("") is None and unsafe_json('{"n": 1}') is None
    assert unsafe_json('{"n": NaN, "m": 1e309}') is None  # json.loads reads these; the environment judges them
    assert unsafe_json('["\\ud800"]') is not None and unsafe_json('{"n": ' + "9" * 5000 + "}") is not None
    bad = unsafe_json("[" * 10_000 + "]" * 10_000)
    assert bad is not None and bad.about("the text") == "the text is nested too deeply to read"
