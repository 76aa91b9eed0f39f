"""`mua play`: a person plays a task at a terminal (driven here through a pseudo-terminal, and in-process with a
scripted input), the episode runs through run_episode, is scored and written like an eval run's."""
from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest
from mock_openai import HTTPReply, MockOpenAI, text_reply, tool_call_reply

from mua.harness.cli import main
from mua.harness.results.runs import read_run

PACK = Path(__file__).resolve().parents[2] / "benchmarks" / "pack" / "examples" / "bookings"
MUA = [sys.executable, "-c", "import sys; from mua.harness.cli import main; sys.exit(main())"]
BOOK = '/call book_table {"name": "Karl", "seat": "booth", "hour": 8}'


def _controlling_terminal() -> None:
    """In the child: a session of its own whose controlling terminal is the pty (so Ctrl-C sends SIGINT)."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Pty:
    """`mua play` in a pseudo-terminal: wait for text, type lines and control keys."""

    def __init__(self, argv: list[str]):
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(MUA + argv, stdin=slave, stdout=slave, stderr=slave, close_fds=True,
                                     preexec_fn=_controlling_terminal, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        os.close(slave)
        self.seen = b""

    def expect(self, text: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while text.encode() not in self.seen:
            left = deadline - time.monotonic()
            assert left > 0, f"timed out waiting for {text!r}; got:\n{self.seen.decode(errors='replace')[-2000:]}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the child closed the terminal
                    chunk = b""
                if not chunk:
                    assert text.encode() in self.seen, f"{text!r} never came:\n{self.seen.decode()[-2000:]}"
                self.seen += chunk
        at = self.seen.index(text.encode()) + len(text)
        before, self.seen = self.seen[:at], self.seen[at:]
        return before.decode(errors="replace")

    def send(self, raw: bytes) -> None:
        os.write(self.master, raw)

    def line(self, text: str) -> None:
        self.send(text.encode() + b"\n")

    def finish(self, timeout: float = 30.0) -> tuple[int, str]:
        rest = b""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None or select.select([self.master], [], [], 0)[0]:
            assert time.monotonic() < deadline, "mua play did not exit"
            if select.select([self.master], [], [], 0.2)[0]:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                rest += chunk
        code = self.proc.wait(timeout=timeout)
        os.close(self.master)
        return code, (self.seen + rest).decode(errors="replace")


def test_played_as_the_agent_in_a_terminal_scores_and_writes_the_episode(tmp_path):
    out = tmp_path / "played"
    term = Pty(["play", "pack", "book-010", "--data-dir", str(PACK), "--out", str(out)])
    intro = term.expect("assistant> ")
    assert "book_table(name: string, seat: string, hour: integer)" in intro  # the tools are listed
    assert "[user] Hi, I would like to book a table." in intro
    term.line("What is your name? Where would you like to sit? At what time?")
    assert "[user] Karl. A booth table, please. At 8 pm." in term.expect("assistant> ")
    term.line('/call book_table {"name": "Karl", ')  # malformed JSON: the environment's own error
    assert "[tool book_table] Error: invalid JSON" in term.expect("assistant> ")
    term.line("/call cancel_everything {}")  # unknown tool
    assert "[tool cancel_everything] Error: Tool 'cancel_everything' not found." in term.expect("assistant> ")
    term.line(BOOK)
    assert '"booking_id": "B1"' in term.expect("assistant> ")
    term.line("Your table is booked.")
    code, tail = term.finish()
    assert code == 0 and "Traceback" not in tail
    assert "[user] ###STOP###" in tail and "episode over: user_stop; reward 1.0" in tail
    row = json.loads((out / "episodes.jsonl").read_text())
    assert (row["task_id"], row["trial"], row["reward"], row["error"]) == ("book-010", 0, 1.0, None)
    tools = [m for m in row["messages"] if m["role"] == "tool"]
    assert [m["content"].startswith("Error") for m in tools] == [True, True, False]
    run = read_run(out)  # what the leaderboard and viewer read
    assert run.model == "person (mua play)" and run.subsets["tasks"].tasks["book-010"].rewards == [1.0]


@pytest.mark.parametrize("key,code,why", [(b"\x04", 1, "end of input"), (b"\x03", 130, "interrupted")])
def test_ctrl_d_and_ctrl_c_end_cleanly_and_write_nothing(tmp_path, key, code, why):
    out = tmp_path / "left"
    term = Pty(["play", "pack", "book-010", "--data-dir", str(PACK), "--out", str(out)])
    term.expect("assistant> ")
    for _ in range(40):  # a key typed while readline sets the terminal up can be flushed away: press again
        term.send(key)
        try:
            term.proc.wait(timeout=0.5)
            break
        except subprocess.TimeoutExpired:
            continue
    status, tail = term.finish()
    assert status == code and f"episode abandoned ({why}); nothing written" in tail and "Traceback" not in tail
    assert not (out / "episodes.jsonl").exists()


def scripted_input(monkeypatch, lines: list[str]) -> list[str]:
    prompts: list[str] = []
    feed = iter(lines)

    def fake_input(prompt: str = "") -> str:
        prompts.append(prompt)
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr("builtins.input", fake_input)
    return prompts


def test_tau2_retail_played_as_the_agent_with_the_gold_actions_passes(tmp_path, data_dir, monkeypatch, capsys):
    code = main(["tasks", "tau2", "--subset", "retail", "5", "--json", "--data-dir", str(data_dir)])
    actions = json.loads(capsys.readouterr().out)["expected_actions"]
    scripted_input(monkeypatch, [f"/call {a['name']} {json.dumps(a['arguments'])}" for a in actions]
                   + ["The water bottle is returned to your PayPal account."])
    code = main(["play", "tau2", "5", "--subset", "retail", "--data-dir", str(data_dir), "--out", str(tmp_path / "r")])
    out = capsys.readouterr().out
    assert code == 0 and "episode over: user_stop; reward 1.0" in out, out[-2000:]
    row = json.loads((tmp_path / "r" / "episodes.jsonl").read_text())
    assert row["reward"] == 1.0 and row["components"]["db"] == 1.0


def test_an_eval_on_the_folder_of_a_play_in_progress_is_refused(tmp_path, monkeypatch, capsys):
    out = tmp_path / "played"
    codes: list[int] = []
    lines = iter(["What is your name? Where would you like to sit? At what time?", BOOK, "Your table is booked."])

    def typing(prompt: str = "") -> str:
        if not codes:  # mid-episode, someone starts an eval on the same folder (its own thread and loop)
            other = threading.Thread(target=lambda: codes.append(main(
                ["eval", "--benchmark", "pack", "--data-dir", str(PACK), "--agent", "gold", "--out", str(out)])))
            other.start()
            other.join()
        return next(lines)

    monkeypatch.setattr("builtins.input", typing)
    code = main(["play", "pack", "book-010", "--data-dir", str(PACK), "--out", str(out)])
    said = capsys.readouterr()
    assert codes == [2] and f"--out {out} is in use by another mua eval or mua play" in said.err
    assert code == 0 and "reward 1.0" in said.out
    assert len((out / "episodes.jsonl").read_text().splitlines()) == 1  # the play's episode only


def test_an_abandoned_play_leaves_no_folder_behind(tmp_path, monkeypatch):
    scripted_input(monkeypatch, [])  # end of input at the first prompt
    monkeypatch.chdir(tmp_path)
    assert main(["play", "pack", "book-010", "--data-dir", str(PACK)]) == 1
    assert not (tmp_path / "results" / "play" / "pack-tasks-book-010-agent").exists()


@pytest.mark.parametrize("last", ["/stop", "Thanks! ###STOP###"])  # /stop, or the benchmark's own stop marker
def test_played_as_the_user_against_an_agent_model(tmp_path, monkeypatch, capsys, last):
    def agent(request):
        last = request["messages"][-1]
        if last["role"] == "tool":
            return text_reply("Your table is booked.")
        if "booth" in (last.get("content") or ""):
            return tool_call_reply([("book_table", {"name": "Karl", "seat": "booth", "hour": 8})])
        return text_reply("Your name, where would you like to sit, and at what time?")

    scripted_input(monkeypatch, ["I want a table.", "/help", "Karl, a booth, at 8 pm.", last])
    with MockOpenAI(agent) as url:
        code = main(["play", "pack", "book-010", "--as", "user", "--agent-model", "m", "--agent-base-url", url,
                     "--data-dir", str(PACK), "--out", str(tmp_path / "u")])
    out = capsys.readouterr().out
    assert code == 0 and "== Your scenario ==" in out and "/call NAME" in out
    assert "[assistant] Your table is booked." in out and "book_table" not in out.split("==")[-1].split(
        "episode over")[0]  # the user does not see the agent's tool calls
    row = json.loads((tmp_path / "u" / "episodes.jsonl").read_text())
    assert row["reward"] == 1.0 and row["termination"] == "user_stop" and row["usage"]["agent"]["requests"] == 3
    assert (row["messages"][-1]["content"] == last) == (last != "/stop")
    config = json.loads((tmp_path / "u" / "config.json").read_text())
    assert config["played"] == "user" and config["agent"]["name"] == "m"


@pytest.mark.parametrize("argv,message", [
    (["--as", "user"], "name the agent you talk to with --agent-model"),
    (["--agent-model", "m", "--agent-base-url", "http://127.0.0.1:9/v1"], "you play the agent"),
])
def test_bad_flag_combinations_are_one_line_errors(tmp_path, capsys, argv, message):
    code = main(["play", "pack", "book-010", "--data-dir", str(PACK), "--out", str(tmp_path / "x"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_tools_added_between_turns_are_announced(tmp_path, data_dir, monkeypatch, capsys):
    """BFCL miss_func: a function arrives in a later turn; the player is told, then plays the gold calls."""
    scripted_input(monkeypatch, ["There is no tool to search files.", '/call find {"path": ".", "name": "test"}',
                                 "Found them.", '/call cd {"folder": "projects"}', '/call cd {"folder": "photography"}',
                                 '/call cp {"source": "test_image1.jpg", "destination": "backup_tests"}',
                                 '/call cp {"source": "test_document.txt", "destination": "backup_tests"}', "Copied."])
    code = main(["play", "bfcl_v3", "multi_turn_miss_func_3", "--data-dir", str(data_dir),
                 "--out", str(tmp_path / "b")])
    out = capsys.readouterr().out
    assert code == 0 and "(tools added: find, ls; /tools lists them)" in out and "reward 1.0" in out


def test_played_as_the_agent_against_the_llm_user_simulator(tmp_path, data_dir, monkeypatch, capsys):
    def simulated_user(request):
        said = [m for m in request["messages"] if m["role"] == "user"]  # the agent's turns, as the user sees them
        return text_reply("###STOP###" if len(said) > 1 else "I want to return my water bottle.")

    scripted_input(monkeypatch, ["Sorry, I cannot help with that today."])
    with MockOpenAI(simulated_user) as url:
        code = main(["play", "tau2", "5", "--subset", "retail", "--user-model", "sim", "--user-base-url", url,
                     "--data-dir", str(data_dir), "--out", str(tmp_path / "s")])
    out = capsys.readouterr().out
    assert code == 0 and "[user] I want to return my water bottle." in out and "[user] ###STOP###" in out
    row = json.loads((tmp_path / "s" / "episodes.jsonl").read_text())
    assert row["usage"]["user"]["requests"] == 2 and row["reward"] == 0.0  # nothing returned: the DB differs
    config = json.loads((tmp_path / "s" / "config.json").read_text())
    assert config["user"]["name"] == "sim" and config["protocol"]["roles"]["user"]["params"] == {"temperature": 0.0}


def test_an_agent_endpoint_failing_mid_play_is_recorded_as_eval_records_it(tmp_path, monkeypatch, capsys):
    """The episode is played by play_one, as `mua eval` plays one: a model endpoint that fails is the episode's
    error (written, exit 1), never a traceback or a score; the record is the plan's (run_config)."""
    scripted_input(monkeypatch, ["I want a table."])
    with MockOpenAI(lambda request: HTTPReply(400, {"error": {"message": "no such model"}})) as url:
        code = main(["play", "pack", "book-010", "--as", "user", "--agent-model", "m", "--agent-base-url", url,
                     "--data-dir", str(PACK), "--out", str(tmp_path / "e")])
    out = capsys.readouterr().out
    assert code == 1 and "episode failed: model error" in out and "Traceback" not in out
    row = json.loads((tmp_path / "e" / "episodes.jsonl").read_text())
    assert row["reward"] is None and row["error"].startswith("model error") and row["messages"] == []
    config = json.loads((tmp_path / "e" / "config.json").read_text())
    assert config["protocol"]["overrides"][0] == "user.played_by_person" and config["user"] == {
        "name": "person (mua play)"} and config["protocol"]["roles"]["user"] is None and "prices" not in config
