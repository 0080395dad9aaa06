"""``hybridmap eval``: replay a repository's history and measure how well maps localize each commit.

Modules, in data-flow order: ``git`` (the only door to git), ``history``
(commit selection), ``worktree`` (scratch checkouts), ``diffs`` and
``definitions`` (what a commit changed), ``mentions`` and ``tasks`` (what is
asked), ``systems`` and ``peer`` (+ the standalone ``aider_runner``) (who
answers), ``metrics`` (scores), ``report`` (tables and JSON), ``run``
(orchestration), ``command`` (the CLI).
"""

from .report import EvalReport, to_json, to_markdown
from .run import EvalOptions, run_eval

__all__ = ["EvalOptions", "EvalReport", "run_eval", "to_json", "to_markdown"]
