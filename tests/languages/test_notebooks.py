"""Jupyter notebooks: code cells mapped in their kernel's language, positions as cell and line,
outputs never read. Real notebooks written by the tests, mapped through the API, the real CLI
(text and JSON against the shipped schema), a real MCP client, the disk cache and the watch."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest

from hybridmap import AsyncRepoMap, RepoMap
from hybridmap.languages import notebooks
from hybridmap.languages.notebooks import NotebookError, cell_lines, cell_position, kernel_language, read_notebook

from ..conftest import write_files
from ..helpers import connect, edges, ok, registry_with_fault_server, run_cli

SCHEMA = Path(__file__).resolve().parents[2] / "hybridmap" / "schema" / "map.schema.json"


def notebook(cells: list[dict[str, Any]], language: str | None = "python", **metadata: Any) -> str:
    """An nbformat 4 notebook as Jupyter writes it (sorted keys, one space of indent)."""
    meta: dict[str, Any] = dict(metadata)
    if language is not None:
        meta.setdefault("kernelspec", {"display_name": language, "language": language, "name": language})
    return json.dumps({"cells": cells, "metadata": meta, "nbformat": 4, "nbformat_minor": 5}, indent=1, sort_keys=True)


def code(source: str | list[str], outputs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": outputs or [], "source": source}


def markdown(source: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def stream(text: str) -> dict[str, Any]:
    return {"name": "stdout", "output_type": "stream", "text": text}


MODULES = {
    "pkg/__init__.py": "",
    "pkg/features.py": (
        "def load_measurements(path):\n"
        '    """Read the raw measurements."""\n'
        "    return open(path).read().split()\n\n\n"
        "def normalize_series(values, scale=1.0):\n"
        "    return [float(v) * scale for v in values]\n"
    ),
    "pkg/report.py": (
        "from pkg.features import load_measurements\n\ndef summarize(path):\n    return len(load_measurements(path))\n"
    ),
    # A module that uses what the notebook defines (a helper pasted out of it, say).
    "pkg/consumer.py": "def refit(series):\n    return TrendModel().fit(series)\n",
}

ANALYSIS = notebook(
    [
        markdown("# Analysis\n\ndef markdown_lookalike():\n    pass\n"),
        code(
            [
                "%matplotlib inline\n",
                "import numpy as np\n",
                "from pkg.features import load_measurements, normalize_series\n",
            ]
        ),
        code(
            'class TrendModel:\n    """Fits a trend to a series."""\n\n    def fit(self, series):\n'
            "        self.slope = series[-1] - series[0]\n        return self\n",
            outputs=[stream("def output_lookalike(x):\n    return x\n")],
        ),
        {"cell_type": "raw", "metadata": {}, "source": "def raw_lookalike(): pass"},
        code(
            [
                "!pip install pandas\n",
                "def run_pipeline(path):\n",
                "    values = normalize_series(load_measurements(path))\n",
                "    return TrendModel().fit(values)\n",
            ]
        ),
    ]
)


def _repo(tmp_path: Path, **extra: str | bytes) -> Path:
    root = tmp_path / "repo"
    write_files(root, {**MODULES, "notebooks/analysis.ipynb": ANALYSIS, **extra})
    return root


def _overrides(tmp_path: Path, **more: object) -> dict[str, object]:
    return {"cache_dir": str(tmp_path / "cache"), **more}


def _symbols(result: Any, path: str) -> dict[str, tuple[int, int, int]]:
    """name -> (cell, line, end_line) of ``path``'s shown symbols."""
    (found,) = [f for f in result.files if f.path == path]
    return {s.name: (s.cell, s.line, s.end_line) for s in found.symbols}


# --- the pure module -----------------------------------------------------------------------------


def test_code_cells_become_one_source_with_cells_and_lines_kept() -> None:
    nb = read_notebook(ANALYSIS.encode())
    assert nb.language == "python" and nb.total_cells == 5
    text = nb.source.decode()
    # Markdown, raw cells and outputs are not code; magics are blanked with their line kept.
    assert "lookalike" not in text and "matplotlib" not in text and "pip install" not in text
    assert nb.cells == ((0, 2), (3, 3), (9, 5))
    lines = text.split("\n")
    assert lines[0] == "" and lines[1] == "import numpy as np" and lines[10] == "def run_pipeline(path):"
    assert cell_position(nb.cells, 10) == (5, 1) and cell_position(nb.cells, 3) == (3, 0)
    assert cell_position((), 7) == (0, 7)
    # A definition ends in its own cell at most.
    assert cell_lines(nb.cells, 3, 40) == (3, 0, 5) and cell_lines(nb.cells, 10, 12) == (5, 1, 3)


def test_kernel_language_aliases_and_default() -> None:
    assert kernel_language(notebook([], "R").encode()) == "R"
    assert kernel_language(notebook([], None, language_info={"name": "julia"}).encode()) == "julia"
    assert kernel_language(notebook([], None).encode()) == notebooks.DEFAULT_LANGUAGE
    assert notebooks.resolve_language("C++17", ["cpp", "python"]) == "cpp"
    assert notebooks.resolve_language("R", ["r"]) == "r"
    # The language decides the magics: only IPython's are blanked.
    r = read_notebook(notebook([code("%%R\nx <- 1\n")], "R").encode(), "r")
    assert r.source == b"%%R\nx <- 1\n"


def test_magics_blanked_but_python_that_looks_like_them_kept() -> None:
    cell = (
        "%time x = 1\nfiles = !ls\nnp.array?\nmessage = ('%s'\n    % x)\nok = (x\n    != 2)\n# a comment that asks?\n"
    )
    text = notebooks.blank_magics(cell)
    assert text.split("\n") == [
        "",
        "",
        "",
        "message = ('%s'",
        "    % x)",
        "ok = (x",
        "    != 2)",
        "# a comment that asks?",
        "",
    ]
    assert notebooks.blank_magics("%%bash\necho hi\ndef f(): pass\n") == "\n\n\n"
    assert notebooks.blank_magics("%%time\ndef f(): pass\n") == "\ndef f(): pass\n"


def test_outputs_never_reach_the_map_and_hostile_json_is_an_error_not_a_crash() -> None:
    for bad in (
        b"",
        b"not json",
        b'{"cells": [',
        b'{"cells": [{"cell_type": "code", "source": 3}]}',
        b'{"cells": [{"cell_type": "code", "source": ["x", 3]}]}',
        b'{"cells": [}',
        b'{"cells": []} trailing',
        b'{"metadata": {}}',
        b'["cells"]',
        b'{"worksheets": [], "cells": []}',
        b'{"cells": [{"cell_type": "code", "source": "x = 1", "outputs": [[[[}]}',
    ):
        with pytest.raises(NotebookError):
            read_notebook(bad)
    # Nesting a million deep: an error (the decoder's bound), at once, not a crash.
    deep = b'{"cells": [{"cell_type": "code", "source": "x = 1", "outputs": ' + b"[" * 1_000_000 + b"]" * 1_000_000
    started = time.monotonic()
    with pytest.raises(NotebookError):
        read_notebook(deep + b"}]}")
    assert time.monotonic() - started < 10
    # Markdown, raw cells and outputs are never part of the source.
    source = read_notebook(ANALYSIS.encode()).source
    assert b"output_type" not in source and b"stream" not in source
    # A lone surrogate (escaped or raw) and a NUL in a cell: still UTF-8, no NUL for tree-sitter.
    escaped = read_notebook(b'{"cells": [{"cell_type": "code", "source": "s = \'\\ud800\'\\u0000"}]}')
    assert escaped.source == b"s = '?' \n"
    raw = read_notebook(notebook([code("s = '\ud800'\0\n")]).encode("utf-8", "surrogatepass"))
    raw.source.decode("utf-8")
    assert b"\0" not in raw.source


# --- the API -----------------------------------------------------------------------------------


def test_api_maps_code_cells_with_cells_and_links_to_modules(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    with RepoMap(root, overrides=_overrides(tmp_path)) as repo:
        result = repo.map(mode="static", tokens=4_000)
        assert not [d for d in result.diagnostics if d.path.endswith(".ipynb")], result.diagnostics
        shown = _symbols(result, "notebooks/analysis.ipynb")
        assert shown == {"TrendModel": (3, 1, 6), "fit": (3, 4, 6), "run_pipeline": (5, 2, 4)}
        for lookalike in ("markdown_lookalike", "output_lookalike", "raw_lookalike"):
            assert lookalike not in result.text
        block = result.text.split("notebooks/analysis.ipynb:\n", 1)[1]
        assert block.startswith(
            "⋮ cell 3\nclass TrendModel: # Fits a trend to a series.\n⋮\n    def fit(self, series):\n"
            "⋮ cell 5\ndef run_pipeline(path):\n⋮\n"
        ), block
        (nb_file,) = [f for f in result.files if f.path == "notebooks/analysis.ipynb"]
        assert nb_file.language == "python"
        found = edges(repo)
        # The notebook uses the package, and a module uses the notebook's class: one graph.
        assert ("notebooks/analysis.ipynb", "pkg/features.py", "normalize_series") in found
        assert ("notebooks/analysis.ipynb", "pkg/features.py", "load_measurements") in found
        assert ("pkg/consumer.py", "notebooks/analysis.ipynb", "TrendModel") in found
        # Asked about the notebook, the map puts first what it uses and what uses it.
        focused = repo.map(mode="static", tokens=4_000, chat_files=["notebooks/analysis.ipynb"])
        order = [f.path for f in focused.files]
        assert set(order[:2]) == {"pkg/features.py", "pkg/consumer.py"}, order


def test_other_kernel_languages_map_in_their_own_grammar(tmp_path: Path) -> None:
    r_notebook = notebook(
        [markdown("Fit it"), code("fit_trend <- function(series) {\n  lm(series ~ seq_along(series))\n}\n")],
        "R",
        language_info={"name": "R"},
    )
    julia = notebook([code("function smooth_series(x)\n    x\nend\n")], None, language_info={"name": "julia"})
    wolfram = notebook([code("f[x_] := x^2")], "Wolfram Language")
    root = tmp_path / "repo"
    write_files(root, {"r.ipynb": r_notebook, "j.ipynb": julia, "w.ipynb": wolfram})
    with RepoMap(root, overrides=_overrides(tmp_path)) as repo:
        result = repo.map(mode="static", tokens=2_000)
        languages = {f.path: f.language for f in result.files}
        assert languages["r.ipynb"] == "r" and languages["j.ipynb"] == "julia"
        assert _symbols(result, "r.ipynb") == {"fit_trend": (2, 1, 3)}
        assert _symbols(result, "j.ipynb") == {"smooth_series": (1, 1, 3)}
        kinds = {(d.path, d.kind) for d in result.diagnostics}
        assert ("w.ipynb", "notebook_language") in kinds and "w.ipynb" not in languages


def test_hostile_notebooks_are_diagnostics_and_the_map_still_comes(tmp_path: Path) -> None:
    big_output = "iVBORw0KGgo" * 400_000  # 4.4 MB of base64 on one line: not "minified", not read
    root = _repo(
        tmp_path,
        **{
            "broken.ipynb": '{"cells": [{"cell_type": "code", "source": "def half',
            "deep.ipynb": '{"cells": ' + "[" * 200_000 + "]" * 200_000 + "}",
            "escapes.ipynb": notebook([code("def evil_\x1b_name():\n    '\u202e'\n\ndef ok_after():\n    pass\n")]),
            "plots.ipynb": notebook(
                [
                    code(
                        "def plot_it():\n    pass\n",
                        outputs=[{"data": {"image/png": big_output}, "output_type": "display_data"}],
                    )
                ]
            ),
            "toomuchcode.ipynb": notebook([code("x = 1\n" * 50_000)]),
        },
    )
    # A notebook larger than max_notebook_bytes: never read (a sparse file, 3 GB by its size).
    with open(root / "huge.ipynb", "wb") as handle:
        handle.truncate(3 * 2**30)
    started = time.monotonic()
    with RepoMap(root, overrides=_overrides(tmp_path, max_file_bytes=200_000)) as repo:
        result = repo.map(mode="static", tokens=4_000)
    assert time.monotonic() - started < 60
    kinds = {(d.path, d.kind) for d in result.diagnostics}
    assert {
        ("broken.ipynb", "notebook_unreadable"),
        ("deep.ipynb", "notebook_unreadable"),
        ("huge.ipynb", "too_large"),
        ("toomuchcode.ipynb", "too_large"),
    } <= kinds, kinds
    (huge,) = [d for d in result.diagnostics if d.path == "huge.ipynb"]
    assert "max_notebook_bytes" in huge.message
    (code_size,) = [d for d in result.diagnostics if d.path == "toomuchcode.ipynb"]
    assert "code cells" in code_size.message and "max_file_bytes=200000" in code_size.message
    assert "plot_it" in result.text and "iVBOR" not in result.text
    assert "ok_after" in result.text and "\x1b" not in result.text and "\u202e" not in result.text
    assert "def evil_\\x1b_name():" in result.text
    assert "notebooks/analysis.ipynb:" in result.text  # the rest is mapped as ever


def test_cache_keys_notebooks_apart_and_output_edits_keep_the_map_right(tmp_path: Path) -> None:
    # The same bytes as a notebook and as a .py file: two parses, two different answers.
    root = _repo(tmp_path, **{"copy_of_notebook.py": ANALYSIS})
    with RepoMap(root, overrides=_overrides(tmp_path)) as repo:
        first = repo.map(mode="static", tokens=4_000)
    assert "run_pipeline" in _symbols(first, "notebooks/analysis.ipynb")
    # An output edited (the code is not): the next process maps the same.
    path = root / "notebooks/analysis.ipynb"
    path.write_text(ANALYSIS.replace("output_lookalike", "output_changed_lookalike"))
    with RepoMap(root, overrides=_overrides(tmp_path)) as repo:
        again = repo.map(mode="static", tokens=4_000)
        assert _symbols(again, "notebooks/analysis.ipynb") == _symbols(first, "notebooks/analysis.ipynb")
        assert "lookalike" not in again.text
        # Code edited: a markdown cell added first shifts every cell, and a new definition shows.
        data = json.loads(path.read_text())
        data["cells"].insert(0, markdown("Intro"))
        data["cells"][-1]["source"].append("\ndef export_results(model):\n    return model.slope\n")
        path.write_text(json.dumps(data))
        edited = repo.map(mode="static", tokens=4_000)
        shown = _symbols(edited, "notebooks/analysis.ipynb")
        assert shown["TrendModel"] == (4, 1, 6) and shown["export_results"] == (6, 6, 7), shown
        assert "notebooks/analysis.ipynb" in edited.changes.changed


@pytest.mark.asyncio
async def test_watch_sees_a_notebook_saved(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    path = root / "notebooks/analysis.ipynb"
    async with AsyncRepoMap(root, overrides=_overrides(tmp_path, watch_debounce_ms=200)) as repo:
        await repo.map(mode="static", tokens=4_000)
        events = repo.events()
        await repo.watch()
        data = json.loads(path.read_text())
        data["cells"].append(code("def saved_while_watched():\n    pass\n"))
        path.write_text(json.dumps(data, indent=1))

        async def changed() -> None:
            async for event in events:
                if event.kind == "files_changed" and "notebooks/analysis.ipynb" in event.paths:
                    return

        await asyncio.wait_for(changed(), 30)
        result = await repo.map(mode="static", tokens=4_000)
        assert _symbols(result, "notebooks/analysis.ipynb")["saved_while_watched"] == (6, 1, 2)
        assert "⋮ cell 6\ndef saved_while_watched():" in result.text
        await repo.unwatch()


def test_language_servers_are_never_sent_notebooks(tmp_path: Path) -> None:
    """A hybrid map with a real (fault, ``ok``) server that logs every document it is sent: the
    .py files are opened and asked about, the notebook never is; its uses stay name matches."""
    log = tmp_path / "server.log"
    registry = registry_with_fault_server(tmp_path, "ok", extra_args=("--log", str(log)))
    # Two definers of load_measurements: name matching must guess, so the server is asked.
    root = _repo(tmp_path, **{"pkg/legacy.py": "def load_measurements(path):\n    return []\n"})
    with RepoMap(root, registry=registry, overrides=_overrides(tmp_path)) as repo:
        result = repo.map(mode="hybrid", server_wait=10, tokens=4_000, mentioned_files=["notebooks/analysis.ipynb"])
        assert result.servers["python"].state.value == "ready", result.servers
        (nb_file,) = [f for f in result.files if f.path == "notebooks/analysis.ipynb"]
        assert {s.provenance for s in nb_file.symbols} == {"tree-sitter"} and nb_file.language == "python"
        found = edges(repo)
        assert found[("notebooks/analysis.ipynb", "pkg/features.py", "load_measurements")] == "name-match"
        assert found[("notebooks/analysis.ipynb", "pkg/legacy.py", "load_measurements")] == "name-match"
        assert repo.tags()["notebooks/analysis.ipynb"].cells == ((0, 2), (3, 3), (9, 5))
    opened = [line.split(":", 1)[1] for line in log.read_text().splitlines() if line.startswith("opened:")]
    assert any(uri.endswith("/pkg/report.py") for uri in opened), opened
    assert not [uri for uri in opened if ".ipynb" in uri], opened


# --- the CLI and MCP -----------------------------------------------------------------------------


def test_cli_text_and_json(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    base = ["map", str(root), "--mode", "static", "--tokens", "4000", "--cache-dir", str(tmp_path / "c")]
    proc = run_cli(*base)
    assert proc.returncode == 0, proc.stderr
    assert "notebooks/analysis.ipynb:\n⋮ cell 3\nclass TrendModel:" in proc.stdout
    proc = run_cli(*base, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    jsonschema.validate(document, json.loads(SCHEMA.read_text()))
    (nb_file,) = [f for f in document["files"] if f["path"] == "notebooks/analysis.ipynb"]
    assert [(s["name"], s["cell"], s["line"], s["end_line"]) for s in nb_file["symbols"]] == [
        ("TrendModel", 3, 1, 6),
        ("fit", 3, 4, 6),
        ("run_pipeline", 5, 2, 4),
    ]
    (module,) = [f for f in document["files"] if f["path"] == "pkg/features.py"]
    assert all("cell" not in s for s in module["symbols"])


def test_mcp_repo_map_shows_cells(tmp_path: Path) -> None:
    root = _repo(tmp_path)

    async def main() -> tuple[str, dict[str, Any], dict[str, Any]]:
        async with connect(root, tmp_path) as session:
            text, summary = await ok(session, "repo_map", mode="static", tokens=4000, mentioned_idents=["run_pipeline"])
            _, info = await ok(session, "symbol_info", name="TrendModel")
            return text, summary, info

    text, summary, info = anyio.run(main)
    # Its doc is read from the code cells (as parsed), never from the notebook's JSON lines.
    assert info["definitions"][0]["doc"] == "Fits a trend to a series."
    assert "notebooks/analysis.ipynb:" in text and "⋮ cell 5\ndef run_pipeline(path):" in text
    assert "lookalike" not in text
    assert any(f["path"] == "notebooks/analysis.ipynb" and f["symbols"] == 3 for f in summary["files"])


def test_clones_reads_a_notebooks_code_and_says_its_cells(tmp_path: Path) -> None:
    """Clone detection re-parses files: a notebook's code cells, not its JSON (whose lines the
    tags' positions are not in), with positions as cell and line."""
    body = "".join(f"    total_{i} = values[{i}] * scale + offset\n" for i in range(6)) + "    return total_0\n"
    twin = [
        markdown("# Twins\n"),
        code(f"def first(values, scale, offset):\n{body}"),
        code(f"def second(values, scale, offset):\n{body}"),
    ]
    root = tmp_path / "repo"
    write_files(root, {"twins.ipynb": notebook(twin)})
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        groups = repo.clones()
    members = sorted((m.name, m.cell, m.line, m.end_line) for g in groups for m in g.members)
    assert members == [("first", 2, 1, 8), ("second", 3, 1, 8)]
    assert groups[0].to_json()["members"][0]["cell"] in (2, 3)
