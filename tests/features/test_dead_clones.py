"""Dead code (hybridmap/features/dead_code.py) and clones (hybridmap/features/clones.py) on fixtures whose answers
are known, through the API and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hybridmap import RepoMap

from ..conftest import GitRepoFactory

DEAD = {
    "pkg/__init__.py": "from .core import used_fn\n\n\ndef public_api():\n    pass\n",
    "pkg/core.py": (
        "def used_fn():\n    return 1\n\n\ndef _helper_dead():\n    return 2\n\n\n"
        "def only_tested():\n    return 3\n\n\nclass Orphan:\n    def __repr__(self):\n        return 'o'\n"
    ),
    "app.py": "from pkg.core import used_fn\n\n\ndef main():\n    used_fn()\n",
    "tests/test_core.py": "from pkg.core import only_tested\n\n\ndef test_it():\n    only_tested()\n",
    "web/util.ts": (
        "export function shown(): void {}\n\nfunction hiddenDead(): number { return 1 }\n\n"
        "function localUsed(): number { return 2 }\n\nlocalUsed()\n"
    ),
    "go/lib.go": (
        "package lib\n\nfunc Exported() int { return helper() }\n\nfunc unexported() int { return 0 }\n\n"
        "func helper() int { return 1 }\n"
    ),
    "Makefile": "build:\n\techo build\n",
}

PRICE = """def {name}({items}):
    result = 0
    for item in {items}:
        if item.price > {limit}:
            result += item.price * 2
        else:
            result += item.price
    return result
"""
NEAR = """def near_copy(values):
    acc = 0
    for v in values:
        if v.price > 3:
            acc += v.price * 2
        else:
            acc += v.price
    print(acc)
    return acc
"""
OTHER = """def unrelated(path):
    with open(path) as fh:
        lines = [line.strip() for line in fh if line]
    data = {{k: v for k, v in enumerate(lines)}}
    while data:
        data.popitem()
    return len(lines)
"""
CLONES = {
    "a.py": PRICE.format(name="total_price", items="items", limit=10),
    "b/c.py": "import os\n\n\n" + PRICE.format(name="total_weight", items="things", limit=5),
    "d.py": NEAR + "\n\n" + OTHER.format(),
    "short.py": "def tiny(x):\n    return x\n\n\ndef tiny2(y):\n    return y\n",
}


def test_dead_and_test_only(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = git_repo(DEAD)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "c")}, start_servers=False) as repo:
        found = repo.dead_code()
    got = {(d.path, d.name, d.status) for d in found.definitions}
    assert got == {
        ("pkg/core.py", "_helper_dead", "dead"),
        ("pkg/core.py", "Orphan", "dead"),
        ("pkg/core.py", "only_tested", "test-only"),
        ("web/util.ts", "hiddenDead", "dead"),
        ("go/lib.go", "unexported", "dead"),
    }
    only = next(d for d in found.definitions if d.status == "test-only")
    assert only.used_by == ("tests/test_core.py",) and only.line == 9 and only.provenance == "name-match"
    # Left out as exported: public_api (a package __init__), shown (export), Exported (Go).
    assert found.exported == 3
    # Checked: used_fn, _helper_dead, only_tested, Orphan, hiddenDead, localUsed, unexported, helper
    # (main, __repr__, test_it are entry points; Makefile targets are not checked).
    assert found.checked == 8


def test_dead_cli(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = git_repo(DEAD)
    args = ["dead", str(root), "--cache-dir", str(tmp_path / "c")]
    text = subprocess.run([sys.executable, "-m", "hybridmap", *args], capture_output=True, text=True, timeout=120)
    assert text.returncode == 0, text.stderr
    assert "pkg/core.py:9: test-only: function only_tested (used by tests/test_core.py)" in text.stdout
    assert "go/lib.go:5: dead: function unexported" in text.stdout
    assert "4 dead, 1 test-only of 8 definitions checked by name; 3 exported ones left out" in text.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "hybridmap", *args, "--no-tests", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    data = json.loads(proc.stdout)
    assert {d["status"] for d in data["definitions"]} == {"dead"} and len(data["definitions"]) == 4


def test_clones_by_shape_and_similarity(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = git_repo(CLONES)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "c")}, start_servers=False) as repo:
        exact = repo.clones(1.0)
        near = repo.clones(0.5)
        default = repo.clones()
    # Renamed variables and other literals: the same shape.
    assert [(g.exact, [(m.path, m.name, m.line, m.end_line) for m in g.members]) for g in exact] == [
        (True, [("a.py", "total_price", 1, 8), ("b/c.py", "total_weight", 4, 11)])
    ]
    # One statement more: similar, not the same; the unrelated function and the short ones never join.
    assert len(near) == 1 and not near[0].exact and 0.5 <= near[0].similarity < 1.0
    assert {m.name for m in near[0].members} == {"total_price", "total_weight", "near_copy"}
    assert {m.name for g in default for m in g.members} <= {"total_price", "total_weight", "near_copy"}


def test_clones_cli_json(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = git_repo(CLONES)
    args = ["clones", str(root), "--similarity", "1.0", "--format", "json", "--cache-dir", str(tmp_path / "c")]
    proc = subprocess.run(
        [sys.executable, "-m", "hybridmap", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["groups"] == [
        {
            "similarity": 1.0,
            "exact": True,
            "members": [
                {"path": "a.py", "name": "total_price", "line": 1, "end_line": 8},
                {"path": "b/c.py", "name": "total_weight", "line": 4, "end_line": 11},
            ],
        }
    ]


def test_one_rule_says_what_a_test_path_is(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    """Ranking, dead code and symbol search read one rule (hybridmap/languages/paths.py is_test_path).
    Before, dead code missed ``FooTests.java`` and ``x_spec.rb``, the search missed ``spec/``,
    ``__tests__/`` and ``x.test.ts``, and the ranking missed ``x.test.go``-style names."""
    from hybridmap.languages.paths import is_test_path

    tests = [
        "spec/a.rb",
        "lib/__tests__/x.js",
        "src/x.test.ts",
        "src/x.spec.mjs",
        "app/models/user_spec.rb",
        "src/FooTests.java",
        "testing/util.py",
        "pkg/x_test.go",
        "conftest.py",
        "test_a.py",
    ]
    assert [p for p in tests if not is_test_path(p)] == []
    assert [p for p in ("src/contest.py", "src/latest.ts", "specs.md/x.py", "attest/a.py") if is_test_path(p)] == []
    root = git_repo(
        {
            "src/Widget.java": "class Widget {\n  void helperOnlyTested() {}\n}\n",
            "src/WidgetTests.java": "class WidgetTests {\n  void run() { new Widget().helperOnlyTested(); }\n}\n",
            "web/render.ts": "export function renderWidget() {}\n",
            "web/render.test.ts": "function renderWidget() {}\nrenderWidget();\n",
        }
    )
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "c")}, start_servers=False) as repo:
        dead = {(d.path, d.name): d.status for d in repo.dead_code().definitions}
        assert dead.get(("src/Widget.java", "helperOnlyTested")) == "test-only", dead
        # The definition outside the tests first, although its path sorts after the test's.
        assert [m.path for m in repo.search_symbols("renderWidget").matches] == ["web/render.ts", "web/render.test.ts"]
