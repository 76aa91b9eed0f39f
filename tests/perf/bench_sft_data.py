"""How much the suffix memo speeds up building `mua sft` data: the same rows tokenised with the memo (as
``sft_dataset`` does) and without it, in one run; prints both times, their ratio and whether the ids agree.

    python tests/perf/bench_sft_data.py --policy CKPT --dataset ROWS [--rows 100] [--resample-values 10]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policy", type=Path, required=True, help="a checkpoint folder (its tokenizer and template)")
    ap.add_argument("--dataset", type=Path, required=True, help="`mua export` rows (a .jsonl file or datasets folder)")
    ap.add_argument("--rows", type=int, default=100, help="rows read from the dataset (default 100)")
    ap.add_argument("--resample-values", type=int, default=10, help="copies of each row, as `mua sft` makes them")
    args = ap.parse_args(argv)
    from transformers import AutoTokenizer

    from mua.harness.errors import MuaError
    from mua.harness.models import stream
    from mua.training.resample import resample_rows
    from mua.training.sft import read_rows, sft_dataset

    try:
        rows = resample_rows(read_rows(args.dataset)[:args.rows], args.resample_values, 0)
        tok = AutoTokenizer.from_pretrained(args.policy)
    except (MuaError, OSError) as exc:
        print(f"bench_sft_data: {exc}", file=sys.stderr)
        return 2
    stop = {tok.eos_token_id}
    timed = {}
    built = {}
    for memo in (True, False):
        stream.MEMO_SIZE = stream.MEMO_SIZE if memo else 0  # 0: every entry is evicted at once, so nothing is reused
        start = time.perf_counter()
        built[memo] = sft_dataset(rows, tok, stop)
        timed[memo] = time.perf_counter() - start
    same = built[True]["input_ids"] == built[False]["input_ids"] and \
        built[True]["completion_mask"] == built[False]["completion_mask"]
    print(f"{len(rows)} rows: with the memo {timed[True]:.1f} s, without {timed[False]:.1f} s, "
          f"ratio {timed[False] / timed[True]:.2f}; same ids and masks: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
