"""Offline token counts: `o200k_base` through bpe-openai, whose vocabulary ships in its wheel.

tiktoken downloads its vocabulary at first use and fails offline; bpe-openai
does not. The counts are exact for OpenAI's models that use `o200k_base`
(gpt-4o, gpt-4.1, gpt-5, the o-series) and an estimate for every other model.

A plain loop over `encode_ordinary` is used, not `encode_ordinary_batch`:
the batch API runs a thread pool that does not release the GIL, and on this
project's machine it took 3.7 s for 20,000 abstracts where the loop took 1.5 s.

bpe-openai is imported at the first count, not with this module: importing it
builds its vocabularies (about 1.2 s), which a build whose dry run finds its
lengths kept (screening/lengths.py) never pays.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import bpe_openai

ENCODING = "o200k_base"
TOKENIZER_NOTE = (f"Input tokens are counted offline with the {ENCODING} tokenizer (bpe-openai): exact for "
                  f"OpenAI's gpt-4o, gpt-4.1, gpt-5 and o-series models, an estimate for every other model.")
"""How tokens were counted, for outputs that show counts."""

TOKENS_PER_MESSAGE = 3
"""Tokens the chat format adds around each message (OpenAI's published rule for its gpt-4o-era models)."""
TOKENS_PER_REPLY = 3
"""Tokens that prime the assistant's reply."""

_PIECE = 100_000
"""Longer texts are counted in pieces of about this many characters, cut at whitespace: the tokenizer
refuses a text of a million characters or of more than 200,000 tokens, and a pool may hold such a row."""
_O200K_MODELS = re.compile(r"(?:openai/)?(?:gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|chatgpt-4o|gpt-oss|o1|o3|o4)(?:[-.:].*)?")


@functools.cache
def _encoding() -> bpe_openai.Encoding:
    """Loaded once per process (about 1.5 s: the vocabulary is decompressed and the tables built)."""
    import bpe_openai
    return bpe_openai.get_encoding(ENCODING)


def _pieces(text: str) -> list[str]:
    """`text` cut into pieces of at most about _PIECE characters, each cut just before whitespace."""
    pieces, start = [], 0
    while len(text) - start > _PIECE:
        cut = max(text.rfind(" ", start + 1, start + _PIECE), text.rfind("\n", start + 1, start + _PIECE))
        end = cut if cut > start else start + _PIECE
        pieces.append(text[start:end])
        start = end
    pieces.append(text[start:])
    return pieces


def count_tokens(texts: Sequence[str]) -> list[int]:
    """The `o200k_base` token count of each text (special-token strings count as ordinary text)."""
    encode = _encoding().encode_ordinary
    counts = []
    for text in texts:
        if len(text) <= _PIECE:
            counts.append(len(encode(text)))
        else:
            counts.append(sum(len(encode(piece)) for piece in _pieces(text)))
    return counts


def count_message_tokens(conversations: Sequence[Sequence[Mapping[str, Any]]]) -> list[int]:
    """The prompt tokens of each chat request (its messages' contents plus the chat format's overhead)."""
    contents = [str(m.get("content") or "") for messages in conversations for m in messages]
    counts = iter(count_tokens(contents))
    return [sum(next(counts) + TOKENS_PER_MESSAGE for _ in messages) + TOKENS_PER_REPLY
            for messages in conversations]


def is_openai_model(model: str) -> bool:
    """True when `model` is an OpenAI model whose tokenizer is `o200k_base` (counts exact, not estimated)."""
    return _O200K_MODELS.fullmatch(model.strip().lower()) is not None
