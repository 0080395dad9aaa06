"""The cycle collector is held off while maps build, and only then (``infra/collector.py``)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hybridmap import RepoMap
from hybridmap.infra.collector import collector_paused, without_collector
from tests.helpers import sample_repo


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_off_while_a_build_runs_and_on_after() -> None:
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # nested: still off after the inner one ends
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
    assert without_collector(True, gc.isenabled) is False
    assert gc.isenabled()


def test_on_again_only_when_the_last_of_several_threads_ends() -> None:
    first_in, second_done, first_may_end = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def first() -> None:
        with collector_paused():
            first_in.set()
            first_may_end.wait(10)
            seen["first at its end"] = gc.isenabled()

    def second() -> None:
        first_in.wait(10)
        with collector_paused():
            pass
        seen["after the second ended"] = gc.isenabled()
        second_done.set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    second_done.wait(10)
    first_may_end.set()
    for t in threads:
        t.join(10)
    assert seen == {"after the second ended": False, "first at its end": False}
    assert gc.isenabled()


def test_a_host_that_switched_it_off_keeps_it_off() -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()
    with collector_paused(enabled=False):
        assert not gc.isenabled()
    gc.enable()
    with collector_paused(enabled=False):
        assert gc.isenabled()


def test_an_error_in_the_build_still_resumes_it() -> None:
    with pytest.raises(ZeroDivisionError), collector_paused():
        _ = 1 / 0
    assert gc.isenabled()


class _Asker:
    """A summarizer (called by the build, in its worker thread) noting the collector's state."""

    name = "collector-probe"
    version = "1"

    def __init__(self) -> None:
        self.states: list[bool] = []

    def __call__(self, symbol: Any) -> str:
        self.states.append(gc.isenabled())
        return "probe"


@pytest.mark.parametrize("pause", [True, False])
def test_a_map_holds_it_off_while_it_indexes_and_builds(tmp_path: Path, pause: bool) -> None:
    root = sample_repo(tmp_path / "repo", files=12, defs=4)
    indexing: list[bool] = []
    asker = _Asker()
    overrides = {"cache_dir": str(tmp_path / "cache"), "pause_cycle_collector": pause}

    def progress(phase: str, done: int, total: int) -> None:  # the index's listing and parse report it
        indexing.append(gc.isenabled())

    with RepoMap(root, overrides=overrides, start_servers=False, summarizer=asker, progress=progress) as repo:
        result = repo.map(tokens=4096, mode="static")
    assert "probe" in result.text
    assert asker.states and set(asker.states) == {not pause}
    assert indexing and set(indexing) == {not pause}
    assert gc.isenabled()
