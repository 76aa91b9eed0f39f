"""Writes the short ``--help`` of ``mua train`` and ``mua sft`` (``harness/cli/help_train.txt``,
``help_sft.txt``) from their settings classes, so that the command line prints it without importing TRL.
Run ``python -m mua.training.help`` after changing a setting; ``tests/harness/cli/test_quick_help.py`` checks
the files are current."""
from __future__ import annotations

from pathlib import Path

from .settings import short_help

HELP_DIR = Path(__file__).resolve().parents[1] / "harness" / "cli"

# TRL fields people set most, besides those mua gives its own default (listed with mua's settings)
TRAIN_COMMON = ("learning_rate", "beta", "temperature", "num_iterations", "loss_type", "gradient_accumulation_steps",
                "lr_scheduler_type", "warmup_steps", "weight_decay", "max_grad_norm", "report_to")
SFT_COMMON = ("learning_rate", "max_steps", "num_train_epochs", "per_device_train_batch_size",
              "gradient_accumulation_steps", "lr_scheduler_type", "warmup_steps", "weight_decay", "max_grad_norm",
              "save_steps", "save_total_limit", "bf16", "report_to")


def help_texts() -> dict[str, str]:
    """File name -> the short help it holds."""
    from .config import DESCRIPTION as TRAIN_DESCRIPTION
    from .config import TrainConfig
    from .sft_config import DESCRIPTION as SFT_DESCRIPTION
    from .sft_config import SftRunConfig

    return {"help_train.txt": short_help(TrainConfig, "mua train", TRAIN_DESCRIPTION, TRAIN_COMMON),
            "help_sft.txt": short_help(SftRunConfig, "mua sft", SFT_DESCRIPTION, SFT_COMMON)}


def main() -> None:
    for name, text in help_texts().items():
        (HELP_DIR / name).write_text(text, encoding="utf-8")
        print(f"wrote {HELP_DIR / name} ({text.count(chr(10))} lines)")


if __name__ == "__main__":
    main()
