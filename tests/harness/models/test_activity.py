"""Local runs are not silent: the progress line counts replies and tokens as they happen, episodes playing and
an ETA, and a model whose replies keep running to the token limit is reported once, with the fix."""
from __future__ import annotations

import asyncio
from pathlib import Path

import mock_openai as mock  # tests/ is on sys.path (tests/conftest.py)

from mua.harness.models import make_chat_model
from mua.harness.models.activity import GenerationMeter, LengthWatch
from mua.harness.types import Message

PACK = Path(__file__).resolve().parents[3] / "benchmarks/pack/examples/bookings"


def test_meter_says_nothing_until_a_local_model_generates():
    meter = GenerationMeter()
    assert meter.text() == ""
    meter.start_turn()  # a reply asked for: shown before its first token (a long prompt takes a while)
    assert meter.text() == "model replies 0 done, 1 generating, 0 tokens (reading the prompt)"
    meter.start_turn()
    meter.add_tokens(5)
    assert meter.text().startswith("model replies 0 done, 2 generating, 5 tokens, ")  # tokens as they come
    meter.add_turn("stop")
    meter.add_turn("length")
    text = meter.text()
    assert text.startswith("model replies 2 done, 0 generating, 5 tokens, ") and "tok/s" in text
    assert "1 cut at max tokens" in text
    meter.start_turn()
    meter.add_turn(None)  # a reply that failed is no longer generating, and not done
    assert meter.text().startswith("model replies 2 done, 0 generating")


def test_episode_clock_gives_an_eta_from_finished_episodes(monkeypatch):
    from mua.harness.run import progress

    now = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    clock = progress.EpisodeClock(remaining=5, slots=2)
    a, b = clock.start(), clock.start()
    assert clock.text() == "playing 2; ETA after the first episode" and clock.eta_s() is None
    now[0] = 130.0
    clock.finish(a)  # 30 s per episode; 4 left, 2 at a time: 2 waves, the one playing has run 30 s of its own
    assert clock.eta_s() == 2 * 30.0 - 30.0
    c = clock.start()
    now[0] = 140.0
    clock.finish(b)
    clock.finish(c)  # took 40 and 10 s: mean 80/3; 2 left, one wave
    assert abs(clock.eta_s() - 80 / 3) < 1e-9
    assert clock.text() == "27s/episode, ETA 27s"
    assert progress.duration(59.4) == "59s" and progress.duration(185) == "3m05s" and progress.duration(7440) == "2h04m"


def test_length_watch_reports_once_after_a_streak(capsys):
    watch = LengthWatch("m")
    for reason in ("length", "length", "stop", "length", "length"):
        watch.saw(reason, 512)
    assert capsys.readouterr().err == ""  # the streak was broken
    watch.saw("length", 512)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "3 replies in a row ran to the token limit" in err
    assert "--agent-params '{\"max_tokens\": 256}'" in err
    watch.saw("length", 512)
    assert capsys.readouterr().err == ""  # once


def test_an_endpoint_that_generates_to_its_limit_is_reported(capsys):
    cut = mock.text_reply("blah " * 50, usage_=mock.usage(completion_tokens=8000))
    cut["choices"][0]["finish_reason"] = "length"
    with mock.MockOpenAI(mock.constant(cut)) as url:
        model = make_chat_model("small", base_url=url, api_key_env="NO_SUCH_KEY_VAR")

        async def three():
            for _ in range(3):
                await model.chat([Message(role="user", content="hi")])
            await model.aclose()

        asyncio.run(three())
    err = capsys.readouterr().err
    assert "small at " in err and "ran to the token limit" in err and "8000 tokens" in err


def test_progress_shows_model_turns_and_tokens_per_s_during_a_local_run(tiny_checkpoint, tmp_path, capsys,
                                                                        monkeypatch):
    from mua.harness.cli import main
    from mua.harness.run import progress

    monkeypatch.setattr(progress, "ACTIVITY_EVERY_S", 0.01)
    assert main(["eval", "--benchmark", "pack", "--data-dir", str(PACK), "--agent-model", str(tiny_checkpoint),
                 "--agent-params", '{"max_tokens": 8}', "--limit", "2", "--trials", "1",
                 "--out", str(tmp_path / "run")]) == 0
    err = capsys.readouterr().err
    assert "model replies " in err and " tok/s" in err and " tokens" in err
    assert "ETA after the first episode" in err or "/episode, ETA " in err
