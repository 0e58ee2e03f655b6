"""Parcel price quotes: weight bands, remote-area surcharge, integer cents throughout."""
from quotes.rates import QuoteError, format_cents, load_rates, normalise_postcode, quote

__all__ = ["QuoteError", "format_cents", "load_rates", "normalise_postcode", "quote"]
