"""The eval's results: per-commit records, the summary table (markdown) and the JSON document."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

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
        return [(r, score(self.tasks.tasks[r.task], o)) for r, o in zip(self.requests, run.outcomes)]


@dataclass(frozen=True, slots=True)
class EvalReport:
    root: str
    selection: Selection
    budgets: tuple[int, ...]
    systems: tuple[str, ...]
    server_wait: float
    versions: dict[str, object]
    commits: tuple[CommitResult, ...]
    elapsed_seconds: float


@dataclass(frozen=True, slots=True)
class SummaryRow:
    system: str
    kind: str
    tasks: int
    recall: dict[int, float | None]
    mrr: dict[int, float | None]
    definition_recall: dict[int, float | None]
    definition_tasks: int
    seconds_median: float | None
    seconds_p95: float | None
    max_budget_use: float | None
    """Largest tokens / budget over the row's maps (above 1.0: over budget)."""

    def to_json(self) -> dict[str, object]:
        return {"system": self.system, "task": self.kind, "tasks": self.tasks,
                "recall": {str(b): v for b, v in self.recall.items()},
                "mrr": {str(b): v for b, v in self.mrr.items()},
                "definition_recall": {str(b): v for b, v in self.definition_recall.items()},
                "definition_tasks": self.definition_tasks, "seconds_median": self.seconds_median,
                "seconds_p95": self.seconds_p95, "max_budget_use": self.max_budget_use}


def summarize(report: EvalReport) -> list[SummaryRow]:
    rows = []
    for system in report.systems:
        for kind in TASK_KINDS:
            per_budget: dict[int, list[Score]] = {b: [] for b in report.budgets}
            seconds: list[float] = []
            use: list[float] = []
            tasks = 0
            for result in report.commits:
                run = result.runs.get(system)
                if run is None or run.error:
                    continue
                tasks += sum(1 for t in result.tasks.tasks if t.kind == kind)
                for (request, sc), outcome in zip(result.scores(system), run.outcomes):
                    if result.tasks.tasks[request.task].kind != kind:
                        continue
                    per_budget[request.budget].append(sc)
                    seconds.append(outcome.seconds)
                    use.append(outcome.tokens / request.budget)
            with_defs = {b: [s.definition_recall for s in v if s.definition_recall is not None]
                         for b, v in per_budget.items()}
            rows.append(SummaryRow(
                system=system, kind=kind, tasks=tasks,
                recall={b: mean([s.file_recall for s in v]) for b, v in per_budget.items()},
                mrr={b: mean([s.reciprocal_rank for s in v]) for b, v in per_budget.items()},
                definition_recall={b: mean(v) for b, v in with_defs.items()},  # type: ignore[arg-type]
                definition_tasks=len(next(iter(with_defs.values()), [])),
                seconds_median=statistics.median(seconds) if seconds else None,
                seconds_p95=percentile(seconds, 95), max_budget_use=max(use) if use else None,
            ))
    return rows


def _server_summary(report: EvalReport) -> dict[str, object]:
    """Per language: which server, in how many commits it was ready, lsp edges per commit."""
    out: dict[str, dict[str, object]] = {}
    lsp_edges: list[int] = []
    for result in report.commits:
        run = result.runs.get("hybrid")
        if run is None or run.error:
            continue
        lsp_edges.append(int(run.edges.get("lsp", 0)))
        for language, server in run.servers.items():
            entry = out.setdefault(language, {"server": server.get("server"), "detail": server.get("detail"),
                                              "ready": 0, "commits": 0, "states": {}})
            entry["commits"] = int(entry["commits"]) + 1  # type: ignore[call-overload]
            state = str(server.get("state"))
            states = entry["states"]
            assert isinstance(states, dict)
            states[state] = states.get(state, 0) + 1
            if state == "ready":
                entry["ready"] = int(entry["ready"]) + 1  # type: ignore[call-overload]
    return {"languages": out, "lsp_edges_per_commit": lsp_edges}


def _run_json(result: CommitResult, system: str) -> dict[str, object]:
    run = result.runs[system]
    maps = []
    for request, outcome, (_, sc) in zip(result.requests, run.outcomes, result.scores(system)):
        maps.append({"task": result.tasks.tasks[request.task].kind, "budget": request.budget,
                     "tokens": outcome.tokens, "seconds": round(outcome.seconds, 6),
                     "files": [f.path for f in outcome.files], **sc.to_json()})
    return {"first_map_seconds": round(run.first_map_seconds, 6), "servers": run.servers,
            "edges": run.edges, "stats": run.stats, "error": run.error, "maps": maps}


def to_json(report: EvalReport) -> dict[str, object]:
    sel = report.selection
    return {
        "schema": JSON_SCHEMA,
        "root": report.root, "rev": sel.rev, "head": sel.head,
        "commits_requested": sel.requested, "commits_evaluated": len(report.commits),
        "commits_scanned": sel.scanned, "shortfall": sel.shortfall,
        "budgets": list(report.budgets), "systems": list(report.systems),
        "server_wait": report.server_wait, "versions": report.versions,
        "elapsed_seconds": round(report.elapsed_seconds, 3),
        "summary": [row.to_json() for row in summarize(report)],
        "servers": _server_summary(report),
        "commits": [
            {
                "sha": r.commit.sha, "parent": r.commit.parent, "subject": r.commit.subject,
                "files": [{"path": d.old_path, "new_path": d.new_path, "added": d.added, "deleted": d.deleted}
                          for d in r.diffs],
                "changed_definitions": [d.to_json() for d in r.tasks.definitions],
                "tasks": [t.to_json() for t in r.tasks.tasks],
                "skipped": list(r.tasks.skipped),
                "index_seconds": round(r.index_seconds, 6),
                "runs": {system: _run_json(r, system) for system in report.systems if system in r.runs},
            }
            for r in report.commits
        ],
    }


def _num(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _label(system: str, versions: dict[str, object]) -> str:
    if system == "aider" and versions.get("aider"):
        return f"Aider {versions['aider']} (peer)"
    return SYSTEM_LABELS.get(system, system)


def to_markdown(report: EvalReport) -> str:
    sel = report.selection
    budgets = report.budgets
    lines = [
        f"## hybridmap eval: {report.root}",
        "",
        f"{len(report.commits)} commits (first-parent history of {sel.rev} at {sel.head[:10]}, "
        f"{sel.scanned} scanned); budgets {', '.join(map(str, budgets))} tokens; "
        f"server wait {report.server_wait:g} s; {report.elapsed_seconds:.0f} s in all.",
        "",
    ]
    if sel.shortfall:
        lines += [f"Note: {sel.shortfall}.", ""]
    header = (["system", "task", "tasks (with defs)"] + [f"recall@{b}" for b in budgets] + [f"MRR@{b}" for b in budgets]
              + [f"defs@{b}" for b in budgets] + ["s/map median", "s/map p95", "max tokens/budget"])
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(["---"] * 2 + ["---:"] * (len(header) - 2)) + "|")
    for row in summarize(report):
        cells = ([_label(row.system, report.versions), row.kind, f"{row.tasks} ({row.definition_tasks})"]
                 + [_num(row.recall[b]) for b in budgets] + [_num(row.mrr[b]) for b in budgets]
                 + [_num(row.definition_recall[b]) for b in budgets]
                 + [_num(row.seconds_median), _num(row.seconds_p95), _num(row.max_budget_use, 2)])
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "recall: share of the target files in the map; MRR: mean reciprocal rank of the first "
              "target file; defs: share of the changed definitions shown, over the tasks that have some; "
              "s/map: one measured map (after the checkout's first map)."]
    servers = _server_summary(report)
    languages = servers["languages"]
    if "hybrid" in report.systems and isinstance(languages, dict):
        lines += ["", "Servers (hybrid):"]
        for language, entry in sorted(languages.items()):
            states = ", ".join(f"{state} {count}" for state, count in sorted(entry["states"].items()))
            lines.append(f"- {language}: {entry['server'] or '-'} ({entry['detail'] or 'no detail'}): ready in "
                         f"{entry['ready']} of {entry['commits']} commits ({states})")
        edges = servers["lsp_edges_per_commit"]
        if isinstance(edges, list) and edges:
            lines.append(f"- lsp edges per commit: median {statistics.median(edges):g}, "
                         f"min {min(edges)}, max {max(edges)}")
    lines += ["", "| commit | changed files | changed defs | mentions | "
              + " | ".join(f"first map s {s}" for s in report.systems) + " | lsp / name-match edges |",
              "|---|---:|---:|---|" + "---:|" * len(report.systems) + "---|"]
    for r in report.commits:
        message = next((t for t in r.tasks.tasks if t.kind == "message"), None)
        mentions = ", ".join(message.mentions[:6]) + (" …" if message and len(message.mentions) > 6 else "") \
            if message else "–"
        firsts = [(_num(r.runs[s].first_map_seconds, 2) if not r.runs[s].error else "error")
                  if s in r.runs else "–" for s in report.systems]
        hybrid = r.runs.get("hybrid")
        edges = (f"{hybrid.edges.get('lsp', 0)} / {hybrid.edges.get('name-match', 0)}"
                 if hybrid is not None and not hybrid.error else "–")
        lines.append(f"| {r.commit.sha[:10]} | {len(r.diffs)} | {len(r.tasks.definitions)} | {mentions} | "
                     + " | ".join(firsts) + f" | {edges} |")
    errors = [(r.commit.sha[:10], s, run.error) for r in report.commits for s, run in r.runs.items() if run.error]
    if errors:
        lines += ["", "Errors:"] + [f"- {sha} {system}: {error}" for sha, system, error in errors]
    return "\n".join(lines) + "\n"
