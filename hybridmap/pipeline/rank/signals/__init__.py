"""The ranking signals, one module each, and :data:`DEFAULT_SIGNALS`, the list the ranker runs.

Adding a signal is one new module here plus its entry in :data:`DEFAULT_SIGNALS` (and, when
it has a weight, that weight as a named, documented, range-checked setting in
:mod:`hybridmap.settings`). For example, lifting files that changed together with a chat file
in the git history, given a ``co_change_personalization`` setting::

    # hybridmap/pipeline/rank/signals/co_change.py
    @dataclass(frozen=True)
    class CoChange(Signal):
        '''Files committed together with a chat file get co_change_personalization.'''

        name: ClassVar[str] = "co_change"

        def personalization(self, ctx: RankContext) -> Iterator[Mass]:
            for fi in partners(ctx):  # files sharing commits with ctx.chat
                yield Mass(fi, ctx.settings.co_change_personalization, "committed with a chat file")

    # here
    DEFAULT_SIGNALS = (..., PathMentions(), CoChange(), PathKinds(), FileDecay())

The order matters only within a phase (see :mod:`hybridmap.pipeline.rank.context`): file factors
apply in list order (a ``times`` after a ``plus`` scales the sum), definition boosts transform
the scores in list order, and the reasons of a file are listed in the order they were added.
``docs/ranking.md`` walks through it.
"""

from __future__ import annotations

from ..context import Signal
from .change_users import ChangeUsers
from .changed_code import ChangedCode
from .chat_dependents import ChatDependents
from .chat_files import ChatFiles
from .chat_neighbors import ChatNeighbors
from .co_change import CoChangePartners
from .definition_tokens import DefinitionTokens
from .directory_proximity import DirectoryProximity
from .file_decay import FileDecay
from .mentioned_files import MentionedFiles, NamedFilesFirst
from .mentioned_idents import MentionedIdents
from .path_kinds import PathKinds
from .path_mentions import PathMentions
from .private_definitions import PrivateDefinitions
from .reference_names import ReferenceNames
from .session_files import SessionEvents
from .symbol_neighbourhood import SymbolNeighbourhood
from .test_pairs import PairsFollow, TestPairs
from .text_similarity import TextSimilarity

#: The signals every map is ranked with, in the order each phase applies them. The order keeps
#: the reasons a file lists as they were (request reasons by importance, then path kinds) and
#: the file factors' arithmetic (mentioned files' x before the chat boosts' +); files named by
#: path or name are pinned after every lift, their tests following them; a change's
#: definitions are pinned last, above the mentioned ones.
DEFAULT_SIGNALS: tuple[Signal, ...] = (
    ChatFiles(),
    MentionedFiles(),
    PrivateDefinitions(),
    DefinitionTokens(),
    MentionedIdents(),
    ChangeUsers(),
    ReferenceNames(),
    SessionEvents(),
    ChatNeighbors(),
    CoChangePartners(),
    TestPairs(),
    TextSimilarity(),
    ChatDependents(),
    DirectoryProximity(),
    PathMentions(),
    PathKinds(),
    FileDecay(),
    NamedFilesFirst(),
    PairsFollow(),
    ChangedCode(),
    SymbolNeighbourhood(),
)

__all__ = [
    "DEFAULT_SIGNALS",
    "ChangeUsers",
    "ChangedCode",
    "ChatDependents",
    "ChatFiles",
    "ChatNeighbors",
    "CoChangePartners",
    "DefinitionTokens",
    "DirectoryProximity",
    "FileDecay",
    "MentionedFiles",
    "MentionedIdents",
    "NamedFilesFirst",
    "PairsFollow",
    "PathKinds",
    "PathMentions",
    "PrivateDefinitions",
    "ReferenceNames",
    "SessionEvents",
    "SymbolNeighbourhood",
    "TestPairs",
    "TextSimilarity",
]
