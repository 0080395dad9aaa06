"""A caller's request, checked and made relative: the one place paths from outside enter.

:func:`relative_to_root` turns a caller's path (absolute, or relative with ``..``) into a POSIX
path relative to the root, or refuses it (:class:`~.errors.RequestError`) when it leaves the
root. :func:`validate_request` turns a :class:`~.model.MapRequest` into the pipeline's
:class:`~.pipeline.BuildRequest`: the budget decided (:mod:`.budget`), the session's files
joined with the request's (:mod:`.session`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path, PurePosixPath

from ..errors import RequestError
from ..model import MapRequest
from ..settings import Settings
from .budget import ceiling_note, requested_budget
from .build import BuildRequest
from .graph.neighbourhood import SymbolQuery
from .inputs.session import Session


def relative_to_root(root: Path, path: str, what: str) -> str:
    """``path`` relative to ``root`` (POSIX); RequestError when it names something outside."""
    p = Path(path)
    if p.is_absolute():
        try:
            p = p.resolve().relative_to(root)
        except ValueError as exc:
            raise RequestError(f"{what} '{path}' is outside the root {root}") from exc
    posix = PurePosixPath(p.as_posix())
    if ".." in posix.parts:
        resolved = (root / posix).resolve()
        try:
            posix = PurePosixPath(resolved.relative_to(root).as_posix())
        except ValueError as exc:
            raise RequestError(f"{what} '{path}' is outside the root {root}") from exc
    return str(posix)


def validate_request(request: MapRequest, root: Path, settings: Settings, session: Session) -> BuildRequest:
    """The pipeline's request for ``request``; RequestError for a value no map can have."""
    if request.mode not in ("static", "hybrid"):
        raise RequestError(f"mode must be 'static' or 'hybrid', got {request.mode!r}")
    if request.server_wait < 0:
        raise RequestError(f"server wait must be >= 0, got {request.server_wait}")
    if request.conversation_tokens is not None and request.conversation_tokens < 0:
        raise RequestError(f"conversation tokens must be >= 0, got {request.conversation_tokens}")
    if not isinstance(request.message, str):
        raise RequestError("message must be text")

    def rel(paths: tuple[str, ...], what: str) -> tuple[str, ...]:
        return tuple(relative_to_root(root, p, what) for p in paths)

    chat = rel(request.chat_files, "chat file")
    asked = requested_budget(request.tokens, request.conversation_tokens, bool(chat), settings)
    if asked <= 0:
        raise RequestError(f"token budget must be positive, got {asked}")
    budget = min(asked, settings.max_tokens_ceiling)
    stable = settings.stable_layout if request.stable is None else bool(request.stable)
    active = request.active_file
    files = session.files(
        rel(request.edited_files, "edited file"),
        rel(request.read_files, "read file"),
        None if active is None else relative_to_root(root, active, "active file"),
    )
    return BuildRequest(
        budget,
        request.mode,
        chat,
        rel(request.mentioned_files, "mentioned file"),
        tuple(request.mentioned_idents),
        message=request.message,
        session=files,
        budget_note=ceiling_note(asked, settings),
        reasons=settings.render_reasons if request.reasons is None else bool(request.reasons),
        stable=stable,
        layout=session.layout if stable else None,
        symbol=_symbol_query(request, root, settings),
    )


def _symbol_query(request: MapRequest, root: Path, settings: Settings) -> SymbolQuery | None:
    """``request.symbol`` as a query (its path made relative to the root); None without one."""
    if request.symbol is None:
        return None
    depth = settings.symbol_depth if request.symbol_depth is None else request.symbol_depth
    if not 1 <= depth <= 16:
        raise RequestError(f"symbol depth must be from 1 to 16, got {depth}")
    query = SymbolQuery.parse(request.symbol.strip(), depth)
    if not query.name or not query.name.isprintable():
        raise RequestError(f"--symbol takes NAME or PATH:NAME, got {request.symbol!r}")
    if query.path:
        query = replace(query, path=relative_to_root(root, query.path, "symbol's file"))
    return query
