"""The peer in the same table: Aider's RepoMap, driven in Aider's own venv by ``aider_runner.py``.

The runner is a standalone script run with Aider's python (found by
``--aider-python``, else ``$HYBRIDMAP_AIDER_PYTHON``, else
``benchmarks/.work/aider-venv/bin/python`` of this source checkout, which
``benchmarks/setup_aider_env.sh`` creates). It receives the same requests as
hybridmap (same files: the source files hybridmap parsed; same chat files,
mentions and budgets; for ``message-text``, the same text) as JSON on stdin and answers JSON on stdout. One runner
process per checkout, run without the caller's ``PYTHON*`` variables, without
user site-packages (``-s``), with the script's directory taken off ``sys.path``
and with ``PYTHONHASHSEED=0``: Aider's ranking iterates sets of strings, so its
maps depend on the hash seed, and a fixed seed makes them reproducible. The
runner is killed if the eval is interrupted.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from ...errors import RequestError
from .metrics import MapOutcome, ShownFile
from .systems import Request, SystemRun
from .tasks import Task

RUNNER = Path(__file__).with_name("aider_runner.py")
ENV_VAR = "HYBRIDMAP_AIDER_PYTHON"
DEFAULT_PYTHON = Path(__file__).resolve().parents[3] / "benchmarks" / ".work" / "aider-venv" / "bin" / "python"
_SETUP_HINT = (
    "create it with benchmarks/setup_aider_env.sh (Aider 0.86.2 in its own venv), "
    f"then pass --aider-python PATH or set {ENV_VAR}"
)


def find_aider_python(explicit: str | None, environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    chosen = explicit or env.get(ENV_VAR) or ""
    path = Path(chosen).expanduser() if chosen else DEFAULT_PYTHON
    if not (path.is_file() and os.access(path, os.X_OK)):
        where = f"'{path}'" + ("" if chosen else " (the default)")
        raise RequestError(f"no python with Aider at {where}: {_SETUP_HINT}")
    return path


def _runner_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    return {**env, "PYTHONHASHSEED": "0", "PYTHONUNBUFFERED": "1", "TQDM_DISABLE": "1"}


async def _communicate(
    python: Path, args: Sequence[str], payload: bytes | None, timeout: float, cwd: Path | None = None
) -> tuple[int, bytes, bytes]:
    proc = await asyncio.create_subprocess_exec(
        str(python),
        "-s",
        str(RUNNER),
        *args,
        cwd=cwd,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=_runner_environment(),
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(payload), timeout)
    except BaseException:  # timeout, Ctrl-C (cancellation): never leave the runner behind
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        raise
    return proc.returncode or 0, out, err


def _tail(err: bytes) -> str:
    lines = err.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else "no output"


async def aider_version(python: Path) -> str:
    """Check that ``python`` can import Aider; its version. :class:`RequestError` otherwise."""
    try:
        code, out, err = await _communicate(python, ["--version"], b"", 120)
    except (TimeoutError, OSError) as exc:
        raise RequestError(f"cannot run Aider's python '{python}': {exc}; {_SETUP_HINT}") from exc
    if code != 0:
        raise RequestError(f"Aider's python '{python}' cannot load Aider ({_tail(err)}); {_SETUP_HINT}")
    return str(json.loads(out)["aider_version"])


def _request_json(task: Task, budget: int) -> dict[str, object]:
    """One request for the runner. ``message-text``: the text alone; Aider reads it its own way."""
    if task.kind == "message-text":
        return {"chat_files": list(task.chat_files), "message": task.text, "tokens": budget}
    return {
        "chat_files": list(task.chat_files),
        "mentioned_fnames": list(task.mentioned_files),
        "mentioned_idents": list(task.mentions),
        "tokens": budget,
    }


async def run_aider(
    python: Path,
    root: Path,
    files: Sequence[str],
    tasks: Sequence[Task],
    requests: Sequence[Request],
    *,
    cache_dir: Path,
    timeout: float,
) -> SystemRun:
    job = {
        "root": str(root),
        "files": list(files),
        "cache_dir": str(cache_dir),
        "prime_tokens": requests[0].budget if requests else 1024,
        "requests": [_request_json(tasks[r.task], r.budget) for r in requests],
    }
    try:
        code, out, err = await _communicate(python, [], json.dumps(job).encode(), timeout, cwd=root)
    except TimeoutError:
        return SystemRun("aider", (), 0.0, error=f"Aider took longer than {timeout:.0f} s on this checkout")
    if code != 0:
        return SystemRun("aider", (), 0.0, error=f"Aider's runner exited {code}: {_tail(err)}")
    try:
        answer = json.loads(out)
        outcomes = tuple(
            MapOutcome(
                tuple(ShownFile(f["path"], tuple(f["names"])) for f in r["files"]),
                int(r["tokens"]),
                float(r["seconds"]),
            )
            for r in answer["results"]
        )
    except (ValueError, KeyError, TypeError) as exc:
        return SystemRun("aider", (), 0.0, error=f"unreadable answer from Aider's runner: {exc}")
    if len(outcomes) != len(requests):
        return SystemRun("aider", (), 0.0, error="Aider's runner answered a different number of requests")
    return SystemRun("aider", outcomes, float(answer["first_map_seconds"]), stats={"files_listed": float(len(files))})
