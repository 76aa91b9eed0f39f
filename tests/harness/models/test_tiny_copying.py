"""The tiny model's copying stage (harness/models/tiny_copying.py, `mua model tiny --copy-steps`)."""
import hashlib
import json
import random

import pytest

pytest.importorskip("transformers", reason="the tiny model needs transformers (pip install 'mua[local]')")

from mua.harness.cli import main  # noqa: E402
from mua.harness.models import tiny_copying  # noqa: E402
from mua.harness.models.tiny import build_tiny_tokenizer, copying_pools  # noqa: E402


@pytest.fixture(scope="module")
def pools():
    return copying_pools(build_tiny_tokenizer(digit_places=8, name_places=12), 12, 8)


def test_every_trained_token_is_what_followed_its_predecessor_in_the_first_half(pools):
    """The task is solvable by copying alone: each labelled token of the second half is the token that followed the
    token before it in the first half, and nothing of the first half is trained."""
    rng = random.Random(3)
    trained = 0
    for _ in range(50):
        ids, labels = tiny_copying.copy_sequence(pools, 128, rng)
        assert len(ids) == len(labels) == 128
        assert set(labels[:64]) == {-100}
        first = ids[:64]
        follows = {(first[i], first[i + 1]) for i in range(63)}
        for i in range(64, 128):
            if labels[i] != -100:
                assert labels[i] == ids[i] and (ids[i - 1], ids[i]) in follows
                trained += 1
    assert trained > 50 * 40  # dense: most of the second half is trained


def test_spans_are_names_and_ids_as_place_tokens(pools):
    names = {t for place in pools.names for t in place}
    digits = {t for place in pools.digits for t in place}
    rng = random.Random(0)
    seen = set()
    for _ in range(20):
        ids, _ = tiny_copying.copy_sequence(pools, 128, rng)
        seen |= set(ids[:64])
    assert seen & names and seen & digits and seen - names - digits
    assert not set(pools.ordinary) & (names | digits)


def test_copy_steps_train_and_report_byte_identically(tmp_path, capsys):
    """A few copying steps change the weights, write copying.json with the held-out accuracy before and after,
    print one line, and the same seed gives the same bytes."""
    def build(name, steps):
        out = tmp_path / name
        assert main(["model", "tiny", str(out), "--hidden-size", "32", "--digit-places", "4", "--name-places", "4",
                     "--sliding-window", "80", "--copy-steps", str(steps)]) == 0
        return out

    a, b, none = build("a", 3), build("b", 3), build("none", 0)
    weights = {p.name: hashlib.sha256((p / "model.safetensors").read_bytes()).hexdigest() for p in (a, b, none)}
    assert weights["a"] == weights["b"] != weights["none"]
    report = json.loads((a / "copying.json").read_text())
    assert report["steps"] == 3 and report["length"] == 80 and 0 <= report["accuracy_before"] <= 1
    assert not (none / "copying.json").exists()
    assert "copying stage: 3 steps, held-out copy accuracy" in capsys.readouterr().out


def test_a_checkpoint_rebuilt_without_the_stage_keeps_no_earlier_report(tmp_path):
    out = tmp_path / "m"
    flags = ["model", "tiny", str(out), "--hidden-size", "32", "--sliding-window", "80"]
    assert main(flags + ["--copy-steps", "2"]) == 0 and (out / "copying.json").exists()
    assert main(flags + ["--overwrite"]) == 0
    assert not (out / "copying.json").exists()


def test_too_short_a_window_for_the_copying_stage_is_one_line(tmp_path, capsys):
    code = main(["model", "tiny", str(tmp_path / "m"), "--hidden-size", "32", "--sliding-window", "32",
                 "--copy-steps", "2"])
    assert code == 2
    assert "too short" in capsys.readouterr().err
