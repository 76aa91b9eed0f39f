"""The copy distance: counted from the query that predicts a copied value's first token back to the value's nearest
earlier occurrence, and judged against the policy's window."""
from pathlib import Path

from mua.harness.cli import main
from mua.harness.models.tiny import build_tiny_tokenizer
from mua.harness.models.tokenizer import load_tokenizer
from mua.training.copy_reach import Reach, reply_copies, stream_reach
from mua.training.copy_reach import main as reach_main

PACK = Path(__file__).resolve().parents[2] / "benchmarks" / "pack" / "examples" / "appointments"


def test_the_distance_runs_from_the_query_before_the_value_to_its_nearest_earlier_occurrence():
    tok = build_tiny_tokenizer(digit_places=8)
    said = tok.encode('[{"appointment_id": "A111"}, {"appointment_id": "A482"}]')
    filler = tok.encode(" and so on" * 5)
    call = tok.encode('{"appointment_id": "A482"}')
    ids = said + filler + call
    mask = [0] * len(said + filler) + [1] * len(call)
    reach: dict[str, Reach] = {}
    stream_reach(ids, mask, tok, [[("move.appointment_id", "A482"), ("move.x", "Z999")]], reach)
    a_in_said = max(k for k in range(len(said)) if tok.decode(said[k:k + 1]) == "A")  # the nearest: A482's
    a_in_call = next(k for k in range(len(call)) if tok.decode(call[k:k + 1]) == "A")
    # "A" then three digit-place tokens: the value's tokens; the query sits one before the call's "A"
    expected = (len(said) + len(filler) + a_in_call - 1) - a_in_said
    assert reach["move.appointment_id"].distances == [expected]
    assert "move.x" not in reach  # not in the call's text: nothing to count
    assert reach["move.appointment_id"].line("k", expected + 1) == f"k: 0/1 beyond the {expected + 1}-token window; " \
        f"distance median {expected}, max {expected}"
    assert reach["move.appointment_id"].line("k", expected).startswith(f"k: 1/1 beyond the {expected}-token window")


def test_a_value_never_said_before_is_counted_apart():
    tok = build_tiny_tokenizer(digit_places=8)
    ids = tok.encode("hello there") + tok.encode('{"appointment_id": "A482"}')
    mask = [0] * len(tok.encode("hello there")) + [1] * (len(ids) - len(tok.encode("hello there")))
    reach: dict[str, Reach] = {}
    stream_reach(ids, mask, tok, [[("move.appointment_id", "A482")]], reach)
    assert (reach["move.appointment_id"].distances, reach["move.appointment_id"].unseen) == ([], 1)


def test_reply_copies_follow_the_trained_replies():
    messages = [{"role": "assistant", "content": "Hi!"}, {"role": "user", "content": "Lee."},
                {"role": "assistant", "tool_calls": [{"function": {"name": "find", "arguments":
                                                                     '{"surname": "Lee", "day": "monday"}'}}]},
                {"role": "tool", "content": "A135"}, {"role": "assistant", "content": "Done."}]
    assert reply_copies(messages) == [[("find.surname", "Lee")], []]


def test_the_command_prints_per_argument_how_many_copies_sit_beyond_the_window(tmp_path, capsys):
    run, data, ckpt = tmp_path / "gold", tmp_path / "data", tmp_path / "tiny"
    assert main(["eval", "--benchmark", "pack", "--data-dir", str(PACK), "--agent", "gold", "--split", "test",
                 "--limit", "3", "--out", str(run), "--no-progress"]) == 0
    assert main(["export", str(run), "--out", str(data), "--data-dir", str(PACK)]) == 0
    assert main(["model", "tiny", str(ckpt), "--sliding-window", "16", "--digit-places", "8"]) == 0
    capsys.readouterr()
    assert reach_main([str(ckpt), str(data)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["find_appointments.surname", "move_appointment.appointment_id"]
    assert lines[1].startswith("move_appointment.appointment_id: 3/3 beyond the 16-token window")
    assert reach_main([str(ckpt)]) == 2
    assert reach_main([str(ckpt), str(tmp_path / "none")]) == 2
    assert "no dataset" in capsys.readouterr().err


def test_merges_learnt_from_an_export_bring_the_ids_within_the_window_and_keep_them_place_tokens(tmp_path, capsys):
    """A `mua export` folder as the tokenizer corpus: the appointments lookup's id moves within a 128-token window
    (with the built-in merges it sits beyond it in one of these three conversations), and the id is still one
    place token per digit."""
    run, data = tmp_path / "gold", tmp_path / "data"
    assert main(["eval", "--benchmark", "pack", "--data-dir", str(PACK), "--agent", "gold", "--split", "test",
                 "--limit", "3", "--out", str(run), "--no-progress"]) == 0
    assert main(["export", str(run), "--out", str(data), "--data-dir", str(PACK)]) == 0
    lines = {}
    for name, extra in (("builtin", []), ("corpus", ["--corpus", str(data)])):
        assert main(["model", "tiny", str(tmp_path / name), "--sliding-window", "128", "--digit-places", "8",
                     "--name-places", "12", *extra]) == 0
        capsys.readouterr()
        assert reach_main([str(tmp_path / name), str(data)]) == 0
        lines[name] = capsys.readouterr().out.splitlines()[1]
    assert lines["builtin"].startswith("move_appointment.appointment_id: 1/3 beyond the 128-token window")
    assert lines["corpus"].startswith("move_appointment.appointment_id: 0/3 beyond the 128-token window")
    tok = load_tokenizer(tmp_path / "corpus")
    assert [tok.decode([i]) for i in tok.encode('"A482", "Ivanova"')] == [
        '"', "A", "4", "8", "2", '",', ' "', *"Ivanova", '"']
