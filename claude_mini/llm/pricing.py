"""Per-model prices for /cost and print mode's `total_cost_usd`.

USD per million tokens, from Anthropic's public price list. Cache writes (5-minute
lifetime) cost 1.25x the input price, cache reads 0.1x. Models are matched by the
longest known prefix after any provider prefix ("anthropic.", "us."...), so dated
ids such as `claude-sonnet-4-5-20250929` find their family.

Unknown models cost 0: they are local or self-hosted (Ollama, llama.cpp, a test fake)
and we would rather show $0.00 than invent a price. Long-context surcharges (prompts
over 200k tokens on some models) are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass

from claude_mini.llm.messages import Usage

CACHE_WRITE_FACTOR = 1.25
CACHE_READ_FACTOR = 0.1


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float

    @property
    def cache_write(self) -> float:
        return self.input * CACHE_WRITE_FACTOR

    @property
    def cache_read(self) -> float:
        return self.input * CACHE_READ_FACTOR


OPUS_4_5 = Price(5.0, 25.0)
OPUS_4 = Price(15.0, 75.0)
SONNET = Price(3.0, 15.0)
HAIKU_4_5 = Price(1.0, 5.0)

# Longest matching prefix wins, so dated or older ids can override a family default.
PRICES: dict[str, Price] = {
    "claude-opus-4": OPUS_4_5,  # 4.5 and later
    "claude-opus-4-0": OPUS_4,
    "claude-opus-4-1": OPUS_4,
    "claude-opus-4-2025": OPUS_4,  # claude-opus-4-20250514
    "claude-4-opus": OPUS_4,
    "claude-sonnet-4": SONNET,
    "claude-4-sonnet": SONNET,
    "claude-3-7-sonnet": SONNET,
    "claude-3-5-sonnet": SONNET,
    "claude-haiku-4": HAIKU_4_5,
    "claude-3-5-haiku": Price(0.8, 4.0),
    "claude-3-haiku": Price(0.25, 1.25),
    "claude-3-opus": OPUS_4,
}


def price_for(model: str) -> Price | None:
    """The price of `model`, or None for a model we do not know (treated as free)."""
    name = model.lower()
    start = name.find("claude-")
    if start < 0:
        return None
    name = name[start:]
    matches = [prefix for prefix in PRICES if name.startswith(prefix)]
    return PRICES[max(matches, key=len)] if matches else None


def cost_usd(model: str, usage: Usage) -> float:
    """What `usage` on `model` costs in USD; 0.0 for unknown (local) models."""
    price = price_for(model)
    if price is None:
        return 0.0
    total = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_creation_input_tokens * price.cache_write
        + usage.cache_read_input_tokens * price.cache_read
    )
    return total / 1_000_000
