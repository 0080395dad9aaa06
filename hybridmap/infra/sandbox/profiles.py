"""Policies built from ``policy.toml`` and the places we resolve at start.

``{name}`` in a path stands for places only our process knows (a name may stand for several
paths, or none, which drops the entry):

* ``python-prefix``, ``python-base-prefix``, ``python-executable-prefix``: our interpreter;
* ``package``: the hybridmap package directory;
* everything the caller passes (``install-dirs``, ``scratch``, ``repository``, toolchains...).

A path that is not absolute after expansion is dropped: it would depend on the working
directory of the child, which is the repository.
"""

from __future__ import annotations

import os
import sys
import tomllib
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from .policy import Policy

_DATA = Path(__file__).with_name("policy.toml")
_PACKAGE = Path(__file__).resolve().parents[2]

Places = Mapping[str, Sequence[str]]


@cache
def _data() -> dict[str, Any]:  # package data: read once per process
    with _DATA.open("rb") as fh:
        return tomllib.load(fh)


def interpreter_places() -> dict[str, tuple[str, ...]]:
    executable = os.path.realpath(sys.executable)
    return {
        "python-prefix": (sys.prefix,),
        "python-base-prefix": (sys.base_prefix,),
        "python-executable-prefix": (str(Path(executable).parents[1]),),
        "package": (str(_PACKAGE),),
    }


def expand(entries: Sequence[str], places: Places) -> tuple[str, ...]:
    """Each entry with its ``{name}`` placeholders replaced; entries naming an unknown or
    empty place, or not absolute after expansion, are dropped."""
    out: list[str] = []
    for entry in entries:
        values = [entry]
        for name, paths in places.items():
            token = "{" + name + "}"
            if any(token in v for v in values):
                values = [v.replace(token, str(p)) for v in values for p in paths]
        out += [v for v in values if "{" not in v and os.path.isabs(v)]
    return tuple(dict.fromkeys(out))


def _section(name: str, places: Places) -> Policy:
    table = _data().get(name, {})
    return Policy(
        execute=expand(table.get("execute", []), places),
        read=expand(table.get("read", []), places),
        write=expand(table.get("write", []), places),
        devices=expand(table.get("devices", []), places),
    )


def system_policy() -> Policy:
    """The distribution's programs and libraries, machine configuration, devices."""
    return _section("system", {})


def base_policy(places: Places) -> Policy:
    """:func:`system_policy` plus our own installs (``places`` adds ``install-dirs`` and the like)."""
    merged = {**interpreter_places(), **places}
    system, ours = _section("system", merged), _section("ours", merged)
    return system.extended(execute=ours.execute, read=ours.read, write=ours.write, devices=ours.devices)
