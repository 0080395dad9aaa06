"""One language server on one corpus, in a fresh process. Prints one JSON line.

    probe_server.py ROOT LANGUAGE SERVER CACHE_DIR
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from hybridmap import RepoMap
from hybridmap.languages import BUILTIN_CONFIG_DIR, BUILTIN_QUERY_DIR, LanguageRegistry
from hybridmap.sources.lsp.session import tree_rss_mb


def registry_with_only(language: str, server: str, scratch: Path) -> LanguageRegistry:
    import re

    text = (BUILTIN_CONFIG_DIR / f"{language}.toml").read_text()
    text = re.sub(r"language-servers = \[[^\]]*\]", f'language-servers = ["{server}"]', text)
    (scratch / f"{language}.toml").write_text(text)
    return LanguageRegistry.load([BUILTIN_CONFIG_DIR, scratch], [BUILTIN_QUERY_DIR])


def main() -> None:
    root, language, server, cache_dir = sys.argv[1:5]
    scratch = Path(tempfile.mkdtemp())
    registry = registry_with_only(language, server, scratch)
    out: dict[str, object] = {"server": server, "language": language}
    # Warm the OS file cache and imports once, so neither measured run pays for them.
    shutil.rmtree(cache_dir, ignore_errors=True)
    with RepoMap(root, registry=registry, overrides={"cache_dir": cache_dir}) as repo:
        repo.map(mode="static", tokens=1024)
    # Time to first map, static only (cold cache).
    shutil.rmtree(cache_dir, ignore_errors=True)
    with RepoMap(root, registry=registry, overrides={"cache_dir": cache_dir}) as repo:
        start = time.perf_counter()
        static = repo.map(mode="static", tokens=1024)
        out["first_map_static_s"] = time.perf_counter() - start
        out["name_match_edges_static"] = static.edges.get("name-match", 0)
    # Time to first map with servers enabled (cold cache): must not wait for the server.
    shutil.rmtree(cache_dir, ignore_errors=True)
    with RepoMap(root, registry=registry, overrides={"cache_dir": cache_dir}) as repo:
        start = time.perf_counter()
        first = repo.map(mode="hybrid", tokens=1024)
        out["first_map_hybrid_s"] = time.perf_counter() - start
        pool = repo._async._pool  # benchmark introspection only
        peak = [0.0]
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                session = pool.session(language)  # started after the first map returned
                if session is not None and session.pid:
                    peak[0] = max(peak[0], tree_rss_mb(session.pid))
                time.sleep(0.2)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        start = time.perf_counter()
        full = repo.map(mode="hybrid", server_wait=900, tokens=1024)
        out["resolve_all_s"] = time.perf_counter() - start
        stop.set()
        sampler.join()
        report = full.servers.get(language)
        out["state"] = str(report.state) if report else "none"
        out["seconds_to_ready"] = report.seconds_to_ready if report else None
        out["version"] = report.detail if report else ""
        out["edges"] = full.edges
        out["pairs_resolved"] = full.stats.get("lsp_resolved_pairs")
        out["requests"] = full.stats.get("lsp_asked")
        out["empty_answers"] = full.stats.get("lsp_empty")
        out["errors"] = full.stats.get("lsp_errors")
        out["external"] = full.stats.get("lsp_external")
        out["peak_server_rss_mb"] = round(peak[0], 1)
        out["first_map_state"] = str(first.servers[language].state) if language in first.servers else ""
    print(json.dumps(out))


if __name__ == "__main__":
    main()
