"""Model aliases and prices for the real backends (documented in docs/run.md).

Prices are US dollars per million tokens, as the providers list them; a model that is not
in the table (a local model behind an OpenAI-compatible server, say) costs 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from openprose.vm.backends.base import Usage

DEFAULT_ALIAS = "sonnet"  # the model of a session, condition or choice that names none

ALIASES: dict[str, dict[str, str]] = {
    "anthropic": {
        "opus": "claude-opus-4-8",
        "sonnet": "claude-sonnet-4-6",
        "haiku": "claude-haiku-4-5",
    },
    "openai": {
        "opus": "gpt-5",
        "sonnet": "gpt-5-mini",
        "haiku": "gpt-5-nano",
    },
}


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0


PRICES: dict[str, Price] = {
    "claude-opus-4-8": Price(5.0, 25.0, 0.50, 6.25),
    "claude-opus-4-5": Price(5.0, 25.0, 0.50, 6.25),
    "claude-sonnet-4-6": Price(3.0, 15.0, 0.30, 3.75),
    "claude-sonnet-4-5": Price(3.0, 15.0, 0.30, 3.75),
    "claude-haiku-4-5": Price(1.0, 5.0, 0.10, 1.25),
    "gpt-5": Price(1.25, 10.0, 0.125),
    "gpt-5-mini": Price(0.25, 2.0, 0.025),
    "gpt-5-nano": Price(0.05, 0.40, 0.005),
}


def parse_price(text: str) -> tuple[str, Price]:
    """``MODEL=INPUT,OUTPUT[,CACHE_READ[,CACHE_WRITE]]`` (dollars per million tokens), as
    ``prose run --price`` takes it; ValueError naming what is wrong."""
    model, sep, figures = text.partition("=")
    parts = [part.strip() for part in figures.split(",")]
    if not sep or not model.strip() or not 2 <= len(parts) <= 4:
        raise ValueError(
            f"--price needs MODEL=INPUT,OUTPUT[,CACHE_READ[,CACHE_WRITE]], got {text!r}"
        )
    try:
        numbers = [float(part) for part in parts]
    except ValueError:
        raise ValueError(
            f"--price {text!r}: prices are numbers (dollars per million tokens)"
        ) from None
    if not all(math.isfinite(number) and number >= 0 for number in numbers):
        raise ValueError(f"--price {text!r}: prices are 0 or more")
    return model.strip(), Price(*numbers)


def set_prices(prices: Mapping[str, Price]) -> None:
    """Prices that replace or add to the table for this process (``prose run --price``):
    the backends' costs and the caps' estimates both read the table."""
    PRICES.update(prices)


def resolve_model(provider: str, model: str | None, overrides: Mapping[str, str]) -> str:
    """The provider's model id for an alias (``--model-map`` first) or an id used as is."""
    name = model or DEFAULT_ALIAS
    if name in overrides:
        return overrides[name]
    return ALIASES.get(provider, {}).get(name, name)


def cost(model: str, usage: Usage) -> float:
    price = PRICES.get(model)
    if price is None:
        return 0.0
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_write_tokens * price.cache_write
    ) / 1_000_000
