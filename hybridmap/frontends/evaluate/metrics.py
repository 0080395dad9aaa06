"""Scores of one map against one task, and their aggregation. Pure functions.

* file recall: share of the task's target files that appear in the map;
* reciprocal rank: 1 / position of the first target file in the map's rank order (0 if none);
  a ``diff`` task's given files are left out of the order first;
* first-five recall: share of the target files among the map's first five files (what a model
  reads first; a map that lists many files can hold more of them and still rank them low);
* definition recall: share of the task's changed definitions the map shows (same file, same name);
  undefined (None) for a task whose targets have no changed definition.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .tasks import Task

#: The files of a map counted by first-five recall.
FIRST_FILES = 5


@dataclass(frozen=True, slots=True)
class ShownFile:
    path: str
    names: tuple[str, ...]
    """Names of the definitions the map shows in this file."""


@dataclass(frozen=True, slots=True)
class MapOutcome:
    files: tuple[ShownFile, ...]
    """Files in the map, in rank order."""
    tokens: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Score:
    file_recall: float
    reciprocal_rank: float
    definitions_hit: int
    definitions_total: int
    first_five_recall: float = 0.0

    @property
    def definition_recall(self) -> float | None:
        return self.definitions_hit / self.definitions_total if self.definitions_total else None

    def to_json(self) -> dict[str, object]:
        return {
            "file_recall": self.file_recall,
            "reciprocal_rank": self.reciprocal_rank,
            "definition_recall": self.definition_recall,
            "definitions_hit": self.definitions_hit,
            "definitions_total": self.definitions_total,
            "first_five_recall": self.first_five_recall,
        }


def score(task: Task, outcome: MapOutcome) -> Score:
    files = outcome.files
    if task.kind == "diff":  # the change given is shown by a map of it; only the rest is scored
        files = tuple(f for f in files if f.path not in task.chat_files)
    outcome = MapOutcome(files, outcome.tokens, outcome.seconds)
    shown = {f.path: set(f.names) for f in outcome.files}
    targets = set(task.targets)
    recall = len(targets & shown.keys()) / len(targets) if targets else 0.0
    rr = next((1.0 / (i + 1) for i, f in enumerate(outcome.files) if f.path in targets), 0.0)
    hit = sum(1 for d in task.definitions if d.name in shown.get(d.path, ()))
    first = {f.path for f in outcome.files[:FIRST_FILES]}
    top = len(targets & first) / len(targets) if targets else 0.0
    return Score(recall, rr, hit, len(task.definitions), top)


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default), q in [0, 100]."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
