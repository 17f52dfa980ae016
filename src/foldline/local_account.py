"""The local account and workspace that ``foldline serve`` makes on first run.

Tokens are stored only as hashes, so the local token is kept in a file only its owner can read:
beside a SQLite database (``foldline.db.token``), or under ``~/.config/foldline/`` for a server URL.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import Unauthorized
from .store import normalize_url, sqlite_file

if TYPE_CHECKING:
    from .service import Transcripts

LOCAL = "local"


@dataclass(frozen=True)
class Local:
    account_id: str
    workspace_id: str
    token: str


def token_file(db: str) -> Path:
    file = sqlite_file(db)
    if file is not None:
        return file.with_name(file.name + ".token")
    url = normalize_url(db)
    digest = hashlib.sha256(url.encode()).hexdigest()[:12]
    return Path.home() / ".config" / "foldline" / f"local-{digest}.token"


def ensure_local(t: Transcripts, db: str, workspace_id: str | None = None) -> Local:
    """The local account, its workspace and a working token, made if missing (the workspace
    under ``workspace_id``, if given)."""
    path = token_file(db)
    found = t.accounts_named(LOCAL)
    if not found:
        account = t.create_account(LOCAL)
        t.create_workspace(LOCAL, [account["id"]], workspace_id)
        write_token(path, account["token"])
        return local(t, account["id"], account["token"])
    account_id = found[0]
    token = path.read_text().strip() if path.exists() else ""
    if not token_of(t, token, account_id):
        token = t.new_token(account_id, label="serve")["token"]
        write_token(path, token)
    return local(t, account_id, token)


def token_of(t: Transcripts, token: str, account_id: str) -> bool:
    """Whether ``token`` still signs in as ``account_id``."""
    try:
        return t.authenticate(token) == account_id
    except Unauthorized:
        return False


def local(t: Transcripts, account_id: str, token: str) -> Local:
    spaces = t.me(account_id)["workspaces"]
    if spaces:
        workspace_id = next((w["id"] for w in spaces if w["name"] == LOCAL), spaces[0]["id"])
    else:
        workspace_id = t.create_workspace(LOCAL, [account_id])["id"]
    return Local(account_id, workspace_id, token)


def write_token(path: Path, token: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
