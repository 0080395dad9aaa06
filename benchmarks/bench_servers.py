"""Language-server benchmark: each server on a real project of its language, same machine, same run.

    python benchmarks/bench_servers.py [--repeats 3] [--first-repeats 10] [--corpus NAME] [--server NAME] [--at REV]

Corpora (scratch copies under benchmarks/.work/server-corpora/, never committed): click from
site-packages (Python); rich, hono (TypeScript), jq (C) and pflag (Go) from the search tool's
bare repository mirrors under /work/.mirror (HEAD checked out); ky only when its mirror is there.

Per server: ``--repeats`` full probes (``probe_server.py``: readiness, everything a waiting map
waits for, edges, documentSymbol symbols, hovers, peak RSS), then ``--first-repeats`` probes of
the two cold first maps only (static vs hybrid with ``server_wait=0``), alternating which one
comes first. Every probe is a fresh process; a ratio is taken within one process. The 1/5/15
minute load averages are recorded before and after each probe (the machine's two cores are
shared with other agents). Raw JSON: ``benchmarks/.work/bench_servers.json``.

``--at REV``: measure hybridmap as committed at REV (``git archive`` of the package, its configs
and queries into ``benchmarks/.work/src-<sha>``, put first on the probes' ``PYTHONPATH``), so
that commits landing in the shared tree during a long run do not mix code versions.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import extract_mirror  # noqa: E402

WORK = HERE / ".work"
CORPORA_DIR = WORK / "server-corpora"
PYTHON = ["ty", "basedpyright", "pylsp", "pyrefly", "jedi-language-server"]
TYPESCRIPT = ["typescript-language-server", "tsgo"]
CORPORA: dict[str, list[str]] = {
    "click": PYTHON,
    "rich": PYTHON,
    "hono": TYPESCRIPT,
    "ky": TYPESCRIPT,
    "jq": ["clangd"],
    # gin needs third-party modules that cannot be fetched offline (gopls: "no package
    # metadata"); pflag has no dependencies.
    "pflag": ["gopls"],
    # Issue 16's servers, each on a real project of its language (docs/language-servers.md, "The
    # servers, measured"). cobra's and walkdir's dependencies are fetched first (go mod download,
    # cargo fetch: set-up time, with network); elm-spa's packages cannot be (package.elm-lang.org
    # is unreachable), so elm-spa-nodeps is elm-spa with elm.json's dependencies emptied.
    "cobra": ["gopls"],
    "slim": ["intelephense"],
    "bats": ["bash-language-server"],
    "jsoup": ["jdtls"],
    "vue-realworld": ["vue-typescript-plugin"],
    "svelte-realworld": ["svelte-language-server"],
    "elm-spa": ["elm-language-server"],
    "elm-spa-nodeps": ["elm-language-server"],
    "solmate": ["solidity-language-server"],
    "json-fortran": ["fortls"],
    "walkdir": ["rust-analyzer"],
}
MIRRORS = {
    "rich": "Textualize+rich",
    "hono": "honojs+hono",
    "ky": "sindresorhus+ky",
    "jq": "jqlang+jq",
    "pflag": "spf13+pflag",
    "cobra": "spf13+cobra",
    "slim": "slimphp+Slim",
    "bats": "bats-core+bats-core",
    "jsoup": "jhy+jsoup",
    "vue-realworld": "gothinkster+vue-realworld-example-app",
    "svelte-realworld": "sveltejs+realworld",
    "elm-spa": "rtfeldman+elm-spa-example",
    "elm-spa-nodeps": "rtfeldman+elm-spa-example",
    "solmate": "transmissions11+solmate",
    "json-fortran": "jacobwilliams+json-fortran",
    "walkdir": "BurntSushi+walkdir",
}
#: Only these paths of a mirror (json-fortran's test inputs include a blob the mirror lacks).
MIRROR_PATHS = {"json-fortran": ["src", "fpm.toml"]}


def prepare(name: str) -> Path | None:
    dest = CORPORA_DIR / name
    if dest.exists():
        return dest
    if name == "click":
        import click

        shutil.copytree(Path(click.__file__).parent, dest / "click", ignore=shutil.ignore_patterns("__pycache__"))
        return dest
    mirror = Path("/work/.mirror") / MIRRORS[name] / "repo"
    if not mirror.exists():
        return None
    if name in MIRROR_PATHS:
        dest.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "--git-dir", str(mirror), "archive", "HEAD", *MIRROR_PATHS[name]], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    else:
        extract_mirror(mirror, dest)
    if name == "elm-spa-nodeps":
        manifest = dest / "elm.json"
        data = json.loads(manifest.read_text())
        data["dependencies"] = {"direct": {}, "indirect": {}}
        data["test-dependencies"] = {"direct": {}, "indirect": {}}
        manifest.write_text(json.dumps(data, indent=4))
    fetch = {"cobra": ["go", "mod", "download"], "walkdir": ["cargo", "fetch"]}.get(name)
    if fetch is not None:  # set-up time: the servers never download at map time
        subprocess.run(fetch, cwd=dest, check=False, capture_output=True, timeout=600)
    return dest


def pinned_source(rev: str) -> tuple[str, Path]:
    """hybridmap as committed at ``rev``, extracted once; (full sha, directory)."""
    top = HERE.parent
    sha = subprocess.run(
        ["git", "-C", str(top), "rev-parse", rev], check=True, capture_output=True, text=True
    ).stdout.strip()
    dest = WORK / f"src-{sha[:12]}"
    if not dest.exists():
        part = dest.with_suffix(".part")
        shutil.rmtree(part, ignore_errors=True)
        part.mkdir(parents=True)
        # Before the package data moved into hybridmap/, lsp_configs/ and queries/ sat beside it.
        data = subprocess.run(
            ["git", "-C", str(top), "ls-tree", "--name-only", sha, "lsp_configs", "queries"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        archive = subprocess.run(
            ["git", "-C", str(top), "archive", sha, "hybridmap", *data], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(part)], input=archive, check=True)
        (part / ".servers").symlink_to(top / ".servers")  # install dirs are found beside the package
        part.rename(dest)
    return sha, dest


SOURCE_ENV: dict[str, str] = {}


def versions() -> dict[str, str]:
    """Each server's own version output (typescript-language-server's initialize names none)."""
    top = HERE.parent
    path = os.pathsep.join(
        [
            str(Path(sys.prefix) / "bin"),
            str(top / ".servers/node/node_modules/.bin"),
            str(top / ".servers/bin"),
            os.environ.get("PATH", ""),
        ]
    )
    commands = {
        "ty": ["ty", "--version"],
        "basedpyright": ["basedpyright", "--version"],
        "pylsp": ["pylsp", "--version"],
        "typescript-language-server": ["typescript-language-server", "--version"],
        "tsgo": ["tsgo", "--version"],
        "clangd": ["clangd", "--version"],
        "gopls": ["gopls", "version"],
        "go": ["go", "version"],
        "node": ["node", "--version"],
    }
    out = {}
    for name, cmd in commands.items():
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30, env={**os.environ, "PATH": path})
            out[name] = " ".join((proc.stdout or proc.stderr).split())[:80]
        except (OSError, subprocess.TimeoutExpired) as exc:
            out[name] = f"unavailable: {exc}"
    ts = top / ".servers/node/node_modules/typescript/package.json"
    if ts.exists():
        out["typescript"] = json.loads(ts.read_text())["version"]
    return out


def probe(root: Path, server: str, *extra: str) -> dict[str, Any] | None:
    proc = subprocess.run(
        [sys.executable, str(HERE / "probe_server.py"), str(root), server, str(WORK / "server-cache"), *extra],
        capture_output=True,
        text=True,
        env={**os.environ, **SOURCE_ENV},
    )
    if proc.returncode != 0:
        print(f"{server} on {root.name} failed:\n{proc.stderr[-2000:]}", flush=True)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def med(values: list[float]) -> float:
    values = [v for v in values if isinstance(v, (int, float))]
    return statistics.median(values) if values else float("nan")


def summarize(
    name: str, files: int, server: str, full: list[dict[str, Any]], first: list[dict[str, Any]]
) -> dict[str, Any]:
    def m(get: Any) -> float:
        out = []
        for run in full:
            with contextlib.suppress(KeyError, TypeError):
                out.append(get(run))
        return med(out)

    ratios = [r["first_map_hybrid_s"] / r["first_map_static_s"] for r in first]
    handoff = [r["first_map_hybrid_marks"]["back_to_caller"] for r in first]
    handoff_static = [r["first_map_static_marks"]["back_to_caller"] for r in first]
    return {
        "corpus": name,
        "files": files,
        "server": server,
        "version": full[0]["version"] if full else "",
        "state": full[0]["state"] if full else "",
        "ready": m(lambda r: r["seconds_to_ready"]),
        "resolve": m(lambda r: r["resolve_all_s"]),
        "drain": m(lambda r: r["drain_s"]),
        "pairs_amb": m(
            lambda r: r["pairs_at_wait"].get("ambiguous_in_repo", 0) + r["pairs_at_wait"].get("ambiguous_outside", 0)
        ),
        "pairs_gen": m(
            lambda r: r["pairs_at_wait"].get("generic_in_repo", 0) + r["pairs_at_wait"].get("generic_outside", 0)
        ),
        "cand_amb": m(lambda r: r["pairs_at_wait"].get("candidates_ambiguous", 0)),
        "cand_gen": m(lambda r: r["pairs_at_wait"].get("candidates_generic", 0)),
        "requests": m(lambda r: r["stats"]["lsp_asked"]),
        "empty": m(lambda r: r["stats"]["lsp_empty"]),
        "errors": m(lambda r: r["stats"]["lsp_errors"]),
        "lsp_edges": m(lambda r: r["edges"].get("lsp", 0)),
        "nm_edges": m(lambda r: r["edges"].get("name-match", 0)),
        "nm_static": m(lambda r: r["name_match_edges_static"]),
        "symbol_files_wait": m(lambda r: r["stats"]["lsp_symbol_files"]),
        "symbol_files": m(lambda r: r["stats_after_drain"]["lsp_symbol_files"]),
        "symbol_errors": m(lambda r: r["stats_after_drain"]["lsp_symbol_errors"]),
        "symbols_static": m(lambda r: r["symbols_static"]),
        "confirmed": m(lambda r: r["symbols_after_drain"].get("tree-sitter+lsp", 0)),
        "added": m(lambda r: r["symbols_after_drain"].get("lsp", 0)),
        "with_detail": m(lambda r: r["symbols_after_drain"].get("with_detail", 0)),
        "hovers": m(lambda r: r["stats"]["lsp_hovers"]),
        "hover_errors": m(lambda r: r["stats"]["lsp_hover_errors"]),
        "shown_detail": m(lambda r: r["shown_with_detail"]),
        "shown": m(lambda r: r["shown_symbols"]),
        "rss": m(lambda r: r["peak_server_rss_mb"]),
        "full_first_static": m(lambda r: r["first_map_static_s"]),
        "full_first_hybrid": m(lambda r: r["first_map_hybrid_s"]),
        "first_n": len(first),
        "first_static": med([r["first_map_static_s"] for r in first]),
        "first_hybrid": med([r["first_map_hybrid_s"] for r in first]),
        "ratio": med(ratios),
        "ratio_min": min(ratios, default=float("nan")),
        "ratio_max": max(ratios, default=float("nan")),
        "ratio_sh": med([x for x, r in zip(ratios, first, strict=True) if r["order"] == "sh"]),
        "ratio_hs": med([x for x, r in zip(ratios, first, strict=True) if r["order"] == "hs"]),
        "handoff_hybrid_ms": 1000 * med(handoff),
        "handoff_static_ms": 1000 * med(handoff_static),
        "loads": [(r["load_before"], r["load_after"]) for r in full + first],
        "runs": full,
        "first_runs": first,
    }


def print_tables(rows: list[dict[str, Any]], repeats: int) -> None:
    print(f"\nFull probes: medians of {repeats} runs\n")
    print(
        "| corpus | server | ready (s) | waiting map (s) | pairs answered: ambiguous / generic (asked) |"
        " definition requests / empty / errors | edges lsp / name-match (static name-match) |"
        " symbol files | symbols confirmed / added (static) | hovers | peak RSS |"
    )
    print("|---|---|---:|---:|---|---|---|---:|---|---:|---:|")
    for r in rows:
        print(
            f"| {r['corpus']} ({r['files']} files) | {r['server']} | {r['ready']:.2f} |"
            f" {r['resolve']:.2f} | {r['pairs_amb']:.0f} / {r['pairs_gen']:.0f}"
            f" ({r['cand_amb']:.0f} / {r['cand_gen']:.0f}) |"
            f" {r['requests']:.0f} / {r['empty']:.0f} / {r['errors']:.0f} |"
            f" {r['lsp_edges']:.0f} / {r['nm_edges']:.0f} ({r['nm_static']:.0f}) |"
            f" {r['symbol_files']:.0f} |"
            f" {r['confirmed']:.0f} / {r['added']:.0f} ({r['symbols_static']:.0f}) |"
            f" {r['hovers']:.0f} | {r['rss']:.0f} MB |"
        )
    print("\nFirst map, cold cache, fresh object: hybrid (server_wait 0) / static, ratio within one process\n")
    print(
        "| corpus | server | runs | static (s) | hybrid (s) | ratio median [min–max] | static first / hybrid first |"
        " loop→caller hand-off hybrid / static (ms) |"
    )
    print("|---|---|---:|---:|---:|---|---|---|")
    for r in rows:
        print(
            f"| {r['corpus']} | {r['server']} | {r['first_n']} | {r['first_static']:.3f} | {r['first_hybrid']:.3f} |"
            f" {r['ratio']:.2f} [{r['ratio_min']:.2f}–{r['ratio_max']:.2f}] |"
            f" {r['ratio_sh']:.2f} / {r['ratio_hs']:.2f} |"
            f" {r['handoff_hybrid_ms']:.1f} / {r['handoff_static_ms']:.1f} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--first-repeats", type=int, default=10)
    ap.add_argument("--corpus", action="append", default=None)
    ap.add_argument("--server", action="append", default=None)
    ap.add_argument("--out", default=str(WORK / "bench_servers.json"))
    ap.add_argument("--at", default=None, help="measure hybridmap as committed at this revision")
    args = ap.parse_args()
    CORPORA_DIR.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(
        ["git", "-C", str(HERE.parent), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    if args.at:
        commit, source = pinned_source(args.at)
        SOURCE_ENV["PYTHONPATH"] = os.pathsep.join([str(source), os.environ.get("PYTHONPATH", "")])
    print(
        f"hybridmap at {commit}"
        + (f" (pinned copy {SOURCE_ENV['PYTHONPATH']})" if args.at else " (working tree, may change during the run)"),
        flush=True,
    )
    server_versions = versions()
    print(json.dumps(server_versions), flush=True)
    rows = []
    for name in args.corpus or list(CORPORA):
        root = prepare(name)
        if root is None:
            print(f"skipping {name}: no mirror under /work/.mirror", flush=True)
            continue
        files = sum(1 for p in root.rglob("*") if p.is_file())
        for server in CORPORA[name]:
            if args.server and server not in args.server:
                continue
            full = [r for r in (probe(root, server) for _ in range(args.repeats)) if r]
            for r in full:
                print(
                    f"{name} {server}: ready {r['seconds_to_ready']} s, waiting map {r['resolve_all_s']:.2f} s,"
                    f" load {r['load_before']} -> {r['load_after']}",
                    flush=True,
                )
            first = []
            for i in range(args.first_repeats):
                r = probe(root, server, "--first-only", "--order", "sh" if i % 2 == 0 else "hs")
                if r:
                    first.append(r)
                    print(
                        f"{name} {server} first maps ({r['order']}): static {r['first_map_static_s']:.3f} s,"
                        f" hybrid {r['first_map_hybrid_s']:.3f} s, load {r['load_before']} -> {r['load_after']}",
                        flush=True,
                    )
            if full and first:
                rows.append(summarize(name, files, server, full, first))
                rows[-1]["server_version"] = server_versions.get(server, "")
                rows[-1]["commit"] = commit
    print_tables(rows, args.repeats)
    Path(args.out).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
