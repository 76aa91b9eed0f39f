"""An offline test model: a tiny random-initialised causal LM with a tool-capable chat template.

Nothing comes from a model hub. The tokenizer is a byte-level BPE trained here on a small built-in corpus
(any NFC-normalised text round-trips exactly), the chat template is in the Hermes/Qwen style (tools listed
in the system turn, ``<tool_call>{json}</tool_call>`` in assistant turns, tool results as
``<tool_response>``), and the weights are random. Its outputs are noise, so benchmark scores with it are
near zero by design: it exists so that tests and offline examples can exercise the local backends end to
end on a CPU.

``build_tiny_checkpoint(out_dir, seed)`` writes an ordinary checkpoint directory; the same seed gives
byte-identical files.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..errors import ConfigError
from ..io.files import read_text
from .templates import HERMES_TEMPLATE
from .tiny_copying import MIN_LENGTH as MIN_COPY_LENGTH
from .tiny_copying import TokenPools
from .tokenizer import KEEP_PIPELINE_KEY

IM_START, IM_END, PAD = "<|im_start|>", "<|im_end|>", "<|endoftext|>"
# Kept as single (non-special) tokens so they survive decoding, as in the models that use this format.
TOOL_MARKERS = ("<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<tools>", "</tools>")
VOCAB_SIZE = 1024
# Digit-place tokens: digit d at place k (0-based) of a number is written as the private-use character
# DIGIT_PLACE_BASE + 10 k + d, one token each; the decoder writes the digit back. Places past the last stay
# ordinary digits.
DIGIT_PLACE_BASE = 0xE000
DIGIT_PLACES = 8
# Name-place tokens: in a name (a capital letter starting a word, followed by a small letter), letter L at place k
# (0-based) is the private-use character NAME_PLACE_BASE + 26 k + L (A-Z at place 0, a-z after), one token each,
# so copying a never-seen surname is matching places as for ids. Letters past the last place, or after a letter
# outside a-z, stay ordinary text. The block starts past the most digit places allowed (20 x 10).
NAME_PLACE_BASE = 0xE100
MAX_NAME_PLACES = 24

COPYING_REPORT = "copying.json"  # the copying stage's settings and held-out accuracy, in the checkpoint
CHAT_TEMPLATE = HERMES_TEMPLATE  # the tiny model wears mua's Hermes-style template

# Training text for the BPE merges: chat scaffolding, JSON punctuation and words common in the benchmarks.
_CORPUS = [
    "<|im_start|>system\nYou are a helpful customer service agent. Follow the policy.<|im_end|>\n",
    "<|im_start|>user\nHi! I want to cancel my order and get a refund, please.<|im_end|>\n",
    "<|im_start|>assistant\nSure, I can help with that. Could you tell me your user id and order id?<|im_end|>\n",
    '<tool_call>\n{"name": "get_order_details", "arguments": {"order_id": "#W1234567"}}\n</tool_call>',
    '<tool_call>\n{"name": "find_user_id_by_name_zip", "arguments": {"first_name": "Yusuf", '
    '"last_name": "Rossi", "zip": "19122"}}\n</tool_call>',
    '<tool_response>\n{"order_id": "#W1234567", "status": "pending", "items": [{"item_id": "123", '
    '"price": 54.04, "options": {"color": "red", "size": "M"}}]}\n</tool_response>',
    '{"type": "function", "function": {"name": "cancel_pending_order", "description": "Cancel a pending '
    'order.", "parameters": {"type": "object", "properties": {"reason": {"type": "string", "enum": '
    '["no longer needed", "ordered by mistake"]}}, "required": ["order_id", "reason"]}}}',
    "Error: the order is not pending. The user is not found. Transfer to a human agent. ###STOP###",
    "flight reservation baggage cabin economy business passenger payment gift card credit certificate",
    "phone data roaming airplane mode network signal sim card mobile settings reboot refuel plan bill",
    "ls cd mkdir cat grep sort touch mv cp file directory message send post ticket stock trade watchlist",
    "def get(self, name: str, value: int = 0) -> bool: return True if x == 1 else None [1, 2, 3] (a, b)",
    "The quick brown fox jumps over the lazy dog. 0123456789 ,.;:!?'\"()[]{}<>/\\|@#$%^&*-_=+~`",
]


def digit_place_char(place: int, digit: int) -> str:
    return chr(DIGIT_PLACE_BASE + 10 * place + digit)


def _digit_place_normalizers(places: int) -> list:
    """Replace rules writing each digit of a number as its digit-place character. The last place goes first, so
    that when place k is rewritten the k digits before it are still plain digits; a number's start is anything
    that is neither a digit nor a place character, so a long number's later digits never restart the count."""
    from tokenizers import Regex, normalizers

    not_digit = f"[^0-9\\x{{{DIGIT_PLACE_BASE:X}}}-\\x{{{DIGIT_PLACE_BASE + 10 * places - 1:X}}}]"
    rules = []
    for place in reversed(range(places)):
        before = f"(?<=(?:^|{not_digit})[0-9]{{{place}}})"
        rules += [normalizers.Replace(Regex(before + str(d)), digit_place_char(place, d)) for d in range(10)]
    return rules


def name_place_char(place: int, letter: str) -> str:
    return chr(NAME_PLACE_BASE + 26 * place + ord(letter.lower()) - ord("a"))


def name_place_letter(place: int, index: int) -> str:
    """The letter a name-place character stands for: a capital at place 0, a small letter after."""
    return chr((ord("A") if place == 0 else ord("a")) + index)


def _name_place_normalizers(places: int) -> list:
    """Replace rules writing each letter of a name as its name-place character, the last place first (as for
    digits): when place k is rewritten, the capital and the k - 1 small letters before it are still plain. A name
    starts after anything that is neither an ASCII letter nor a name-place character; its capital is rewritten
    only when a place-1 character follows it (a capital alone, as in "I" or "ID", stays plain)."""
    from tokenizers import Regex, normalizers

    if not places:
        return []
    end = NAME_PLACE_BASE + 26 * places - 1
    not_letter = f"[^A-Za-z\\x{{{NAME_PLACE_BASE:X}}}-\\x{{{end:X}}}]"
    rules = []
    for place in reversed(range(1, places)):
        before = f"(?<=(?:^|{not_letter})[A-Z][a-z]{{{place - 1}}})"
        rules += [normalizers.Replace(Regex(before + c), name_place_char(place, c))
                  for c in "abcdefghijklmnopqrstuvwxyz"]
    first, last = NAME_PLACE_BASE + 26, NAME_PLACE_BASE + 51
    after = f"(?=[\\x{{{first:X}}}-\\x{{{last:X}}}])"
    rules += [normalizers.Replace(Regex(f"(?<=^|{not_letter}){c}{after}"), name_place_char(0, c))
              for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
    return rules


def _place_chars(digit_places: int, name_places: int) -> list[tuple[str, str]]:
    """Every place character with the text it stands for."""
    return [(digit_place_char(p, d), str(d)) for p in range(digit_places) for d in range(10)] + [
        (chr(NAME_PLACE_BASE + 26 * p + i), name_place_letter(p, i)) for p in range(name_places) for i in range(26)]


def _train_tokenizer(single_digits: bool = False, digit_places: int = 0, corpus: tuple[str, ...] = (),
                     name_places: int = 0):
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()  # as Qwen2's tokenizer, which transformers 5 loads this one as
    if digit_places or name_places:
        tok.normalizer = normalizers.Sequence([normalizers.NFC(), *_digit_place_normalizers(digit_places),
                                               *_name_place_normalizers(name_places)])
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    if single_digits:  # every digit its own token: copying an id is then one token per character, as in Llama's
        tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                     pre_tokenizers.ByteLevel(add_prefix_space=False)])
    tok.decoder = decoders.ByteLevel()
    if digit_places or name_places:  # the place characters (added tokens, not byte-level) decode back to text
        tok.decoder = decoders.Sequence([decoders.ByteLevel(), *[
            decoders.Replace(char, text) for char, text in _place_chars(digit_places, name_places)]])
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=[PAD, IM_START, IM_END],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(_CORPUS * 4 + list(corpus), trainer=trainer)
    return tok


def build_tiny_tokenizer(single_digits: bool = False, digit_places: int = 0, corpus: tuple[str, ...] = (),
                         name_places: int = 0):
    """The tiny model's tokenizer (a ``PreTrainedTokenizerFast``) with its chat template; ``single_digits``:
    numbers are split into one token per digit; ``digit_places=N``: the first N digits of every number are tokens
    that say both the digit and its place in the number (as Abacus embeddings do), so copying an id from a tool
    result is matching places, which a tiny model learns from a few hundred demonstrations; ``corpus``: texts
    the BPE merges are also learnt from (a domain's conversations: its words become single tokens, as in a real
    model's vocabulary, and its conversations about 40% shorter); ``name_places=N``: the first N letters of every
    name (a capitalised word) are tokens saying the letter and its place, so a surname never seen in training is
    copied by matching places, as an id is."""
    from tokenizers import AddedToken
    from transformers import PreTrainedTokenizerFast

    extra = {KEEP_PIPELINE_KEY: True} if digit_places or name_places else {}
    tok = PreTrainedTokenizerFast(tokenizer_object=_train_tokenizer(single_digits, digit_places, corpus, name_places),
                                  bos_token=None,
                                  eos_token=IM_END, pad_token=PAD, clean_up_tokenization_spaces=False,
                                  model_max_length=32768, **extra)
    tok.add_tokens(list(TOOL_MARKERS))
    if digit_places or name_places:  # matched after normalisation, where the place characters are
        tok.add_tokens([AddedToken(char, normalized=True, special=False)
                        for char, _ in _place_chars(digit_places, name_places)])
    tok.padding_side = "left"
    tok.chat_template = CHAT_TEMPLATE
    return tok


def build_tiny_checkpoint(out_dir: str | Path, seed: int = 0, hidden_size: int = 64, heads: int = 1,
                          layers: int = 2, sliding_window: int | None = None, single_digits: bool = False,
                          digit_places: int = 0, corpus_file: str | Path | None = None,
                          name_places: int = 0, copy_steps: int = 0, progress: bool = False) -> Path:
    """Write a tiny random causal LM (Qwen2 architecture; by default hidden 64, one head of 64, 2 layers) and its
    tokenizer to ``out_dir``; returns the directory. Runs fully offline.

    ``sliding_window=N`` makes every layer attend to the last N tokens only. A random-initialised model spreads
    its attention evenly, so in a conversation behind a long system prompt the few tokens worth copying get a
    vanishing share of the gradient; with a window a tiny model learns to copy what the user said within a few
    hundred steps on a CPU (tests/perf/learning_check.py). ``single_digits`` gives every digit its own token,
    so that an id copied from a tool result is copied digit by digit (by default BPE merges digit pairs);
    ``digit_places=N`` writes the first N digits of every number as digit-and-place tokens (see
    :func:`build_tiny_tokenizer`; load such a checkpoint's tokenizer with harness/models/tokenizer.py);
    ``name_places=N`` does the same for the first N letters of every name, and starts the embedding of "letter L
    at place k" as the sum of a vector for L and one for k, so that a letter seen at other places only, as in a
    surname never seen in training, still shares its place with the letters around it (an ordinary embedding
    matrix: the checkpoint is a plain Qwen2 one); ``corpus_file``: a UTF-8 text file the tokenizer's merges are
    also learnt from (its lines), or a `mua export` dataset folder (its conversations, rendered); ``copy_steps=N``:
    N steps of the copying stage (harness/models/tiny_copying.py: synthetic sequences whose spans come back, so the
    model can copy before it reads a conversation), its held-out copy accuracy before and after written to
    ``copying.json`` in the checkpoint."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    if hidden_size % heads or (hidden_size // heads) % 2:
        raise ConfigError(f"hidden size {hidden_size} must split into {heads} heads of an even size (rotary "
                          "position embeddings pair the dimensions of a head)")
    if sliding_window is not None and sliding_window < 1:
        raise ConfigError(f"the sliding window must be at least 1 token, got {sliding_window}")
    if not 0 <= digit_places <= 20:
        raise ConfigError(f"digit places must be between 0 (off) and 20, got {digit_places}")
    if name_places and not 2 <= name_places <= MAX_NAME_PLACES:
        raise ConfigError(f"name places must be 0 (off) or between 2 and {MAX_NAME_PLACES}, got {name_places}")
    if copy_steps and _copy_length(sliding_window) < MIN_COPY_LENGTH:
        raise ConfigError(f"a sliding window of {sliding_window} tokens is too short for the copying stage's "
                          f"sequences (at least {MIN_COPY_LENGTH} tokens): widen it or leave --copy-steps out")
    corpus = _read_corpus(corpus_file) if corpus_file is not None else ()
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out} exists and is not a directory; name a new or existing directory to write the "
                          "tiny checkpoint into")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a parent is a file, no permission, ...
        raise ConfigError(f"cannot create the checkpoint directory {out}: {exc.strerror or exc}") from None
    tok = build_tiny_tokenizer(single_digits, digit_places, corpus, name_places)
    eos, pad = tok.convert_tokens_to_ids(IM_END), tok.convert_tokens_to_ids(PAD)
    # By default one attention head of 64: vLLM's CPU attention rejects head sizes below 32 (head_dim 16 fails).
    config = Qwen2Config(vocab_size=len(tok), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                         max_position_embeddings=32768, tie_word_embeddings=True, eos_token_id=eos,
                         pad_token_id=pad, bos_token_id=None, use_sliding_window=sliding_window is not None,
                         sliding_window=sliding_window, max_window_layers=0)
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config).to(torch.float32).eval()
    if name_places:
        _factor_name_place_embeddings(model, tok, name_places, seed)
    if copy_steps:
        _teach_copying(model, tok, out, copy_steps, seed, sliding_window, name_places, digit_places, progress)
    else:  # --overwrite keeps other files: an earlier build's report must not describe these weights
        (out / COPYING_REPORT).unlink(missing_ok=True)
    model.generation_config = GenerationConfig(eos_token_id=eos, pad_token_id=pad, do_sample=False)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def copying_pools(tok, name_places: int, digit_places: int) -> TokenPools:
    """The tiny tokenizer's ids by kind, for the copying stage: ordinary tokens (neither special nor added), and the
    letter tokens of each name place and the digit tokens of each digit place."""
    special, added = set(tok.all_special_ids), set(tok.get_added_vocab())
    ordinary = sorted(i for t, i in tok.get_vocab().items() if i not in special and t not in added)
    names = [tok.convert_tokens_to_ids([name_place_char(p, chr(ord("a") + i)) for i in range(26)])
             for p in range(name_places)]
    digits = [tok.convert_tokens_to_ids([digit_place_char(p, d) for d in range(10)]) for p in range(digit_places)]
    return TokenPools(ordinary, names, digits)


def _copy_length(window: int | None) -> int:
    """The copying stage's sequence length: the window (at most 256), else 96 (shorter sequences are cheaper steps;
    in the runs measured the copying formed after 400 to 600 steps of 32 at 96 and at 128 tokens, once not by 800)."""
    return min(window or 96, 256)


def _teach_copying(model, tok, out: Path, steps: int, seed: int, window: int | None, name_places: int,
                   digit_places: int, progress: bool) -> None:
    """The copying stage (its report in copying.json)."""
    from .tiny_copying import teach_copying

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=steps, desc="copying stage", unit="step", dynamic_ncols=True, leave=False)
    report = teach_copying(model, copying_pools(tok, name_places, digit_places), steps, seed, _copy_length(window),
                           on_step=bar.update if bar is not None else None)
    if bar is not None:
        bar.close()
    (out / COPYING_REPORT).write_text(json.dumps(report.as_dict(), indent=1, sort_keys=True) + "\n")


def _factor_name_place_embeddings(model, tok, places: int, seed: int) -> None:
    """Start the embedding of each name-place token as (letter vector + place vector) / sqrt 2, both drawn as the
    model's own initialiser draws (normal, std ``initializer_range``), from a generator of their own seeded by
    ``seed`` (the same seed, the same bytes)."""
    import torch

    std = model.config.initializer_range
    gen = torch.Generator().manual_seed(seed)
    width = model.config.hidden_size
    letters = torch.randn(26, width, generator=gen) * std
    place_vectors = torch.randn(places, width, generator=gen) * std
    weight = model.get_input_embeddings().weight
    with torch.no_grad():
        for p in range(places):
            ids = tok.convert_tokens_to_ids([chr(NAME_PLACE_BASE + 26 * p + i) for i in range(26)])
            weight[ids] = (letters + place_vectors[p]) / 2 ** 0.5


def _read_corpus(path: str | Path) -> tuple[str, ...]:
    """The corpus texts: the lines of a text file, or, for a folder (a `mua export` dataset), each conversation as
    the tiny chat template renders it, so the merges are learnt from exactly the text the policy reads. Names and
    numbers stay place tokens whatever the merges (added tokens are split out first), so shorter conversations do
    not cost the copying of a name or an id by places; they bring a tool result's ids nearer the call, within a
    window's reach (python -m mua.training.copy_reach)."""
    if not Path(path).is_dir():
        return tuple(read_text(path, what="tokenizer corpus").splitlines(keepends=True))
    import datasets

    from ..io.files import parse_json

    try:
        rows = datasets.load_from_disk(str(path))
    except (FileNotFoundError, ValueError) as exc:
        raise ConfigError(f"tokenizer corpus {path} is a folder but not a `mua export` dataset ({exc})") from None
    template = build_tiny_tokenizer()
    return tuple(template.apply_chat_template(
        [{k: v for k, v in m.items() if v is not None} for m in row["messages"]],
        tools=parse_json(row.get("tools") or "[]", where=f"tokenizer corpus {path}: a row's tools") or None,
        tokenize=False) for row in rows)
