"""`mua train --help` and `mua sft --help` are short and import nothing heavy (the short help is written from the
settings classes beforehand, `python -m mua.training.help`); `--help-all` lists every TRL setting, each default
once; `mua eval --help` ends with examples."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from mua.harness.cli import main

HEAVY = ("torch", "trl", "transformers", "datasets", "accelerate")
_PROBE = ("import sys; from mua.harness.cli import main; rc = main([{cmd!r}, '--help']); "
          "print('HEAVY', sorted(m for m in {heavy!r} if m in sys.modules), file=sys.stderr); sys.exit(rc)")


@pytest.mark.parametrize("command", ["train", "sft"])
def test_short_help_is_short_and_imports_nothing_heavy(command):
    done = subprocess.run([sys.executable, "-c", _PROBE.format(cmd=command, heavy=HEAVY)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stderr, done.stderr  # no torch/TRL import before (or for) the help
    lines = done.stdout.splitlines()
    assert 20 < len(lines) <= 150, len(lines)
    assert lines[0].startswith(f"usage: mua {command}") and "--help-all" in done.stdout
    for flag in ("--policy", "--use-peft", "--learning-rate", "--output-dir"):
        assert flag in done.stdout, flag
    assert not re.search(r"\(default: [^)]*\)\s*\(default", done.stdout)


def test_short_help_files_are_current():
    pytest.importorskip("trl")
    from mua.training.help import HELP_DIR, help_texts

    for name, text in help_texts().items():
        assert (HELP_DIR / name).read_text(encoding="utf-8") == text, \
            f"harness/cli/{name} is stale: run python -m mua.training.help"


def test_help_all_prints_each_default_once(capsys):
    pytest.importorskip("trl")
    with pytest.raises(SystemExit) as stop:
        main(["train", "--help-all"])
    assert stop.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--num_generations" in text and "--lr_scheduler_type" in text  # every TRL field is there
    assert not re.search(r"\(default: [^)]*\) \(default", text)
    assert "task ids (default: all of the split) --limit" in text  # said once, by the help text itself


def test_eval_help_ends_with_examples(capsys):
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    text = capsys.readouterr().out
    examples = text[text.index("examples ("):]
    assert "--agent gold" in examples and "--trials 1" in examples
