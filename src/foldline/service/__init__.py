"""What Foldline does, above the store and below HTTP: accounts, workspaces, agents, the write door, reads.

:class:`Transcripts` is the only way in: routes, the CLI and the importers call its methods and
never see the store or SQL. It is composed of one class per concept, each over
:class:`~foldline.service.core.Core` (the store, settings, registry, access checks and the change
notice): :mod:`.accounts`, :mod:`.workspaces`, :mod:`.agents`, :mod:`.writes`, :mod:`.redact`, :mod:`.reads`,
:mod:`.search`, :mod:`.exports`, :mod:`.maintenance`, :mod:`.samples` (the first run's sample
sessions), :mod:`.shares` (share links). Access is checked in the core: a read needs membership
of the agent's workspace, a write needs the owner, and every other case is the same
:class:`~foldline.errors.NotFound`. Every write (messages, titles, dates) wakes live followers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..message import TURN_ENDED
from .core import CALL_MAX, canonical_uuid
from .tokens import hash_token

if TYPE_CHECKING:
    from .transcripts import Transcripts

__all__ = ["CALL_MAX", "TURN_ENDED", "Transcripts", "canonical_uuid", "hash_token"]


def __getattr__(name: str) -> Any:
    # Transcripts (its mixins, the store's SQL and SQLAlchemy under them) loads at its first
    # use, not with the package: an import's workers, which need only the write door's own
    # half (.door), are forked before it (foldline.importers.ahead).
    if name == "Transcripts":
        from .transcripts import Transcripts

        return Transcripts
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
