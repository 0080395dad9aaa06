"""The synchronous facade is generated from AsyncRepoMap (issue 26): it is current, it offers
every public member with the same signature, and a member added to AsyncRepoMap reaches it."""

from __future__ import annotations

import importlib.util
import inspect
import subprocess
import sys
from types import ModuleType

from hybridmap import AsyncRepoMap, RepoMap

from ..helpers import PROJECT

ROOT = PROJECT
GENERATOR = ROOT / "scripts" / "gen_sync_facade.py"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_sync_facade", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_facade_is_current() -> None:
    proc = subprocess.run([sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_every_public_member_with_the_same_signature() -> None:
    skipped = generator().NOT_OFFERED
    for name, member in inspect.getmembers(AsyncRepoMap):
        if name.startswith("_") or name in skipped:
            continue
        assert hasattr(RepoMap, name), name
        if inspect.isfunction(member):
            assert inspect.signature(getattr(RepoMap, name)) == inspect.signature(member), name
    assert inspect.signature(RepoMap.__init__) == inspect.signature(AsyncRepoMap.__init__)
    for name in ("root", "settings", "registry"):  # attributes of the async map, properties here
        assert isinstance(inspect.getattr_static(RepoMap, name), property), name


def test_a_member_added_to_the_async_map_reaches_the_facade() -> None:
    class Grown(AsyncRepoMap):
        async def neighbours(self, symbol: str, *, depth: int = 1) -> list[str]:
            return [symbol] * depth

        def pinned(self) -> int:
            return 1

    text = generator().render(Grown)
    assert text != (ROOT / "hybridmap" / "api" / "sync.py").read_text(encoding="utf-8")
    assert "def neighbours(self, symbol: str, *, depth: int = 1) -> list[str]:" in text
    assert "return self._thread.call(self._async.neighbours(symbol, depth=depth))" in text
    assert "return self._thread.on_loop(self._async.pinned)" in text
