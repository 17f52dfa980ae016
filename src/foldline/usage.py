"""A message's token usage, as its metadata reports it, and the usage's estimated cost.

A writer reports what one model call used in ``metadata.usage``, in the AI SDK's
``LanguageModelUsage`` shape, and the model in ``metadata.model`` (a provider in
``metadata.provider`` is optional)::

    {"inputTokens": 1200, "outputTokens": 80, "totalTokens": 1280,
     "inputTokenDetails": {"noCacheTokens": 200, "cacheReadTokens": 900, "cacheWriteTokens": 100},
     "outputTokenDetails": {"textTokens": 50, "reasoningTokens": 30}}

``inputTokens`` counts every input token, cache reads and writes included (as the AI SDK and
genai-prices count them); when it is left out it is the sum of the three details. The AI SDK 5
spelling ``cachedInputTokens`` is read as ``cacheReadTokens``. Every count is a whole number from
0 to 10^12 (or null: not reported); other keys are kept as sent. The write door refuses any other
shape (422, ``where`` naming the field).

The cost is estimated with pydantic's genai-prices, once per message, when it is written: its
price table, as installed, is the one named in every answer that shows a cost (:func:`price_table`).
A model the table does not know gets no cost (``None``), never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from .errors import Invalid

COUNT_MAX = 10**12  # tokens in one message's count: far past any model call, and sums stay exact
PICO = Decimal(10**12)  # costs are kept in picodollars: whole numbers that add up exactly
WHERE = "metadata.usage"
NAME_MAX = 256  # code points of a model (or branch) name kept: longer ones are cut there


@dataclass(frozen=True, slots=True)
class Usage:
    """What one message used: ``input`` counts every input token, ``cache_read`` and
    ``cache_write`` included."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def total(self) -> int:
        return self.input + self.output

    def json(self) -> dict[str, int]:
        return {
            "input_tokens": self.input,
            "output_tokens": self.output,
            "cache_read_tokens": self.cache_read,
            "cache_write_tokens": self.cache_write,
            "total_tokens": self.total,
        }


@dataclass(frozen=True, slots=True)
class MessageUsage:
    """A message's usage as the store keeps it: the model ('' when none was given), the UTC day
    it counts on, the tokens, and the estimated cost in picodollars (None: no price known)."""

    model: str
    day: str
    usage: Usage
    cost: int | None


def _count(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= COUNT_MAX:
        raise Invalid(f"'{where}' is a whole number from 0 to {COUNT_MAX}", where=where)
    return value


def _details(usage: dict[str, Any], key: str) -> dict[str, Any]:
    found = usage.get(key)
    if found is None:
        return {}
    if not isinstance(found, dict):
        raise Invalid(f"'{WHERE}.{key}' must be an object", where=f"{WHERE}.{key}")
    return found


def parse_usage(metadata: Any) -> Usage | None:
    """The usage ``metadata`` reports, or None when it reports none; :class:`Invalid` when
    ``metadata.usage`` is there but not of the documented shape."""
    if not isinstance(metadata, dict) or metadata.get("usage") is None:
        return None
    usage = metadata["usage"]
    if not isinstance(usage, dict):
        raise Invalid(f"'{WHERE}' must be an object", where=WHERE)
    counts = {key: _count(usage.get(key), f"{WHERE}.{key}") for key in (
        "inputTokens", "outputTokens", "totalTokens", "cachedInputTokens", "reasoningTokens")}  # fmt: skip
    inputs = _details(usage, "inputTokenDetails")
    outputs = _details(usage, "outputTokenDetails")
    for key in ("noCacheTokens", "cacheReadTokens", "cacheWriteTokens"):
        counts[key] = _count(inputs.get(key), f"{WHERE}.inputTokenDetails.{key}")
    for key in ("textTokens", "reasoningTokens"):
        _count(outputs.get(key), f"{WHERE}.outputTokenDetails.{key}")
    read = counts["cacheReadTokens"] if counts["cacheReadTokens"] is not None else counts["cachedInputTokens"] or 0
    write = counts["cacheWriteTokens"] or 0
    total_in = counts["inputTokens"]
    if total_in is None:
        total_in = (counts["noCacheTokens"] or 0) + read + write
    elif read + write > total_in:
        raise Invalid(
            f"'{WHERE}.inputTokens' counts every input token: cache reads and writes are part of it",
            where=f"{WHERE}.inputTokens",
        )
    return Usage(total_in, counts["outputTokens"] or 0, read, write)


def message_usage(metadata: Any, model: str | None = None) -> MessageUsage | None:
    """The usage of a stored message with its model, day and estimated cost (None: it reports
    none). ``metadata`` has passed :func:`parse_usage` at the write door."""
    try:
        usage = parse_usage(metadata)
    except Invalid:
        return None
    if usage is None:
        return None
    meta = metadata if isinstance(metadata, dict) else {}
    model = model or (meta.get("model") if isinstance(meta.get("model"), str) else None) or ""
    model = "" if "\x00" in model else model[:NAME_MAX]  # PostgreSQL text holds no NUL
    provider = meta.get("provider") if isinstance(meta.get("provider"), str) else None
    moment = message_time(meta.get("timestamp"))
    return MessageUsage(model, moment.date().isoformat(), usage, estimate(usage, model, provider, moment))


def message_time(stamp: Any) -> datetime:
    """When a message was written by its own word (``metadata.timestamp``), else now (UTC)."""
    if isinstance(stamp, str) and stamp:
        try:
            moment = datetime.fromisoformat(stamp)
        except ValueError:
            moment = None
        if moment is not None:
            return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return datetime.now(UTC)


def estimate(usage: Usage, model: str, provider: str | None = None, when: datetime | None = None) -> int | None:
    """The estimated cost of ``usage`` on ``model`` in picodollars, from genai-prices' table;
    None when the table has no price for that model (or genai-prices is not installed)."""
    if not model:
        return None
    if usage.total == 0:
        return 0
    try:
        from genai_prices import Usage as PriceUsage
        from genai_prices import calc_price
    except ImportError:  # pragma: no cover - a dependency; without it nothing is priced
        return None
    asked = PriceUsage(
        input_tokens=usage.input,
        output_tokens=usage.output,
        cache_read_tokens=usage.cache_read,
        cache_write_tokens=usage.cache_write,
    )
    try:
        found = calc_price(asked, model, provider_id=provider, genai_request_timestamp=when)
    except Exception:  # an unknown model or provider, or anything else: no cost, and the write goes on
        return None
    return int((Decimal(found.total_price) * PICO).to_integral_value(ROUND_HALF_UP))


def dollars(pico: int | None) -> float | None:
    """Picodollars as US dollars (None stays None)."""
    return None if pico is None else float(Decimal(pico) / PICO)


def price_table() -> dict[str, str | None]:
    """Which price table the costs come from: genai-prices and its installed version."""
    try:
        found: str | None = version("genai-prices")
    except PackageNotFoundError:  # pragma: no cover
        found = None
    return {"source": "genai-prices", "version": found}
