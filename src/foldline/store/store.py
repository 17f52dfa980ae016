"""The store: every SQL statement Foldline runs, on SQLAlchemy Core, as one class.

:class:`Store` is composed of one mixin per noun (:mod:`.accounts`, :mod:`.agents`,
:mod:`.writes` over :mod:`.staging`, :mod:`.reads`, :mod:`.search`, :mod:`.index`, :mod:`.exports`,
:mod:`.shares`), each over :class:`~.core.Hooks`,
the defaults of the hooks a backend implements (:class:`~.backend.Backend`). Nothing here knows
HTTP.
"""

from __future__ import annotations

from .accounts import Accounts
from .agents import Agents
from .exports import Exports
from .index import TextIndex
from .reads import Reads
from .search import Search
from .shares import Shares
from .writes import Writes


class Store(Accounts, Agents, Writes, Reads, Search, TextIndex, Exports, Shares):
    """All of Foldline's SQL. Subclasses open connections for one backend
    (:class:`~.sqlite.SQLiteStore`, :class:`~.postgres.PostgresStore`) and fill in its hooks.

    The store checks nothing about who asks: access rules live in
    :class:`~foldline.service.Transcripts`, which is its only caller on the request path.
    Ids are canonical UUID strings chosen by the caller. Each method is one transaction.
    ``tests/test_store_contract.py`` holds every backend to this contract.

    What a backend must keep:

    - a conversation's ``seq`` grows by one per write to it; a message keeps the ``position``
      of its first write (its place in the transcript) and takes the ``seq`` of its last;
    - a message and its parts are replaced together: no read sees one without the other
      (:meth:`read` gives one snapshot);
    - :meth:`read_page`, :meth:`changes` and :meth:`part_body` read only messages of the
      conversation's owner;
    - :meth:`migrate` is safe to run from several processes at once (:meth:`lock_migrations`).
    """
