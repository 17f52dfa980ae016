"""Settings, from the CLI and ``FOLDLINE_*`` environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_DB = "foldline.db"


def default_db() -> str:
    return os.environ.get("FOLDLINE_DB") or DEFAULT_DB


@dataclass(frozen=True)
class Settings:
    db: str = field(default_factory=default_db)
    bound: int = int(os.environ.get("FOLDLINE_BOUND", "4096"))
    max_body: int = int(os.environ.get("FOLDLINE_MAX_BODY", str(32 * 1024 * 1024)))
    registry: Path | None = Path(os.environ["FOLDLINE_REGISTRY"]) if os.environ.get("FOLDLINE_REGISTRY") else None
    page_limit_max: int = 1000
    poll_seconds: float = float(os.environ.get("FOLDLINE_POLL_SECONDS", "1.0"))
