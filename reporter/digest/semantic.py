"""Meaning, offline: an embedded static text-embedding model (docs/digest.md, "Meaning").

The model is WordLlama's `l2_supercat` at 256 dimensions: a table of one
vector per token of its tokenizer, whose weights (16 MB) and tokenizer ship
inside the `wordllama` wheel (MIT). A text's vector is the mean of its
tokens' vectors, normalised; two texts' similarity is the cosine of their
vectors. Nothing is downloaded and no socket is opened: the two files are
read from the installed package's folder, found without importing it (its
`__init__` configures the root logger and its loader falls back to a
download, since it looks for the tokenizer in `tokenizer/` while the wheel
ships `tokenizers/`), with `safetensors` and `tokenizers` directly.

Deterministic: each text is tokenised and pooled alone (no padding, so a
vector does not depend on the other texts of the batch), its token vectors
summed in float64, and every similarity is rounded to DECIMALS before it is
compared or written. The model is loaded once per process (`load_model`).

Fast and exact: the tokenizer has no pre-tokenizer, so its BPE would merge a
whole abstract as one word (half a millisecond a text). No merge of its
vocabulary joins a character to a following `▁` (checked at load,
`word_pieces`), so a text's ids are the ids of its pieces (a run of `▁` and
what follows up to the next one), and each distinct piece is tokenised once
per process (`Model.token_arrays`; issue 35, item 3).
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import re
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..text import replace_surrogates

PACKAGE = "wordllama"
CONFIG, DIM = "l2_supercat", 256
WEIGHTS = f"weights/{CONFIG}_{DIM}.safetensors"
TOKENIZER = f"tokenizers/{CONFIG}_tokenizer_config.json"
DECIMALS = 4
"""Similarities are rounded to this many decimals before they order anything or are written."""
SPACE = "\u2581"
"""`▁`: how the tokenizer writes a space (and begins every text)."""
_JOINED = re.compile(f"[^{SPACE}]{SPACE}")
_END = array("i", [-1]).tobytes()
BATCH = 256
"""Texts cut into pieces at once by `Model.embed`."""
PIECES_CACHED = 1_000_000
"""The most pieces whose ids are kept (a week of real abstracts has about 100,000 distinct ones)."""
TEXT_CHARS = 10_000
"""A text's first characters read: a title with its abstract is a few thousand; a hostile 10 MB abstract would
otherwise take minutes to tokenise and gigabytes to pool."""


@dataclass(frozen=True)
class Model:
    """The loaded embedding model: its token vectors and tokenizer."""

    name: str
    """What decisions.json records as `settings.semantic`: `wordllama <version> l2_supercat_256`."""
    vectors: np.ndarray
    """float32, one row per token id."""
    tokenizer: Any
    """A `tokenizers.Tokenizer` (no padding, no truncation, no special tokens)."""
    pieces: dict[str, bytes] | None = field(default=None, compare=False, repr=False)
    """Each piece's token ids (int32 bytes), filled as texts are embedded (`token_arrays`); None: every text goes through `encode`."""
    specials: tuple[str, ...] = ()
    """The texts of the tokenizer's added tokens, which `encode` finds anywhere in a text."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float64 unit vectors, one row per text (a text without a token is the zero vector); a text is read up to
        TEXT_CHARS, a lone surrogate as U+FFFD (the tokenizer refuses one)."""
        out = np.zeros((len(texts), self.vectors.shape[1]), dtype=np.float64)
        last = self.vectors.shape[0] - 1
        for start in range(0, len(texts), BATCH):  # a batch's pieces at once: bounded memory
            batch = [replace_surrogates((t or "")[:TEXT_CHARS]) for t in texts[start:start + BATCH]]
            for i, ids in enumerate(self.token_arrays(batch), start):
                if not ids.size:
                    continue
                rows = self.vectors[np.clip(ids, 0, last)].astype(np.float64)
                v = rows.sum(axis=0) / ids.size
                norm = float(np.sqrt(v @ v))
                if norm > 0:
                    out[i] = v / norm
        return out

    def token_ids(self, text: str) -> list[int]:
        """The token ids of a text, as `tokenizer.encode(text, add_special_tokens=False)` gives them."""
        return self.token_arrays([text])[0].tolist()

    def token_arrays(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Each text's token ids (int32), as `tokenizer.encode(text, add_special_tokens=False)` gives them.

        When the tokenizer is a word-split-free BPE whose merges never join a character to a following `▁`
        (`word_pieces`, checked when the model is loaded), the ids of a text are the ids of its pieces (a run
        of `▁` and the characters up to the next `▁`) one after the other: the texts are cut into pieces at
        once (joined by a control character none of them holds), each distinct piece is tokenised once per process,
        and the ids are laid end to end in one array. A text holding a special token's text (`</s>`) goes
        through `encode`.
        """
        # A control character none of the texts holds joins them (none free: each text is encoded whole).
        sep = next((c for c in map(chr, range(1, 32)) if not any(c in t for t in texts)), None)
        whole = [i for i, t in enumerate(texts)
                 if self.pieces is None or sep is None or any(s in t for s in self.specials)]
        out = {i: np.asarray(self.tokenizer.encode(texts[i], add_special_tokens=False).ids, dtype=np.int32)
               for i in whole}
        if len(whole) == len(texts):
            return [out[i] for i in range(len(texts))]
        skipped = set(whole)
        joined = sep.join("" if i in skipped or not t else SPACE + t.replace(" ", SPACE) for i, t in enumerate(texts))
        pieces = re.findall(f"{SPACE}+[^{SPACE}{re.escape(sep)}]*|{re.escape(sep)}", joined)
        cache = self.pieces
        if len(cache) > PIECES_CACHED:
            cache.clear()
        cache[sep] = _END  # a text's end: no token id is negative
        got = list(map(cache.get, pieces))
        if None in got:  # pieces not seen yet: tokenise each once
            tokenize = self.tokenizer.model.tokenize
            cache.update((piece, array("i", [t.id for t in tokenize(piece)]).tobytes())
                         for piece in {p for p, g in zip(pieces, got) if g is None})
            got = list(map(cache.__getitem__, pieces))
        del cache[sep]
        flat = np.frombuffer(b"".join(got), dtype=np.int32)
        ends = np.flatnonzero(flat == -1).tolist() + [flat.size]
        starts = [0] + [e + 1 for e in ends[:-1]]
        return [out[i] if i in out else flat[a:b] for i, (a, b) in enumerate(zip(starts, ends))]


def word_pieces(tokenizer: Any) -> bool:
    """Whether a text's ids are its pieces' ids (`Model.token_arrays`): the tokenizer only prepends `▁` and turns
    spaces into `▁` (no pre-tokenizer), its BPE has no dropout, and no token holds `▁` after another character,
    so no merge joins two pieces (a merge's result is a token; an unknown character falls back to its bytes
    within its piece, and every piece starts with the known `▁`, so no unknown is fused across two)."""
    try:
        plain = (tokenizer.pre_tokenizer is None and type(tokenizer.model).__name__ == "BPE"
                 and tokenizer.model.dropout is None
                 and tokenizer.normalizer.normalize_str(" a  b\t▁") == "▁▁a▁▁b\t▁"
                 and tokenizer.normalizer.normalize_str("") == "")
    except AttributeError:
        return False
    return plain and not any(_JOINED.search(token) for token in tokenizer.get_vocab(with_added_tokens=True))


def package_dir() -> Path:
    """The installed wordllama package's folder, found without importing it; InputError when it is absent."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise InputError(f"[digest] semantic: the embedding model's package {PACKAGE!r} is not installed; install "
                         f"reporter again (pip install -e .) or set semantic = false under [digest]")
    return Path(list(spec.submodule_search_locations)[0])


@functools.cache
def load_model() -> Model:
    """The model, read from the installed package's files once per process; nothing is fetched."""
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    root = package_dir()
    weights, tokenizer_file = root / WEIGHTS, root / TOKENIZER
    for f in (weights, tokenizer_file):
        if not f.is_file():
            raise InputError(f"[digest] semantic: {f} is missing from the installed {PACKAGE} package; install "
                             f"reporter again (pip install -e .) or set semantic = false under [digest]")
    vectors = np.ascontiguousarray(load_file(str(weights))["embedding.weight"], dtype=np.float32)
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    version = importlib.metadata.version(PACKAGE)
    specials = tuple(t.content for t in tokenizer.get_added_tokens_decoder().values())
    return Model(f"{PACKAGE} {version} {CONFIG}_{DIM}", vectors, tokenizer,
                 pieces={} if word_pieces(tokenizer) else None, specials=specials)


def similarities(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosines of unit vectors, rows of `a` against rows of `b`, rounded to DECIMALS."""
    if a.size == 0 or b.size == 0:
        return np.zeros((a.shape[0], b.shape[0]), dtype=np.float64)
    return np.round(a @ b.T, DECIMALS)
