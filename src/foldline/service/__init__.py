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

from ..message import TURN_ENDED
from .accounts import Accounts
from .agents import Agents
from .core import CALL_MAX, canonical_uuid
from .exports import Exports
from .maintenance import Maintenance
from .reads import Reads
from .redact import Redact
from .samples import Samples
from .search import Search
from .shares import Shares
from .tokens import hash_token
from .workspaces import Workspaces
from .writes import Writes

__all__ = ["CALL_MAX", "TURN_ENDED", "Transcripts", "canonical_uuid", "hash_token"]


class Transcripts(
    Accounts, Samples, Workspaces, Agents, Redact, Writes, Reads, Search, Exports, Maintenance, Shares
):
    """The service: accounts, workspaces, agents, the write door and every read.

    ``Transcripts.open(settings)`` opens (and migrates) the store at ``settings.db``; ``close()``
    (or a ``with`` block) releases it. Methods that act for an account take its id first, as
    :meth:`authenticate` returns it, and raise a :mod:`foldline.errors` class when refused.
    """
