"""Value resampling for SFT data (``mua sft --resample-values K``): each training conversation is trained on K
times, each time with every name and id the agent copies replaced by a freshly drawn value of the same shape.

Why: a pack's gold conversations reuse a few dozen surnames and ids, and a small policy trained for many epochs on
them recalls the train value instead of reading the one in front of it (after SFT, appointments' unseen test
surnames were copied 0/64). When every copy of a conversation carries values never seen anywhere else, recalling
fits nothing and only copying what the user or the tool result said does.

What is replaced, per conversation: each value of the agent's tool-call arguments that
:func:`mua.training.copying.is_copied_value` counts (a string with a capital letter or a digit) and, for an id
with a letter prefix, every other value of the same shape in the conversation (the other appointments a lookup
lists); each is replaced wherever it occurs as a whole word (system prompt, user turns, tool calls and tool
results), one new value per original, so the conversation stays consistent. A new value has the original's shape:
digit runs keep their length (a leading non-zero stays non-zero), capitalised words become a pronounceable name of
about the same length, everything else (prefixes, punctuation, lower-case words) is kept. A new value never equals
any copied value of the dataset, nor a word already in its conversation. The draws come from one generator seeded
by the run's seed: the same rows and seed give the same data; K = 0 (the default) leaves the rows untouched.
A user-side row (``role`` "user", the simulated user's view) copies facts from its scenario prompt instead:
:func:`user_row_values` says which.
"""
from __future__ import annotations

import random
import re
from typing import Any, Iterator, Optional

from .copying import is_copied_value

_DIGITS = re.compile(r"\d+")
# a capitalised word: one capital then small letters (Latin letters with accents included)
_NAME = re.compile(r"[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+")
_PIECE = re.compile(r"\d+|[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+")
# every letter occurs, a vowel can start a name (Okafor, Ueda), so that copying is learnt for each letter and place
ONSETS = ("", "", "b", "br", "c", "ch", "d", "dr", "f", "fr", "g", "gr", "h", "j", "k", "kr", "l", "m", "n", "p",
          "pr", "qu", "r", "s", "sh", "sk", "st", "t", "tr", "v", "w", "x", "y", "z")
VOWELS = ("a", "e", "i", "o", "u", "a", "e", "i", "o", "y", "ai", "ei", "ou")
CODAS = ("", "", "", "", "n", "r", "s", "l", "k", "m", "t", "x", "z", "ll", "nd", "rt", "sk", "ng")


def _walk(value: Any) -> Iterator[str]:
    """Every string inside a decoded JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _walk(v)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v)


def call_arguments(call: Any) -> Any:
    """A tool call's arguments, decoded (None for a malformed call)."""
    from mua.harness.io.files import parse_json

    function = call.get("function") if isinstance(call, dict) else None
    raw = function.get("arguments") if isinstance(function, dict) else None
    if isinstance(raw, dict):
        return raw
    try:
        return parse_json(raw, where="tool call arguments") if isinstance(raw, str) else None
    except Exception:  # a malformed call in the data copies nothing
        return None


def copied_values(messages: list[dict]) -> list[str]:
    """The names and ids the agent's tool calls pass in one conversation, in order of first use."""
    found: dict[str, None] = {}
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "assistant":
            for call in m.get("tool_calls") or []:
                for value in _walk(call_arguments(call)):
                    if is_copied_value(value):
                        found.setdefault(value)
    return list(found)


def _whole_word(text: str) -> str:
    return rf"(?<!\w){text}(?!\w)"


def _shape_pattern(value: str) -> re.Pattern | None:
    """For an id with a letter prefix (``A135``, ``RX-2041``), a pattern matching every value of its shape;
    None for anything else (a bare number's shape would match amounts and times too)."""
    if not _DIGITS.search(value) or not _DIGITS.sub("", value).strip():
        return None
    if _NAME.search(value):  # a name with digits in it: only the value itself
        return None
    parts, at = [], 0
    for run in _DIGITS.finditer(value):
        parts += [re.escape(value[at:run.start()]), rf"\d{{{len(run.group())}}}"]
        at = run.end()
    parts.append(re.escape(value[at:]))
    return re.compile(_whole_word("".join(parts)))


def _strings(messages: list[dict]) -> Iterator[str]:
    for m in messages:
        if not isinstance(m, dict):
            continue
        if isinstance(m.get("content"), str):
            yield m["content"]
        for call in m.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("arguments"), str):
                yield function["arguments"]


def values_to_replace(messages: list[dict]) -> list[str]:
    """The copied values of a conversation and every value sharing the shape of a copied prefixed id."""
    values = copied_values(messages)
    found: dict[str, None] = dict.fromkeys(values)
    for pattern in filter(None, map(_shape_pattern, values)):
        for text in _strings(messages):
            for match in pattern.finditer(text):
                found.setdefault(match.group())
    return list(found)


def pronounceable_name(length: int, rng: random.Random) -> str:
    """A capitalised made-up name of ``length`` letters built from syllables (``Bravoskel``, ``Tein``)."""
    name = ""
    while len(name) < length:
        name += rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS)
    return name[:length].capitalize()


def _fresh_digits(run: str, rng: random.Random) -> str:
    first = rng.choice("123456789" if run[0] != "0" else "0")
    return first + "".join(rng.choice("0123456789") for _ in run[1:])


def fresh_value(value: str, rng: random.Random) -> str:
    """A new value of ``value``'s shape: digit runs of the same length, names of about the same length."""
    def draw(piece: re.Match) -> str:
        text = piece.group()
        if text[0].isdigit():
            return _fresh_digits(text, rng)
        return pronounceable_name(max(3, len(text) + rng.randint(-2, 2)), rng)

    return _PIECE.sub(draw, value)


def resample_row(row: dict, rng: random.Random, taken: set[str], originals: Optional[list[str]] = None) -> dict:
    """A copy of ``row`` (a `mua export` row) whose copied values (``originals``; default: the agent's,
    :func:`values_to_replace`) are replaced consistently by new ones that are not in ``taken`` (the dataset's own
    values) nor already words of the conversation."""
    messages = row["messages"]
    originals = values_to_replace(messages) if originals is None else originals
    if not originals:
        return row
    text = "\n".join(_strings(messages))
    new: dict[str, str] = {}
    for value in originals:
        for _ in range(1000):
            candidate = fresh_value(value, rng)
            if (candidate not in taken and candidate not in new.values()
                    and not re.search(_whole_word(re.escape(candidate)), text)):
                break
        else:  # a shape with too few values to draw from (a one-digit id): keep it rather than collide
            candidate = value
        new[value] = candidate
    # longest first, so that a value inside a longer one ("Ann" in "Ann Lee") never splits it
    pattern = re.compile(_whole_word("(?:" + "|".join(re.escape(v) for v in sorted(new, key=len, reverse=True))
                                     + ")"))

    def swap(text: Any) -> Any:
        return pattern.sub(lambda m: new[m.group()], text) if isinstance(text, str) else text

    out_messages = []
    for m in messages:
        m = dict(m)
        m["content"] = swap(m.get("content"))
        if m.get("tool_calls"):
            m["tool_calls"] = [{**c, "function": {**c["function"], "arguments": swap(c["function"].get("arguments"))}}
                               if isinstance(c, dict) and isinstance(c.get("function"), dict) else c
                               for c in m["tool_calls"]]
        out_messages.append(m)
    return {**row, "messages": out_messages}


def resample_rows(rows: list[dict], copies: int, seed: int) -> list[dict]:
    """``copies`` resampled copies of every row (copy by copy, in row order); ``copies`` = 0: ``rows`` itself."""
    if copies <= 0:
        return rows
    values = user_row_values(rows)
    taken = {v for row in rows if not is_user_row(row) for v in values_to_replace(row["messages"])}
    names = {v for vs in values.values() for v in vs if not v.isdigit()}  # a user row skips names, not hours
    rng = random.Random(seed)
    return [resample_row(row, rng, names if is_user_row(row) else taken, values.get(i))
            for _ in range(copies) for i, row in enumerate(rows)]


# --- user-side rows (`mua export --role user`, lessons): the user copies facts from its scenario prompt ---

def is_user_row(row: dict) -> bool:
    """Whether ``row`` is the user's side of a conversation: its ``role`` column, as `mua export` writes it."""
    return row.get("role") == "user"


def user_row_values(rows: list[dict]) -> dict[int, list[str]]:
    """The values each user-side row of ``rows`` copies (by row index): every digit run and capitalised word of
    its assistant turns (the user's replies) that its system prompt also has, in order of first use. A
    capitalised word in a tenth or more of the distinct system prompts (and in at least two) is a word of the
    prompts' form ("At 7 pm.", "Hi, ..."), not a value: a name differs between scenarios (in bookings' lessons a
    name is in at most 1.4% of the prompts, "Hi" in a third).

    A user row's new values skip the dataset's names but not its digit runs: an hour is one digit, and skipping
    the dataset's hours would leave few; drawn uniformly, a recalled train hour fits no better than chance."""
    users = {i: row for i, row in enumerate(rows) if is_user_row(row)}
    prompts = {i: "\n".join(m.get("content") or "" for m in row["messages"]
                            if isinstance(m, dict) and m.get("role") == "system") for i, row in users.items()}
    counts: dict[str, int] = {}
    for prompt in set(prompts.values()):
        for word in set(_NAME.findall(prompt)):
            counts[word] = counts.get(word, 0) + 1
    common = {w for w, n in counts.items() if n >= max(2, len(set(prompts.values())) / 10)}
    values: dict[int, list[str]] = {}
    for i, row in users.items():
        in_prompt = set(_PIECE.findall(prompts[i])) - common
        found: dict[str, None] = {}
        for m in row["messages"]:
            if isinstance(m, dict) and m.get("role") == "assistant" and isinstance(m.get("content"), str):
                found.update((v, None) for v in _PIECE.findall(m["content"]) if v in in_prompt)
        values[i] = list(found)
    return values
