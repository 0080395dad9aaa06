"""The scale benchmark's generator (``benchmarks/gen_monorepo.py``) at N=200: a git repository with
the four languages and their manifests, common names defined in many files, the same commit for
the same seed; and ``hybridmap map`` (a real process) maps it."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

GENERATOR = Path(__file__).resolve().parents[1] / "benchmarks" / "gen_monorepo.py"
DEFINES = re.compile(
    r"^(?:def |class |export function |export class |func (?:\([^)]*\) )?|type |static int )(\w+)", re.MULTILINE
)


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_monorepo", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_monorepo"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_generator_makes_a_mappable_monorepo(tmp_path: Path) -> None:
    gen = load_generator()
    manifest = gen.generate(200, seed=3, out=tmp_path / "a")
    root = Path(manifest["root"])
    listed = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True, check=True)
    paths = listed.stdout.split()
    assert len(paths) == manifest["files"]
    assert 180 <= len(paths) <= 220
    suffixes = Counter(Path(p).suffix for p in paths)
    assert all(suffixes[s] > 0 for s in (".py", ".ts", ".go", ".c", ".h"))
    names = {Path(p).name for p in paths}
    assert {"go.mod", "package.json", "tsconfig.json", "pyproject.toml", "__init__.py"} <= names
    definers: Counter[str] = Counter()
    for rel in paths:
        text = (root / rel).read_text()
        definers.update({m.lower().replace("_", "") for m in DEFINES.findall(text)})
    common = {"load", "parse", "config", "handlerequest"}
    assert max(definers[n] for n in common) >= 5, definers.most_common(5)
    assert (root / manifest["edit_file"]).is_file()

    again = gen.generate(200, seed=3, out=tmp_path / "b")
    assert again["head"] == manifest["head"]

    proc = subprocess.run(
        [sys.executable, "-m", "hybridmap", "map", str(root), "--mode", "static", "--format", "json", "--no-cache"],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(proc.stdout)
    assert result["stats"]["files_listed"] == len(paths)
    assert 0 < result["tokens"] <= result["budget"]
    assert result["edges"]["name-match"] > 0
    shown = {f["path"] for f in result["files"]}
    assert {Path(p).suffix for p in shown} & {".py", ".ts", ".go", ".c", ".h"}
