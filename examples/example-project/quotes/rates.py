"""Prices from the rate table. Weights are whole grams, money is whole cents: no floats."""
import bisect
import json
import os

RATES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rates.json")


class QuoteError(ValueError):
    """A request the rate table cannot price."""


def load_rates(path=RATES_FILE):
    with open(path, encoding="utf-8") as handle:
        rates = json.load(handle)
    rates["bands"].sort(key=lambda band: band["up_to_g"])
    return rates


def normalise_postcode(text):
    """'1791 ab' and '1791AB' are the same postcode."""
    return "".join(text.split()).upper()


def is_remote(rates, postcode):
    code = normalise_postcode(postcode)
    return any(code.startswith(prefix) for prefix in rates["remote_postcode_prefixes"])


def parcel_price(rates, weight_g):
    """The price of one parcel. A band's limit belongs to that band: 2000 g costs the 2 kg price."""
    if not isinstance(weight_g, int) or weight_g <= 0:
        raise QuoteError("weight must be a positive whole number of grams, got {!r}".format(weight_g))
    limits = [band["up_to_g"] for band in rates["bands"]]
    index = bisect.bisect_left(limits, weight_g)
    if index == len(limits):
        raise QuoteError("{} g is over the heaviest band ({} g)".format(weight_g, limits[-1]))
    return rates["bands"][index]["price_cents"]


def quote(rates, weights_g, postcode):
    """The price of one order: every parcel, plus the remote surcharge once per order."""
    if not weights_g:
        raise QuoteError("an order needs at least one parcel")
    parcels = [parcel_price(rates, weight) for weight in weights_g]
    surcharge = rates["remote_surcharge_cents"] if is_remote(rates, postcode) else 0
    return {
        "rates_version": rates["version"],
        "currency": rates["currency"],
        "parcels_cents": parcels,
        "surcharge_cents": surcharge,
        "total_cents": sum(parcels) + surcharge,
    }


def format_cents(cents):
    return "{}.{:02d}".format(*divmod(cents, 100))
