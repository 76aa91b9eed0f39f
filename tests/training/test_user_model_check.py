"""tests/perf/user_model_check.py without training: a fact counts when the reply holds its ``say``; a natural
question is right only with exactly the facts it asks; the check fails (exit 1) when a target is missed, and
the scripted user's figures are printed beside the trained user's."""
import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

SCRIPT = Path(__file__).resolve().parents[1] / "perf" / "user_model_check.py"
REPLIES = [{"when": ["name"], "say": "Vera."}, {"when": ["sit"], "say": "A bar table, please."},
           {"when": ["time"], "say": "At 8 pm."}]


def load_script():
    spec = importlib.util.spec_from_file_location("user_model_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_facts_are_the_says_a_reply_holds_and_right_means_exactly_the_asked_ones():
    check = load_script()
    assert check.given("vera. a bar table, please", REPLIES) == {"name", "sit"}
    assert check.given("Sorry, I am not sure what you need from me.", REPLIES) == set()
    task = SimpleNamespace(scenario={"replies": REPLIES})
    items = [(task, "Who is this?", ("name",)), (task, "And when?", ("time",)), (task, "Is name?", None)]
    f = check.score(items, ["Vera.", "Vera. At 8 pm.", "Vera."])
    assert (f.right, f.natural, f.leaked, f.stuffed) == (1, 2, 1, 1)  # the extra fact makes the second wrong


def test_a_missed_target_exits_1_and_both_users_are_printed(tmp_path, monkeypatch, capsys):
    check = load_script()
    model = tmp_path / "user"
    model.mkdir()
    (model / "config.json").write_text("{}")
    monkeypatch.setattr(check, "derive_pack", lambda out: out)
    good, bad = check.Figures(right=96, natural=100, stuffed=100, leaked=5), check.Figures(right=31, natural=100,
                                                                                              stuffed=100, leaked=40)
    monkeypatch.setattr(check, "measure", lambda pack, model, n: (good, bad))
    assert check.main(["--out", str(tmp_path), "--user-model", str(model)]) == 0
    out = capsys.readouterr().out
    assert "trained user     natural questions answered right 96/100 (96.0%)" in out
    assert "scripted user    natural questions answered right 31/100" in out and "PASS" in out
    monkeypatch.setattr(check, "measure", lambda pack, model, n: (check.Figures(right=96, natural=100, stuffed=100,
                                                                                leaked=6), bad))
    assert check.main(["--out", str(tmp_path), "--user-model", str(model)]) == 1
    assert "FAIL: facts given to messages asking nothing > 5%" in capsys.readouterr().out
