"""Scoring only the positions that carry a label in TRL's fused LM head, on the CPU too.

TRL's fused LM head (SFT's loss, GRPO's log-probs) projects only the labelled positions on CUDA and XPU, and every
position elsewhere, so that tile shapes stay fixed for backends that compile them. Nothing is compiled on the
CPU, and only the agent's replies of a conversation carry labels: projecting those alone is TRL's own GPU path,
the same arithmetic on fewer rows (unlabelled positions are zeros either way), and about a third of an SFT step
of the learning check's tiny model.
"""
from __future__ import annotations

from .compat import fused_head_choice, set_fused_head_choice

MARK = "_mua_labelled_only"


def score_labelled_positions_only() -> bool:
    """Make TRL's fused LM head take its labelled-positions-only path on the CPU; False when this TRL has no such
    switch (then nothing changes)."""
    chooser = fused_head_choice()
    if chooser is None:
        return False
    if getattr(chooser, MARK, False):
        return True

    def labelled_only(device) -> bool:
        return device.type == "cpu" or chooser(device)

    setattr(labelled_only, MARK, True)
    set_fused_head_choice(labelled_only)
    return True
