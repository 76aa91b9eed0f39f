"""Credentials in a URL (http://user:KEY@host) are redacted wherever a URL is recorded or printed: config.json,
error lines, the stall message, train_config.json (one function, harness/io/urls.py)."""
import json
import socket
import subprocess
import sys
from pathlib import Path

from mock_openai import MockOpenAI, by_model, constant, text_reply

from mua.harness.io.urls import redact_url
from mua.harness.run.build import ModelSpec

PACK = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"
SECRET = "sk-SECRET-do-not-print"


def test_redact_url():
    assert redact_url(f"http://user:{SECRET}@host:8000/v1") == "http://***@host:8000/v1"
    assert redact_url(f"https://{SECRET}@host/v1") == "https://***@host/v1"
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert redact_url(f"endpoint http://u:{SECRET}@h/v1 and http://a:b@c/x failed") == \
        "endpoint http://***@h/v1 and http://***@c/x failed"
    assert redact_url("mail me at someone@example.com") == "mail me at someone@example.com"
    assert ModelSpec("m", f"http://u:{SECRET}@h/v1").to_dict()["base_url"] == "http://***@h/v1"


def mua(*argv):
    done = subprocess.run([sys.executable, "-c", "import sys; from mua.harness.cli import main; "
                           "sys.exit(main(sys.argv[1:]))", *map(str, argv)], capture_output=True, text=True,
                          timeout=120)
    return done.returncode, done.stdout + done.stderr


def test_a_run_records_no_password(tmp_path):
    agent = constant(text_reply("Hello."))
    with MockOpenAI(by_model({"agent": agent})) as url:
        secret_url = url.replace("http://", f"http://user:{SECRET}@")
        rc, text = mua("eval", "--benchmark", "pack", "--data-dir", PACK, "--agent-model", "agent",
                       "--agent-base-url", secret_url, "--limit", "2", "--no-progress", "--out", tmp_path / "run")
    assert rc in (0, 1), text
    assert SECRET not in text
    for path in (tmp_path / "run").iterdir():
        assert SECRET not in path.read_text(errors="replace"), path.name
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["agent"]["base_url"].startswith("http://***@127.0.0.1")


def test_an_error_line_prints_no_password(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens
    rc, text = mua("eval", "--benchmark", "pack", "--data-dir", PACK, "--agent-model", "agent", "--agent-base-url",
                   f"http://user:{SECRET}@127.0.0.1:{port}/v1", "--limit", "1", "--no-progress", "--out",
                   tmp_path / "run")
    assert rc == 2 and "cannot be reached" in text and "http://***@127.0.0.1" in text, text
    assert SECRET not in text
    rc, text = mua("eval", "--benchmark", "pack", "--data-dir", PACK, "--agent-model", "agent", "--agent-base-url",
                   f"ftp://user:{SECRET}@127.0.0.1/v1", "--limit", "1", "--no-progress", "--out", tmp_path / "r2")
    assert rc == 2 and SECRET not in text, text


def test_train_config_records_no_password():
    from mua.training.config import TrainConfig

    cfg = TrainConfig(output_dir="/tmp/x", user_base_url=f"http://u:{SECRET}@h/v1")
    assert cfg.settings()["user_base_url"] == "http://***@h/v1"
