"""RL training (GRPO through TRL) on benchmark tasks, with the episodes played by ``run_episode``.

Modules: :mod:`.stream` (the episode's token stream), :mod:`.policy` (the chat policy that keeps it),
:mod:`.backends` (transformers / vLLM generation), :mod:`.rollout` (TRL's ``rollout_func``), :mod:`.grpo`
(trainer construction), :mod:`.config` (``mua train`` settings), :mod:`.sft` (gold warm-up).
"""
