"""The eval's results: per-commit records, the JSON document, and the markdown rendered from it.

The JSON document is the one source of truth: the summary tables are computed
from its per-map entries and the markdown is rendered from it, so a saved
report (``--json-out``) re-renders exactly (``hybridmap eval --from-json FILE``).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .diffs import FileDiff
from .history import Commit, Selection
from .metrics import Score, mean, percentile, score
from .systems import Request, SystemRun
from .tasks import TASK_KINDS, CommitTasks

JSON_SCHEMA = 1
SYSTEM_LABELS = {"static": "hybridmap static", "hybrid": "hybridmap hybrid", "aider": "Aider (peer)"}


@dataclass(frozen=True, slots=True)
class CommitResult:
    commit: Commit
    diffs: tuple[FileDiff, ...]
    tasks: CommitTasks
    requests: tuple[Request, ...]
    runs: dict[str, SystemRun]
    index_seconds: float

    def scores(self, system: str) -> list[tuple[Request, Score]]:
        run = self.runs.get(system)
        if run is None or run.error:
            return []
        return [(r, score(self.tasks.tasks[r.task], o)) for r, o in zip(self.requests, run.outcomes, strict=True)]


@dataclass(frozen=True, slots=True)
class EvalReport:
    root: str
    selection: Selection
    budgets: tuple[int, ...]
    systems: tuple[str, ...]
    task_kinds: tuple[str, ...]
    server_wait: float
    versions: dict[str, object]
    commits: tuple[CommitResult, ...]
    elapsed_seconds: float
    message_typos: bool = False
    unavailable: tuple[str, ...] = ()
    """Selected commits skipped: their parent could not be checked out (why, per commit)."""


# --- JSON -------------------------------------------------------------------------------------


def _run_json(result: CommitResult, system: str) -> dict[str, object]:
    run = result.runs[system]
    maps = []
    # A failed run has no outcomes: nothing to list (zip stops at the shortest on purpose).
    for request, outcome, (_, sc) in zip(result.requests, run.outcomes, result.scores(system), strict=False):
        maps.append(
            {
                "task": result.tasks.tasks[request.task].kind,
                "budget": request.budget,
                "tokens": outcome.tokens,
                "seconds": round(outcome.seconds, 6),
                "files": [f.path for f in outcome.files],
                **sc.to_json(),
            }
        )
    return {
        "first_map_seconds": round(run.first_map_seconds, 6),
        "servers": run.servers,
        "edges": run.edges,
        "stats": run.stats,
        "error": run.error,
        "maps": maps,
    }


def to_json(report: EvalReport) -> dict[str, object]:
    sel = report.selection
    document: dict[str, Any] = {
        "schema": JSON_SCHEMA,
        "root": report.root,
        "rev": sel.rev,
        "head": sel.head,
        "commits_requested": sel.requested,
        "commits_evaluated": len(report.commits),
        "commits_scanned": sel.scanned,
        "shortfall": sel.shortfall,
        "unavailable": list(report.unavailable),
        "budgets": list(report.budgets),
        "systems": list(report.systems),
        "task_kinds": list(report.task_kinds),
        "server_wait": report.server_wait,
        "message_typos": report.message_typos,
        "versions": report.versions,
        "elapsed_seconds": round(report.elapsed_seconds, 3),
        "commits": [
            {
                "sha": r.commit.sha,
                "parent": r.commit.parent,
                "subject": r.commit.subject,
                "files": [
                    {"path": d.old_path, "new_path": d.new_path, "added": d.added, "deleted": d.deleted}
                    for d in r.diffs
                ],
                "changed_definitions": [d.to_json() for d in r.tasks.definitions],
                "tasks": [t.to_json() for t in r.tasks.tasks],
                "skipped": list(r.tasks.skipped),
                "index_seconds": round(r.index_seconds, 6),
                "runs": {system: _run_json(r, system) for system in report.systems if system in r.runs},
            }
            for r in report.commits
        ],
    }
    return with_summaries(document)


def servers_ready(commit: Mapping[str, Any]) -> bool:
    """Every configured server of the commit's hybrid map was ready and resolved some edge."""
    run = commit.get("runs", {}).get("hybrid")
    if not run or run.get("error") or not run.get("servers"):
        return False
    return (
        all(s.get("state") == "ready" for s in run["servers"].values()) and int(run.get("edges", {}).get("lsp", 0)) > 0
    )


@dataclass(frozen=True, slots=True)
class SummaryRow:
    system: str
    kind: str
    tasks: int
    recall: dict[int, float | None]
    mrr: dict[int, float | None]
    first_five: dict[int, float | None]
    """Share of the target files among the map's first five files."""
    definition_recall: dict[int, float | None]
    definition_tasks: int
    seconds_median: float | None
    seconds_p95: float | None
    max_budget_use: float | None
    """Largest tokens / budget over the row's maps (above 1.0: over budget)."""

    def to_json(self) -> dict[str, object]:
        return {
            "system": self.system,
            "task": self.kind,
            "tasks": self.tasks,
            "recall": {str(b): v for b, v in self.recall.items()},
            "mrr": {str(b): v for b, v in self.mrr.items()},
            "first_five": {str(b): v for b, v in self.first_five.items()},
            "definition_recall": {str(b): v for b, v in self.definition_recall.items()},
            "definition_tasks": self.definition_tasks,
            "seconds_median": self.seconds_median,
            "seconds_p95": self.seconds_p95,
            "max_budget_use": self.max_budget_use,
        }


def summarize(
    commits: Iterable[Mapping[str, Any]],
    systems: Sequence[str],
    budgets: Sequence[int],
    kinds: Sequence[str] = TASK_KINDS,
) -> list[SummaryRow]:
    """One row per system × task kind asked, from the per-map entries of the JSON commits."""
    commits = list(commits)
    rows = []
    for system in systems:
        for kind in kinds:
            maps = [m for c in commits for m in _maps(c, system) if m["task"] == kind]
            tasks = sum(1 for c in commits if _maps(c, system) for t in c["tasks"] if t["kind"] == kind)
            by_budget = {b: [m for m in maps if m["budget"] == b] for b in budgets}
            with_defs = {
                b: [m["definition_recall"] for m in v if m["definition_recall"] is not None]
                for b, v in by_budget.items()
            }
            seconds = [float(m["seconds"]) for m in maps]
            rows.append(
                SummaryRow(
                    system=system,
                    kind=kind,
                    tasks=tasks,
                    recall={b: mean([m["file_recall"] for m in v]) for b, v in by_budget.items()},
                    mrr={b: mean([m["reciprocal_rank"] for m in v]) for b, v in by_budget.items()},
                    first_five={b: _first_five(v) for b, v in by_budget.items()},
                    definition_recall={b: mean(v) for b, v in with_defs.items()},
                    definition_tasks=max((len(v) for v in with_defs.values()), default=0),
                    seconds_median=statistics.median(seconds) if seconds else None,
                    seconds_p95=percentile(seconds, 95),
                    max_budget_use=max((m["tokens"] / m["budget"] for m in maps), default=None),
                )
            )
    return rows


def _first_five(maps: Sequence[Mapping[str, Any]]) -> float | None:
    """Mean first-five recall; None for a report saved before it was measured."""
    values = [m["first_five_recall"] for m in maps if "first_five_recall" in m]
    return mean(values) if len(values) == len(maps) else None


def _maps(commit: Mapping[str, Any], system: str) -> list[dict[str, Any]]:
    run = commit.get("runs", {}).get(system)
    return [] if not run or run.get("error") else list(run.get("maps", []))


def _server_summary(commits: Sequence[Mapping[str, Any]]) -> dict[str, object]:
    """Per language: which server, in how many commits it was ready; lsp edges per commit."""
    languages: dict[str, dict[str, Any]] = {}
    lsp_edges: list[int] = []
    for commit in commits:
        run = commit.get("runs", {}).get("hybrid")
        if not run or run.get("error"):
            continue
        lsp_edges.append(int(run.get("edges", {}).get("lsp", 0)))
        for language, server in run.get("servers", {}).items():
            entry = languages.setdefault(
                language,
                {
                    "server": server.get("server"),
                    "detail": server.get("detail"),
                    "ready": 0,
                    "commits": 0,
                    "states": {},
                },
            )
            entry["commits"] += 1
            state = str(server.get("state"))
            entry["states"][state] = entry["states"].get(state, 0) + 1
            if state == "ready":
                entry["ready"] += 1
                entry["server"], entry["detail"] = server.get("server"), server.get("detail")
    return {"languages": languages, "lsp_edges_per_commit": lsp_edges}


def with_summaries(document: dict[str, Any]) -> dict[str, Any]:
    """(Re)compute the summary sections of a report document from its commits."""
    commits = document["commits"]
    systems, budgets = document["systems"], [int(b) for b in document["budgets"]]
    # A report saved before the message-text task asked co-edit and message only.
    kinds = document.get("task_kinds", ["co-edit", "message"])
    ready = [c for c in commits if servers_ready(c)]
    document["summary"] = [row.to_json() for row in summarize(commits, systems, budgets, kinds)]
    document["servers_ready_commits"] = len(ready)
    document["summary_servers_ready"] = [row.to_json() for row in summarize(ready, systems, budgets, kinds)]
    document["servers"] = _server_summary(commits)
    return document


# --- markdown ---------------------------------------------------------------------------------


def _num(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _label(system: str, versions: Mapping[str, Any]) -> str:
    if system == "aider" and versions.get("aider"):
        return f"Aider {versions['aider']} (peer)"
    return SYSTEM_LABELS.get(system, system)


def _table(rows: Sequence[Mapping[str, Any]], budgets: Sequence[int], versions: Mapping[str, Any]) -> list[str]:
    header = (
        ["system", "task", "tasks (with defs)"]
        + [f"recall@{b}" for b in budgets]
        + [f"MRR@{b}" for b in budgets]
        + [f"top5@{b}" for b in budgets]
        + [f"defs@{b}" for b in budgets]
        + ["s/map median", "s/map p95", "max tokens/budget"]
    )
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * 2 + ["---:"] * (len(header) - 2)) + "|"]
    for row in rows:
        cells = (
            [_label(row["system"], versions), row["task"], f"{row['tasks']} ({row['definition_tasks']})"]
            + [_num(row["recall"][str(b)]) for b in budgets]
            + [_num(row["mrr"][str(b)]) for b in budgets]
            + [_num(row.get("first_five", {}).get(str(b))) for b in budgets]
            + [_num(row["definition_recall"][str(b)]) for b in budgets]
            + [_num(row["seconds_median"]), _num(row["seconds_p95"]), _num(row["max_budget_use"], 2)]
        )
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render_markdown(document: Mapping[str, Any]) -> str:
    budgets = [int(b) for b in document["budgets"]]
    systems = list(document["systems"])
    versions = document.get("versions", {})
    commits = document["commits"]
    revision = versions.get("hybridmap_revision") or ""
    lines = [
        f"## hybridmap eval: {document['root']}",
        "",
        f"{len(commits)} commits (first-parent history of {document['rev']} at {document['head'][:10]}, "
        f"{document['commits_scanned']} scanned); budgets {', '.join(map(str, budgets))} tokens; "
        f"server wait {document['server_wait']:g} s; {document['elapsed_seconds']:.0f} s in all; "
        f"hybridmap {versions.get('hybridmap', '?')}{' (' + revision + ')' if revision else ''}.",
        "",
    ]
    if document.get("shortfall"):
        lines += [f"Note: {document['shortfall']}.", ""]
    for skipped in document.get("unavailable") or ():
        lines += [f"Note: skipped {skipped}", ""]
    if document.get("message_typos"):
        lines += ["The message-text tasks read each message with typos (--message-typos).", ""]
    lines += _table(document["summary"], budgets, versions)
    lines += [
        "",
        "recall: share of the target files in the map; MRR: mean reciprocal rank of the first "
        "target file; top5: share of the target files among the map's first five files; "
        "defs: share of the changed definitions shown, over the tasks that have some; "
        "s/map: one measured map (after the checkout's first map).",
    ]
    ready = int(document.get("servers_ready_commits", 0))
    if "hybrid" in systems and 0 < ready < len(commits):
        lines += [
            "",
            f"Only the {ready} commits where every server of the hybrid map was ready and resolved edges:",
            "",
        ]
        lines += _table(document["summary_servers_ready"], budgets, versions)
    servers = document.get("servers", {})
    languages = servers.get("languages", {})
    if "hybrid" in systems and languages:
        lines += ["", "Servers (hybrid):"]
        for language, entry in sorted(languages.items()):
            states = ", ".join(f"{state} {count}" for state, count in sorted(entry["states"].items()))
            lines.append(
                f"- {language}: {entry['server'] or '-'} ({entry['detail'] or 'no detail'}): ready in "
                f"{entry['ready']} of {entry['commits']} commits ({states})"
            )
        edges = servers.get("lsp_edges_per_commit") or []
        if edges:
            lines.append(
                f"- lsp edges per commit: median {statistics.median(edges):g}, min {min(edges)}, max {max(edges)}"
            )
    lines += [
        "",
        "| commit | changed files | changed defs | mentions | "
        + " | ".join(f"first map s {s}" for s in systems)
        + " | lsp / name-match edges |",
        "|---|---:|---:|---|" + "---:|" * len(systems) + "---|",
    ]
    errors = []
    for c in commits:
        mentions = "–"
        for kind in ("message", "message-text"):  # the words given, else what hybridmap read
            message = next((t for t in c["tasks"] if t["kind"] == kind), None)
            if message:
                words = (
                    [*message["mentioned_files"], *message["mentions"]]
                    if kind == "message-text"
                    else message["mentions"]
                )
                mentions = ", ".join(words[:6]) + (" …" if len(words) > 6 else "")
                break
        firsts = []
        for system in systems:
            run = c["runs"].get(system)
            if run is None:
                firsts.append("–")
            elif run["error"]:
                firsts.append("error")
                errors.append(f"- {c['sha'][:10]} {system}: {run['error']}")
            else:
                firsts.append(_num(run["first_map_seconds"], 2))
        hybrid = c["runs"].get("hybrid")
        edges = (
            f"{hybrid['edges'].get('lsp', 0)} / {hybrid['edges'].get('name-match', 0)}"
            if hybrid and not hybrid["error"]
            else "–"
        )
        lines.append(
            f"| {c['sha'][:10]} | {len(c['files'])} | {len(c['changed_definitions'])} | {mentions} | "
            + " | ".join(firsts)
            + f" | {edges} |"
        )
    if errors:
        lines += ["", "Errors:", *errors]
    return "\n".join(lines) + "\n"


def to_markdown(report: EvalReport) -> str:
    return render_markdown(to_json(report))
