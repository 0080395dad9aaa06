"""What a file's path alone says: tests, test data, vendored and generated code down, entry
points up (the patterns are :mod:`hybridmap.languages.paths`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ....languages.paths import kind_multipliers
from ..context import Prior, RankContext, Signal, kinds_of_files


@dataclass(frozen=True)
class PathKinds(Signal):
    """Each file's prior is the product of ``test_path_weight``, ``fixture_path_weight``,
    ``vendor_path_weight``, ``generated_path_weight`` and ``entry_point_weight`` for the kinds
    its path has; with ``path_weighted_teleport`` the teleport follows it too."""

    name: ClassVar[str] = "path_kinds"

    def prior(self, ctx: RankContext) -> Prior:
        kinds = kind_multipliers(kinds_of_files(ctx.graph.files), ctx.settings)
        return Prior(np.asarray([m for m, _ in kinds], dtype=np.float64), tuple(why for _, why in kinds))
