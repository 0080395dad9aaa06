"""One map object used from several threads at once, while a real server resolves and files change.

The sources' state is written by background work on the map's event loop (server answers
arriving) while maps are built in worker threads; a map must read an immutable copy of it,
and only answers about the text its snapshot has. Here three threads map, one searches and
lists files, and one rewrites files, each version of a file defining names of its own
generation: a map that raises, or shows one file with names of two generations (an old
text's server symbols merged into a new text's), fails. Every static map made during the
churn names the generation of each edited file, which is its snapshot: afterwards each
distinct snapshot is written back and mapped by a fresh object, and the two maps must match.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from pathlib import Path
from typing import Literal

from hybridmap import AsyncRepoMap, RepoMap

from ..helpers import require

MODULES = 24
EDITED = 6
MAPS_PER_THREAD = 50
REPLAYED = 8  # distinct snapshots mapped again by a fresh object
GENERATION = re.compile(r"gen(\d+)_")


def module(i: int, generation: int) -> str:
    # Every module defines load/save (ambiguous names: the server is asked where each use
    # points) and two functions named after its generation.
    other = (i + 1) % MODULES
    return (
        f"from pkg.mod{other} import load as load_{other}\n\n"
        f"def gen{generation}_build_{i}(x):\n    return load_{other}(save(x))\n\n"
        f"def gen{generation}_check_{i}(y):\n    return load(y)\n\n"
        "def load(value):\n    return value\n\n"
        "def save(value):\n    return value\n"
    )


def test_maps_lookups_and_edits_from_threads_while_the_server_resolves(git_repo, tmp_path: Path) -> None:
    require("ty")
    files = {f"pkg/mod{i}.py": module(i, 0) for i in range(MODULES)}
    files["pkg/__init__.py"] = ""
    root = git_repo(files)
    errors: list[BaseException] = []
    mixed: list[str] = []
    snapshots: dict[tuple[str, tuple[int, ...]], list[tuple[str, list[tuple[str, int]]]]] = {}
    maps = 0
    lock = threading.Lock()
    done = threading.Event()

    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        repo.map(mode="hybrid", server_wait=10, tokens=512)  # the server up, resolution under way

        def guarded(work):  # type: ignore[no-untyped-def]
            def run() -> None:
                try:
                    work()
                except BaseException as exc:  # noqa: BLE001 - any error fails the test below
                    errors.append(exc)

            return run

        def mapper(seed: int) -> None:
            nonlocal maps
            for n in range(MAPS_PER_THREAD):
                chat = f"pkg/mod{(seed * 7 + n) % MODULES}.py"
                mode = "static" if n % 2 else "hybrid"
                wait = 0.2 if n % 5 == 0 else 0.0
                result = repo.map(mode=mode, chat_files=[chat], tokens=2048, server_wait=wait)
                edited = edited_generations(result, mixed)
                with lock:
                    maps += 1
                    if mode == "static" and -1 not in edited:
                        snapshots.setdefault((chat, edited), listing(result))

        def looker() -> None:
            while not done.is_set():
                repo.search_symbols("load", limit=10)
                repo.find_files("mod1", limit=5)

        def editor() -> None:
            rewrite_until(root, done)

        mappers = [threading.Thread(target=guarded(lambda s=s: mapper(s))) for s in range(3)]
        others = [threading.Thread(target=guarded(looker)), threading.Thread(target=guarded(editor))]
        for thread in mappers + others:
            thread.start()
        for thread in mappers:
            thread.join(timeout=300)
        done.set()
        for thread in others:
            thread.join(timeout=60)
        assert not any(t.is_alive() for t in mappers + others), "a thread did not finish"
        server = repo.map(mode="hybrid", tokens=512).servers["python"]
        # Once the churn stops, the map equals a fresh map of the same files: nothing of the
        # concurrent maps, lookups and edits is left behind in the object's state.
        request = {"mode": "static", "chat_files": ["pkg/mod3.py"], "tokens": 2048}
        settled = repo.map(**request)  # type: ignore[arg-type]
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "fresh")}) as fresh_repo:
        fresh = fresh_repo.map(**request)  # type: ignore[arg-type]

    assert not errors, errors[:3]
    assert maps == 3 * MAPS_PER_THREAD
    assert not mixed, mixed[:5]
    assert server.server == "ty", server
    assert listing(settled) == listing(fresh)

    # Each snapshot a static map saw during the churn, written back and mapped afresh.
    assert len(snapshots) >= REPLAYED, f"only {len(snapshots)} distinct static snapshots were seen"
    for (chat, generations), during in sorted(snapshots.items())[:: max(1, len(snapshots) // REPLAYED)]:
        for i, generation in enumerate(generations):
            (root / f"pkg/mod{i}.py").write_text(module(i, generation))
        with RepoMap(root, overrides={"cache_dir": str(tmp_path / "fresh")}) as replay:
            again = replay.map(mode="static", chat_files=[chat], tokens=2048)
        assert during == listing(again), (chat, generations)


def rewrite_until(root: Path, done: threading.Event) -> None:
    """Rewrite the edited modules, a new generation every 50 ms, until ``done``."""
    generation = 0
    while not done.is_set():
        generation += 1
        for i in range(EDITED):
            (root / f"pkg/mod{i}.py").write_text(module(i, generation))
        time.sleep(0.05)


def edited_generations(result, mixed: list[str]) -> tuple[int, ...]:  # type: ignore[no-untyped-def]
    """The generation each edited file shows in ``result`` (-1: not shown); a file showing names
    of two generations is added to ``mixed``."""
    seen: dict[str, int] = {}
    for shown in result.files:
        generations = {int(m) for s in shown.symbols for m in GENERATION.findall(s.name)}
        if len(generations) > 1:
            mixed.append(f"{shown.path}: {[s.name for s in shown.symbols]}")
        if len(generations) == 1:
            seen[shown.path] = generations.pop()
    return tuple(seen.get(f"pkg/mod{i}.py", -1) for i in range(EDITED))


def listing(result) -> list[tuple[str, list[tuple[str, int]]]]:  # type: ignore[no-untyped-def]
    return [(f.path, [(s.name, s.line) for s in f.symbols]) for f in result.files]


def test_two_repositories_mapped_in_two_threads_at_once(git_repo, tmp_path: Path) -> None:
    """What the process shares between maps (the text-similarity vocabulary and word vectors)
    is taken in turns: two maps of two repositories in two threads, each with new chat files
    and edits, raise nothing and each shows only its own files."""
    roots = [git_repo({f"pkg{r}/mod{i}.py": module(i, 0) for i in range(MODULES)}) for r in range(2)]
    errors: list[BaseException] = []
    foreign: list[str] = []

    def work(r: int) -> None:
        try:
            with RepoMap(roots[r], overrides={"cache_dir": str(tmp_path / f"c{r}")}) as repo:
                for n in range(20):
                    (roots[r] / f"pkg{r}/mod{n % 4}.py").write_text(module(n % 4, n + 1))
                    result = repo.map(mode="static", chat_files=[f"pkg{r}/mod{(n * 5) % MODULES}.py"], tokens=512)
                    foreign.extend(f.path for f in result.files if not f.path.startswith(f"pkg{r}/"))
        except BaseException as exc:  # noqa: BLE001 - any error fails the test below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(r,)) for r in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors, errors[:3]
    assert not foreign, foreign[:5]


async def test_maps_and_lookups_from_tasks_on_one_loop_while_the_server_resolves(git_repo, tmp_path: Path) -> None:
    """The same churn as an agent host makes it: several tasks on one event loop map and look
    up at once (a host serving several tool calls) while a thread rewrites files and the
    server resolves. Nothing raises, no map mixes two generations of a file, and each static
    snapshot seen is what a fresh object maps from the same files."""
    require("ty")
    files = {f"pkg/mod{i}.py": module(i, 0) for i in range(MODULES)}
    files["pkg/__init__.py"] = ""
    root = git_repo(files)
    mixed: list[str] = []
    snapshots: dict[tuple[str, tuple[int, ...]], list[tuple[str, list[tuple[str, int]]]]] = {}
    done = threading.Event()

    async with AsyncRepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        await repo.map(mode="hybrid", server_wait=10, tokens=512)

        async def mapper(seed: int) -> int:
            for n in range(MAPS_PER_THREAD):
                chat = f"pkg/mod{(seed * 7 + n) % MODULES}.py"
                mode = "static" if n % 2 else "hybrid"
                result = await repo.map(mode=mode, chat_files=[chat], tokens=2048, server_wait=0.2 if n % 5 == 0 else 0)
                edited = edited_generations(result, mixed)
                if mode == "static" and -1 not in edited:
                    snapshots.setdefault((chat, edited), listing(result))
            return MAPS_PER_THREAD

        async def looker() -> int:
            looked = 0
            while not done.is_set():
                await repo.search_symbols("load", limit=10)
                await repo.find_files("mod1", limit=5)
                looked += 1
            return looked

        writing = threading.Thread(target=rewrite_until, args=(root, done))
        writing.start()
        try:
            looking = asyncio.ensure_future(looker())
            counts = await asyncio.wait_for(asyncio.gather(*(mapper(s) for s in range(3))), 300)
        finally:
            done.set()
            writing.join(timeout=60)
        assert await asyncio.wait_for(looking, 60) > 0
        assert sum(counts) == 3 * MAPS_PER_THREAD

    assert not mixed, mixed[:5]
    assert len(snapshots) >= REPLAYED, f"only {len(snapshots)} distinct static snapshots were seen"
    for (chat, generations), during in sorted(snapshots.items())[:: max(1, len(snapshots) // REPLAYED)]:
        for i, generation in enumerate(generations):
            (root / f"pkg/mod{i}.py").write_text(module(i, generation))
        async with AsyncRepoMap(root, overrides={"cache_dir": str(tmp_path / "fresh")}) as replay:
            again = await replay.map(mode="static", chat_files=[chat], tokens=2048)
        assert during == listing(again), (chat, generations)


class _LoopOwned(dict):  # type: ignore[type-arg]
    """A dict that notes every read or write made off its owner thread (the map's event loop):
    the state the servers' answers are written to, watched while maps are built. Whether two
    threads collide is luck; whether the worker thread touches the state at all is not."""

    def __init__(self, items: dict, owner: int, strays: list[str], label: str) -> None:  # type: ignore[type-arg]
        super().__init__(items)
        self._owner, self._strays, self._label = owner, strays, label

    def _check(self, how: str) -> None:
        if threading.get_ident() != self._owner:
            self._strays.append(f"{self._label}.{how} in {threading.current_thread().name}")


def _watched(method: str):  # type: ignore[no-untyped-def]
    def call(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self._check(method)
        return getattr(dict, method)(self, *args, **kwargs)

    return call


for _method in ("__iter__", "__len__", "__contains__", "__getitem__", "__setitem__", "__delitem__",
                "get", "items", "keys", "values", "pop", "setdefault", "update", "copy"):  # fmt: skip
    setattr(_LoopOwned, _method, _watched(_method))


async def test_the_servers_answers_are_read_and_written_on_the_loop_alone(git_repo, tmp_path: Path) -> None:
    """The race the issue saw (a map's worker thread iterating the resolver's answers while the
    loop added to them: "dictionary changed size during iteration") cannot happen if no thread
    but the loop touches them. Every read and write of the resolver's answers and the outline
    fetcher's symbols and hovers is checked for its thread while hybrid and static maps are made
    with edits and server waits between them: none may come from another thread, and the maps
    used what the server resolved."""
    require("ty")
    files = {f"pkg/mod{i}.py": module(i, 0) for i in range(MODULES)}
    files["pkg/__init__.py"] = ""
    root = git_repo(files)
    strays: list[str] = []
    owner = threading.get_ident()
    async with AsyncRepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        await repo.map(mode="hybrid", server_wait=10, tokens=512)
        source = repo._engine.lsp
        assert source is not None
        resolver, outline = source.resolver, source.outline
        resolver._resolved = _LoopOwned(resolver._resolved, owner, strays, "resolved")
        outline._outlines = _LoopOwned(outline._outlines, owner, strays, "outlines")
        outline._hovers = _LoopOwned(outline._hovers, owner, strays, "hovers")
        resolved_edges = 0
        for n in range(12):
            if n % 3 == 0:
                (root / f"pkg/mod{n % EDITED}.py").write_text(module(n % EDITED, n + 1))
            mode: Literal["static", "hybrid"] = "static" if n % 4 == 3 else "hybrid"
            result = await repo.map(mode=mode, chat_files=[f"pkg/mod{n}.py"], tokens=2048, server_wait=1.0)
            resolved_edges = max(resolved_edges, int(result.stats.get("lsp_resolved_pairs", 0)))
        assert isinstance(resolver._resolved, _LoopOwned), "the resolver replaced its answers: watch the new ones"
    assert resolved_edges > 0, "the server resolved nothing: the maps did not read its answers"
    assert len(resolver._resolved) > 0
    assert not strays, sorted(set(strays))[:5]
