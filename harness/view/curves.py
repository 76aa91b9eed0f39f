"""Training curves as one PNG: reward, pass rate, episode length, KL and entropy per step, read from the rows
of ``metrics.jsonl``. matplotlib comes with the ``plot`` extra; without it :func:`render_curves` raises
ImportError and callers carry on without a picture."""
from __future__ import annotations

import io
import os
from pathlib import Path

CURVES_PNG = "curves.png"  # written next to metrics.jsonl by training (training/progress.py), shown by `mua view`

# (panel title, [(metrics key, legend label)])
PANELS = (
    ("reward", [("reward", "mean reward"), ("eval/reward", "held-out mean reward (eval_steps)")]),
    ("pass rate", [("episode/pass_rate", "pass rate"), ("eval/pass_rate", "held-out pass rate (eval_steps)")]),
    ("episode length", [("episode/turns", "user turns"), ("episode/generated_tokens", "generated tokens / 100")]),
    ("KL / entropy", [("kl", "KL"), ("entropy", "entropy")]),
)
SCALE = {"episode/generated_tokens": 0.01}  # tokens share the turns panel


def render_curves(metrics: list[dict]) -> bytes:
    """The PNG bytes of the curves; ImportError when matplotlib is missing."""
    import matplotlib

    matplotlib.use("Agg")  # no display; safe in a training process
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 6.5), dpi=80)
    axes = fig.subplots(2, 2)
    for ax, (title, series) in zip(axes.flat, PANELS):
        for key, label in series:
            points = [(row["step"], row[key] * SCALE.get(key, 1.0)) for row in metrics
                      if isinstance(row.get(key), (int, float)) and isinstance(row.get("step"), (int, float))]
            if points:
                ax.plot(*zip(*points), marker="." if len(points) < 50 else None, label=label)
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize="small")
        else:
            ax.text(0.5, 0.5, "not logged", ha="center", va="center", transform=ax.transAxes, color="gray")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def write_curves(metrics: list[dict], png: Path) -> bool:
    """Write ``png`` atomically; False (and nothing written) when matplotlib is missing."""
    try:
        data = render_curves(metrics)
    except ImportError:
        return False
    png = Path(png)
    tmp = png.with_name(f".{png.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, png)  # a viewer never sees half a picture
    return True
