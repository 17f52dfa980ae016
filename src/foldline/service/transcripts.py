"""The service as one class: :class:`Transcripts`, composed of one class per concept (see the
package's docstring)."""

from __future__ import annotations

from .accounts import Accounts
from .agents import Agents
from .exports import Exports
from .maintenance import Maintenance
from .reads import Reads
from .redact import Redact
from .samples import Samples
from .search import Search
from .shares import Shares
from .workspaces import Workspaces
from .writes import Writes


class Transcripts(
    Accounts, Samples, Workspaces, Agents, Redact, Writes, Reads, Search, Exports, Maintenance, Shares
):
    """The service: accounts, workspaces, agents, the write door and every read.

    ``Transcripts.open(settings)`` opens (and migrates) the store at ``settings.db``; ``close()``
    (or a ``with`` block) releases it. Methods that act for an account take its id first, as
    :meth:`authenticate` returns it, and raise a :mod:`foldline.errors` class when refused.
    """
