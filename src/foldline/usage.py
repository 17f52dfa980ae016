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
from functools import lru_cache
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
    None when the table has no price for that model (or genai-prices is not installed).

    A model priced by the token, at rates fixed for the day (by tiers of the input's size or
    not), is asked a few times per day and tier (:func:`_rates`) and then costed here by its
    rates; any other (a price per request or by the hour) is asked each time. Either way the
    answer is genai-prices' own, to the picodollar."""
    if not model:
        return None
    if usage.total == 0:
        return 0
    moment = when or datetime.now(UTC)
    day = moment.astimezone(UTC).date().isoformat()
    tiers = _tiers(model, provider, day)
    if tiers is UNPRICED:
        return None
    if tiers is None:
        return _pico(_asked(usage, model, provider, moment))
    rates = _rates(model, provider, day, tiers, sum(usage.input > start for start in tiers))
    if rates is None:
        return _pico(_asked(usage, model, provider, moment))
    counts = (usage.input, usage.output, usage.cache_read, usage.cache_write)
    return _pico(sum((c * r for c, r in zip(counts, rates, strict=True)), Decimal(0)))


UNPRICED = (-1,)  # what _tiers gives for a model the table does not price


def _pico(dollars: Any) -> int | None:
    return None if dollars is None else int((Decimal(dollars) * PICO).to_integral_value(ROUND_HALF_UP))


def _asked(usage: Usage, model: str, provider: str | None, when: datetime) -> Decimal | None:
    """genai-prices' estimate in dollars, asked for this usage (None: it prices no such model)."""
    found = _calc(usage, model, provider, when)
    return None if found is None else Decimal(found.total_price)


def _calc(usage: Usage, model: str, provider: str | None, when: datetime) -> Any:
    """genai-prices' whole answer for ``usage`` (None: it has no such price)."""
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
        return calc_price(asked, model, provider_id=provider, genai_request_timestamp=when)
    except Exception:  # an unknown model or provider, or anything else: no cost, and the write goes on
        return None


class _NotFixed(Exception):
    """A price that is not a rate per token fixed for the whole day."""


@lru_cache(maxsize=512)
def _tiers(model: str, provider: str | None, day: str) -> tuple[int, ...] | None:
    """The input sizes (tokens) above which ``model``'s rates change on ``day``, () when they
    never do; :data:`UNPRICED` if the table has no price for it; None when its cost is not a
    fixed rate per token for the day (it asks a price per request, or by the hour)."""
    try:
        found = _found(Usage(input=1), model, provider, day)
    except _NotFixed:
        return None
    if found is None:
        return UNPRICED
    from genai_prices.types import TieredPrices

    values = vars(found.model_price).values()
    return tuple(sorted({t.start for v in values if isinstance(v, TieredPrices) for t in v.tiers}))


@lru_cache(maxsize=1024)
def _rates(model: str, provider: str | None, day: str, tiers: tuple[int, ...], tier: int) -> tuple[Decimal, ...] | None:
    """Dollars per token of each count of :class:`Usage` (input; output; a cache read and a
    cache write, beyond what an input token costs) for an input of the ``tier``-th size, on
    ``day``. They are genai-prices' own answers for a usage of that size, divided by its tokens:
    within a tier the table's cost is linear in the counts."""
    size = tiers[tier - 1] + 1 if tier else min((*tiers, 10**6))  # an input of that tier's size
    if size < 1:
        return None
    probes = [Usage(input=size), Usage(input=size, output=size), Usage(input=size, cache_read=size),
              Usage(input=size, cache_write=size)]  # fmt: skip
    try:
        base, *more = (_found(u, model, provider, day) for u in probes)
    except _NotFixed:
        return None
    if base is None or any(m is None for m in more):
        return None
    per = Decimal(base.total_price) / size
    return (per, *((Decimal(m.total_price) - Decimal(base.total_price)) / size for m in more))


def _found(usage: Usage, model: str, provider: str | None, day: str) -> Any:
    """genai-prices' whole answer for ``usage`` at the start of ``day`` (None: no such price);
    :class:`_NotFixed` if it is not a rate per token fixed for the day."""
    found = _calc(usage, model, provider, datetime.fromisoformat(day).replace(tzinfo=UTC))
    if found is not None and not _fixed_rates(found):
        raise _NotFixed
    return found


def _fixed_rates(found: Any) -> bool:
    """Whether a price genai-prices found is a rate per token fixed for the day: no price per
    request, none by the hour (a price from a start date is a day's)."""
    try:
        from genai_prices.types import ModelPrice, StartDateConstraint

        prices = found.model.prices
        conditions = [] if isinstance(prices, ModelPrice) else [p.constraint for p in prices]
        values = {k: v for k, v in vars(found.model_price).items() if not k.startswith("_") and v is not None}
    except Exception:  # pragma: no cover - another genai-prices: ask it every time
        return False
    return "requests_kcount" not in values and all(c is None or isinstance(c, StartDateConstraint) for c in conditions)


def load_prices() -> None:
    """Load genai-prices' table now (it takes a tenth of a second, pydantic with it), not at
    the first message priced: an import's worker does it while the store is being opened."""
    _asked(Usage(input=1), "gpt-4o", None, datetime.now(UTC))


def dollars(pico: int | None) -> float | None:
    """Picodollars as US dollars (None stays None)."""
    return None if pico is None else float(Decimal(pico) / PICO)


def price_table() -> dict[str, str | None]:
    """Which price table the costs come from: genai-prices and its installed version."""
    from importlib.metadata import PackageNotFoundError, version  # loaded when asked, not at every start

    try:
        found: str | None = version("genai-prices")
    except PackageNotFoundError:  # pragma: no cover
        found = None
    return {"source": "genai-prices", "version": found}
