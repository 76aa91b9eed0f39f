"""Under CI the fidelity material must be present: a missing ../shared/real fails the run instead of skipping
the 1,610 official-verdict checks (a skipped check is never a pass)."""
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _pytest(probe: Path, env: dict) -> subprocess.CompletedProcess:
    """Runs ``probe`` with this suite's conftest (its real_dir fixture) in a clean environment."""
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest",
                           "--rootdir", str(TESTS), "-c", str(TESTS.parent / "pyproject.toml"), str(probe)],
                          capture_output=True, text=True, env=env, cwd=TESTS)


def test_missing_real_trajectories_fail_under_ci(tmp_path):
    probe = tmp_path / "test_probe.py"
    probe.write_text("def test_uses_real(real_dir):\n    assert real_dir.is_dir()\n")
    env = {"PATH": "/usr/bin:/bin", "MUA_REAL_DIR": str(tmp_path / "nowhere")}
    run = _pytest(probe, env | {"CI": "true"})
    assert run.returncode != 0 and "required in CI" in run.stdout, run.stdout[-2000:]
    run = _pytest(probe, env)
    assert run.returncode == 0 and "1 skipped" in run.stdout, run.stdout[-2000:]
