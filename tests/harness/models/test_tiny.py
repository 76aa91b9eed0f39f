import hashlib
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("transformers", reason="the tiny model needs transformers (pip install 'mua[local]')")

from mua.harness.models.tiny import build_tiny_checkpoint  # noqa: E402


def digests(path):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(path.iterdir())}


def test_checkpoint_is_an_ordinary_directory_and_builds_byte_identically(tiny_checkpoint, tmp_path):
    from transformers import AutoConfig

    names = set(digests(tiny_checkpoint))
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} <= names
    config = AutoConfig.from_pretrained(tiny_checkpoint)
    assert (config.hidden_size, config.num_hidden_layers) == (64, 2)
    assert digests(build_tiny_checkpoint(tmp_path / "again", seed=0)) == digests(tiny_checkpoint)
    other = digests(build_tiny_checkpoint(tmp_path / "other", seed=1))
    assert other["model.safetensors"] != digests(tiny_checkpoint)["model.safetensors"]
    assert other["tokenizer.json"] == digests(tiny_checkpoint)["tokenizer.json"]


def test_template_lists_tools_and_renders_calls_and_results(tiny_tokenizer):
    tools = [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {}}}]
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"type": "function", "function": {"name": "f", "arguments": {"a": 1}}},
                    {"type": "function", "function": {"name": "f", "arguments": "not json"}}]},
                {"role": "tool", "content": "R1"}, {"role": "tool", "content": "R2"},
                {"role": "assistant", "content": "A"}]
    text = tiny_tokenizer.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=True)
    assert text.startswith("<|im_start|>system\nS\n\nYou may call functions.")
    assert '<tools>\n{"type": "function", "function": {"name": "f"' in text
    assert ('<|im_start|>assistant\n<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>\n'
            '<tool_call>\n{"name": "f", "arguments": not json}\n</tool_call><|im_end|>\n') in text
    assert ("<|im_start|>user\n<tool_response>\nR1\n</tool_response>\n<tool_response>\nR2\n"
            "</tool_response><|im_end|>\n") in text
    assert text.endswith("<|im_start|>assistant\nA<|im_end|>\n<|im_start|>assistant\n")
    plain = tiny_tokenizer.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False)
    assert plain == "<|im_start|>user\nhi<|im_end|>\n"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60).map(lambda s: unicodedata.normalize("NFC", s)))
def test_tokenizer_round_trips_any_nfc_text(tiny_tokenizer, text):
    ids = tiny_tokenizer(text, add_special_tokens=False)["input_ids"]
    assert tiny_tokenizer.decode(ids, skip_special_tokens=False) == text


def test_output_path_that_is_a_file_is_a_config_error(tmp_path):
    from mua.harness.errors import ConfigError

    existing = tmp_path / "model.bin"
    existing.write_text("not a directory")
    with pytest.raises(ConfigError, match="not a directory"):
        build_tiny_checkpoint(existing)
    with pytest.raises(ConfigError, match="cannot create"):
        build_tiny_checkpoint(existing / "sub")
    assert existing.read_text() == "not a directory"


def test_size_flags_and_a_size_that_cannot_split_into_heads(tmp_path, capsys):
    import json

    from mua.harness.cli import main

    assert main(["model", "tiny", str(tmp_path / "m"), "--hidden-size", "96", "--heads", "3", "--layers", "1"]) == 0
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    assert (config["hidden_size"], config["num_attention_heads"], config["num_hidden_layers"]) == (96, 3, 1)
    assert main(["model", "tiny", str(tmp_path / "n"), "--hidden-size", "64", "--heads", "3"]) == 2
    assert "must split into 3 heads" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["model", "tiny", str(tmp_path / "o"), "--heads", "0"])


def assert_logprobs_of_one_forward_pass(model, request, out) -> None:
    """The generated tokens' log-probs are those of one forward pass over the prompt and the completion."""
    import torch

    ids = torch.tensor([request.prompt_ids + out.token_ids])
    with torch.no_grad():
        logps = torch.log_softmax(model(input_ids=ids).logits[0].float(), -1)
    n = len(request.prompt_ids)
    full = logps[n - 1:-1].gather(1, torch.tensor(out.token_ids)[:, None])[:, 0]
    assert (full - torch.tensor(out.logprobs)).abs().max() < 1e-4


def test_a_sliding_window_checkpoint_generates_the_same_from_a_kept_cache(tmp_path):
    """Decoding in a batch with left padding and from a kept KV cache gives the log-probs of one full forward
    pass, also when the prompts are longer than the window."""
    pytest.importorskip("torch")
    from transformers import AutoModelForCausalLM

    from mua.harness.models.decode import PrefixCache, generate_batch
    from mua.harness.models.generation import GenerationRequest

    path = build_tiny_checkpoint(tmp_path / "w", hidden_size=64, heads=2, sliding_window=16)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    assert model.config.layer_types == ["sliding_attention"] * 2 and model.config.sliding_window == 16
    cache = PrefixCache()
    prompt = list(range(5, 45))
    first = [GenerationRequest(prompt, 12, 1.0, 1.0, seed=1), GenerationRequest(prompt[:25], 12, 1.0, 1.0, seed=2)]
    outs = generate_batch(model, first, set(), 0, "cpu", prefix_cache=cache)
    second = [GenerationRequest(prompt + outs[0].token_ids + list(range(60, 80)), 12, 1.0, 1.0, seed=3)]
    outs += generate_batch(model, second, set(), 0, "cpu", prefix_cache=cache)
    assert cache.hits > 0
    for request, out in zip(first + second, outs):
        assert_logprobs_of_one_forward_pass(model, request, out)


def test_a_windowed_model_keeps_only_the_window_and_decodes_as_a_full_forward_pass(tmp_path, monkeypatch):
    """Every layer a window of W: the decoding cache holds at most W - 1 columns (kept entries too), also while
    replies run past the window, in the padded prefill and the kept-cache paths; the tokens and log-probs are
    those of one full forward pass, and those of decoding with every column kept (MUA_TRIM_TO_WINDOW=0)."""
    pytest.importorskip("torch")
    from transformers import AutoModelForCausalLM

    from mua.harness.models import decode
    from mua.harness.models.generation import GenerationRequest

    window = 8
    model = AutoModelForCausalLM.from_pretrained(
        build_tiny_checkpoint(tmp_path / "w", hidden_size=64, heads=2, sliding_window=window)).eval()
    widths = []
    forward = model.forward

    def spy(*args, **kwargs):  # the columns each decoding step attends over
        cache = kwargs.get("past_key_values")
        if cache is not None and cache.layers and cache.layers[0].keys is not None:
            widths.append(cache.layers[0].keys.shape[2])
        return forward(*args, **kwargs)

    monkeypatch.setattr(model, "forward", spy)

    def play(prefix_cache):
        prompt = list(range(5, 35))
        first = [GenerationRequest(prompt, 20, 1.0, 1.0, seed=1), GenerationRequest(prompt[:11], 20, 1.0, 1.0, seed=2)]
        outs = decode.generate_batch(model, first, set(), 0, "cpu", prefix_cache=prefix_cache)
        second = [GenerationRequest(prompt + outs[0].token_ids + list(range(60, 75)), 20, 1.0, 1.0, seed=3)]
        return first + second, outs + decode.generate_batch(model, second, set(), 0, "cpu", prefix_cache=prefix_cache)

    for kept in (decode.PrefixCache(), None):
        widths.clear()
        requests, outs = play(kept)
        assert widths and max(widths) <= window - 1
        if kept is not None:
            assert kept.hits > 0
            assert all(k.shape[2] <= window - 1 for layers in kept._entries.values() for row in layers for k, _ in row)
        monkeypatch.setenv("MUA_TRIM_TO_WINDOW", "0")
        _, untrimmed = play(decode.PrefixCache() if kept is not None else None)
        monkeypatch.delenv("MUA_TRIM_TO_WINDOW")
        for request, out, whole in zip(requests, outs, untrimmed):
            assert out.token_ids == whole.token_ids
            assert out.logprobs == pytest.approx(whole.logprobs, abs=1e-5)
            assert_logprobs_of_one_forward_pass(model, request, out)


def test_episodes_that_said_the_same_so_far_each_keep_their_cache():
    """A group of samples often opens with the same reply: each episode's next turn is still served from a
    kept cache (one copy per episode under the same key), not re-read whole."""
    from mua.harness.models.decode import PrefixCache

    cache = PrefixCache(max_entries=3)
    a, b = [("a",)], [("b",)]
    cache.put([1, 2, 3], a)
    cache.put([1, 2, 3], b)
    assert len(cache) == 2
    assert cache.take([1, 2, 3, 4]) == (3, b) and cache.take([1, 2, 3, 5]) == (3, a)
    assert cache.take([1, 2, 3, 6]) == (0, None) and len(cache) == 0
    for key in ([1], [1], [2], [3]):  # the oldest copy goes first when more than max_entries are kept
        cache.put(key, [key])
    assert len(cache) == 3 and cache.take([1, 9])[0] == 1 and cache.take([1, 9]) == (0, None)


def test_sliding_window_flag(tmp_path, capsys):
    import json

    from mua.harness.cli import main

    assert main(["model", "tiny", str(tmp_path / "m"), "--sliding-window", "96"]) == 0
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    assert config["use_sliding_window"] and config["sliding_window"] == 96
    config = json.loads(build_tiny_checkpoint(tmp_path / "n").joinpath("config.json").read_text())
    assert not config["use_sliding_window"]
    with pytest.raises(SystemExit):
        main(["model", "tiny", str(tmp_path / "o"), "--sliding-window", "0"])


def test_single_digits_gives_every_digit_its_own_token(tmp_path):
    from mua.harness.cli import main
    from mua.harness.models.tiny import build_tiny_tokenizer

    text = 'Your quote is "Q4994", 33 pounds, order R 2024.'
    plain, single = build_tiny_tokenizer(), build_tiny_tokenizer(single_digits=True)
    pieces = [single.decode([i]) for i in single.encode(text)]
    assert all(not any(c.isdigit() for c in p) or p.isdigit() and len(p) == 1 for p in pieces), pieces
    assert any(len([c for c in plain.decode([i]) if c.isdigit()]) and not plain.decode([i]).isdigit()
               for i in plain.encode(text))  # by default a space and a digit may merge
    assert single.decode(single.encode(text)) == text
    assert main(["model", "tiny", str(tmp_path / "t"), "--single-digits"]) == 0
    from transformers import AutoTokenizer

    loaded = AutoTokenizer.from_pretrained(tmp_path / "t")
    assert loaded.encode(text) == single.encode(text)


def test_digit_places_give_each_digit_of_a_number_a_token_saying_its_place(tmp_path):
    from mua.harness.cli import main
    from mua.harness.models.tiny import DIGIT_PLACE_BASE, build_tiny_tokenizer
    from mua.harness.models.tokenizer import load_tokenizer

    tok = build_tiny_tokenizer(digit_places=8)
    text = 'quote "Q4994", 12.5 pounds, ref 1234567890, x9'
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    pieces = tok.convert_ids_to_tokens(ids)
    places = [(ord(p) - DIGIT_PLACE_BASE) for p in pieces if len(p) == 1 and 0 <= ord(p) - DIGIT_PLACE_BASE < 80]
    # Q4994: 4 at place 0, 9 at 1, 9 at 2, 4 at 3; 12.5: two numbers; 1234567890: eight places, then plain digits
    assert places[:4] == [4, 19, 29, 34]
    assert places[4:7] == [1, 12, 5]
    assert places[7:15] == [1, 12, 23, 34, 45, 56, 67, 78]
    assert pieces[pieces.index(chr(DIGIT_PLACE_BASE + 78)) + 1:][:2] == ["9", "0"]  # past place 8: plain digits
    assert places[15:] == [9]
    assert len(set(tok.encode("Q4994"))) == 5  # Q and four digits: a repeated digit is another token at another place

    assert main(["model", "tiny", str(tmp_path / "t"), "--digit-places", "8"]) == 0
    loaded = load_tokenizer(tmp_path / "t")
    assert loaded.encode(text) == ids and loaded.decode(ids) == text
    from transformers import AutoTokenizer  # why load_tokenizer exists: transformers rebuilds a Qwen2 tokenizer

    assert AutoTokenizer.from_pretrained(tmp_path / "t").encode(text) != ids


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60).map(lambda s: unicodedata.normalize("NFC", s)))
def test_digit_place_tokenizer_round_trips_text_without_its_place_characters(text):
    from mua.harness.models.tiny import DIGIT_PLACE_BASE, build_tiny_tokenizer

    text = "".join(c for c in text if not DIGIT_PLACE_BASE <= ord(c) < DIGIT_PLACE_BASE + 80)
    tok = _digit_place_tokenizer(build_tiny_tokenizer)
    assert tok.decode(tok(text, add_special_tokens=False)["input_ids"]) == text


_CACHED: dict = {}


def _digit_place_tokenizer(build):
    if "tok" not in _CACHED:
        _CACHED["tok"] = build(digit_places=8)
    return _CACHED["tok"]


def test_a_digit_place_checkpoint_is_refused_by_the_vllm_backend_with_a_clear_error(tmp_path):
    from mua.harness.errors import ConfigError
    from mua.harness.models.vllm_backend import VllmChatModel

    build_tiny_checkpoint(tmp_path / "t", digit_places=4)
    with pytest.raises(ConfigError, match="transformers backend"):
        VllmChatModel(tmp_path / "t")
    with pytest.raises(ConfigError, match="between 0"):
        build_tiny_checkpoint(tmp_path / "u", digit_places=21)


def test_a_corpus_teaches_the_tokenizer_its_words_byte_identically_and_bad_corpora_are_one_line(tmp_path, capsys):
    from mua.harness.cli import main
    from mua.harness.models.tokenizer import load_tokenizer

    text = "Which branch will you pick the refill up from? At the riverside branch, Andersen.\n" * 20
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(text, encoding="utf-8")
    assert main(["model", "tiny", str(tmp_path / "c"), "--corpus", str(corpus), "--digit-places", "4"]) == 0
    again = build_tiny_checkpoint(tmp_path / "again", digit_places=4, corpus_file=corpus)
    assert digests(again) == digests(tmp_path / "c")
    plain, learnt = load_tokenizer(build_tiny_checkpoint(tmp_path / "p", digit_places=4)), load_tokenizer(again)
    sentence = "At the riverside branch, Andersen. Q2900"
    assert len(learnt(sentence)["input_ids"]) < len(plain(sentence)["input_ids"])
    assert learnt.decode(learnt(sentence)["input_ids"]) == sentence
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    capsys.readouterr()
    for bad, why in [(tmp_path / "missing.txt", "does not exist"), (tmp_path, "is a folder"),
                     (tmp_path / "latin1.txt", "not valid UTF-8")]:
        assert main(["model", "tiny", str(tmp_path / "x"), "--corpus", str(bad), "--overwrite"]) == 2
        err = capsys.readouterr().err
        assert why in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_name_places_give_each_letter_of_a_name_a_token_saying_its_place(tmp_path):
    from mua.harness.cli import main
    from mua.harness.models.tiny import NAME_PLACE_BASE, build_tiny_tokenizer
    from mua.harness.models.tokenizer import load_tokenizer

    tok = build_tiny_tokenizer(digit_places=8, name_places=4)
    text = "Hi, I am Fonseca (ID 42), McRae O'Neil Zoë; fonseca"
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    pieces = tok.convert_ids_to_tokens(ids)
    places = [divmod(ord(p) - NAME_PLACE_BASE, 26) for p in pieces
              if len(p) == 1 and 0 <= ord(p) - NAME_PLACE_BASE < 26 * 4]
    letters = "".join(chr(ord("A" if k == 0 else "a") + i) for k, i in places)
    # Hi; Fons (past place 4: plain text); McRa (R is not small: M, c, then plain); Neil after the apostrophe; Zo
    # (ë is outside a-z); "I", "ID" and the small "fonseca" are no names
    assert letters == "Hi" + "Fons" + "Mc" + "Neil" + "Zo"
    assert [k for k, _ in places] == [0, 1, 0, 1, 2, 3, 0, 1, 0, 1, 2, 3, 0, 1]
    assert len(set(tok.encode("Anna"))) == 4  # the two n are different tokens: the same letter at two places

    assert main(["model", "tiny", str(tmp_path / "t"), "--digit-places", "8", "--name-places", "4"]) == 0
    loaded = load_tokenizer(tmp_path / "t")
    assert loaded.encode(text) == ids and loaded.decode(ids) == text


def test_name_place_checkpoints_are_byte_identical_per_seed_and_embed_letter_plus_place(tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    from mua.harness.errors import ConfigError
    from mua.harness.models.tiny import NAME_PLACE_BASE
    from mua.harness.models.tokenizer import load_tokenizer

    a = build_tiny_checkpoint(tmp_path / "a", seed=1, name_places=3)
    assert digests(a) == digests(build_tiny_checkpoint(tmp_path / "b", seed=1, name_places=3))
    assert digests(a) != digests(build_tiny_checkpoint(tmp_path / "c", seed=2, name_places=3))
    weight = AutoModelForCausalLM.from_pretrained(a).get_input_embeddings().weight.detach()
    tok = load_tokenizer(a)

    def row(place, letter):
        return weight[tok.convert_tokens_to_ids(chr(NAME_PLACE_BASE + 26 * place + letter))]

    # letter + place: (a at 1) - (b at 1) == (a at 2) - (b at 2), which no independent draw would give
    assert torch.allclose(row(1, 0) - row(1, 1), row(2, 0) - row(2, 1), atol=1e-6)
    assert not torch.allclose(row(1, 0), row(2, 0))
    for bad in (1, 25):
        with pytest.raises(ConfigError, match="name places"):
            build_tiny_checkpoint(tmp_path / f"bad{bad}", name_places=bad)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60).map(lambda s: unicodedata.normalize("NFC", s)))
def test_name_place_tokenizer_round_trips_text_without_its_place_characters(text):
    from mua.harness.models.tiny import DIGIT_PLACE_BASE, NAME_PLACE_BASE, build_tiny_tokenizer

    text = "".join(c for c in text if not (DIGIT_PLACE_BASE <= ord(c) < DIGIT_PLACE_BASE + 80
                                          or NAME_PLACE_BASE <= ord(c) < NAME_PLACE_BASE + 26 * 6))
    if "names" not in _CACHED:
        _CACHED["names"] = build_tiny_tokenizer(digit_places=8, name_places=6)
    tok = _CACHED["names"]
    for sample in (text, "Ana " + text + " Bo", text.title()):
        assert tok.decode(tok(sample, add_special_tokens=False)["input_ids"]) == sample
