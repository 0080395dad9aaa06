"""``hybridmap dead`` checked by the language servers' references (hybridmap/features/dead_servers.py), with
real servers on small real repositories written for it: a function handed over as a value, or
re-exported under another name, looks dead to name matching and is refuted by the server; a
truly dead one is confirmed (``resolved``), a test-only one stays test-only with the server's
test files. A server that never answers, or answers with places outside the repository, cannot
make the answer wrong or slow: the first leaves every candidate name-matched within
``dead_server_timeout``, the second's locations are dropped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from hybridmap import RepoMap
from hybridmap.features.dead_code import DeadCode

from ..conftest import GitRepoFactory, write_files
from ..helpers import FAULT_SERVER, registry_with_only, require, user_registry

WAIT = 60.0
"""Seconds a test lets a real server start and get ready."""
MARGIN = 3.0

PYTHON = {
    "pyproject.toml": '[project]\nname = "deadfix"\nversion = "0"\n',
    "tools.py": (
        "def used_directly() -> int:\n    return 1\n\n\n"
        "def passed_as_value() -> int:\n    return 2\n\n\n"
        "def truly_dead() -> int:\n    return 3\n\n\n"
        "def only_for_tests() -> int:\n    return 4\n"
    ),
    # tools.passed_as_value is handed over, never called: no call, import or annotation names it.
    "app.py": (
        "import tools\n\n\ndef call_back(callback):\n    return callback()\n\n\n"
        "def main() -> int:\n    return tools.used_directly() + call_back(tools.passed_as_value)\n"
    ),
    "tests/test_tools.py": "import tools\n\n\ndef test_only() -> None:\n    assert tools.only_for_tests() == 4\n",
}
TYPESCRIPT = {
    "tsconfig.json": '{ "compilerOptions": { "target": "es2020", "strict": true }, "include": ["src"] }\n',
    # helper is reached only through its re-export, passedAsValue only as a property's value.
    "src/tools.ts": (
        "function passedAsValue(): number {\n  return 2;\n}\n\n"
        "function trulyDead(): number {\n  return 3;\n}\n\n"
        "function helper(): number {\n  return 1;\n}\n\n"
        "export { helper as publicHelper };\n\n"
        "export const handlers = { a: passedAsValue };\n"
    ),
    "src/app.ts": (
        'import { handlers, publicHelper } from "./tools";\n\n'
        "export function main(): number {\n  return handlers.a() + publicHelper();\n}\n"
    ),
}
GO = {
    "go.mod": "module example.com/deadfix\n\ngo 1.21\n",
    "main.go": (
        "package main\n\nfunc passedAsValue() int {\n\treturn 2\n}\n\n"
        "func trulyDead() int {\n\treturn 3\n}\n\n"
        'var handlers = map[string]func() int{"a": passedAsValue}\n\n'
        'func main() {\n\t_ = handlers["a"]()\n}\n'
    ),
}

#: (language, server, files, name-matched answer, hybrid answer, refuted: name -> users)
CASES = [
    (
        "python",
        "ty",
        PYTHON,
        {"passed_as_value": "dead", "truly_dead": "dead", "only_for_tests": "test-only"},
        {"truly_dead": "dead", "only_for_tests": "test-only"},
        {"passed_as_value": ("app.py",)},
    ),
    (
        "typescript",
        "tsgo",
        TYPESCRIPT,
        {"passedAsValue": "dead", "trulyDead": "dead", "helper": "dead"},
        {"trulyDead": "dead"},
        {"passedAsValue": ("src/tools.ts",), "helper": ("src/app.ts", "src/tools.ts")},
    ),
    (
        "typescript",
        "typescript-language-server",
        TYPESCRIPT,
        {"passedAsValue": "dead", "trulyDead": "dead", "helper": "dead"},
        {"trulyDead": "dead"},
        {"passedAsValue": ("src/tools.ts",), "helper": ("src/app.ts", "src/tools.ts")},
    ),
    (
        "go",
        "gopls",
        GO,
        {"passedAsValue": "dead", "trulyDead": "dead"},
        {"trulyDead": "dead"},
        {"passedAsValue": ("main.go",)},
    ),
]


def statuses(found: DeadCode) -> dict[str, str]:
    return {d.name: d.status for d in found.definitions}


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_references_refute_false_positives_and_confirm_the_rest(
    case: tuple, git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    language, server, files, matched, confirmed, refuted = case
    require(server)
    root = git_repo(files)
    registry = registry_with_only(tmp_path, language, server)
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        static = repo.dead_code(mode="static")
        hybrid = repo.dead_code(server_wait=WAIT)
    assert statuses(static) == matched
    assert {d.evidence for d in static.definitions} == {"name-matched"} and static.asked == 0
    assert statuses(hybrid) == confirmed, hybrid
    assert {(d.evidence, d.provenance) for d in hybrid.definitions} == {("resolved", f"lsp:{server}")}
    assert {d.name: d.used_by for d in hybrid.refuted} == refuted
    assert {d.status for d in hybrid.refuted} == {"used"}
    assert hybrid.asked == len(matched) and hybrid.diagnostics == ()
    if "only_for_tests" in confirmed:
        (tested,) = [d for d in hybrid.definitions if d.name == "only_for_tests"]
        assert tested.used_by == ("tests/test_tools.py",)
    document = hybrid.to_json()
    assert (document["resolved"], document["name_matched"]) == (len(confirmed), 0)
    assert [d["name"] for d in document["refuted"]] == [d.name for d in hybrid.refuted]


def dead_fault_repo(git_repo: GitRepoFactory, tmp_path: Path, mode: str) -> tuple[Path, object]:
    """The Python repository with a fault server in ``mode`` as its only server, and the places
    outside the repository its references name: a file beside the root, a symlink leading out,
    an ignored virtualenv inside."""
    root = git_repo({**PYTHON, ".gitignore": ".venv/\n"})
    write_files(tmp_path, {"outside.py": "x = 1\n", "outside/evil.py": "x = 1\n"})
    write_files(root, {".venv/lib/site.py": "x = 1\n"})
    os.symlink(tmp_path / "outside", root / "escape")
    return root, user_registry(tmp_path, sys.executable, [str(FAULT_SERVER), mode])


def test_references_outside_the_repository_are_dropped(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root, registry = dead_fault_repo(git_repo, tmp_path, "lookups")
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        found = repo.dead_code(server_wait=5.0)
    # The fault server names each candidate's own declaration and seven places outside the
    # repository: none is a use, so each candidate is resolved dead and nothing is refuted.
    assert {d.name: (d.status, d.evidence, d.provenance, d.used_by) for d in found.definitions} == dict.fromkeys(
        ("passed_as_value", "truly_dead", "only_for_tests"), ("dead", "resolved", "lsp:fault", ())
    )
    assert found.refuted == () and found.asked == 3
    text = json.dumps(found.to_json())
    for place in ("outside", "escape", "evil", ".venv", "passwd", "untitled", "example.invalid"):
        assert place not in text, place


def test_a_server_that_never_answers_leaves_every_candidate_name_matched_in_time(
    git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    root, registry = dead_fault_repo(git_repo, tmp_path, "hang-lookups")
    limit = 1.5
    overrides = {"cache_dir": str(tmp_path / "cache"), "dead_server_timeout": limit}
    with RepoMap(root, registry=registry, overrides=overrides) as repo:
        static = repo.dead_code(mode="static")
        repo.dead_code(server_wait=5.0)  # started and ready: the next call only asks
        started = time.monotonic()
        found = repo.dead_code()
        elapsed = time.monotonic() - started
    assert elapsed <= limit + MARGIN, elapsed
    assert found.definitions == static.definitions and found.refuted == ()
    assert found.asked == 3
    (note,) = found.diagnostics
    assert note.kind == "dead_server" and note.message.startswith("fault timed out for 3 candidate(s)"), note


def test_dead_server_checks_bounds_the_questions(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    require("ty")
    root = git_repo(PYTHON)
    overrides = {"cache_dir": str(tmp_path / "cache"), "dead_server_checks": 1}
    with RepoMap(root, overrides=overrides) as repo:
        found = repo.dead_code(server_wait=WAIT)
    # The first candidate in file order is asked (and refuted); the other two stay name-matched.
    assert [d.name for d in found.refuted] == ["passed_as_value"] and found.asked == 1
    assert {(d.name, d.evidence) for d in found.definitions} == {
        ("truly_dead", "name-matched"),
        ("only_for_tests", "name-matched"),
    }
    assert [d.message for d in found.diagnostics] == ["dead_server_checks = 1: 2 more candidate(s) stay name-matched"]


def test_cli_and_mcp_say_the_evidence(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    require("ty")
    pytest.importorskip("mcp")
    from mcp import ClientSession, StdioServerParameters, stdio_client

    root = git_repo(PYTHON)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    args = [sys.executable, "-m", "hybridmap", "dead", str(root), "--server-wait", str(WAIT)]
    shown = subprocess.run(args, capture_output=True, text=True, env=env, timeout=WAIT + 60)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [
        "tools.py:9: dead: function truly_dead  [resolved by ty]",
        "tools.py:13: test-only: function only_for_tests (used by tests/test_tools.py)  [resolved by ty]",
    ]
    assert "(2 resolved by servers, 0 name-matched); 1 name-matched candidate(s) refuted by a server" in shown.stderr
    static = subprocess.run([*args[:5], "--format", "json"], capture_output=True, text=True, env=env, timeout=120)
    document = json.loads(static.stdout)
    assert [(d["name"], d["evidence"]) for d in document["definitions"]] == [
        ("passed_as_value", "name-matched"),
        ("truly_dead", "name-matched"),
        ("only_for_tests", "name-matched"),
    ]
    assert document["refuted"] == [] and document["asked"] == 0

    async def mcp() -> dict:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "hybridmap", "mcp", str(root), "--cache-dir", str(tmp_path / "c")]
        )
        with open(tmp_path / "mcp.log", "a") as errlog:  # noqa: ASYNC230 (the child's stderr, once)
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("dead_code", {"server_wait": WAIT})
                assert not result.is_error and result.structured_content is not None
                return result.structured_content

    answer = anyio.run(mcp)
    assert [(d["name"], d["status"], d["evidence"], d["provenance"]) for d in answer["definitions"]] == [
        ("truly_dead", "dead", "resolved", "lsp:ty"),
        ("only_for_tests", "test-only", "resolved", "lsp:ty"),
    ]
    assert [(d["name"], d["used_by"]) for d in answer["refuted"]] == [("passed_as_value", ["app.py"])]
    assert (answer["resolved"], answer["name_matched"], answer["diagnostics"]) == (2, 0, [])
