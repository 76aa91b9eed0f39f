"""One spelling of every flag, accepted by every command: ``--data-dir`` and ``--data_dir`` are the same flag,
and an output directory is ``--out`` or ``--output-dir`` whichever command takes it (mua's own commands name it
``--out``; ``mua train`` and ``mua sft`` read TRL's settings, where it is ``output_dir``)."""
from __future__ import annotations

TRL_PARSED = ("train", "sft")  # commands whose flags TRL's parser reads (it takes both spellings itself)
_OUT, _OUTPUT_DIR = "--out", "--output-dir"


def one_spelling(argv: list[str]) -> list[str]:
    """``argv`` with every ``--flag_name`` written ``--flag-name`` and the output flag named as the command
    names it. Values (anything not starting with ``--``) are left alone."""
    command = next((a for a in argv if not a.startswith("-")), None)
    rename = {_OUT: _OUTPUT_DIR} if command in TRL_PARSED else {_OUTPUT_DIR: _OUT}
    out = []
    for arg in argv:
        if arg.startswith("--") and len(arg) > 2:
            name, eq, value = arg.partition("=")
            name = name.replace("_", "-")
            arg = rename.get(name, name) + eq + value
        out.append(arg)
    return out
