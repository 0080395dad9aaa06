"""One map over several roots: a service and its client library, a workspace of sibling
repositories. One session, one ranking, one budget; paths prefixed by each root's name.

:class:`AsyncRootsMap` keeps an :class:`~.repo.AsyncRepoMap` per root, so each root keeps what is
its own: its trust (``allow_servers_running_repository_code``, its ``hybridmap.toml``), its
listing and ignore rules, its cache entries and its language servers (started in that root).
A map asks each for its inputs (:meth:`AsyncRepoMap._prepared`), joins them with the root's
name before every path (:mod:`hybridmap.pipeline.inputs.roots`) and ranks them together with
the settings of the user (never a repository's): a name one root uses and another defines is an
edge between them. A root's name is its directory's name (``client``, ``client-2`` when two
are alike); the caller's paths name a root's files as ``NAME/path`` or absolute.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Self

from ..errors import RequestError
from ..infra.collector import without_collector
from ..model import MapRequest, MapResult, Mode
from ..pipeline.build import MapBuilder, MapInputs
from ..pipeline.inputs.roots import join_servers, join_snapshots, join_views, prefixed
from ..pipeline.inputs.session import Session
from ..pipeline.request import validate_request
from ..settings import Settings, load_settings
from ..sources.base import SourceView
from .repo import AsyncRepoMap


def root_names(roots: Sequence[Path]) -> list[str]:
    """Each root's name in the joined map: its directory's name, ``-2``, ``-3``... when taken."""
    names: list[str] = []
    for root in roots:
        base = root.name or "root"
        name, n = base, 2
        while name in names:
            name, n = f"{base}-{n}", n + 1
        names.append(name)
    return names


class AsyncRootsMap:
    """A map of several roots (module doc). Use as an async context manager."""

    def __init__(
        self,
        roots: Sequence[str | os.PathLike[str]],
        *,
        overrides: Mapping[str, Any] | None = None,
        start_servers: bool = True,
        environ: Mapping[str, str] | None = None,
        first: AsyncRepoMap | None = None,
    ) -> None:
        """``first``: the first root's map, when the caller has one open (the MCP server's): it is
        used, not opened again, and stays open after :meth:`aclose` (its owner closes it)."""
        if not roots:
            raise RequestError("a map of several roots needs at least one root")
        self._shared = first
        repos = [first] if first is not None else []
        repos += [
            AsyncRepoMap(r, overrides=overrides, start_servers=start_servers, environ=environ)
            for r in roots[len(repos) :]
        ]
        self.roots: dict[str, AsyncRepoMap] = dict(zip(root_names([r.root for r in repos]), repos, strict=True))
        self.settings: Settings = load_settings(None, overrides, environ)
        """The user's settings (no repository's file): they rank the joined map."""
        first = repos[0]  # its token counter (and cache of counts) serves the joined map too
        self._builder = MapBuilder(self.settings, first._engine.counter, first.registry.visibility_conventions())
        self._session = Session(self.settings.session_max_files)
        self._lock = asyncio.Lock()
        self._joined: dict[str, tuple[tuple[object, ...], SourceView]] = {}
        """Each source's joined view, kept while no root's view moved (the graph is kept with it)."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        for repo in self.roots.values():
            if repo is not self._shared:
                await repo.aclose()

    async def map(
        self,
        *,
        chat_files: Iterable[str] = (),
        mentioned_files: Iterable[str] = (),
        mentioned_idents: Iterable[str] = (),
        tokens: int | None = None,
        mode: Mode = "hybrid",
        server_wait: float = 0.0,
        message: str = "",
        reasons: bool | None = None,
    ) -> MapResult:
        """The map of every root, ranked together; paths are ``NAME/path`` (module doc); the
        keywords mean what :class:`~hybridmap.model.MapRequest`'s fields do."""
        chat = [self._joined_path(p, "chat file") for p in chat_files]
        mentioned = [self._joined_path(p, "mentioned file") for p in mentioned_files]
        request = MapRequest(
            tuple(chat), tuple(mentioned), tuple(mentioned_idents), tokens, mode, server_wait, message, reasons=reasons
        )
        async with self._lock:
            parts: dict[str, MapInputs] = {}
            for name, repo in self.roots.items():
                own = tuple(p[len(name) + 1 :] for p in chat if p.startswith(f"{name}/"))
                parts[name] = await repo._prepared(MapRequest(own, mode=mode, server_wait=server_wait))
            inputs = self._join(parts)
            build = validate_request(request, Path("/"), self.settings, self._session)
            paused = self.settings.pause_cycle_collector
            result, _ = await asyncio.to_thread(without_collector, paused, self._builder.build, inputs, build)
        return result

    def _joined_path(self, path: str, what: str) -> str:
        """``path`` as the joined map spells it: ``NAME/path``, or an absolute path inside a root."""
        if os.path.isabs(path):
            resolved = Path(path).resolve()
            for name, repo in self.roots.items():
                if resolved == repo.root or repo.root in resolved.parents:
                    return prefixed(name, resolved.relative_to(repo.root).as_posix())
            raise RequestError(f"{what} '{path}' is in none of the roots")
        parts = path.split("/")
        if parts[0] not in self.roots or len(parts) < 2 or ".." in parts:
            raise RequestError(f"{what} '{path}' must start with a root's name: {', '.join(self.roots)}")
        return path

    def _join(self, parts: Mapping[str, MapInputs]) -> MapInputs:
        snapshot = join_snapshots({n: p.snapshot for n, p in parts.items()}, next(iter(self.roots.values())).root)
        base = self._joined_view("", {n: p.base for n, p in parts.items()})
        names = dict.fromkeys(view.name for part in parts.values() for view in part.refiners)
        refiners = tuple(
            self._joined_view(source, {n: v for n, p in parts.items() for v in p.refiners if v.name == source})
            for source in names
        )
        servers = join_servers({n: p.servers for n, p in parts.items()})
        notes = tuple(replace(d, path=prefixed(n, d.path)) for n, p in parts.items() for d in p.notes)
        return MapInputs(snapshot, base, refiners, servers, notes, None)

    def _joined_view(self, source: str, views: Mapping[str, SourceView]) -> SourceView:
        key = tuple((name, view.version, id(view.tags), id(view.resolved)) for name, view in views.items())
        held = self._joined.get(source)
        if held is None or held[0] != key:
            held = self._joined[source] = (key, join_views(views))
        return held[1]
