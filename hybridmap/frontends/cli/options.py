"""Command-line options shared by the map commands (:mod:`.main`) and the tool commands
(:mod:`.tools`), which the command group imports."""

from __future__ import annotations

from typing import Any

import click


def cache_options(command: Any) -> Any:
    """--cache-dir, --no-cache."""
    command = click.option("--no-cache", is_flag=True, help="Do not read or write the disk cache.")(command)
    return click.option(
        "--cache-dir",
        type=click.Path(file_okay=False, path_type=str),
        default=None,
        help="Cache directory (default $XDG_CACHE_HOME/hybridmap).",
    )(command)


def cache_overrides(cache_dir: str | None, no_cache: bool) -> dict[str, Any]:
    """The settings ``--cache-dir`` and ``--no-cache`` stand for."""
    overrides: dict[str, Any] = {"cache_dir": cache_dir}
    if no_cache:
        overrides["use_cache"] = False
    return overrides
