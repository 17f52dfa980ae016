"""The app's one bounded pool of threads for database work, and how a request runs work in it."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any, TypeVar

from starlette.requests import Request

R = TypeVar("R")


async def in_pool(request: Request, work: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """Run database work (and the encoding beside it) in the app's one bounded pool of threads."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(request.app.state.db_pool, functools.partial(work, *args, **kwargs))
