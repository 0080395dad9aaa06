"""Graph export (``hybridmap map --format graphml|gexf|json-graph``) and repository statistics
(``hybridmap stats``).

The export is the graph the map was ranked on (:meth:`.graph.RepoGraph.to_networkx`: one edge per
(source file, target file, identifier), with its reference count, weight and **provenance**:
``name-match``, ``lsp``, ``scip`` or a policy's name), each file node carrying the map's rank
for it (0 when the map left it out), whether the map shows it, and its language, written by
networkx's own writers. File paths are node ids, escaped like every repository string
(:func:`.sanitize.escape_path`): XML cannot carry a control character at all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..infra.sanitize import escape_path, json_dumps, safe_line
from ..model import SCHEMA_VERSION, FileTags, MapResult
from ..pipeline.graph.repo_graph import RepoGraph

GRAPH_FORMATS = ("graphml", "gexf", "json-graph")


def ranked_graph(graph: RepoGraph, result: MapResult, languages: Mapping[str, str]) -> Any:
    """The map's graph as a networkx ``MultiDiGraph`` with escaped ids and rank attributes."""
    import networkx as nx

    source = graph.to_networkx()
    ranks = {f.path: f.file_rank for f in result.files}
    # ``map_mode``, not ``mode``: GEXF's writer reads ``mode`` as its own static/dynamic switch.
    out = nx.MultiDiGraph(
        map_mode=result.mode, tokens=result.tokens, budget=result.budget, schema_version=SCHEMA_VERSION
    )
    for path in source.nodes:
        out.add_node(
            escape_path(path),
            rank=float(ranks.get(path, 0.0)),
            in_map=path in ranks,
            language=languages.get(path, ""),
        )
    for src, dst, key, data in source.edges(keys=True, data=True):
        ident = safe_line(str(key))
        out.add_edge(
            escape_path(src),
            escape_path(dst),
            key=ident,
            ident=ident,
            count=int(data["count"]),
            weight=float(data["weight"]),
            provenance=str(data["provenance"]),
        )
    return out


def graph_document(graph: RepoGraph, result: MapResult, languages: Mapping[str, str], fmt: str) -> str:
    """The ranked graph as GraphML, GEXF 1.2 or node-link JSON (``fmt`` in :data:`GRAPH_FORMATS`)."""
    import networkx as nx

    ranked = ranked_graph(graph, result, languages)
    if fmt == "graphml":
        return "\n".join(nx.generate_graphml(ranked)) + "\n"
    if fmt == "gexf":
        return "\n".join(nx.generate_gexf(ranked)) + "\n"
    if fmt == "json-graph":
        return json_dumps(nx.node_link_data(ranked, edges="edges")) + "\n"
    raise ValueError(f"unknown graph format {fmt!r}")


@dataclass
class LanguageStats:
    files: int = 0
    lines: int = 0
    symbols: int = 0
    kinds: Counter[str] = field(default_factory=Counter)


def repository_stats(
    result: MapResult, tags: Mapping[str, FileTags], languages: Mapping[str, str], graph: RepoGraph | None
) -> dict[str, Any]:
    """``hybridmap stats``: files, lines and definitions per language, the graph by provenance,
    server states, cache hits and timings of the map that gathered them."""
    per: dict[str, LanguageStats] = {}
    for path, language in languages.items():
        entry = per.setdefault(language, LanguageStats())
        entry.files += 1
        file_tags = tags.get(path)
        if file_tags is not None:
            entry.lines += file_tags.line_count
            entry.symbols += len(file_tags.symbols)
            entry.kinds.update(s.kind for s in file_tags.symbols)
    stats = result.stats
    read = stats.get("files_read", 0.0)
    # Tags are looked up by content for files read and for files trusted by their signature (the
    # states an earlier process kept): the rate is over those looked up, hits and parses. A file
    # a one-shot process took by its kept key (``tags_unread``) is a hit read later, when shown.
    unread = stats.get("tags_unread", 0.0)
    hits = stats.get("cache_hits", 0.0) + unread
    looked_up = hits + stats.get("files_parsed", 0.0)
    return {
        "schema_version": SCHEMA_VERSION,
        "languages": {
            name: {"files": s.files, "lines": s.lines, "symbols": s.symbols, "kinds": dict(s.kinds.most_common())}
            for name, s in sorted(per.items(), key=lambda kv: (-kv[1].files, kv[0]))
        },
        "totals": {
            "files_listed": int(stats.get("files_listed", 0)),
            "source_files": sum(s.files for s in per.values()),
            "lines": sum(s.lines for s in per.values()),
            "symbols": sum(s.symbols for s in per.values()),
        },
        "graph": {
            "nodes": len(graph.files) if graph is not None else 0,
            "edges": len(graph.edge_src) if graph is not None else 0,
            "idents": len(graph.idents) if graph is not None else 0,
            "edges_by_provenance": dict(result.edges),
        },
        "servers": {k: v.to_json() for k, v in result.servers.items()},
        "cache": {
            "files_read": int(read),
            "files_trusted": int(stats.get("files_reused", 0)),
            "cache_hits": int(hits),
            "by_kept_keys": int(unread),
            "files_parsed": int(stats.get("files_parsed", 0)),
            "hit_rate": round(hits / looked_up, 4) if looked_up else None,
            **(
                {"shared": {k: int(stats.get(f"shared_{k}", 0)) for k in ("asked", "found", "refused", "written")}}
                if "shared_asked" in stats
                else {}
            ),
        },
        "timings": {k: round(v, 4) for k, v in result.timings.items()},
    }


def render_stats(document: Mapping[str, Any]) -> str:
    """The text form of :func:`repository_stats` (our words and numbers; language names come
    from hybridmap's own registry, server details are already made safe by ``to_json``)."""
    lines = [f"{'language':<14} {'files':>7} {'lines':>10} {'symbols':>9}"]
    for name, s in document["languages"].items():
        lines.append(f"{name:<14} {s['files']:>7} {s['lines']:>10} {s['symbols']:>9}")
    t = document["totals"]
    lines.append(f"{'total':<14} {t['source_files']:>7} {t['lines']:>10} {t['symbols']:>9}")
    lines.append(f"files listed: {t['files_listed']}")
    g = document["graph"]
    by = ", ".join(f"{k} {v}" for k, v in g["edges_by_provenance"].items())
    lines.append(f"graph: {g['nodes']} files, {g['edges']} edges ({by}), {g['idents']} identifiers")
    for language, server in document["servers"].items():
        detail = f" ({safe_line(server['detail'])})" if server["detail"] else ""
        lines.append(f"server {language}: {server['state']}{detail}")
    c = document["cache"]
    rate = "n/a" if c["hit_rate"] is None else f"{c['hit_rate']:.0%}"
    looked_up = c["cache_hits"] + c["files_parsed"]
    lines.append(
        f"cache: {c['cache_hits']} hits of {looked_up} files looked up ({rate}"
        f"{f', {kept} by their kept keys' if (kept := c['by_kept_keys']) else ''}), {c['files_parsed']} parsed; "
        f"{_files(c['files_read'])} read, {c['files_trusted']} trusted by their stat signature"
    )
    if "shared" in c:
        shared = c["shared"]
        lines.append(
            f"shared cache: {shared['found']} found of {shared['asked']} asked, {shared['refused']} refused, "
            f"{shared['written']} written"
        )
    timings = document["timings"]
    shown = ("index", "graph", "rank", "pack", "servers", "total")
    lines.append("timings: " + ", ".join(f"{k} {timings[k]:.3f} s" for k in shown if k in timings))
    return "\n".join(lines) + "\n"


def _files(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"
