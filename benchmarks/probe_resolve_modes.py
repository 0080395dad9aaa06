"""Definition at each use site vs references on each definition, against one running server.

    python benchmarks/probe_resolve_modes.py ROOT SERVER [--repeats 3] [--at REV]  # driver: fresh processes
    python benchmarks/probe_resolve_modes.py ROOT SERVER --order dr|rd --once  # one run, one JSON line

The pairs are those :func:`hybridmap.sources.lsp.resolver.candidate_pairs` produces for the
corpus, restricted to the ambiguous ones (names defined in 2 or more files), each with its
use sites (up to ``lsp_sites_per_reference``). Both methods run against the same server
process, one after the other (``--order dr``: definitions first), each with
``lsp_concurrency`` requests in flight and the same ``didOpen`` bookkeeping as the product:

- *definition*: ``textDocument/definition`` at every site of every pair (the site's file is
  opened first); a pair's targets are the repository files the answers point into (a local
  definition beside a repository target is dropped, as the resolver does);
- *references*: ``textDocument/references`` (declaration excluded) at the name of every
  definition of every ambiguous identifier (the definer's file is opened first). A site is
  resolved to the definer files whose reference lists contain it (*site level*); the looser
  *file level* maps every referencing file back to the pair (file, identifier).

Agreement compares target sets pair by pair where the definition method got an answer
(an answer only outside the repository is the empty set on both sides). The driver writes
every run's JSON to ``benchmarks/.work/resolve_modes-<corpus>-<server>.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import unquote, urlparse

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from lsprotocol import types as T  # noqa: E402
from probe_server import registry_with_only, uptime  # noqa: E402

from hybridmap import AsyncRepoMap  # noqa: E402
from hybridmap.errors import ServerError  # noqa: E402
from hybridmap.sources.lsp.resolver import candidate_pairs  # noqa: E402
from hybridmap.sources.lsp.source import _warm_file  # noqa: E402
from hybridmap.sources.lsp.symbols import utf8_col, utf16_col  # noqa: E402

Pair = tuple[str, str]
Site = tuple[str, int, int]  # (path, 0-based line, UTF-8 column)


def _relative(root: Path, uri: str, known: set[str]) -> str | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    try:
        rel = Path(unquote(parsed.path)).resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        return None
    return rel if rel in known else None


def _locations(result: Any) -> list[tuple[str, Any]]:
    """(uri, range) of a definition or references answer (Location or LocationLink)."""
    if result is None:
        return []
    out = []
    for item in result if isinstance(result, list) else [result]:
        uri = getattr(item, "uri", None) or getattr(item, "target_uri", None)
        rng = getattr(item, "range", None) or getattr(item, "target_selection_range", None)
        if isinstance(uri, str):
            out.append((uri, rng))
    return out


class Run:
    def __init__(
        self, repo: AsyncRepoMap, collected: Any, session: Any, languages: set[str], pairs: list[tuple[Pair, tuple]]
    ) -> None:
        self.repo = repo
        self.session_languages = languages
        self.root = repo.root
        self.collected = collected
        self.session = session
        self.documents = repo._lsp.documents
        self.pairs = pairs
        self.known = set(collected.shas)
        self.concurrency = repo.settings.lsp_concurrency

    def _position(self, lines: list[bytes], line: int, col: int) -> T.Position:
        character = col if self.session.position_encoding == "utf-8" else utf16_col(lines[line], col)
        return T.Position(line=line, character=character)

    async def definitions(self) -> dict[str, Any]:
        semaphore = asyncio.Semaphore(self.concurrency)
        per_pair: dict[Pair, dict[str, Any]] = {}
        counts: dict[str, Any] = {"requests": 0, "errors": 0, "empty": 0, "error_messages": []}

        async def one(pair: Pair, sites: tuple) -> None:
            async with semaphore:
                lines = self.documents.ensure_open(self.session, pair[0])
                if lines is None:
                    return
                uri = self.documents.uri(pair[0])
                answered, targets, site_targets = False, set(), {}
                for line, col in sites:
                    if line >= len(lines):
                        continue
                    counts["requests"] += 1
                    try:
                        result = await self.session.request(
                            T.TEXT_DOCUMENT_DEFINITION,
                            T.DefinitionParams(
                                text_document=T.TextDocumentIdentifier(uri=uri),
                                position=self._position(lines, line, col),
                            ),
                        )
                    except ServerError as exc:
                        counts["errors"] += 1
                        if len(counts["error_messages"]) < 5:
                            counts["error_messages"].append(str(exc)[:300])
                        continue
                    found = set()
                    for location_uri, _ in _locations(result):
                        answered = True
                        rel = _relative(self.root, location_uri, self.known)
                        if rel is not None:
                            found.add(rel)
                    site_targets[(line, col)] = found
                    targets |= found
                if not answered:
                    counts["empty"] += 1
                if len(targets) > 1:
                    targets.discard(pair[0])
                per_pair[pair] = {"answered": answered, "targets": targets, "sites": site_targets}

        start = time.perf_counter()
        await asyncio.gather(*(one(pair, sites) for pair, sites in self.pairs))
        return {
            "seconds": time.perf_counter() - start,
            **counts,
            "per_pair": per_pair,
            "server_state_after": str(self.session.state),
        }

    async def references(self) -> dict[str, Any]:
        names = {name for (_, name), _ in self.pairs}
        definitions: list[tuple[str, str, int, int]] = []  # (definer path, name, line, col)
        for path, tags in self.collected.tags.items():
            if self.collected.languages.get(path) not in self.session_languages:
                continue
            for symbol in tags.symbols:
                if symbol.name in names:
                    definitions.append((path, symbol.name, symbol.name_line, symbol.name_col))
        semaphore = asyncio.Semaphore(self.concurrency)
        by_site: dict[Site, set[str]] = defaultdict(set)
        by_file: dict[Pair, set[str]] = defaultdict(set)
        counts: dict[str, Any] = {
            "requests": 0,
            "errors": 0,
            "empty": 0,
            "locations": 0,
            "definitions": len(definitions),
            "error_messages": [],
        }

        async def one(path: str, name: str, line: int, col: int) -> None:
            async with semaphore:
                lines = self.documents.ensure_open(self.session, path)
                if lines is None or line >= len(lines):
                    return
                counts["requests"] += 1
                try:
                    result = await self.session.request(
                        T.TEXT_DOCUMENT_REFERENCES,
                        T.ReferenceParams(
                            text_document=T.TextDocumentIdentifier(uri=self.documents.uri(path)),
                            position=self._position(lines, line, col),
                            context=T.ReferenceContext(include_declaration=False),
                        ),
                    )
                except ServerError as exc:
                    counts["errors"] += 1
                    if len(counts["error_messages"]) < 5:
                        counts["error_messages"].append(str(exc)[:300])
                    return
                locations = _locations(result)
                counts["locations"] += len(locations)
                if not locations:
                    counts["empty"] += 1
                for location_uri, rng in locations:
                    rel = _relative(self.root, location_uri, self.known)
                    if rel is None or rng is None:
                        continue
                    ref_lines = self.documents.lines(rel) or []
                    ref_line = ref_lines[rng.start.line] if rng.start.line < len(ref_lines) else b""
                    ref_col = utf8_col(ref_line, rng.start.character, self.session.position_encoding)
                    by_site[(rel, rng.start.line, ref_col)].add(path)
                    by_file[(rel, name)].add(path)

        start = time.perf_counter()
        await asyncio.gather(*(one(*d) for d in definitions))
        seconds = time.perf_counter() - start
        per_pair = {}
        for pair, sites in self.pairs:
            site_level: set[str] = set()
            for line, col in sites:
                site_level |= by_site.get((pair[0], line, col), set())
            file_level = set(by_file.get(pair, set()))
            for targets in (site_level, file_level):
                if len(targets) > 1:
                    targets.discard(pair[0])
            per_pair[pair] = {"site": site_level, "file": file_level}
        return {"seconds": seconds, **counts, "per_pair": per_pair, "server_state_after": str(self.session.state)}


def agreement(defs: dict[Pair, Any], refs: dict[Pair, Any], level: str) -> dict[str, Any]:
    out = {
        "compared": 0,
        "agree": 0,
        "agree_in_repo": 0,
        "agree_outside": 0,
        "disagree": 0,
        "agree_cross_file": 0,
        "definition_within_references": 0,
        "references_within_definition": 0,
        "definition_unanswered": 0,
        "refs_found_when_definition_unanswered": 0,
        "examples": [],
    }
    for pair, ref in refs.items():
        d = defs.get(pair)
        if d is None or not d["answered"]:
            out["definition_unanswered"] += 1
            out["refs_found_when_definition_unanswered"] += bool(ref[level])
            continue
        out["compared"] += 1
        # What the graph sees: a target in the pair's own file makes no cross-file edge.
        out["agree_cross_file"] += d["targets"] - {pair[0]} == ref[level] - {pair[0]}
        # Strictly more on one side: e.g. clangd's definition stops at the header's declaration,
        # while references on both the declaration and the definition reach the .c file too.
        out["definition_within_references"] += bool(d["targets"] < ref[level])
        out["references_within_definition"] += bool(ref[level] < d["targets"])
        if d["targets"] == ref[level]:
            out["agree"] += 1
            out["agree_in_repo" if d["targets"] else "agree_outside"] += 1
        else:
            out["disagree"] += 1
            if len(out["examples"]) < 8:
                out["examples"].append(
                    {"pair": list(pair), "definition": sorted(d["targets"]), "references": sorted(ref[level])}
                )
    return out


async def one_run(root: str, server: str, order: str) -> dict[str, Any]:
    scratch = Path(tempfile.mkdtemp(prefix="resolve-modes-"))
    cache_dir = scratch / "cache"
    try:
        registry, languages = registry_with_only(server, scratch)
        import hybridmap

        out: dict[str, Any] = {
            "server": server,
            "order": order,
            "load_before": uptime(),
            "hybridmap": str(Path(hybridmap.__file__).parent),
        }
        async with AsyncRepoMap(
            root, registry=registry, overrides={"cache_dir": str(cache_dir)}, start_servers=False
        ) as repo:
            snapshot = await repo._refresh()
            base = repo._base.view(snapshot)
            collected = SimpleNamespace(tags=base.tags, languages=snapshot.languages, shas=snapshot.shas)
            present = sorted(set(languages) & set(snapshot.languages.values()))
            lsp = repo._lsp  # benchmark introspection: the product's pool and documents
            lsp.documents.refresh(snapshot.shas, snapshot.languages, [])
            start = time.perf_counter()
            for language in present:
                warm = _warm_file(snapshot, base, language)
                lsp.pool.ensure_started(
                    language, lambda s, warm=warm: lsp.documents.ensure_open(s, warm) if warm else None
                )
            await lsp.pool.wait_ready(present, 600)
            out["ready_s"] = time.perf_counter() - start
            session = lsp.pool.session(present[0])
            report = lsp.pool.reports.report(present[0])
            assert session is not None and session.is_ready, f"{server} not ready: {report}"
            out["version"] = session.version
            definers = repo._definers
            pairs = [
                (pair, sites)
                for pair, sites in candidate_pairs(
                    collected.tags, collected.languages, definers, set(present), set(), repo.settings
                )
                if definers[pair[1]] >= 2
            ]
            out["pairs"] = len(pairs)
            out["sites"] = sum(len(s) for _, s in pairs)
            out["identifiers"] = len({name for (_, name), _ in pairs})
            run = Run(repo, collected, session, set(present), pairs)
            results: dict[str, Any] = {}
            for mode in ("definition", "references") if order == "dr" else ("references", "definition"):
                results[mode] = await (run.definitions() if mode == "definition" else run.references())
            defs, refs = results["definition"], results["references"]
            for mode, result in results.items():
                out[mode] = {k: v for k, v in result.items() if k != "per_pair"}
            out["definition"]["pairs_answered"] = sum(1 for d in defs["per_pair"].values() if d["answered"])
            out["definition"]["pairs_in_repo"] = sum(1 for d in defs["per_pair"].values() if d["targets"])
            out["references"]["pairs_in_repo_site"] = sum(1 for r in refs["per_pair"].values() if r["site"])
            out["references"]["pairs_in_repo_file"] = sum(1 for r in refs["per_pair"].values() if r["file"])
            out["agreement_site"] = agreement(defs["per_pair"], refs["per_pair"], "site")
            out["agreement_file"] = agreement(defs["per_pair"], refs["per_pair"], "file")
        out["load_after"] = uptime()
        return out
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def drive(root: str, server: str, repeats: int, at: str | None) -> None:
    import os

    env = dict(os.environ)
    if at:
        from bench_servers import pinned_source

        commit, source = pinned_source(at)
        env["PYTHONPATH"] = os.pathsep.join([str(source), env.get("PYTHONPATH", "")])
        print(f"hybridmap at {commit}", flush=True)
    runs = []
    for i in range(repeats):
        order = "dr" if i % 2 == 0 else "rd"
        proc = subprocess.run(
            [sys.executable, __file__, root, server, "--order", order, "--once"],
            capture_output=True,
            text=True,
            env=env,
        )
        if proc.returncode != 0:
            print(f"run {i} failed:\n{proc.stderr[-3000:]}")
            continue
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        r = runs[-1]
        print(
            f"{order}: definition {r['definition']['seconds']:.2f} s / {r['definition']['requests']} req, "
            f"references {r['references']['seconds']:.2f} s / {r['references']['requests']} req, "
            f"agree (site) {r['agreement_site']['agree']}/{r['agreement_site']['compared']}, "
            f"load {r['load_before']} -> {r['load_after']}",
            flush=True,
        )
    if not runs:
        return
    work = HERE / ".work"
    work.mkdir(exist_ok=True)
    (work / f"resolve_modes-{Path(root).name}-{server}.json").write_text(json.dumps(runs, indent=2))

    def med(mode: str, key: str, order: str | None = None) -> float:
        values = [r[mode][key] for r in runs if order is None or r["order"] == order]
        return statistics.median(values) if values else float("nan")

    r = runs[0]
    print(
        f"\n{Path(root).name} / {server} ({r['version']}): {r['pairs']} ambiguous pairs, {r['sites']} sites, "
        f"{r['identifiers']} identifiers, {r['references']['definitions']} definitions"
    )
    for mode in ("definition", "references"):
        first, second = ("dr", "rd") if mode == "definition" else ("rd", "dr")
        print(
            f"  {mode}: median {med(mode, 'seconds'):.2f} s (first: {med(mode, 'seconds', first):.2f} s,"
            f" second: {med(mode, 'seconds', second):.2f} s),"
            f" requests {med(mode, 'requests'):.0f}, empty {med(mode, 'empty'):.0f},"
            f" errors {med(mode, 'errors'):.0f}"
        )
        for run in runs:
            if run[mode]["error_messages"]:
                print(
                    f"    {run['order']}: server {run[mode]['server_state_after']} after;"
                    f" first errors: {run[mode]['error_messages'][:2]}"
                )
    for level in ("site", "file"):
        a = r[f"agreement_{level}"]
        print(
            f"  agreement ({level}, run 1): {a['agree']}/{a['compared']}"
            f" (cross-file targets: {a['agree_cross_file']};"
            f" definition ⊂ references {a['definition_within_references']}, references ⊂ definition"
            f" {a['references_within_definition']}) "
            f"(in repo {a['agree_in_repo']}, outside {a['agree_outside']}), disagree {a['disagree']}, "
            f"definition unanswered {a['definition_unanswered']}"
            f" (references found {a['refs_found_when_definition_unanswered']})"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root")
    ap.add_argument("server")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--order", choices=("dr", "rd"), default="dr")
    ap.add_argument("--once", action="store_true", help="one run in this process; print its JSON")
    ap.add_argument("--at", default=None, help="measure hybridmap as committed at this revision")
    args = ap.parse_args()
    if args.once:
        print(json.dumps(asyncio.run(one_run(args.root, args.server, args.order))))
    else:
        drive(args.root, args.server, args.repeats, args.at)


if __name__ == "__main__":
    main()
