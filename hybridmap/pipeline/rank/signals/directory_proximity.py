"""Files near the ones being edited: a change rarely stays in one file, and seldom travels far.

On the large corpora (docs/evaluation.md, "Large repositories") about half of the files a
commit changed beside the chat file sat in the chat file's own directory (a Go package, a
Python subpackage, a component folder), and most of those were outside the first five files of
a map ranked by the graph alone: on 700 files the graph gives many files the same few hops.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import ClassVar

from ....languages.paths import boost_scale
from ...graph.repo_graph import RepoGraph
from ..context import FileFactor, Mass, PerFileList, RankContext, Signal


@dataclass(frozen=True, slots=True)
class DirectoryTree:
    """The directories of a graph's files: which files each holds, and which directories."""

    files_in: Mapping[str, tuple[int, ...]]
    """Directory ('' for the root) -> the graph indices of the files directly in it."""
    children: Mapping[str, tuple[str, ...]]
    """Directory -> its subdirectories that hold files (at any depth below them)."""

    @classmethod
    def of(cls, files: tuple[str, ...]) -> DirectoryTree:
        files_in: dict[str, list[int]] = {}
        children: dict[str, set[str]] = {}
        for fi, path in enumerate(files):
            directory = path.rpartition("/")[0]
            files_in.setdefault(directory, []).append(fi)
            while directory:  # register the chain up to the root once
                parent = directory.rpartition("/")[0]
                known = children.setdefault(parent, set())
                if directory in known:
                    break
                known.add(directory)
                directory = parent
        return cls(
            {d: tuple(f) for d, f in files_in.items()},
            {d: tuple(sorted(c)) for d, c in children.items()},
        )

    def within(self, start: str, max_distance: int) -> dict[str, int]:
        """Each directory at most ``max_distance`` steps (up to a parent or down to a child) from
        ``start``, with its distance: the directory itself 0, its parent and subdirectories 1..."""
        seen = {start: 0}
        frontier = [start]
        for distance in range(1, max_distance + 1):
            step: list[str] = []
            for directory in frontier:
                near = list(self.children.get(directory, ()))
                if directory:
                    near.append(directory.rpartition("/")[0])
                for other in near:
                    if other not in seen:
                        seen[other] = distance
                        step.append(other)
            frontier = step
        return seen


#: The directory tree of the last file list: a request reads it, never changes it, and an edit
#: (a new graph of the same files) does not build it again (150 ms of an edit's map at 100,000 files).
_tree_of_files: PerFileList[DirectoryTree] = PerFileList(DirectoryTree.of)


def directory_tree(graph: RepoGraph) -> DirectoryTree:
    """The directories of ``graph``'s files."""
    return _tree_of_files(tuple(graph.files))


@dataclass(frozen=True)
class DirectoryProximity(Signal):
    """Each file within ``directory_proximity_max_distance`` directory steps of a chat, edited
    or active file gets ``directory_proximity_personalization`` and ``directory_proximity_boost``
    (added to its multiplier), each times ``directory_proximity_decay ** steps`` and
    :func:`~hybridmap.languages.paths.boost_scale`: its nearest such file counts, once. Same directory: 0
    steps; the parent or a subdirectory: 1; a sibling: 2. A directory holding more than
    ``directory_proximity_crowd`` files shares it: each gets crowd / files of it."""

    name: ClassVar[str] = "directory_proximity"

    def _near(self, ctx: RankContext) -> Iterator[tuple[int, float, str]]:
        """(file, decay ** steps from its nearest anchor, why) for each file in reach."""
        settings = ctx.settings
        anchors = dict.fromkeys((*ctx.chat, *ctx.edited, *ctx.active))
        if not anchors:
            return
        graph = ctx.graph
        tree = directory_tree(graph)
        nearest: dict[str, int] = {}
        for fi in anchors:
            start = graph.files[fi].rpartition("/")[0]
            for directory, steps in tree.within(start, settings.directory_proximity_max_distance).items():
                if steps < nearest.get(directory, steps + 1):
                    nearest[directory] = steps
        crowd = settings.directory_proximity_crowd
        for directory, steps in nearest.items():
            share = settings.directory_proximity_decay**steps
            held = len(tree.files_in.get(directory, ()))
            if crowd and held > crowd:  # one of 80 widgets says less than one of 3 files of a package
                share *= crowd / held
            away = f"{steps} director{'y' if steps == 1 else 'ies'}"
            why = "in a chat file's directory" if steps == 0 else f"{away} from a chat file"
            for fi in tree.files_in.get(directory, ()):
                if fi not in anchors:
                    yield fi, share * boost_scale(graph.files[fi], settings), why

    def personalization(self, ctx: RankContext) -> Iterator[Mass]:
        amount = ctx.settings.directory_proximity_personalization
        if amount:
            for fi, share, why in self._near(ctx):
                yield Mass(fi, amount * share, why)

    def file_factors(self, ctx: RankContext) -> Iterator[FileFactor]:
        boost = ctx.settings.directory_proximity_boost
        if boost:
            for fi, share, why in self._near(ctx):
                yield FileFactor(fi, plus=boost * share, why=why)
