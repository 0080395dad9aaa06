"""``hybridmap index ROOT``: build one SCIP index of ROOT with the installed indexers.

``scip-python`` indexes the Python files, ``scip-typescript`` the TypeScript and JavaScript ones;
their outputs are concatenated into one ``index.scip`` (protobuf concatenation of ``Index``
messages appends their documents; scip-typescript itself writes one message per project), and
``<index>.files.json`` records the sha256 of every indexed file as it was before and after the
run, so :class:`~hybridmap.sources.scip.source.ScipSource` can tell which documents still
describe their files.

The repository is untrusted and the indexers are large programs reading it, so they run as the
language servers do, and tighter (``docs/security.md``, "SCIP indexers"): found only in our
install directories or on absolute ``PATH`` entries; started as ``node SCRIPT`` with a ``PATH``
holding *only* that ``node`` (pyright inside scip-python runs ``python3``, ``pip`` and
``git rev-parse`` when it finds them: with nothing to find, nothing runs), the server
environment allowlist, git's hardened overrides, ``PYTHONSAFEPATH``, an empty package
environment for scip-python (no ``pip``), no workspace flags for scip-typescript (no ``yarn`` or
``pnpm``), their own process group, killed at the time limit.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import HybridMapError
from ..infra.boundaries import absolute_path_entries
from ..infra.git import git_config_environment
from ..infra.sandbox import Policy, confined
from ..infra.sandbox.landlock import Support
from ..languages.registry import LanguageRegistry
from ..model import FileStatus
from ..settings import Settings
from ..sources.lsp.confinement import kernel_support, tool_policy
from ..sources.scip.index import ScipIndex
from ..sources.scip.loaded import default_index_path, write_sidecar
from ..sources.scip.wire import WireError
from ..workspace.walk import list_files, read_source, resolve_root

DEFAULT_TIMEOUT = 1800.0
"""Seconds one indexer may run (a large repository takes minutes)."""

PYTHON = ("python",)
SCRIPT = ("typescript", "tsx", "javascript")


class IndexerError(HybridMapError):
    """An indexer is missing, failed or ran out of time; no index was written."""


@dataclass(frozen=True, slots=True)
class IndexerRun:
    indexer: str
    files: int
    """Files of its languages the walk listed."""
    documents: int
    """Documents it wrote."""
    seconds: float


@dataclass(frozen=True, slots=True)
class IndexReport:
    path: Path
    sidecar: Path
    runs: tuple[IndexerRun, ...]
    skipped: tuple[str, ...]
    """Why a language present was not indexed (indexer not installed)."""
    hashed: int
    """Indexed files whose sha256 the sidecar records (unchanged during the run)."""
    seconds: float


def scip_dirs() -> tuple[Path, ...]:
    """Where the indexers are looked for before absolute PATH entries: the checkout's
    ``.servers/scip`` (``scripts/install-servers``) and the per-user servers directory."""
    from ..sources.lsp.launch import FROM_SOURCE_TREE, SERVERS_DIR, user_servers_dir

    dirs = [user_servers_dir() / "scip" / "node_modules" / ".bin"]
    if FROM_SOURCE_TREE:
        dirs.insert(0, SERVERS_DIR / "scip" / "node_modules" / ".bin")
    return tuple(dirs)


def find_indexer(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    from ..sources.lsp.launch import find_command

    return find_command(name, scip_dirs(), environ)


def find_node(environ: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if environ is None else environ
    found = shutil.which("node", path=os.pathsep.join(absolute_path_entries(env.get("PATH"))))
    return os.path.realpath(found) if found else None


def indexer_environment(bin_dir: Path, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The server allowlist, minus what would steer the indexers' programs, with PATH = ``bin_dir``."""
    from ..sources.lsp.launch import ENV_ALLOWLIST

    env = os.environ if environ is None else environ
    dropped = {"PATH", "NODE_PATH", "VIRTUAL_ENV", "GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE"}
    out = {k: env[k] for k in ENV_ALLOWLIST if k in env and k not in dropped}
    out["PATH"] = str(bin_dir)
    out["PYTHONSAFEPATH"] = "1"  # defence in depth: no cwd on sys.path if a python ever ran
    out["PYTHONNOUSERSITE"] = "1"
    out.update(git_config_environment())
    return out


def _languages(root: Path, settings: Settings) -> dict[str, str]:
    registry = LanguageRegistry.load()
    out: dict[str, str] = {}
    for path in list_files(root, settings).paths:
        language = registry.language_for(path)
        if language in PYTHON or language in SCRIPT:
            out[path] = language
    return out


def _hashes(root: Path, paths: Sequence[str], settings: Settings) -> dict[str, str]:
    out: dict[str, str] = {}
    for path in paths:
        result = read_source(root, path, settings)
        if result.status is FileStatus.OK:
            out[path] = result.sha256
    return out


def build_index(
    root: str | os.PathLike[str],
    out: Path | None = None,
    settings: Settings | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    environ: Mapping[str, str] | None = None,
) -> IndexReport:
    """Index ``root`` (see module docstring); :class:`IndexerError` when no index could be made."""
    started = time.perf_counter()
    resolved = resolve_root(root)
    settings = settings or Settings()
    target = (out or default_index_path(resolved, settings)).expanduser().absolute()
    languages = _languages(resolved, settings)
    before = _hashes(resolved, sorted(languages), settings)
    from ..sources.lsp.launch import outside_repository

    environ = outside_repository(environ, resolved)  # no node or indexer found in the repository
    node = find_node(environ)
    if node is None:
        raise IndexerError("node is not installed (on an absolute PATH entry): the SCIP indexers need it")
    jobs = [
        ("scip-python", [p for p, lang in languages.items() if lang in PYTHON]),
        ("scip-typescript", [p for p, lang in languages.items() if lang in SCRIPT]),
    ]
    runs: list[IndexerRun] = []
    skipped: list[str] = []
    parts: list[bytes] = []
    with tempfile.TemporaryDirectory(prefix="hybridmap-index-") as scratch:
        work = Path(scratch)
        (work / "bin").mkdir()
        os.symlink(node, work / "bin" / "node")  # the only program on the indexers' PATH
        env = indexer_environment(work / "bin", environ)
        for name in ("HOME", "TMPDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
            env[name] = str(work)  # whatever it writes "at home" lands in the scratch directory
        policy = tool_policy(resolved, work, os.environ if environ is None else environ)
        kernel = kernel_support(settings)
        if not kernel.abi and not settings.allow_unsandboxed_servers:
            raise IndexerError(f"no OS sandbox here ({kernel.reason}); opt in with allow_unsandboxed_servers")
        for indexer, files in jobs:
            if not files:
                continue
            command = find_indexer(indexer, environ)
            if command is None:
                skipped.append(f"{indexer} not installed ({len(files)} files; scripts/install-servers installs it)")
                continue
            begun = time.perf_counter()
            data = _run(indexer, [node, os.path.realpath(command)], resolved, work, env, timeout, (policy, kernel))
            parts.append(data)
            runs.append(IndexerRun(indexer, len(files), _count_documents(indexer, data), time.perf_counter() - begun))
    if not runs:
        raise IndexerError("nothing to index: " + ("; ".join(skipped) or "no Python, TypeScript or JavaScript files"))
    documents = ScipIndex.decode(b"".join(parts)).documents
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(target.name + ".tmp")
    temporary.write_bytes(b"".join(parts))
    temporary.replace(target)
    after = _hashes(resolved, sorted(before), settings)
    indexed = {d.relative_path for d in documents}
    hashes = {p: sha for p, sha in before.items() if p in indexed and after.get(p) == sha}
    sidecar = write_sidecar(target, hashes)
    return IndexReport(target, sidecar, tuple(runs), tuple(skipped), len(hashes), time.perf_counter() - started)


def _count_documents(indexer: str, data: bytes) -> int:
    try:
        return len(ScipIndex.decode(data).documents)
    except WireError as exc:
        raise IndexerError(f"{indexer} wrote an index we cannot read: {exc}") from exc


def _arguments(indexer: str, root: Path, work: Path) -> list[str]:
    output = str(work / f"{indexer}.scip")
    if indexer == "scip-python":
        environment = work / "environment.json"
        environment.write_text("[]", "utf-8")  # no packages: scip-python never asks pip for them
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", root.name) or "repository"
        # --project-version: otherwise it runs `git rev-parse HEAD` through a shell.
        return ["index", "--quiet", "--cwd", str(root), "--project-name", name, "--project-version", "0",
                "--environment", str(environment), "--output", output]  # fmt: skip
    project: list[str] = []
    if not any((root / name).is_file() for name in ("tsconfig.json", "jsconfig.json")):
        # No project file: one of ours, outside the repository (scip-typescript's own
        # --infer-tsconfig would write it into the repository), covering every script file.
        config = work / "tsconfig.json"
        config.write_text(
            '{"compilerOptions": {"allowJs": true, "noEmit": true}, '
            f'"include": [{_json_string(str(root) + "/**/*")}], '
            f'"exclude": [{_json_string(str(root) + "/**/node_modules")}]}}',
            "utf-8",
        )
        project = [str(config)]
    elif not (root / "tsconfig.json").is_file():
        project = [str(root / "jsconfig.json")]
    return ["index", "--cwd", str(root), "--no-progress-bar", "--output", output, *project]


def _json_string(value: str) -> str:
    import json

    return json.dumps(value)


def _run(
    indexer: str,
    program: list[str],
    root: Path,
    work: Path,
    env: dict[str, str],
    timeout: float,
    sandbox: tuple[Policy, Support],
) -> bytes:
    """Run one indexer in ``root``, in the sandbox; the index it wrote. Killed (its whole
    process group) at ``timeout``; IndexerError with the last lines of its output when it fails."""
    output = work / f"{indexer}.scip"
    policy, kernel = sandbox
    arguments = _arguments(indexer, root, work)
    with confined(policy, die_with_parent=True, kernel=kernel) as start:  # dies with us, as servers do
        process = subprocess.Popen(  # our own indexer, found as documented; no shell
            [*program, *arguments],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=start.preexec,
        )
    try:
        stdout, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        raise IndexerError(f"{indexer} ran out of time ({timeout:g} s); no index written") from None
    except BaseException:
        _kill_group(process)
        raise
    finally:
        _kill_group(process)  # anything it left behind in its group
    tail = stdout.decode("utf-8", "replace").strip().splitlines()[-5:]
    if process.returncode != 0 or not output.is_file():
        raise IndexerError(f"{indexer} failed (exit {process.returncode}): {' | '.join(tail) or 'no output'}")
    return output.read_bytes()


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    if process.returncode is None:
        # SIGKILLed, and with PR_SET_PDEATHSIG: it cannot outlive us even if this wait gives up.
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)
