"""A local checkpoint on an in-process vLLM engine (optional extra ``vllm``; needs a GPU).

Rendering, parsing and turn records are the same as the transformers backend's (see :mod:`.local`); only
generation differs: each micro-batch is one ``LLM.generate`` call over token-id prompts with a per-request
seed. vLLM is imported when a model is built, never at module import, so nothing else depends on it.

The request-to-``SamplingParams`` mapping and the reading of vLLM's outputs are public
(:func:`sampling_kwargs`, :func:`sampled_logprob`, :func:`generation_result`) so that every caller of a
vLLM engine (training's rollout backends too) asks for and reads generations the same way.

Log-probabilities: vLLM reports them under the distribution its ``logprobs_mode`` engine setting names
(by default the raw model softmax, before temperature). They equal the transformers backend's only at
temperature 1; pass ``logprobs_mode="processed_logprobs"`` (vLLM >= 0.10) in ``engine_args`` to have them
after temperature scaling.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from ..errors import ConfigError
from .activity import METER
from .generation import GenerationRequest, GenerationResult
from .local import LocalChatModel, check_local_params, stop_ids_for
from .templates import prepare_tokenizer


def import_vllm():
    """The vllm module, or a ConfigError saying how to install it."""
    try:
        import vllm
    except ImportError as exc:
        raise ConfigError(f"the vllm backend needs the optional extra: pip install 'mua[vllm]' ({exc})") from None
    return vllm


def sampling_kwargs(request: GenerationRequest, stop_ids: set[int]) -> dict[str, Any]:
    """The keyword arguments of ``vllm.SamplingParams`` for one request (plain JSON values, so they also
    serve as the sampling fields of a request to a vLLM server): one sample, the request's seed, the sampled
    token's log-probability only, generation ending at a stop id, special tokens kept in the text."""
    return {"n": 1, "temperature": request.temperature, "top_p": request.top_p, "seed": request.seed,
            "max_tokens": request.max_new_tokens, "logprobs": 0, "stop_token_ids": sorted(stop_ids),
            "skip_special_tokens": False}


def sampled_logprob(position: Any, token: int) -> float:
    """The sampled token's log-probability from one position of vLLM's logprobs output (a mapping from
    token id to a ``Logprob`` or a float); NaN when vLLM did not report it."""
    entry = position.get(token) if position else None
    value = getattr(entry, "logprob", entry)
    return float(value) if value is not None else float("nan")


def generation_result(completion: Any, stop_ids: set[int]) -> GenerationResult:
    """A vLLM ``CompletionOutput`` as a GenerationResult. "stop" only when the last generated id is a stop
    id, as TurnRecord documents it; anything else (the token budget, a cut) is "length"."""
    ids = [int(t) for t in completion.token_ids]
    logprobs = [sampled_logprob(p, t) for p, t in zip(completion.logprobs or [], ids)]
    stopped = completion.finish_reason == "stop" and bool(ids) and ids[-1] in stop_ids
    return GenerationResult(token_ids=ids, logprobs=logprobs, finish_reason="stop" if stopped else "length")


class VllmChatModel(LocalChatModel):
    """``path`` is a checkpoint directory; ``engine_args`` go to ``vllm.LLM`` (e.g. gpu_memory_utilization,
    max_model_len, dtype)."""

    def __init__(self, path: str | Path, *, engine_args: Optional[dict] = None, **params):
        check_local_params(params)
        if engine_args is not None and not (isinstance(engine_args, dict) and all(isinstance(k, str)
                                                                                  for k in engine_args)):
            raise ConfigError(f"local model parameter engine_args must be an object of vllm.LLM arguments, "
                              f"got {engine_args!r}")
        from .tokenizer import keeps_own_pipeline

        path = Path(path)
        if keeps_own_pipeline(path):  # vLLM's engine loads the tokenizer its own way and would drop the pipeline
            raise ConfigError(f"{path}: its tokenizer (the tiny model's digit- or name-place tokens) loads only with "
                              "the transformers backend")
        vllm = import_vllm()
        if not (path / "config.json").is_file():
            raise ConfigError(f"{path} is not a checkpoint directory (no config.json)")
        from transformers import AutoTokenizer

        # The template is checked (and replaced) before the engine loads; the engine's tokenizer then wears it.
        template = prepare_tokenizer(AutoTokenizer.from_pretrained(path), str(path),
                                     params.pop("chat_template", None)).chat_template
        self._vllm = vllm
        self.engine = vllm.LLM(model=str(path), **(engine_args or {}))
        tokenizer = self.engine.get_tokenizer()
        tokenizer.chat_template = template
        from transformers import GenerationConfig
        try:
            generation_config = GenerationConfig.from_pretrained(path)
        except OSError:  # no generation_config.json: the tokenizer's EOS alone
            generation_config = None
        stop_ids = stop_ids_for(tokenizer, generation_config)
        if not stop_ids:
            raise ConfigError(f"{path}: neither the tokenizer nor generation_config names an EOS token")
        max_context = getattr(self.engine.llm_engine.model_config, "max_model_len", None)
        super().__init__(tokenizer, stop_ids=stop_ids, max_context=max_context, **params)

    def _generate_batch(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        prompts = [{"prompt_token_ids": list(r.prompt_ids)} for r in requests]
        params = [self._vllm.SamplingParams(**sampling_kwargs(r, self.stop_ids)) for r in requests]
        outputs = self.engine.generate(prompts, params, use_tqdm=False)
        results = [generation_result(out.outputs[0], self.stop_ids) for out in outputs]
        METER.add_tokens(sum(len(r.token_ids) for r in results))
        return results
