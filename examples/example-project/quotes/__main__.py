"""python3 -m quotes POSTCODE WEIGHT_G [WEIGHT_G ...]   price one order
python3 -m quotes serve [PORT]                       run the HTTP service (default port 8080)"""
import sys

from quotes.rates import QuoteError, format_cents, load_rates, quote
from quotes.server import serve


def main(argv):
    if argv[:1] == ["serve"]:
        serve(int(argv[1]) if len(argv) > 1 else 8080)
        return 0
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        result = quote(load_rates(), [int(weight) for weight in argv[1:]], argv[0])
    except (ValueError, QuoteError) as error:
        print("error: %s" % error, file=sys.stderr)
        return 1
    print("%s %s (parcels %s, surcharge %s, rates %s)" % (
        result["currency"], format_cents(result["total_cents"]),
        " + ".join(format_cents(cents) for cents in result["parcels_cents"]),
        format_cents(result["surcharge_cents"]), result["rates_version"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
